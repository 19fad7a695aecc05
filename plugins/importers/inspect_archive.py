"""Members of an Inspect ``.eval`` archive, read within bounds, zstd included.

Inspect 0.3.206 and later compress ``.eval`` members with Zstandard (zip method 93) by default;
Python's ``zipfile`` reads that method only from 3.14. Before that, the member's compressed
bytes are read straight from the archive (after its local header) and expanded by the
``zstandard`` binding, never past :data:`MAX_MEMBER_BYTES`: a few kilobytes of a zip bomb would
otherwise become gigabytes in the reader. The members of one archive together may expand to
:data:`EXPANSION_RATIO` times the archive's size (at least :data:`MAX_MEMBER_BYTES`): thirty
members each just under the bound are refused when what they add up to passes that, whatever
their headers claim (:class:`Expansion`).
"""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path
from typing import Any

import zstandard

from arena_core.io.decoding import InputError, loads

__all__ = ["EXPANSION_RATIO", "MAX_MEMBER_BYTES", "ZSTANDARD", "ArchiveTooLarge", "Expansion", "member"]

#: The most one member of an ``.eval`` archive may expand to.
MAX_MEMBER_BYTES = 256 << 20
#: How many times its size an archive's members may expand to, together: Inspect's JSON
#: compresses 5 to 30 times; a bomb, thousands of times.
EXPANSION_RATIO = 200


class ArchiveTooLarge(InputError):
    """The archive's members expand past what the archive may: nothing more of it is read."""


class Expansion:
    """What the members of one archive may still expand to, in all."""

    def __init__(self, path: Path, archive: zipfile.ZipFile) -> None:
        self.path = path
        self.allowed = max(MAX_MEMBER_BYTES, EXPANSION_RATIO * path.stat().st_size)
        self.left = self.allowed
        declared = sum(info.file_size for info in archive.infolist())
        if declared > self.allowed:
            raise ArchiveTooLarge(self._refusal(f"its members declare {declared:,} bytes"))

    def spend(self, name: str, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise ArchiveTooLarge(self._refusal(f"{name} takes what its members expand to past that"))

    def _refusal(self, why: str) -> str:
        return (
            f"{self.path}: expands past {self.allowed:,} bytes ({EXPANSION_RATIO} times its size, at least "
            f"{MAX_MEMBER_BYTES:,}): {why}; not read further"
        )


#: The zip compression method number of Zstandard.
ZSTANDARD = 93
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, ..., file name length, extra field length


def member(archive: zipfile.ZipFile, path: Path, name: str, expansion: Expansion | None = None) -> Any:
    """The JSON of member ``name``; an :class:`InputError` naming the file and member when it is
    missing, too large, unreadable or not JSON, an :class:`ArchiveTooLarge` when it takes the
    archive's ``expansion`` past its bound."""
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise InputError(f"{path}: {name}: expected in the archive, not there") from None
    if info.file_size > MAX_MEMBER_BYTES:
        raise InputError(
            f"{path}: {name}: expands to {info.file_size:,} bytes, over the {MAX_MEMBER_BYTES:,}-byte limit"
        )
    bound = MAX_MEMBER_BYTES if expansion is None else min(MAX_MEMBER_BYTES, max(expansion.left, 0))
    try:
        raw = _read(archive, info, bound)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise InputError(f"{path}: {name}: not readable: {exc}") from None
    if expansion is not None:
        expansion.spend(name, len(raw))
    if len(raw) > MAX_MEMBER_BYTES:
        raise InputError(f"{path}: {name}: expands past the {MAX_MEMBER_BYTES:,}-byte limit")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: {name}: not UTF-8 text") from None
    return loads(text, f"{path}: {name}")


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, bound: int) -> bytes:
    """The member's bytes, at most one past ``bound`` whatever its header claims."""
    try:
        with archive.open(info) as opened:
            return opened.read(bound + 1)
    except NotImplementedError:
        if info.compress_type != ZSTANDARD:
            raise ValueError(f"compression method {info.compress_type} is not one Inspect writes") from None
    fp = archive.fp
    if fp is None:
        raise ValueError("the archive is closed")
    fp.seek(info.header_offset)
    signature, name_length, extra_length = _LOCAL_HEADER.unpack(fp.read(_LOCAL_HEADER.size))
    if signature != b"PK\x03\x04":
        raise ValueError("no local file header where the directory says")
    fp.seek(info.header_offset + _LOCAL_HEADER.size + name_length + extra_length)
    compressed = fp.read(info.compress_size)
    chunks: list[bytes] = []
    size = 0
    try:
        with zstandard.ZstdDecompressor().stream_reader(compressed) as reader:
            while size <= bound and (chunk := reader.read(1 << 20)):
                chunks.append(chunk)
                size += len(chunk)
        return b"".join(chunks)
    except zstandard.ZstdError as exc:
        raise ValueError(f"bad zstd data: {exc}") from None
