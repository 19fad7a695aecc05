"""``statistics.mean`` and ``statistics.stdev`` of an array of floats, to the bit, in a fraction of
their time.

The spec's interval (and Student's) take the standard deviation from ``statistics.stdev``, which
is exact: it sums the values and their squares as fractions and returns the correctly rounded
square root of the exact variance. On 500 per-task means that costs 2 ms, and a board of 2,000
groups spent 4 of its 5 seconds there. The same exact sums are Python integers here: every
finite float is a 53-bit integer times a power of two, so over a common power of two the values
are integers (read from NumPy's ``frexp`` in one pass), whose sums and sums of squares Python
adds exactly. The variance is then a ratio of integers, and its square root is rounded as
``statistics`` rounds it (to odd on two extra bits, then to the nearest double), so the result
is the same double, not a close one.
"""

from __future__ import annotations

import math
import statistics

import numpy as np

__all__ = ["mean", "stdev"]

#: Values summed at once in int64: the largest part of a square is below 2**54, so 256 stay below 2**62.
_STRETCH = 256


def mean(values: np.ndarray) -> float:
    """``statistics.mean(values)``: the exactly computed mean, correctly rounded; NaN when a
    value is NaN or infinite."""
    sums = _exact_sums(values)
    if sums is None:
        return math.nan
    if not len(values):
        raise statistics.StatisticsError("mean requires at least one data point")
    total, _, exponent = sums
    return _ratio(total, len(values), exponent)


def stdev(values: np.ndarray) -> float:
    """``statistics.stdev(values)``: the square root of the exact sample variance, correctly
    rounded; NaN when a value is NaN or infinite (where Python 3.11's ``stdev`` fails inside)."""
    if len(values) < 2:
        raise statistics.StatisticsError("stdev requires at least two data points")
    sums = _exact_sums(values)
    if sums is None:
        return math.nan
    total, squares, exponent = sums
    n = len(values)
    # variance = (n * squares - total**2) / (n * (n - 1)) * 4**exponent
    numerator, denominator = n * squares - total * total, n * (n - 1)
    if exponent >= 0:
        numerator <<= 2 * exponent
    else:
        denominator <<= -2 * exponent
    return _sqrt_of_ratio(numerator, denominator)


def _exact_sums(values: np.ndarray) -> tuple[int, int, int] | None:
    """``(S, Q, e)``: the values sum to ``S * 2**e`` and their squares to ``Q * 4**e``, exactly;
    ``None`` when a value is not finite.

    Each value is ``m * 2**(e + s)``, ``m`` its 53-bit integer mantissa and ``s >= 0`` its shift
    from the smallest exponent. Values of one shift are summed together in int64 (``m``, and the
    parts of ``m**2`` split as ``m = hi * 2**27 + lo``), in stretches short enough not to
    overflow; Python's integers then add the few stretch sums, shifted."""
    values = np.asarray(values, dtype=float).ravel()
    if not np.isfinite(values).all():
        return None
    fractions, exponents = np.frexp(values)  # value = fraction * 2**exponent, 0.5 <= |fraction| < 1
    mantissas = (fractions * 2.0**53).astype(np.int64)  # exact: a double's 53 bits
    nonzero = mantissas != 0
    if not nonzero.any():
        return 0, 0, 0
    lowest = int(exponents[nonzero].min())
    shifts = np.where(nonzero, exponents - lowest, 0)
    keys = shifts + (np.arange(len(values)) // _STRETCH) * (int(shifts.max()) + 1)  # a stretch's own shifts
    order = np.argsort(keys)
    keys, shifts, mantissas = keys[order], shifts[order], mantissas[order]
    starts = np.concatenate([[0], np.flatnonzero(keys[1:] != keys[:-1]) + 1])
    high, low = mantissas >> 27, mantissas & ((1 << 27) - 1)
    parts = [np.add.reduceat(part, starts).tolist() for part in (mantissas, high * high, high * low, low * low)]
    total = squares = 0
    for shift, m, hh, hl, ll in zip(shifts[starts].tolist(), *parts, strict=True):
        total += m << shift
        squares += ((hh << 54) + (hl << 28) + ll) << 2 * shift
    return total, squares, lowest - 53


def _ratio(numerator: int, denominator: int, exponent: int) -> float:
    """``numerator / denominator * 2**exponent``, correctly rounded (Python divides integers so)."""
    if exponent >= 0:
        return (numerator << exponent) / denominator
    return numerator / (denominator << -exponent)


def _sqrt_of_ratio(numerator: int, denominator: int) -> float:
    """The square root of ``numerator / denominator`` (both non-negative), correctly rounded: the
    integer root carried to two bits past a double's, rounded to odd so that the last conversion
    to a double, which rounds half to even, cannot round twice (``statistics``' own method)."""
    if numerator == 0:
        return 0.0
    shift = (numerator.bit_length() - denominator.bit_length() - 2 * (53 + 2)) // 2
    if shift >= 0:
        scaled_numerator, scaled_denominator = numerator, denominator << 2 * shift
    else:
        scaled_numerator, scaled_denominator = numerator << -2 * shift, denominator
    quotient, remainder = divmod(scaled_numerator, scaled_denominator)
    root = math.isqrt(quotient)
    exact = root * root == quotient and remainder == 0
    root |= not exact  # round to odd: any discarded part sets the last bit
    return math.ldexp(float(root), shift) if shift >= 0 else root / (1 << -shift)
