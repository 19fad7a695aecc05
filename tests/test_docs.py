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


def _commands(block: str) -> list[tuple[str, list[str]]]:
    """Each ``$ ...`` line of a console block with the lines the page shows it printing."""
    lines = block.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("$ ")]
    return [(lines[a], lines[a + 1 : b]) for a, b in zip(starts, [*starts[1:], len(lines)], strict=True)]


def _shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A page's ``$ arena ...`` line run in ``cwd``: in this process where it is a plain command
    (``_in_process``), else by bash, ``arena`` being this interpreter's."""
    before = Path.cwd()
    os.chdir(cwd)
    try:
        done = _in_process(command.removeprefix("$ "), cwd)
    finally:
        os.chdir(before)
    if done is not None:
        return subprocess.CompletedProcess(command, *done)
    line = command.removeprefix("$ ").replace("arena ", f"{sys.executable} -m arena_core ", 1)
    return subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"})  # fmt: skip


@pytest.mark.parametrize("page", ["README.md", "docs/embedding.md", "docs/baselines-and-rankings.md", "docs/store.md",
                                  "docs/performance.md", "docs/leaderboards.md", "docs/time.md",
                                  "docs/adaptive.md"])
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
        done = _shell(command, tmp_path)
        assert done.returncode == 0, (command, done.stderr)
        assert shown == done.stdout, command
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


def _matches(shown: list[str], printed: list[str]) -> bool:
    """The shown output equals the printed one, ``...`` standing for any text within a line and,
    alone on a line, for any number of lines (as doctest's ELLIPSIS), so pages may abbreviate
    long output and timestamps."""
    parts = []
    for line in shown:
        parts.append("(?:.*\n)*?" if line == "..." else ".*".join(re.escape(p) for p in line.split("...")) + "\n")
    return re.fullmatch("".join(parts), "".join(f"{line}\n" for line in printed)) is not None


def _in_process(command: str, cwd: Path) -> tuple[int, str, str] | None:
    """``arena ARGS [> FILE]`` run in this process (click's runner: no interpreter to start,
    a second a command on a slow machine), or ``None`` for a line that needs a shell."""
    import shlex

    from click.testing import CliRunner

    from arena_core.cli import main

    words = shlex.split(command, comments=True)
    if words[0] != "arena" or any(w in ("|", "&&", ";", "<", ">>") for w in words):
        return None
    target = None
    if ">" in words:
        at = words.index(">")
        words, target = words[:at], words[at + 1 :]
        if len(target) != 1:
            return None
    result = CliRunner().invoke(main, words[1:], catch_exceptions=False)
    if target is not None:
        (cwd / target[0]).write_text(result.stdout)
        return result.exit_code, "", result.stderr
    return result.exit_code, result.stdout, result.stderr


def test_every_command_of_the_cli_page_runs_as_written_in_an_empty_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each ``$ arena ...`` line of docs/cli.md, in page order, in a new directory (starting with
    ``arena example``): exit 0 (1 for the commands that report findings), and where the page
    shows a command's output, exactly that output (stdout, then stderr). Plain ``arena`` lines
    run in this process; lines with a pipe or a variable run in a shell."""
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "arena").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m arena_core "$@"\n')
    (shim / "arena").chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}", "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"}
    ran = shelled = 0
    for block in _blocks(ROOT / "docs" / "cli.md", "console"):
        lines = block.splitlines()
        assert lines and lines[0].startswith("$ "), block
        index = 0
        while index < len(lines):
            command = lines[index][2:]
            index += 1
            shown = []
            while index < len(lines) and not lines[index].startswith("$ "):
                shown.append(lines[index])
                index += 1
            done = _in_process(command, work)
            if done is None:
                result = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True)
                done = (result.returncode, result.stdout, result.stderr)
                shelled += 1
            code, stdout, stderr = done
            findings = any(f"arena {c}" in command for c in ("validate", "outliers"))
            assert code in ((0, 1) if findings else (0,)), f"{command}\n{stderr}"
            if shown:
                printed = stdout.splitlines() + stderr.splitlines()
                assert _matches(shown, printed), (command, printed)
            ran += 1
    assert ran >= 20 and 0 < shelled < ran


@pytest.mark.parametrize("page", ["README.md", *sorted(f"docs/importers/{p.name}" for p in (ROOT / "docs" / "importers").glob("*.md"))])
def test_every_command_of_the_importer_pages_prints_what_the_page_shows(page: str) -> None:
    """The importer pages' (and the README's) ``$ arena ...`` commands run on the real samples
    in tests/data/formats and print what the page shows."""
    samples = ROOT / "tests" / "data" / "formats"
    blocks = _blocks(ROOT / page, "console")
    assert blocks, f"{page} shows no command"
    for block in blocks:
        command, *shown = block.splitlines()
        assert command.startswith("$ arena "), block
        argv = [sys.executable, "-m", "arena_core", *command.removeprefix("$ arena ").split()]
        result = subprocess.run(argv, cwd=samples, capture_output=True, text=True,
                                env={**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"})
        assert result.returncode == 0, (command, result.stderr)
        assert _matches(shown, result.stdout.splitlines() + result.stderr.splitlines()), (command, result.stdout, result.stderr)


@pytest.mark.parametrize("page", ["docs/configuration.md", "docs/algorithms.md", "docs/plugins.md", "docs/scaling.md", "docs/leaderboards.md",
                                  "docs/writing-a-checker.md", "docs/ab-testing.md", "docs/importers/harbor.md",
                                  "docs/judges.md", "docs/time.md"])
def test_every_configuration_block_of_the_docs_is_a_valid_configuration(page: str, tmp_path: Path) -> None:
    """Each ```toml block that is a configuration (not a package's pyproject.toml) loads: its keys
    exist and its values have the right types."""
    from arena_core.config.files import load_config

    blocks = [b for b in _blocks(ROOT / page, "toml") if "[project]" not in b]
    assert blocks, page
    for block in blocks:
        (tmp_path / "arena.toml").write_text(block)
        loaded = load_config(tmp_path / "arena.toml")
        assert loaded.file_keys or loaded.profiles, block


def test_the_configuration_page_shows_the_error_for_a_misspelt_key(tmp_path: Path) -> None:
    block = _blocks(ROOT / "docs" / "configuration.md", "console")[0]
    command, _, shown = block.partition("\n")
    (tmp_path / "arena.toml").write_text('confidence_intervall = "student_t"\n')
    done = _shell(command, tmp_path)
    assert done.returncode == 2
    assert _matches(shown.splitlines(), done.stderr.replace(f"{tmp_path}/", "").splitlines())


def test_the_plugins_page_example_pyproject_is_the_example_plugins() -> None:
    shown = [b for b in _blocks(ROOT / "docs" / "plugins.md", "toml") if "[project]" in b]
    real = (ROOT / "tests" / "example_plugin" / "pyproject.toml").read_text()
    assert shown == [real]


def test_the_specs_own_code_runs_and_the_test_oracle_is_a_faithful_transcription() -> None:
    """Every ```python block of the spec runs as written; the oracle the conformance tests use
    (tests/spec_reference.py) gives exactly the spec's results on 2,000 generated cases."""
    import math
    import random
    import statistics

    import spec_reference

    spec: dict = {"math": math, "statistics": statistics}  # the spec's snippets leave out their imports
    for block in _blocks(ROOT / "docs" / "evaluation-metrics-spec.md", "python"):
        exec(compile(block, "evaluation-metrics-spec.md", "exec"), spec)
    rng = random.Random(7)
    names = ["calculate_token_efficiency_score", "calculate_tool_call_efficiency_score",
             "calculate_iteration_efficiency_score", "calculate_efficiency_score", "calculate_speed_score",
             "calculate_cost_score"]
    for _ in range(2000):
        low, high = sorted(rng.sample(range(1, 50_000), 2))
        baseline = {f"{kind}_{figure}": value for figure in ("tokens", "tool_calls", "execution_time", "cost")
                    for kind, value in (("min", low), ("median", (low + high) / 2), ("max", high))}
        baseline["median_iterations"] = rng.choice([1, 2, 3.5, 8])
        submission = {"total_tokens": rng.randint(0, 60_000), "tool_calls": rng.randint(0, 60_000),
                      "iterations": rng.choice([1, 2, 5, 13]), "execution_time": rng.choice([0, rng.uniform(1, 6e4)]),
                      "estimated_cost": rng.choice([0, rng.uniform(0.1, 6e4)])}
        for name in names:
            assert getattr(spec_reference, name)(submission, baseline) == spec[name](submission, baseline), name
        scores = [rng.uniform(0, 100) for _ in range(rng.randint(0, 12))]
        score = rng.choice(scores) if scores else 50.0
        assert spec_reference.calculate_percentile(score, scores) == spec["calculate_percentile"](score, scores)
        assert spec_reference.calculate_confidence_interval(scores) == spec["calculate_confidence_interval"](scores)


def test_the_leaderboards_page_shows_current_output(tmp_path: Path) -> None:
    """Each ``$ arena ...`` block of docs/leaderboards.md prints what the page shows (``...``
    standing for lines the page leaves out), in a directory that holds the format samples."""
    blocks = _blocks(ROOT / "docs" / "leaderboards.md", "console")
    assert len(blocks) == 8
    for sample in (ROOT / "tests" / "data" / "formats").iterdir():  # as if run there, writing nothing there
        (tmp_path / sample.name).symlink_to(sample)
    for block in blocks:
        command, *shown = block.splitlines()
        result = _shell(command, tmp_path)
        assert result.returncode == 0, (command, result.stderr)
        assert _matches(shown, result.stdout.splitlines() + result.stderr.splitlines()), (command, result.stdout)


def test_the_cost_page_shows_current_output(tmp_path: Path) -> None:
    """docs/cost.md: each ```toml block headed ``# NAME.toml`` is written to NAME.toml, then each
    ``$ arena ...`` block runs there in order and prints what the page shows (``...`` standing
    for text the page leaves out)."""
    pytest.importorskip("genai_prices")
    page = ROOT / "docs" / "cost.md"
    for block in _blocks(page, "toml"):
        name = block.splitlines()[0].removeprefix("# ").split(":")[0].split()[0]
        assert name.endswith(".toml"), block
        (tmp_path / name).write_text(block)
    blocks = _blocks(page, "console")
    assert len(blocks) == 3
    for block in blocks:
        for command, shown in _commands(block):
            result = _shell(command, tmp_path)
            assert result.returncode == 0, (command, result.stderr)
            assert _matches(shown, result.stdout.splitlines() + result.stderr.splitlines()), (command, result.stdout)


def _write_file_blocks(page: Path, folder: Path) -> None:
    """Each ```json and ```toml block headed ``# NAME`` (a file's name) written to NAME (the
    heading line of a JSON file left out)."""
    for language in ("json", "toml"):
        for block in _blocks(page, language):
            first, _, rest = block.partition("\n")
            name = first.removeprefix("# ").strip()
            if first.startswith("# ") and "." in name and " " not in name:
                (folder / name).write_text(block if language == "toml" else rest)


def test_the_judges_page_shows_current_output(tmp_path: Path) -> None:
    """docs/judges.md's worked example: its files written, each ``$ arena ...`` line run there,
    printing what the page shows."""
    page = ROOT / "docs" / "judges.md"
    _write_file_blocks(page, tmp_path)
    assert {"tasks.json", "runs.jsonl", "verdicts.jsonl", "arena.toml"} <= {p.name for p in tmp_path.iterdir()}
    ran = 0
    for block in _blocks(page, "console"):
        for command, shown in _commands(block):
            result = _shell(command, tmp_path)
            assert result.returncode == 0, (command, result.stderr)
            assert _matches(shown, result.stdout.splitlines()), (command, result.stdout)
            ran += 1
    assert ran == 2


def test_the_community_page_shows_current_output(tmp_path: Path) -> None:
    """docs/community.md: in a directory where ``arena example`` wrote the arena and its votes,
    and the page's ``# NAME.toml`` block is written, each ``$ arena ...`` line prints what the page
    shows (``...`` standing for what it leaves out)."""
    page = ROOT / "docs" / "community.md"
    assert _shell("$ arena example", tmp_path).returncode == 0
    _write_file_blocks(page, tmp_path)
    assert (tmp_path / "community.toml").exists()
    ran = 0
    for block in _blocks(page, "console"):
        for command, shown in _commands(block):
            result = _shell(command, tmp_path)
            assert result.returncode == 0, (command, result.stderr)
            assert _matches(shown, result.stdout.splitlines() + result.stderr.splitlines()), (command, result.stdout)
            ran += 1
    assert ran == 4
