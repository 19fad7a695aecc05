"""Each group's weighted sum over tasks of its probability of solving them, for many resamples of
an item response fit, without a probability per (resample, group, task) cell.

A resample's sum for a group depends on the group through its ability alone:

    f_r(u) = sum_t w_rt logistic(a_rt (u - b_rt))

is one function of one variable per resample, whatever the number of groups. It is a sum of
logistic curves, analytic in a strip about the real line (the logistic's poles lie ``pi / a``
off it), so its Chebyshev interpolant on the abilities' range converges geometrically: ``K``
nodes, where ``K`` depends on the range and the largest slope and not on the board (about 30
for abilities within 4 logits of each other, 93 within 15), give it to a relative 1e-13. So
a resample costs ``K x tasks`` probabilities instead of ``groups x tasks``: 2,000 groups read
about 100, and 1,000 resamples of 2,000 groups x 100,000 tasks take 10^10 instead of 2 x 10^11.
Where ``K`` would reach the number of groups the cells are evaluated as they are.

Checked against the cells' own sums (``tests/test_cell_board.py``): within 1e-11 of the sum of
the weights, abilities 6 to 50 logits apart, slopes to 3, and a few tasks of slope 30 (summed
cell by cell beside the interpolant).
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from arena_core.engine.cores import usable_cores
from arena_core.stats.irt import rasch_factors

__all__ = ["ability_sums"]

#: ``(tasks, nodes)`` probabilities evaluated at once: 256 KB, which stay in the processor's
#: cache through their four passes (40 resamples of 100,000 tasks x 103 nodes: 1.06 s; 1.42 s
#: in blocks of 4 MB, 1.87 s of 64 KB).
_CHUNK_CELLS = 1 << 15
#: The interpolant's error bound, relative to the sum of the weights: ``exp(-30)``, about 1e-13
#: (a score's hundredths are 1e-4 of it). ``exp(-36)`` took a fifth more nodes.
_DIGITS = 30.0
#: The share of the strip to the logistic's nearest pole the error bound may use: its bound
#: grows without limit at the pole itself.
_STRIP = 0.8
#: Cells (resamples x tasks x points) past which a call's resamples are shared among threads:
#: about a tenth of a second of work, against a thread pool's start of about a millisecond.
_THREADED_CELLS = 20_000_000


def ability_sums(abilities: np.ndarray, difficulties: np.ndarray, slopes: np.ndarray | None,
                 weights: np.ndarray) -> np.ndarray:  # fmt: skip
    """``(resamples, groups)``: ``sum_t w_rt logistic(a_rt (theta_rg - b_rt))`` for each
    resample's ``abilities`` ``(resamples, groups)``, ``difficulties``, ``slopes`` (``None``:
    every slope 1, Rasch) and ``weights`` ``(resamples, tasks)``. The tasks steeper than the
    slope that costs least (:func:`_steepest_interpolated`) are summed cell by cell: under 2PL a
    resample's linear response can give a task run by few groups a slope of 30, which alone
    would ask for a thousand nodes."""
    resamples, groups = abilities.shape
    if not abilities.size or not difficulties.size:
        return np.zeros((resamples, groups))
    nodes, middle, half, steep = _plan(abilities, slopes, weights)
    if nodes >= groups:  # as many nodes as groups: each cell as it is
        return _sums(abilities, difficulties, slopes, weights)
    x = np.cos(np.pi * (np.arange(nodes) + 0.5) / nodes)  # Chebyshev points of the first kind
    rest = weights if steep is None or not steep.any() else np.where(steep, 0.0, weights)
    at_nodes = _sums(np.broadcast_to(middle + half * x, (resamples, nodes)), difficulties, slopes, rest)
    out = _clenshaw(at_nodes, (abilities - middle) / half)
    if steep is not None and slopes is not None:
        for r in np.flatnonzero(steep.any(axis=1)):
            kept = np.flatnonzero(steep[r])
            rows = slice(r, r + 1)
            out[r] += _sums(abilities[rows], difficulties[rows, kept], slopes[rows, kept], weights[rows, kept])[0]
    return out


def _plan(
    abilities: np.ndarray, slopes: np.ndarray | None, weights: np.ndarray
) -> tuple[int, float, float, np.ndarray | None]:
    """The interpolant's nodes, its range's middle and half-width, and the tasks (per resample)
    too steep for it, summed cell by cell (``None`` under Rasch)."""
    low, high = float(abilities.min()), float(abilities.max())
    half = max((high - low) / 2, 1e-12)
    if slopes is None:
        return _nodes_needed(half, 1.0), (high + low) / 2, half, None
    steepness, drawn = np.abs(slopes), weights > 0
    slope = _steepest_interpolated(steepness, drawn, half, abilities.shape[1])
    return _nodes_needed(half, slope), (high + low) / 2, half, (steepness > slope) & drawn


def _steepest_interpolated(slopes: np.ndarray, drawn: np.ndarray, half_range: float, groups: int) -> float:
    """The slope above which tasks are summed cell by cell: of the drawn tasks' slopes at a few
    high quantiles, the one whose cost, nodes x tasks for the interpolant plus groups x the
    tasks above it, is least."""
    found = slopes[drawn]
    if not found.size:
        return 1.0
    tasks = slopes.shape[1]
    candidates = np.unique(np.quantile(found, [0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1.0]))
    above = [(found > c).sum() / len(slopes) for c in candidates.tolist()]
    costs = [
        min(_nodes_needed(half_range, c), groups) * tasks + groups * n
        for c, n in zip(candidates.tolist(), above, strict=True)
    ]
    return float(candidates[int(np.argmin(costs))])


def _nodes_needed(half_range: float, slope: float) -> int:
    """Chebyshev nodes that bring the interpolant's error under ``exp(-_DIGITS)``: the Bernstein
    ellipse about the range reaches ``_STRIP`` of the way to the nearest pole, ``pi / slope`` off
    the line, and the error falls by its ``rho`` a node."""
    strip = _STRIP * math.pi / slope
    half_range = max(half_range, 1e-6)
    rho = (strip + math.hypot(strip, half_range)) / half_range
    return max(8, math.ceil(_DIGITS / math.log(rho)) + 1)


def _clenshaw(values: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``(resamples, groups)``: each resample's interpolant through ``values`` ``(resamples,
    nodes)`` at the Chebyshev points of the first kind, evaluated at ``at`` (in ``[-1, 1]``).
    Its Chebyshev coefficients are a discrete cosine transform of the values, and Clenshaw's
    recurrence sums the series: three products over ``(resamples, groups)`` a node, where the
    barycentric formula made and summed a ``(resamples, groups, nodes)`` array (0.12 -> 0.03 s
    for 40 resamples of 2,000 groups at 125 nodes)."""
    from scipy.fft import dct

    nodes = values.shape[1]
    coefficients = dct(values, type=2, axis=1) / nodes
    coefficients[:, 0] /= 2
    twice = 2 * at
    later, latest = np.zeros_like(at), np.zeros_like(at)
    for j in range(nodes - 1, 0, -1):
        later, latest = coefficients[:, j, None] + twice * later - latest, later
    out: np.ndarray = coefficients[:, :1] + at * later - latest
    return out


def _sums(abilities: np.ndarray, difficulties: np.ndarray, slopes: np.ndarray | None,
          weights: np.ndarray) -> np.ndarray:  # fmt: skip
    """``(resamples, points)``: the sums at each of ``abilities`` ``(resamples, points)``, cell by
    cell, a block of tasks of one resample at a time: under Rasch each cell's ``exp(b - u)`` the
    product of an exponential per task and one per point (:func:`~arena_core.stats.irt.rasch_factors`),
    else one exponential a cell. A task of weight 0 adds nothing and is left out: a bootstrap
    resample does not draw about a third of the tasks (``(1 - 1/n)^n``), a third of the cells.

    Past :data:`_THREADED_CELLS` the resamples are shared among threads, one a core: NumPy's
    loops over the cells release the interpreter's lock, each resample's row is its own, and
    so every figure is the same to the bit whatever the number of threads."""
    resamples, points = abilities.shape
    factors = rasch_factors(abilities, difficulties) if slopes is None else None
    out = np.zeros((resamples, points))
    step = max(1, _CHUNK_CELLS // max(1, points))

    def resample(r: int) -> None:
        drawn = np.flatnonzero(weights[r])
        task_side = (difficulties if factors is None else factors[1])[r, drawn]
        scale = None if slopes is None else slopes[r, drawn, None]
        weight = weights[r, drawn]
        with np.errstate(over="ignore"):  # exp of a large gap is inf: the probability 0 (per thread)
            for start in range(0, len(drawn), step):
                block = slice(start, start + step)
                if factors is not None:
                    z = np.multiply.outer(task_side[block], factors[0][r])  # exp(b - u), a row per task
                else:
                    z = np.subtract.outer(task_side[block], abilities[r])
                    if scale is not None:
                        z *= scale[block]
                    np.exp(z, out=z)
                z += 1
                np.reciprocal(z, out=z)
                out[r] += weight[block] @ z

    threads = min(usable_cores(), resamples) if weights.size * points >= _THREADED_CELLS else 1
    if threads > 1:
        with ThreadPoolExecutor(threads, thread_name_prefix="arena-irtsums") as pool:
            for _ in pool.map(resample, range(resamples)):
                pass  # each fills its own row; an exception is raised here
    else:
        for r in range(resamples):
            resample(r)
    return out
