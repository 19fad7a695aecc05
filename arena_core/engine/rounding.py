"""Rounding exactly as Python's ``round(value, digits)`` does, but faster.

The spec rounds every score with ``round(x, 2)``: correctly rounded on the exact binary
value, half to even. That call goes through decimal conversion, and a single evaluation makes
nine of them; NumPy's ``np.round`` is fast but computes ``rint(x * 10**d) / 10**d`` on the
*rounded* product, which differs from ``round`` when that product lands on a half that the
exact product is not.

Both functions here scale, take the nearest integer and divide (a correctly rounded division
gives the double nearest ``k / 10**d``, which is what ``round`` returns). The nearest integer
to the rounded product is the nearest integer to the exact one unless the rounded product is
exactly a half: a half is itself a double (below 2**51), and the rounded product is the double
nearest the exact one, so no half can lie strictly between them. Only on an exact half does
the side of the exact product decide, and the rounding error of the product (Dekker's exact
product, :func:`product_error`) gives that side: above, below, or a true tie, which goes to
even as ``rint`` does. Magnitudes beyond ``_FAST_LIMIT`` are handed to ``round`` itself. The
results equal ``round``'s bit for bit (tested with hypothesis on scores, halves, near-halves,
and every product that rounds onto a half without being one).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["product_error", "round_exact", "round_scalar"]

#: Beyond this magnitude ``round`` itself is used (scores are far below it).
_FAST_LIMIT = 1e6
_SCALES = {digits: 10.0**digits for digits in range(10)}
#: Veltkamp's splitting constant for doubles: 2**27 + 1.
_SPLIT = 134217729.0


def product_error(a: np.ndarray, b: float, product: np.ndarray) -> np.ndarray:
    """``a * b - product`` exactly, for ``product = a * b`` rounded (Dekker's two-product,
    without a fused multiply-add): positive when the exact product lies above the rounded one.
    Floats work as well as arrays. Exact while nothing overflows and the product stays in the
    normal range (far outside it for scores: a product near 1e-300 is never a half)."""
    a_high = _SPLIT * a - (_SPLIT * a - a)
    a_low = a - a_high
    b_high = _SPLIT * b - (_SPLIT * b - b)
    b_low = b - b_high
    error: np.ndarray = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low
    return error


def round_scalar(value: float, digits: int) -> float:
    """``round(value, digits)`` for a float, in about two thirds of the time."""
    scale = _SCALES[digits]
    scaled = value * scale
    if not -_FAST_LIMIT < scaled < _FAST_LIMIT:  # also catches NaN and infinities
        return round(value, digits)
    whole = math.floor(scaled)
    fraction = scaled - whole  # exact
    if fraction == 0.5:  # the exact product's side of the half decides (rare: left to round)
        return round(value, digits)
    return (whole + 1 if fraction > 0.5 else whole) / scale


def round_exact(values: np.ndarray, digits: int) -> np.ndarray:
    """``round(v, digits)`` for every element of a float array (NaN stays NaN), without a
    Python call per element unless one lies beyond ``_FAST_LIMIT``."""
    scale = _SCALES[digits]
    scaled = values * scale
    nearest = np.rint(scaled)
    out = nearest / scale  # what np.round(values, digits) computes
    with np.errstate(invalid="ignore"):
        # NaN compares false everywhere: it stays NaN, as round keeps it. fmax and fmin skip NaN:
        # plain reductions find that no product is a half and that no value is large (as scores).
        distance = np.abs(scaled - nearest)
        halves = np.flatnonzero(distance == 0.5) if len(distance) and np.fmax.reduce(distance) == 0.5 else ()
        within = not len(scaled) or (np.fmin.reduce(scaled) > -_FAST_LIMIT and np.fmax.reduce(scaled) < _FAST_LIMIT)
        large = np.zeros(0, dtype=np.intp) if within else np.flatnonzero(np.abs(scaled) >= _FAST_LIMIT)
    if len(halves):
        product = scaled[halves]
        with np.errstate(over="ignore", invalid="ignore"):  # large values are redone below
            error = product_error(values[halves], scale, product)
        below = np.floor(product)
        out[halves] = np.where(error > 0, below + 1, np.where(error < 0, below, np.rint(product))) / scale
    if len(large):
        out[large] = [round(value, digits) for value in values[large].tolist()]
    return out
