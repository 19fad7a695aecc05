"""The README and docs show what the code does: their examples run and their output is current."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


def _blocks(path: Path, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", path.read_text(), flags=re.S)


@pytest.mark.parametrize("page", ["README.md", "docs/embedding.md", "docs/baselines-and-rankings.md", "docs/store.md",
                                  "docs/performance.md"])
def test_python_examples_run(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # examples may write files such as arena.db
    namespace: dict = {"__name__": "docs_example"}
    for block in _blocks(ROOT / page, "python"):
        exec(compile(block, page, "exec"), namespace)


def test_readme_starts_with_the_two_commands() -> None:
    commands = _blocks(ROOT / "README.md", "bash")[:2]
    assert commands == ["pip install . && arena leaderboard --example\n", "pip install -e '.[test]' && python -m pytest\n"]
    assert "pip install -e '.[test]' && python -m pytest" in (ROOT / ".ci" / "run").read_text()


def test_readme_shows_the_current_leaderboard() -> None:
    shown = _blocks(ROOT / "README.md", "text")[0]
    printed = subprocess.run(
        [sys.executable, "-m", "arena_core", "leaderboard", "--example"], capture_output=True, text=True, check=True
    ).stdout
    assert shown == printed


def test_the_ab_testing_walkthrough_shows_current_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each console block's command, run in a directory holding the page's arena.toml, prints
    exactly what the page shows; its Python block runs there too."""
    page = ROOT / "docs" / "ab-testing.md"
    (tmp_path / "arena.toml").write_text(_blocks(page, "toml")[0])
    consoles = _blocks(page, "console")
    assert len(consoles) == 2
    for block in consoles:
        command, _, shown = block.partition("\n")
        assert command.startswith("$ arena ")
        line = command.removeprefix("$ ").replace("arena ", f"{sys.executable} -m arena_core ", 1)
        printed = subprocess.run(["bash", "-c", line], capture_output=True, text=True, check=True, cwd=tmp_path,
                                 env={**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"}).stdout
        assert shown == printed, command
    monkeypatch.chdir(tmp_path)
    for block in _blocks(page, "python"):
        exec(compile(block, str(page), "exec"), {"__name__": "docs_example"})


def _doc_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "examples").rglob("*.md"))]


def test_every_module_path_and_dotted_name_in_the_docs_exists() -> None:
    """A moved or renamed module shows up here rather than as a dead reference in a page."""
    import importlib

    missing = []
    for page in _doc_pages():
        text = page.read_text()
        for path in sorted(set(re.findall(r"\b(?:arena_core|plugins)/[\w/]+\.py\b", text))):
            if not (ROOT / path).exists():
                missing.append(f"{page.relative_to(ROOT)}: {path}")
        for dotted in sorted(set(re.findall(r"\barena_(?:core|plugins)(?:\.\w+)+", text))):
            parts = dotted.split(".")
            for i in range(len(parts), 0, -1):
                try:
                    obj: object = importlib.import_module(".".join(parts[:i]))
                except ImportError:
                    continue
                try:
                    for attribute in parts[i:]:
                        obj = getattr(obj, attribute)
                except AttributeError:
                    missing.append(f"{page.relative_to(ROOT)}: {dotted}")
                break
            else:
                missing.append(f"{page.relative_to(ROOT)}: {dotted}")
    assert not missing, "\n".join(missing)
