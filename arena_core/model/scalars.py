"""The converter's hooks for single values: exact types, nothing repaired.

``"12"`` is not a number, ``"false"`` is not a boolean and a string is not a list of files; a
whole number may be given as ``3.0``. Each hook raises :class:`FieldError`, which the converter
turns into a :class:`~arena_core.model.errors.ValidationError` naming the record and field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, NewType

__all__ = [
    "SIZE_EXPECTED",
    "ByteSize",
    "FieldError",
    "parse_size",
    "structure_bool",
    "structure_float",
    "structure_int",
    "structure_mapping",
    "structure_size",
    "structure_str",
    "structure_str_tuple",
]


class FieldError(Exception):
    """Raised by the strict hooks; turned into a ValidationError naming the record."""

    def __init__(self, expected: str, got: Any) -> None:
        super().__init__(expected)
        self.expected = expected
        self.got = got


def structure_int(value: Any, _: type) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FieldError("a whole number", value)
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise FieldError("a whole number", value)
        return int(value)
    return value


def structure_float(value: Any, _: type) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FieldError("a number", value)
    return float(value)


def structure_str(value: Any, _: type) -> str:
    if not isinstance(value, str):
        raise FieldError("a string", value)
    return value


def structure_bool(value: Any, _: type) -> bool:
    if not isinstance(value, bool):
        raise FieldError("true or false", value)
    return value


def structure_str_tuple(value: Any, _: type) -> tuple[str, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise FieldError("a list of strings", value)
    for item in value:
        if not isinstance(item, str):
            raise FieldError("a list of strings", value)
    return tuple(value)


#: How deep a record's free-form table (``meta``) may nest: deeper ones are refused where they
#: are read, rather than found by a recursion error when they are written or stored.
MAX_NESTING = 100


def structure_mapping(value: Any, _: type) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise FieldError("a table (mapping)", value)
    if nesting(value) > MAX_NESTING:
        raise FieldError(f"a table nested at most {MAX_NESTING} levels deep", "(deeper)")
    return dict(value)


def nesting(value: Any) -> int:
    """How deep tables and lists nest in ``value`` (a number or a string: 0), without recursion,
    stopping once past :data:`MAX_NESTING`."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if depth > deepest:
            deepest = depth
            if deepest > MAX_NESTING:
                break
        for child in contents(item):  # a scalar, most of what a meta holds, is passed at one look
            if type(child) not in JSON_SCALARS and isinstance(child, (Mapping, list, tuple)):
                pending.append((child, depth + 1))
    return deepest


#: What JSON's scalars decode to: never a table or a list (a walk of nested values passes them
#: at one look).
JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def contents(value: Any) -> Any:
    """What a table or a list holds (a table's values), as :func:`nesting` walks it; nothing for
    anything else."""
    return value.values() if isinstance(value, Mapping) else value if isinstance(value, (list, tuple)) else ()


#: Bytes, given as a whole number or a size such as ``"512M"`` (sizes in the configuration).
ByteSize = NewType("ByteSize", int)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
SIZE_EXPECTED = 'a number of bytes or a size such as "512M" or "2G"'


def parse_size(value: Any) -> int | None:
    """Bytes from a positive whole number or a size string (``"512M"``, ``"2G"``, ``"64k"``,
    ``"1GiB"``); ``None`` when ``value`` is neither."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value > 0 else None
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGTkmgt]?)(?:i?[Bb])?\s*", value)
        if match and float(match[1]) > 0:
            return int(float(match[1]) * _UNITS[match[2].upper()])
    return None


def structure_size(value: Any, _: type) -> int:
    size = parse_size(value)
    if size is None:
        raise FieldError(SIZE_EXPECTED, value)
    return size
