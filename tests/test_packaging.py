"""The built wheel ships the core, the built-in plugins and the example data, and nothing bare."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_wheel_contents(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(tmp_path), str(ROOT)],
        check=True, capture_output=True, text=True,
    )
    (wheel,) = tmp_path.glob("arena_core-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {n.split("/")[0] for n in names}
    assert top_level == {"arena_core", "arena_plugins", wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1] + ".dist-info"}
    for expected in ("arena_plugins/metrics.py", "arena_core/examples/submissions.jsonl", "arena_core/examples/tasks.json",
                     "arena_core/py.typed"):
        assert expected in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "arena = arena_core.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
