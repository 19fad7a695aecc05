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
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

from arena_core import hookimpl
from arena_core.config.settings import ScoringConfig
from arena_core.io.allocator import ENVIRONMENT
from arena_core.model.errors import ArenaError


class Threads:
    """``check_concurrency`` threads of this process: commands run outside the interpreter, so
    threads overlap them."""

    name = "threads"
    local = True

    def start(self, workers: int) -> Executor:
        return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="arena-check")


class Processes:
    """``workers`` processes of this machine, started fresh (``spawn``), each building its Arena
    once: what scoring partitions of tasks needs to use every core (threads cannot, the engine's
    Python between NumPy calls holds the interpreter's lock)."""

    name = "processes"
    local = False

    def start(self, workers: int) -> Executor:
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


class DaskCluster:
    """A Dask cluster: the scheduler at ``address``, or a local cluster of ``workers`` processes
    (one thread each) started for the batch and stopped after it."""

    name = "dask"
    local = False

    def __init__(self, address: str) -> None:
        self.address = address

    def start(self, workers: int) -> Executor:
        try:
            from distributed import Client, LocalCluster  # the 'distributed' extra
        except ImportError:
            raise ArenaError("check_executor 'dask' needs Dask: pip install 'arena-core[distributed]'") from None
        cluster = None
        if self.address:
            client = Client(self.address)
        else:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
        return _Closing(client.get_executor(), client, cluster)


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
    return [Threads(), Processes(), DaskCluster(config.dask_scheduler)]
