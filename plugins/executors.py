"""Check executors: threads in this process (the default), processes of this machine, or a Dask cluster.

Checking a workspace means running its test suite; an arena of SWE-bench size needs many
machines for that. ``dask`` hands each submission's checks to a Dask cluster as a picklable
job; each worker builds its own ``Arena`` from the same configuration (once) and must reach
the workspaces' paths (a shared file system). The commands also score runs there, partitions
of whole tasks at a time (``arena_core/partitioned.py``); ``Arena.evaluate_many`` scores where it
is called.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

from arena_core import hookimpl
from arena_core.config.settings import ScoringConfig
from arena_core.io.allocator import ENVIRONMENT, keep_freed_arrays
from arena_core.model.errors import ArenaError


class Threads:
    """``check_concurrency`` threads of this process: commands run outside the interpreter, so
    threads overlap them."""

    name = "threads"
    local = True

    def start(self, workers: int) -> Executor:
        return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="arena-check")


class Processes:
    """``workers`` processes of this machine, each building its Arena once: what scoring
    partitions of tasks needs to use every core (threads cannot, the engine's Python between
    NumPy calls holds the interpreter's lock).

    On Linux, from a process that runs no other thread (a command), the workers are forked
    from it: they begin with its modules imported (and the Arena it shares, see
    :func:`arena_core.arena.worker_arena`), about 0.4 s sooner than a fresh interpreter. A
    process with threads (a service) starts them fresh (``spawn``): a fork copies whatever
    lock another thread holds, held forever in the child."""

    name = "processes"
    local = False

    def start(self, workers: int) -> Executor:
        if sys.platform.startswith("linux") and threading.active_count() == 1:
            return ProcessPoolExecutor(
                max_workers=workers, mp_context=multiprocessing.get_context("fork"), initializer=_keep_freed_arrays
            )
        executor = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
        # glibc's allocator keeps freed arrays for the next partition (arena_core/io/allocator.py):
        # a third of the workers' system time, and about a tenth of their wall time.
        saved = {name: os.environ.get(name) for name in ENVIRONMENT}
        os.environ.update({k: v for k, v in ENVIRONMENT.items() if saved[k] is None})
        try:  # every worker started now, with the allocator's settings, which the caller keeps out of
            for _ in range(workers):
                executor.submit(os.getpid)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
        return executor


def _keep_freed_arrays() -> None:
    """A forked worker keeps freed arrays as a fresh one started with :data:`ENVIRONMENT` does."""
    keep_freed_arrays(unless_set=True)


class DaskCluster:
    """A Dask cluster: the scheduler at ``address``, or a local cluster of ``workers`` processes
    (one thread each) started for the batch and stopped after it.

    Whoever can talk to a Dask scheduler can run code on it (``Client.run_on_scheduler``), as
    the user that runs it. The local cluster therefore listens on the loopback only, over TLS
    with a certificate made in memory for this batch (``Security.temporary``): another user of
    the machine cannot connect without it. A remote scheduler is reached over ``tls://`` with the
    certificates of Dask's own configuration (``distributed.comm.tls.*``); a ``tcp://`` one,
    which authenticates nobody, only when ``dask_allow_unauthenticated`` says the network is trusted.
    """

    name = "dask"
    local = False

    def __init__(self, address: str, allow_unauthenticated: bool = False) -> None:
        self.address, self.allow_unauthenticated = address, allow_unauthenticated

    def start(self, workers: int) -> Executor:
        try:
            from distributed import Client, LocalCluster  # the 'distributed' extra
            from distributed.security import Security
        except ImportError:
            raise ArenaError("check_executor 'dask' needs Dask: pip install 'arena-core[distributed]'") from None
        cluster = None
        if self.address:
            client = Client(self.address, security=self._remote_security(Security))
        else:
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                host="127.0.0.1",
                protocol="tls://",
                security=Security.temporary(),
            )
            client = Client(cluster)
        return _Closing(client.get_executor(), client, cluster)

    def _remote_security(self, security: Any) -> Any:
        """The security of a connection to ``address``; refuses a scheduler that authenticates nobody."""
        scheme = self.address.partition("://")[0] if "://" in self.address else "tcp"
        if scheme == "tls":
            found = security()  # Dask's configuration: distributed.comm.tls.ca-file, client.cert, client.key
            if not found.tls_ca_file or not found.tls_client_cert:
                raise ArenaError(
                    f"dask_scheduler {self.address!r}: no TLS certificates are configured for Dask "
                    "(distributed.comm.tls.ca-file and distributed.comm.tls.client.cert / .key, "
                    "or DASK_DISTRIBUTED__COMM__TLS__CA_FILE and the like); see docs/security.md"
                )
            return found
        if self.allow_unauthenticated:
            return None
        raise ArenaError(
            f"dask_scheduler {self.address!r}: a {scheme}:// scheduler authenticates nobody, and anyone who "
            "reaches its port runs code as this user; use a tls:// scheduler with Dask's TLS certificates, "
            "or set dask_allow_unauthenticated = true on a network where every host is trusted (docs/security.md)"
        )


class _Closing(Executor):
    """A Dask client's executor that closes the client (and its local cluster) on shutdown."""

    def __init__(self, inner: Executor, client: Any, cluster: Any) -> None:
        self._inner, self._client, self._cluster = inner, client, cluster

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        return self._inner.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._inner.shutdown(wait=wait)
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


@hookimpl
def arena_register_check_executors(config: ScoringConfig) -> list[object]:
    return [Threads(), Processes(), DaskCluster(config.dask_scheduler, config.dask_allow_unauthenticated)]
