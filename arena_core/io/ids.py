"""64-bit hashes of ids, to find an id used twice among more runs than memory holds as strings.

Eight bytes a run instead of a Python string; equal hashes are only candidates, confirmed on the
ids themselves. The hash is computed from an Arrow string array's buffers with NumPy (a
polynomial over the bytes, then a mixing step), so every process computes the same value, which
Python's salted ``hash`` of a string does not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arena_core.io.arrays import string_buffers, valid

__all__ = ["id_hashes"]

_BASE = np.uint64(0x100000001B3)
_MIX = np.uint64(0xBF58476D1CE4E5B9)


def id_hashes(column: Any) -> np.ndarray:
    """Per value of an Arrow string column, a 64-bit hash (0 for a null, which the checks refuse)."""
    offsets, data = string_buffers(column)
    lengths = np.diff(offsets)
    out = np.zeros(len(lengths), dtype=np.uint64)
    if len(data) > int(offsets[0]):
        out = _horner(data, offsets[:-1], lengths)
    with np.errstate(over="ignore"):
        out ^= lengths.astype(np.uint64) * _MIX
        out ^= out >> np.uint64(31)
        out *= _MIX
        out ^= out >> np.uint64(29)
    present = valid(column)
    if present is not None:
        out[~present] = 0
    return out


def _horner(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, step: int = 2) -> np.ndarray:
    """Per string, the polynomial of its bytes taken eight at a time (a little-endian word, the
    last one's missing bytes zero) by Horner's rule, a word position at a time over every string
    at once; every ``step`` positions the strings that have ended are dropped, so the work is the
    words plus ``step`` per string, however long the longest. Two strings of one length that
    differ in one word never share a value (the base is odd)."""
    padded = np.zeros(len(data) + 8, dtype=np.uint8)
    padded[: len(data)] = data
    words = np.ndarray((len(data) + 1,), dtype="<u8", buffer=padded, strides=(1,))  # a word at every byte
    out = np.zeros(len(starts), dtype=np.uint64)
    rows = np.flatnonzero(lengths > 0)
    done = 0
    with np.errstate(over="ignore"):
        while len(rows):
            first, length, value = starts[rows], lengths[rows], out[rows]
            for position in range(done, done + step):
                left = length - 8 * position
                word = words[np.where(left > 0, first + 8 * position, 0)]
                kept = np.where(left >= 8, 64, np.maximum(left, 0) * 8).astype(np.uint64)
                mask = np.where(kept == 64, ~np.uint64(0), (np.uint64(1) << (kept & np.uint64(63))) - np.uint64(1))
                value = np.where(left > 0, value * _BASE + (word & mask) + np.uint64(1), value)
            out[rows] = value
            done += step
            rows = rows[length > 8 * done]
    return out
