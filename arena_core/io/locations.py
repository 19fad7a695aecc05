"""Where Parquet runs are: local files, folders of shards (hive partitions included), or object
storage (``s3://``, ``gs://``, ``hf://`` and any fsspec URL, with the ``remote`` extra).

Every local input, whether named by a path or by a URL of the local filesystem (``file://``,
``local://``), goes through the same checks: no link in a folder of shards is followed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from arena_core.io.decoding import InputError
from arena_core.io.shards import glob_root, hidden, shard_files

__all__ = ["is_url", "parquet_files", "path_of"]

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
#: fsspec's names of the local filesystem: a URL of one is read as the path it names.
_LOCAL = ("file://", "local://")


def is_url(text: str | Path) -> bool:
    """Whether an input is a URL (``s3://bucket/runs/``; ``file://`` and ``local://`` ones are read
    as the local paths they name) rather than a path."""
    return bool(_URL.match(str(text)))


def parquet_files(given: Sequence[str | Path]) -> tuple[Any, list[tuple[str, str | None]]]:
    """(the fsspec filesystem or ``None``, each Parquet file with the folder given that holds it)."""
    given = [_local(g) for g in given]  # local, links checked
    remote = [str(g) for g in given if is_url(g)]
    if remote and len(remote) != len(given):
        raise InputError(f"{remote[0]}: give local files or URLs, not both")
    if not remote:
        local = [Path(g) for g in given]
        shards = shard_files(local)
        found: list[tuple[str, str | None]] = (
            [(str(local[0]), None)] if shards is None else [(str(f), str(root)) for f, root in shards]
        )
        for name, _ in found:
            if not name.lower().endswith(".parquet"):
                raise InputError(f"{name}: the streaming path reads Parquet files")
            if not Path(name).is_file():
                raise InputError(f"{name}: no such file")
        return None, found
    try:
        import fsspec  # type: ignore[import-untyped]
    except ImportError:
        raise InputError(f"{remote[0]}: reading URLs needs fsspec: pip install 'arena-core[remote]'") from None
    filesystem = None
    found = []
    for url in remote:
        try:
            filesystem, path = fsspec.core.url_to_fs(url)
            protocol = url.split("://", 1)[0]
            if any(c in path for c in "*?[") and not filesystem.exists(path):  # a glob
                matched = sorted(f for f in filesystem.glob(path) if f.lower().endswith(".parquet"))
                if not matched:
                    raise InputError(f"{url}: no file matches")
                root = f"{protocol}://{glob_root(PurePosixPath(path))}"  # its key=value folders are keys
                found += [(f"{protocol}://{f}", root) for f in matched]
            elif filesystem.isdir(path):
                inside = sorted(f for f in filesystem.find(path) if f.lower().endswith(".parquet"))
                inside = [f for f in inside if not hidden(PurePosixPath(f), PurePosixPath(path))]
                if not inside:
                    raise InputError(f"{url}: no .parquet files there")
                found += [(f"{protocol}://{f}", f"{protocol}://{path.rstrip('/')}") for f in inside]
            elif filesystem.exists(path):
                found.append((url, None))
            else:
                raise InputError(f"{url}: no such file")
        except InputError:
            raise
        except ImportError as exc:
            raise InputError(f"{url}: this kind of URL needs a package: {exc}") from None
        except Exception as exc:  # credentials, network, a bucket that does not exist
            raise InputError(f"{url}: cannot read: {type(exc).__name__}: {exc}") from None
    return filesystem, found


def path_of(name: str) -> str:
    """A URL without its scheme (what an fsspec filesystem takes), a local path unchanged."""
    return name.split("://", 1)[1] if is_url(name) else name


def _local(given: str | Path) -> str | Path:
    """A URL of the local filesystem as the path it names (``file:///a/b``, ``local:///a/b``)."""
    text = str(given)
    for scheme in _LOCAL:
        if text.startswith(scheme):
            return Path(text[len(scheme) :])
    return given
