"""The project installs the way users install it: a wheel or an sdist in a fresh virtual environment.

An editable install hides a package missing from the build (the source tree is on ``sys.path``), so
these tests build the distributions from a copy of the tree, install each into a new venv with no
access to the source, and run the README's first command there.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
#: Source directory -> the name it ships under.
SHIPPED = {"arena_core": "arena_core", "plugins": "arena_plugins"}
BUILD_LEFTOVERS = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", "*.pyc", ".hypothesis",
                                         ".pytest_cache", ".mypy_cache", ".ruff_cache", "*.db", ".venv")


def _run(*args: str | Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    assert result.returncode == 0, f"{' '.join(map(str, args))} failed:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def distributions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The wheel and the sdist, built from a copy of the tree so the checkout stays clean."""
    work = tmp_path_factory.mktemp("dist")
    source = work / "arena-core"
    shutil.copytree(ROOT, source, ignore=BUILD_LEFTOVERS)
    out = work / "out"
    _run(sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", out, source)
    (wheel,) = out.glob("arena_core-*.whl")
    (sdist,) = out.glob("arena_core-*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


def _source_files() -> set[str]:
    """Every file of the shipped packages as the wheel should name it, compiled files aside."""
    names = set()
    for directory, shipped_as in SHIPPED.items():
        for path in (ROOT / directory).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                names.add(f"{shipped_as}/{path.relative_to(ROOT / directory).as_posix()}")
    return names


def test_the_wheel_ships_every_file_of_the_source_tree(distributions: dict[str, Path]) -> None:
    names = zipfile.ZipFile(distributions["wheel"]).namelist()
    shipped = {n for n in names if ".dist-info/" not in n}
    expected = _source_files()
    assert not expected - shipped, f"missing from the wheel: {sorted(expected - shipped)}"
    assert not shipped - expected, f"in the wheel but not in the source tree: {sorted(shipped - expected)}"
    assert {n.split("/")[0] for n in shipped} == {"arena_core", "arena_plugins"}
    assert {"arena_core/service/app.py", "arena_core/cli/serving.py"} <= shipped  # arena serve
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "arena = arena_core.cli:main" in zipfile.ZipFile(distributions["wheel"]).read(entry_points).decode()


def test_the_sdist_holds_every_file_of_the_source_tree(distributions: dict[str, Path]) -> None:
    with tarfile.open(distributions["sdist"]) as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if m.isfile()}
    expected = {f"{directory}/{name.split('/', 1)[1]}" for name in _source_files()
                for directory, shipped_as in SHIPPED.items() if name.startswith(shipped_as + "/")}
    assert not expected - members, f"missing from the sdist: {sorted(expected - members)}"
    assert {"pyproject.toml", "setup.py", "README.md"} <= members


def test_the_readme_first_command_works_from_the_wheel(distributions: dict[str, Path], tmp_path: Path) -> None:
    """The wheel installed into a venv (over this machine's packages, so no dependency is fetched:
    .ci/run installs into a bare venv, dependencies and all), then the README's command, run
    outside the source tree: it imports the installed files, not the checkout's, and prints the
    README's table."""
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--system-site-packages", venv)
    binaries = venv / ("Scripts" if os.name == "nt" else "bin")
    _run(binaries / "python", "-m", "pip", "install", "--quiet", "--no-deps", "--disable-pip-version-check",
         distributions["wheel"])  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}
    location = _run(binaries / "python", "-c", "import arena_core, arena_plugins; print(arena_core.__file__, arena_plugins.__file__)",
                    cwd=tmp_path, env=env).stdout  # fmt: skip
    assert all(Path(found).is_relative_to(venv) for found in location.split()), f"imported from {location.strip()}"
    printed = _run(binaries / "arena", "leaderboard", "--example", cwd=tmp_path, env=env).stdout
    readme_table = re.findall(r"```text\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)[0]
    assert printed == readme_table
    # arena serve is shipped, and without the service extra (FastAPI made unimportable here) says
    # how to get it, in one line.
    assert "Serve the arena over HTTP" in _run(binaries / "arena", "serve", "--help", cwd=tmp_path, env=env).stdout
    without = subprocess.run([binaries / "python", "-c", "import sys; sys.modules['fastapi'] = None; "
                              "from arena_core.cli import main; main(['serve', 'token', 'list'])"],
                             cwd=tmp_path, env=env, capture_output=True, text=True)  # fmt: skip
    assert without.returncode == 2 and "pip install 'arena-core[service]'" in without.stderr, without.stderr
