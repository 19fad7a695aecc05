"""Bytes to text and text to JSON at the boundary: every way a file can fail to decode (not
UTF-8, JSON too deeply nested, integers too long) becomes an :class:`InputError` at ``FILE:LINE``."""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from arena_core.model.errors import ArenaError

__all__ = [
    "MAX_LINE_BYTES", "InputError", "bounded_lines", "decode_line", "decode_text", "line_too_long", "loads",
    "loads_array", "open_binary", "read_bytes", "read_lines", "read_text", "regular_descriptor",
]  # fmt: skip

#: The longest line a reader of JSON Lines parses (an agent's whole trajectory can make a line
#: of megabytes; a parser holds ten times a line's size): a longer one is refused, named, and
#: skipped a block at a time, never held whole.
MAX_LINE_BYTES = 64 << 20


class InputError(ArenaError):
    """A file could not be read or holds invalid records; each line of the message starts ``FILE:LINE:``."""


_LONG_NUMBER = re.compile(r'"([^"\\]{1,100})"\s*:\s*-?\d{4000,}')
_DEEP = re.compile(r'"([^"\\]{1,100})"\s*:\s*[\[{]')


def open_binary(path: Path) -> IO[bytes]:
    """The file opened for reading; a FIFO, device or socket is refused without blocking (a FIFO
    named like a results file would otherwise stall the reader until someone writes to it)."""
    return os.fdopen(regular_descriptor(path), "rb")


def regular_descriptor(path: Path) -> int:
    """A descriptor of ``path`` open for reading, refused (and closed) unless it is a regular
    file, never blocking on a FIFO; the caller closes it.

    :raises InputError: ``FILE: cannot read: ...`` or ``FILE: not a regular file``."""
    return _regular(path)[0]


def _regular(path: str | Path) -> tuple[int, int]:
    """:func:`regular_descriptor` with the file's size from the same ``fstat``."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise InputError(f"{path}: not a regular file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, found.st_size


def read_bytes(path: str | Path) -> bytes:
    """A regular file's bytes read from its descriptor in as many reads as its size asks (one,
    unless it grows): an importer reads thousands of small files, and a buffered file object
    around each cost more than the read.

    :raises InputError: ``FILE: cannot read: ...`` or ``FILE: not a regular file``."""
    fd, size = _regular(path)
    try:
        chunks = []
        wanted = size + 1  # one byte more: the end is seen in the same read
        while chunk := os.read(fd, wanted):
            chunks.append(chunk)
            wanted = 1 << 20
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def decode_line(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{where}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} of the line); "
            "save the file as UTF-8"
        ) from None


def bounded_lines(fh: IO[bytes], limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes) of each line of a binary file, ``None`` for a line longer than
    ``limit`` bytes: what is past the limit is read and dropped a block at a time."""
    number = 0
    while raw := fh.readline(limit + 1):
        number += 1
        if len(raw) > limit and not raw.endswith(b"\n"):
            while (rest := fh.readline(1 << 20)) and not rest.endswith(b"\n"):
                pass
            yield number, None
        else:
            yield number, raw


def line_too_long(where: str, limit: int = MAX_LINE_BYTES) -> InputError:
    """The error of a line :func:`bounded_lines` did not read."""
    return InputError(f"{where}: the line is longer than {limit:,} bytes, the most a line may hold; not read")


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of a file read as UTF-8, one line at a time.

    :raises InputError: at a line that is not UTF-8, or longer than :data:`MAX_LINE_BYTES`.
    """
    with open_binary(path) as fh:
        for number, raw in bounded_lines(fh):
            if raw is None:
                raise line_too_long(f"{path}:{number}")
            yield number, decode_line(raw, f"{path}:{number}")


def read_text(path: str | Path) -> str:
    """A whole regular file as UTF-8 text; :raises InputError: ``FILE: cannot read`` or ``FILE:LINE:
    not UTF-8 text``."""
    return decode_text(read_bytes(path), path)


def decode_text(data: bytes, path: str | Path) -> str:
    """A whole file's bytes as UTF-8 text; :raises InputError: ``FILE:LINE: not UTF-8 text``."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); save the file as UTF-8"
        ) from None


def loads(text: str, path: str | Path, line: int | None = None) -> Any:
    """JSON decoded, every failure an :class:`InputError` at ``FILE:LINE``: syntax, nesting
    deeper than the parser's recursion limit, and integers longer than Python converts.

    orjson decodes (three to four times faster than ``json``); what it refuses is decoded again
    by ``json``, which accepts what real files hold beyond strict JSON (``NaN``, ``Infinity``,
    lone surrogates), so that the record's validation names the field, and words syntax errors
    as users know them.

    :param line: the line ``text`` is (JSON Lines); ``None`` when it is the whole file.
    """
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    where = f"{path}:{line or 1}"
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if line is None:
            raise InputError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})") from None
        raise InputError(f"{where}: invalid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        match = _DEEP.search(text)
        field = match.group(1) if match else "(record)"
        raise InputError(f"{where}: {field}: expected JSON nested less than about 1,000 levels deep") from None
    except ValueError:  # an integer beyond sys.get_int_max_str_digits()
        match = _LONG_NUMBER.search(text)
        field = match.group(1) if match else "(record)"
        raise InputError(f"{where}: {field}: expected a number of at most 4,300 digits") from None


_ID = re.compile(r'"id"\s*:\s*"([^"\\]{1,200})"')


def loads_array(text: str, path: str | Path) -> Any:
    """A whole file's JSON, as :func:`loads`; when it is an array that cannot be decoded whole,
    the error names the record (its position, and its id when one can be read) instead of line
    1 of a file written on one line."""
    try:
        return loads(text, path)
    except InputError as whole:
        start = len(text) - len(text.lstrip())
        if not text.startswith("[", start):
            raise
        decoder, index, number = json.JSONDecoder(), start + 1, 0
        while True:
            index = _skip(text, index, " \t\r\n,")
            if index >= len(text) or text[index] == "]":
                raise whole from None
            number += 1
            try:
                _, index = decoder.raw_decode(text, index)
            except (ValueError, RecursionError) as exc:
                span = text[index : index + 20_000]
                found = _ID.search(span)
                named = f" (id {found.group(1)!r})" if found else ""
                where = f"{path}: record {number}{named}"
                if isinstance(exc, RecursionError):
                    raise InputError(f"{where}: expected JSON nested less than about 1,000 levels deep") from None
                if isinstance(exc, json.JSONDecodeError):
                    raise InputError(f"{where}: invalid JSON: {exc.msg}") from None
                long = _LONG_NUMBER.search(span)
                field = long.group(1) if long else "(record)"
                raise InputError(f"{where}: {field}: expected a number of at most 4,300 digits") from None


def _skip(text: str, index: int, characters: str) -> int:
    while index < len(text) and text[index] in characters:
        index += 1
    return index
