"""Code execution through Dask: whoever can talk to a scheduler runs code on it, as the user who
started it (``Client.run_on_scheduler``). The attack is run first against a cluster that takes
anyone (to prove it works), then against the cluster arena-core starts, which must refuse it.
"""

from __future__ import annotations

import os

import pytest

from arena_core import Arena
from arena_core.model.errors import ArenaError

distributed = pytest.importorskip("distributed")
Security = distributed.security.Security


def _attack(address: str, security: object = None) -> int | str:
    """Connect to the scheduler as another local user would and run code on it: its pid, or why not."""
    try:
        with distributed.Client(address, timeout=5, security=security) as client:
            return int(client.run_on_scheduler(os.getpid))
    except Exception as exc:  # the refusal, whatever Dask raises for it
        return f"refused: {type(exc).__name__}"


def test_an_open_scheduler_runs_a_strangers_code_which_is_the_attack() -> None:
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None, host="127.0.0.1", protocol="tcp://") as open_:
        assert open_.scheduler_address.startswith("tcp://")
        assert _attack(open_.scheduler_address) == os.getpid()  # the attack works on an open scheduler


def test_the_local_cluster_refuses_a_connection_without_its_certificate() -> None:
    arena = Arena({"check_executor": "dask", "check_concurrency": 1}, autoload=False)
    with arena.components.check_executors["dask"].start(1) as pool:
        address = pool._client.scheduler.address
        assert address.startswith("tls://127.0.0.1:")  # loopback only, over TLS
        assert pool.submit(os.getpid).result() != os.getpid()  # the cluster itself works
        port = address.rsplit(":", 1)[1]
        assert _attack(f"tcp://127.0.0.1:{port}").startswith("refused")  # type: ignore[union-attr]
        assert _attack(address, Security.temporary()).startswith("refused")  # type: ignore[union-attr]  # its own certificate
        for pid in (p for p in os.listdir("/proc") if p.isdigit()):  # the key is in no command line or environment
            for name in ("cmdline", "environ"):
                try:
                    assert b"PRIVATE KEY" not in open(f"/proc/{pid}/{name}", "rb").read()
                except OSError:
                    pass


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:8786", "127.0.0.1:8786", "ws://127.0.0.1:8786"])
def test_a_scheduler_that_authenticates_nobody_is_refused_unless_allowed(address: str) -> None:
    executor = Arena({"check_executor": "dask", "dask_scheduler": address}, autoload=False).components.check_executors
    with pytest.raises(ArenaError, match="authenticates nobody.*dask_allow_unauthenticated"):
        executor["dask"].start(1)


def test_a_tls_scheduler_needs_daskss_certificates(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CA_FILE", "CLIENT__CERT", "CLIENT__KEY"):
        monkeypatch.delenv(f"DASK_DISTRIBUTED__COMM__TLS__{name}", raising=False)
    arena = Arena({"check_executor": "dask", "dask_scheduler": "tls://127.0.0.1:8786"}, autoload=False)
    with pytest.raises(ArenaError, match="no TLS certificates are configured for Dask"):
        arena.components.check_executors["dask"].start(1)


def test_an_allowed_open_scheduler_is_used() -> None:
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None, host="127.0.0.1", protocol="tcp://") as open_:
        config = {"check_executor": "dask", "dask_scheduler": open_.scheduler_address, "dask_allow_unauthenticated": True}
        with Arena(config, autoload=False).components.check_executors["dask"].start(1) as pool:
            assert pool.submit(os.getpid).result() == os.getpid()  # threads of this process: processes=False
