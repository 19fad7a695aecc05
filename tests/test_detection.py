"""Telling a folder's format: listed once for the importers that tell their output by a file in
it, each file's head read once for all of them, with the answers each importer gives alone."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from arena_core import Arena
from arena_core.importing import heads
from arena_core.importing.collect import detect_format
from arena_core.importing.heads import peek, shared_heads
from arena_core.io.decoding import InputError

FORMATS = Path(__file__).parent / "data" / "formats"


@pytest.fixture(scope="module")
def importers() -> list:
    return list(Arena(autoload=False).components.importers.values())


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """Harbor trials, a mini-swe-agent trajectory whose version lies past the first 4 KB (not
    named ``*.traj.json``, so only its head tells it), a SWE-bench report and unrelated JSON."""
    folder = tmp_path / "mixed"
    for index in range(3):
        shutil.copytree(FORMATS / "harbor-current" / "continued__e1", folder / "job" / f"trial-{index}")
    trajectory = json.loads((FORMATS / "mini-swe-agent-current" / "toolcall.traj.json").read_text())
    info = trajectory.pop("info")
    info["config"] = {"padding": "x" * 6000, **info.get("config", {})}  # mini_version after 6 KB
    (folder / "deep").mkdir(parents=True)
    (folder / "deep" / "run.json").write_text(json.dumps({"info": info, **trajectory}))
    shutil.copy(next((FORMATS / "swe-bench").glob("sb-cli-report*.json")), folder / "report.json")
    for index in range(5):
        (folder / f"other-{index}.json").write_text(json.dumps({"n": index, "text": "y" * (3000 * index)}))
    return folder


def test_each_importer_claims_what_it_claims_alone_and_each_head_is_read_once(
    importers: list, mixed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alone = [i.name for i in importers if i.detect(mixed)]  # each detector on its own reads
    assert {"harbor", "mini-swe-agent", "swebench"} <= set(alone)
    reads: Counter[str] = Counter()
    real = heads._head

    def counted(path: Path, size: int) -> bytes:
        reads[str(path)] += 1
        return real(path, size)

    monkeypatch.setattr(heads, "_head", counted)
    with pytest.raises(InputError) as raised:
        detect_format(importers, [mixed])
    message = str(raised.value)
    claims = message[message.index("(") + 1 : message.rindex("); give it with --from")].split("; ")
    assert [claim.split(":")[0] for claim in claims] == alone  # the same importers, in their order
    assert reads and max(reads.values()) == 1, reads.most_common(3)  # every head read once


def test_no_further_file_is_asked_once_every_file_detector_has_claimed(importers: list, tmp_path: Path) -> None:
    """A detector without ``detect_file`` is asked about the folder; those with one are asked
    file by file until all have claimed it."""

    class ByFolder:
        name = "by-folder"
        asked: list[Path] = []

        def detect(self, path: Path) -> bool:
            self.asked.append(path)
            return False

    class ByFile:
        name = "by-file"
        seen: list[str] = []

        def detect(self, path: Path) -> bool:
            raise AssertionError("a folder is asked of detect_file")

        def detect_file(self, path: Path) -> bool:
            self.seen.append(path.name)
            return path.name == "mine.txt"

    for index in range(20):
        (tmp_path / f"f{index}.txt").write_text("x")
    (tmp_path / "mine.txt").write_text("x")
    assert detect_format([ByFolder(), ByFile()], [tmp_path]) == "by-file"
    assert ByFolder.asked == [tmp_path]
    assert ByFile.seen[-1] == "mine.txt" and len(ByFile.seen) == len(set(ByFile.seen))
    (tmp_path / "mine.txt").unlink()
    ByFile.seen.clear()
    assert detect_format([ByFolder(), ByFile()], [tmp_path]) is None
    assert sorted(ByFile.seen) == sorted(f"f{index}.txt" for index in range(20))  # every file, once


@pytest.mark.parametrize("length", [0, 100, 4096, 5000, 70_000, 200_000])
def test_a_shared_head_is_the_head_asked_for_in_any_order(tmp_path: Path, length: int) -> None:
    """Within ``shared_heads`` a head read for one size serves the next only where it holds it
    (or was the whole file); a larger size is read again, and another file is its own."""
    data = bytes(range(256)) * (length // 256 + 1)
    first, second = tmp_path / "a", tmp_path / "b"
    first.write_bytes(data[:length])
    second.write_bytes(data[1 : length + 1])
    sizes = [512, 2048, 4096, 1 << 16, 100_000, 10, 1 << 16]
    with shared_heads():
        for size in sizes:
            assert peek(first, size) == data[: min(size, length)]
            assert peek(first, size) == data[: min(size, length)]
        assert peek(second, 512) == data[1 : 1 + min(512, length)]
        assert peek(first, 512) == data[: min(512, length)]
    assert peek(first, 100_000) == data[: min(100_000, length)]


def test_a_link_leaving_the_folder_is_not_opened_to_tell_its_format(importers: list, tmp_path: Path) -> None:
    """Detection looks only at what an import would read: a link to a trial's ``result.json``
    outside the folder would make it Harbor's (a copy does), yet the link is not followed."""
    outside = tmp_path / "elsewhere" / "result.json"
    outside.parent.mkdir()
    shutil.copy(FORMATS / "harbor-current" / "continued__e1" / "result.json", outside)
    copied, linked = tmp_path / "copied" / "trial", tmp_path / "linked" / "trial"
    copied.mkdir(parents=True)
    linked.mkdir(parents=True)
    shutil.copy(outside, copied / "result.json")
    (linked / "result.json").symlink_to(outside)
    assert (linked / "result.json").read_bytes() == outside.read_bytes()  # the link resolves
    assert detect_format(importers, [copied.parent]) == "harbor"
    assert detect_format(importers, [linked.parent]) is None
