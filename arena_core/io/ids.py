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
#: The low bytes of a word, by how many are kept (0 to 8).
_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)


def id_hashes(column: Any) -> np.ndarray:
    """Per value of an Arrow string column, a 64-bit hash (0 for a null, which the checks refuse)."""
    offsets, data = string_buffers(column)
    lengths = np.diff(offsets)
    same = len(lengths) and int(lengths.min()) == int(lengths.max())
    with np.errstate(over="ignore"):
        if same and lengths[0]:  # one length: its term of the mix is one number
            out = _horner_fixed(data[int(offsets[0]) : int(offsets[-1])], int(lengths[0]))
            out ^= np.uint64(int(lengths[0])) * _MIX
        else:
            out = np.zeros(len(lengths), dtype=np.uint64)
            if len(data) > int(offsets[0]):
                out = _horner(data, offsets[:-1], lengths)
            out ^= lengths.astype(np.uint64) * _MIX
        out ^= out >> np.uint64(31)
        out *= _MIX
        out ^= out >> np.uint64(29)
    present = valid(column)
    if present is not None:
        out[~present] = 0
    return out


def _horner_fixed(data: np.ndarray, length: int) -> np.ndarray:
    """:func:`_horner` of strings all ``length`` bytes long, laid end to end in ``data`` (ids
    often are: UUIDs, numbered names): the bytes as a table of zero-padded words, a column of
    words at a time, without looking up where each string's words are."""
    width = -(-length // 8)
    padded = np.zeros((len(data) // length, 8 * width), dtype=np.uint8)
    padded[:, :length] = data.reshape(-1, length)
    words = padded.view("<u8")
    out = np.zeros(len(padded), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for position in range(width):
            out = out * _BASE + words[:, position] + np.uint64(1)
    return out


def _horner(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, step: int = 2) -> np.ndarray:
    """Per string, the polynomial of its bytes taken eight at a time (a little-endian word, the
    last one's missing bytes zero) by Horner's rule, a word position at a time over every string
    at once; every ``step`` positions the strings that have ended are dropped, so the work is the
    words plus ``step`` per string, however long the longest. Two strings of one length that
    differ in one word never share a value (the base is odd)."""
    padded = np.zeros(len(data) + 8 * step + 8, dtype=np.uint8)  # a string's next words may be read
    padded[: len(data)] = data
    words = np.ndarray((len(data) + 8 * step + 1,), dtype="<u8", buffer=padded, strides=(1,))  # a word at every byte
    out = np.zeros(len(starts), dtype=np.uint64)
    rows = None if lengths.min() > 0 else np.flatnonzero(lengths > 0)  # None: every string
    first, length, value = (starts, lengths, out) if rows is None else (starts[rows], lengths[rows], out[rows])
    done = 0
    with np.errstate(over="ignore"):
        while len(length):
            for position in range(done, done + step):
                kept = np.clip(length - 8 * position, 0, 8)  # bytes of the string in this word
                word = words[first + 8 * position] & _MASKS[kept]
                value = np.where(kept > 0, value * _BASE + word + np.uint64(1), value)
            done += step
            if rows is None:
                out, rows = value, np.arange(len(out))
            else:
                out[rows] = value
            going = length > 8 * done
            rows, first, length, value = rows[going], first[going], length[going], value[going]
    return out
