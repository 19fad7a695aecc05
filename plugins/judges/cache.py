"""The judges' verdict cache: content-addressed, so a verdict is reused only for the same question.

A key is the SHA-256 of the judge's identity (provider, model, every parameter that changes a
reply, the prompt template's hash) and of the rendered prompt (the requirement's text and the
evidence, whole): changing the judge, its parameters, the template or the evidence makes a new
key, and so a new request. What is kept is the reply as the judge gave it (verdict, reason,
usage, cost), so scoring again from the cache gives the same evaluation, byte for byte, and
makes no request. A reply without a verdict is never kept: it is asked again next time.

Where runs are scored into a store (the pipeline, ``arena ingest``, ``arena serve``), the cache is
the store's table ``judge_verdicts``, so that every process and host sharing the store shares it;
elsewhere, a folder (``judge_cache``; one file a verdict, written whole or not at all), readable by
its owner only.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena_core.engine.ahead import store_checked_for

__all__ = ["VerdictCache", "cache_key"]


def cache_key(identity: Mapping[str, Any], prompt: str) -> str:
    """The key of a request: the judge's identity and the prompt, hashed."""
    canonical = json.dumps(dict(identity), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(f"{canonical}\n{prompt}".encode()).hexdigest()


class VerdictCache:
    """Replies by key, in a folder (``None``: no cache; every request is made)."""

    def __init__(self, folder: str | Path | None) -> None:
        self.folder = Path(folder) if folder else None

    def get(self, key: str) -> dict[str, Any] | None:
        store = store_checked_for()
        if store is not None:
            with store.transaction(write=False) as tx:
                lookup = getattr(tx, "judge_verdict", None)  # a host's own store may keep none
                data = lookup(key) if lookup is not None else None
            if lookup is not None:
                found = json.loads(data) if data else None
                return found if isinstance(found, dict) and found.get("key") == key else None
        if self.folder is None:
            return None
        try:
            found = json.loads((self.folder / key[:2] / f"{key}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return found if isinstance(found, dict) and found.get("key") == key else None

    def put(self, key: str, reply: Mapping[str, Any]) -> None:
        store = store_checked_for()
        if store is not None:
            with store.transaction() as tx:
                keep = getattr(tx, "keep_judge_verdict", None)
                if keep is not None:
                    keep(key, json.dumps({**reply, "key": key}, sort_keys=True))
            if keep is not None:
                return
        if self.folder is None:
            return
        shard = self.folder / key[:2]
        shard.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.folder.chmod(0o700)
        handle, temporary = tempfile.mkstemp(dir=shard, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump({**reply, "key": key}, out, sort_keys=True)
            os.replace(temporary, shard / f"{key}.json")
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def stats(self) -> dict[str, int]:
        """How many verdicts the cache holds, and their bytes."""
        if self.folder is None or not self.folder.is_dir():
            return {"verdicts": 0, "bytes": 0}
        files = [p for p in self.folder.glob("??/*.json") if p.is_file()]
        return {"verdicts": len(files), "bytes": sum(p.stat().st_size for p in files)}

    def clear(self) -> int:
        """Remove every verdict; how many there were."""
        count = self.stats()["verdicts"]
        if self.folder is not None and self.folder.is_dir():
            for shard in self.folder.glob("??"):
                shutil.rmtree(shard, ignore_errors=True)
        return count
