"""Plugin discovery, blocking, clashes and listing."""

from __future__ import annotations

import importlib.metadata
import json
import re
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arena_core import (
    Arena,
    DuplicateComponentError,
    PluginError,
    PluginLoadError,
    UnknownComponentError,
    ValidationError,
    hookimpl,
)
from arena_core.registry.manager import DEFAULT_PLUGINS, DISABLED_PLUGINS_ENV, get_plugin_manager


class _FakeDist:
    """Just enough of importlib.metadata.Distribution for the loader."""

    def __init__(self, name: str, version: str, entry_points: list[importlib.metadata.EntryPoint]) -> None:
        self.metadata = {"name": name}
        self.version = version
        self.entry_points = entry_points


@pytest.fixture
def fake_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Install plugin modules (source text by module name) behind fake entry points."""

    def install(modules: dict[str, str], dist: str = "arena-fake", version: str = "0.3") -> None:
        eps = []
        for module, source in modules.items():
            (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
            eps.append(importlib.metadata.EntryPoint(module.removeprefix("fake_"), module, "arena_core"))
        eps.append(importlib.metadata.EntryPoint("unrelated", "no_such_module", "console_scripts"))
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.setattr(importlib.metadata, "distributions", lambda: [_FakeDist(dist, version, eps)])

    return install


CHECKER_PLUGIN = """
    from arena_core import hookimpl

    class Always:
        type = "always"
        def check(self, submission, criterion, task):
            return True

    @hookimpl
    def arena_register_criterion_checkers():
        return [Always()]
"""


def test_entry_point_plugin_is_loaded_used_and_listed(fake_plugin, baseline: dict) -> None:
    fake_plugin({"fake_always": CHECKER_PLUGIN})
    arena = Arena(autoload=True)
    ev = arena.evaluate({"id": "s", "total_tokens": 1, "tool_calls": 1}, {"id": "t", "success_criteria": [{"type": "always"}]}, baseline)
    assert ev.criteria[0].status == "passed"
    info = {p.name: p for p in arena.plugins()}["always"]
    assert (info.distribution, info.version, info.builtin) == ("arena-fake", "0.3", False)
    assert info.components == {"checkers": ("always",)}
    assert info.hooks == ("arena_register_criterion_checkers",)


def test_autoload_off_skips_entry_points(fake_plugin) -> None:
    fake_plugin({"fake_always": CHECKER_PLUGIN})
    assert "always" not in Arena().components.checkers  # the suite sets ARENA_DISABLE_PLUGIN_AUTOLOAD
    assert "always" in Arena(autoload=True).components.checkers


@pytest.mark.parametrize("how", ["config", "argument", "environment"])
def test_blocked_plugin_is_never_imported(fake_plugin, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    fake_plugin({"fake_always": "raise RuntimeError('must not be imported')"})
    if how == "config":
        arena = Arena({"disabled_plugins": ["always"]}, autoload=True)
    elif how == "argument":
        arena = Arena(autoload=True, blocked=("always",))
    else:
        monkeypatch.setenv(DISABLED_PLUGINS_ENV, "other, always")
        arena = Arena(autoload=True)
    listed = {p.name: p for p in arena.plugins()}
    assert listed["always"].blocked


def test_import_failure_names_plugin_and_distribution(fake_plugin) -> None:
    fake_plugin({"fake_bad": "import no_such_dependency_xyz"}, dist="arena-bad", version="9.9")
    with pytest.raises(PluginLoadError) as info:
        Arena(autoload=True)
    message = str(info.value)
    assert "plugin 'bad'" in message and "arena-bad 9.9" in message
    assert "ModuleNotFoundError" in message


def test_hook_with_unknown_argument_is_refused_at_load(fake_plugin) -> None:
    fake_plugin({"fake_typo": """
        from arena_core import hookimpl
        @hookimpl
        def arena_register_metrics(settings):
            return []
    """})
    with pytest.raises(PluginLoadError, match=r"plugin 'typo'.*could not be registered"):
        Arena(autoload=True)


def test_clashing_component_names_both_plugins_and_the_distribution(fake_plugin) -> None:
    fake_plugin({"fake_clash": """
        from arena_core import hookimpl
        class MyFileExists:
            type = "file_exists"
            def check(self, submission, criterion, task):
                return True
        @hookimpl
        def arena_register_criterion_checkers():
            return [MyFileExists()]
    """}, dist="arena-clash", version="1.0")
    with pytest.raises(DuplicateComponentError) as info:
        Arena(autoload=True)
    assert str(info.value) == (
        "criterion checker 'file_exists' is registered by both built-in plugin 'checkers' "
        "and plugin 'clash' (distribution arena-clash 1.0)"
    )


def test_component_of_the_wrong_shape_is_refused() -> None:
    class Plugin:
        @hookimpl
        def arena_register_metrics(self):
            return [object()]

    pm = get_plugin_manager(autoload=False)
    pm.register(Plugin(), name="shapeless")
    with pytest.raises(PluginError, match="plugin 'shapeless' registered <object object .*>, which is not a valid metric"):
        Arena(plugin_manager=pm)


@pytest.mark.parametrize("name", sorted(set(DEFAULT_PLUGINS) - {"metrics", "intervals"}))
def test_builtins_are_listed_and_blockable_by_name(name: str) -> None:
    listed = {p.name: p for p in Arena(autoload=False).plugins()}
    assert listed[name].builtin and not listed[name].blocked and listed[name].components
    entries = [p for p in Arena(autoload=False, blocked=(name,)).plugins() if p.name == name]
    assert len(entries) == 1 and entries[0].blocked and not entries[0].components  # listed once, as blocked


def test_blocking_the_builtin_metrics_needs_replacements() -> None:
    with pytest.raises(UnknownComponentError, match="slot 'efficiency': no metric named 'efficiency'"):
        Arena(autoload=False, blocked=("metrics",))


def test_blocking_the_builtin_intervals_needs_a_replacement() -> None:
    with pytest.raises(UnknownComponentError, match="no interval method named 'spec' is registered"):
        Arena(autoload=False, blocked=("intervals",))


def test_a_blocked_builtin_can_be_replaced_under_the_same_names(baseline: dict) -> None:
    class Flat:
        requires = ()

        def __init__(self, name: str) -> None:
            self.name = name

        def score(self, submission, task, baseline):
            return 42.0

    class Replacement:
        @hookimpl
        def arena_register_metrics(self):
            return [Flat(n) for n in ("efficiency", "speed", "cost", "correctness")]

    pm = get_plugin_manager(autoload=False, blocked=("metrics",))
    pm.register(Replacement(), name="flat")
    ev = Arena(plugin_manager=pm).evaluate({"id": "s"}, {"id": "t"}, baseline)
    assert ev.overall_score == 42.0 and set(ev.scores.values()) == {42.0}


def test_blocking_the_weight_profiles_leaves_a_clear_error(baseline: dict) -> None:
    arena = Arena(autoload=False, blocked=("weights",))
    with pytest.raises(ValidationError, match="expected a category with a weight profile"):
        arena.evaluate({"id": "s", "total_tokens": 1, "tool_calls": 1}, {"id": "t"}, baseline)


def test_listing_without_builtins() -> None:
    assert Arena(autoload=False).plugins(include_builtins=False) == []


# ---------------------------------------------------------------------------
# A real distribution, built and installed with pip, found through its entry point.
# ---------------------------------------------------------------------------

ROOT = Path(__file__).parent.parent
EXAMPLE = Path(__file__).parent / "example_plugin"

PROBE = """
import json, sys
from arena_core import Arena, to_dict
plugins = [dict(name=p.name, distribution=p.distribution, version=p.version, blocked=p.blocked,
                components={k: list(v) for k, v in p.components.items()}) for p in Arena().plugins()]
try:
    arena = Arena({"metrics": {"cost": "frugal_cost"}})
    ev = to_dict(arena.evaluate(
        {"id": "s", "total_tokens": 10, "tool_calls": 1, "files_created": ["tests/test_app.py"]},
        {"id": "t", "success_criteria": [{"type": "has_tests"}]},
        dict(median_tokens=5, min_tokens=1, max_tokens=100, median_tool_calls=1, min_tool_calls=0,
             max_tool_calls=5, median_execution_time=300, min_execution_time=60, max_execution_time=1800,
             median_cost=0.05, min_cost=0.01, max_cost=0.2, median_iterations=1)))
except Exception as exc:
    ev = {"error": type(exc).__name__ + ": " + str(exc)}
print(json.dumps({"plugins": plugins, "evaluation": ev}))
"""


@pytest.fixture(scope="module")
def installed_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    source = shutil.copytree(EXAMPLE, tmp_path_factory.mktemp("src") / "example_plugin")  # builds leave files behind
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(source)]
    subprocess.run(command, check=True, capture_output=True, text=True)
    return target


def _probe(site: Path, **env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    environ.update(env, PYTHONPATH=str(site))
    out = subprocess.run([sys.executable, "-c", PROBE], check=True, capture_output=True, text=True, env=environ)
    return json.loads(out.stdout)


def test_installed_distribution_is_discovered_used_and_listed(installed_example: Path) -> None:
    result = _probe(installed_example)
    example = {p["name"]: p for p in result["plugins"]}["example"]
    assert example == {
        "name": "example", "distribution": "arena-example-plugin", "version": "1.2.0", "blocked": False,
        "components": {"metrics": ["frugal_cost"], "checkers": ["has_tests"]},
    }
    ev = result["evaluation"]
    assert ev["correctness_score"] == 100.0  # has_tests passed
    assert ev["cost_score"] == 0.0  # frugal_cost fills the cost slot: no cost, no credit


def test_blocking_the_installed_distribution_removes_it(installed_example: Path) -> None:
    result = _probe(installed_example, **{DISABLED_PLUGINS_ENV: "example"})
    example = {p["name"]: p for p in result["plugins"]}["example"]
    assert example["blocked"] and example["components"] == {}
    assert "error" in result["evaluation"]  # its metric is gone, so the configuration no longer resolves
    assert "no metric named 'frugal_cost'" in result["evaluation"]["error"]


def _page_blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", (ROOT / "docs" / "plugins.md").read_text(), flags=re.S)


def test_the_plugins_page_shows_the_example_plugin_and_what_arena_plugins_prints(installed_example: Path) -> None:
    assert _page_blocks("python")[0] == (EXAMPLE / "arena_example_plugin" / "__init__.py").read_text()
    console = _page_blocks("console")[0]
    command, _, shown = console.partition("\n")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    environ["PYTHONPATH"] = str(installed_example)
    printed = subprocess.run([sys.executable, "-m", "arena_core", *command.split()[2:]], capture_output=True,
                             text=True, env=environ, check=True).stdout
    assert printed == shown


def test_the_plugins_page_shows_the_errors_for_a_disabled_and_a_blocked_component() -> None:
    from arena_core.model.records import Task
    from arena_core.model.serde import structure

    shown = [b for b in _page_blocks("text") if "disabled_components" in b][0].splitlines()
    task = structure({"id": "t1", "success_criteria": [{"type": "file_exists", "file_path": "a.py"}]}, Task)
    for line, arena in zip(shown, (Arena({"disabled_components": ["file_exists"]}, autoload=False),
                                   Arena(autoload=False, blocked=("checkers",))), strict=True):
        with pytest.raises(ValidationError) as caught:
            arena.scorer.check_task(task)
        assert re.fullmatch(".*".join(map(re.escape, line.split("..."))), str(caught.value)), str(caught.value)


def test_the_plugins_page_testing_example_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE))
    namespace: dict = {"__name__": "docs_plugins"}
    exec(compile(_page_blocks("python")[1], "docs/plugins.md", "exec"), namespace)
    namespace["test_has_tests"]()
