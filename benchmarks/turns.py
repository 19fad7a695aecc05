"""Commands timed against their references in one run: each a fresh process, taking turns so
that the machine's moods fall on both alike, the medians compared as a ratio; and the median of
a few calls in this process."""

from __future__ import annotations

import statistics
import subprocess
import time


def median_time(work: object, turns: int = 3) -> float:
    """The median wall seconds of ``turns`` calls of ``work``, in this process."""
    times = []
    for _ in range(turns):
        start = time.perf_counter()
        work()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def timed(command: list[str]) -> float:
    """Wall seconds of ``command`` (its output discarded)."""
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def ratio_line(label: str, commands: dict[str, list[str]], repeat: int, target: float = 1.5) -> str:
    """The two ``commands`` (ours first, then the reference) run in turn ``repeat`` times: the
    line giving their medians, the ratio and whether it is within ``target``."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            times[name].append(timed(command))
    (ours, mine), (theirs, reference) = ((name, statistics.median(times[name])) for name in commands)
    verdict = "met" if mine <= target * reference else "NOT met"
    return (f"{label}: {ours} {mine:.2f} s, {theirs} {reference:.2f} s: {mine / reference:.2f}x "
            f"(target within {target}x: {verdict})")  # fmt: skip
