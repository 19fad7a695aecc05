"""Plugins read their own [plugins.NAME] table, single components can be turned off, and metrics
can prepare per-baseline statistics once."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from arena_core import Arena, ValidationError, hookimpl
from arena_core.model.errors import PluginError, UnknownComponentError
from arena_core.registry.manager import get_plugin_manager

ROOT = Path(__file__).parent.parent


@attrs.frozen
class LimitOptions:
    limit: int = 3
    label: str = "files"


class Limited:
    """A checker whose threshold comes from the operator's configuration."""

    type = "few_files"

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def check(self, submission, criterion, task):
        return len(submission.files_created) <= self.limit


class OptionsPlugin:
    seen: list = []

    @hookimpl
    def arena_plugin_options(self):
        return LimitOptions

    @hookimpl
    def arena_register_criterion_checkers(self, options, config):
        OptionsPlugin.seen.append((options, config.command_timeout))
        return [Limited(options.limit)]


def _arena(plugin: object, config: dict | None = None, name: str = "limits") -> Arena:
    pm = get_plugin_manager(autoload=False)
    pm.register(plugin, name=name)
    return Arena(config, plugin_manager=pm)


TASK = {"id": "t", "success_criteria": [{"type": "few_files"}]}
SUB = {"id": "s", "total_tokens": 3000, "tool_calls": 5, "files_created": ["a", "b", "c", "d"]}


def test_a_plugin_gets_its_own_table_as_the_class_it_declares(baseline: dict) -> None:
    OptionsPlugin.seen.clear()
    default = _arena(OptionsPlugin())
    assert OptionsPlugin.seen == [(LimitOptions(3, "files"), 60.0)]
    assert default.evaluate(SUB, TASK, baseline).correctness_score == 0.0  # 4 files > 3
    configured = _arena(OptionsPlugin(), {"plugins": {"limits": {"limit": 5}}, "command_timeout": 9})
    assert OptionsPlugin.seen[-1] == (LimitOptions(5, "files"), 9.0)
    assert configured.evaluate(SUB, TASK, baseline).correctness_score == 100.0


@pytest.mark.parametrize(
    ("table", "field", "expected"),
    [
        ({"limit": "5"}, "plugins.limits.limit", "a whole number"),
        ({"limt": 5}, "plugins.limits.limt", "an option of plugin 'limits'; did you mean 'limit'?"),
        ({"label": 3}, "plugins.limits.label", "a string"),
    ],
)
def test_a_bad_option_names_the_plugin_and_key(table: dict, field: str, expected: str) -> None:
    with pytest.raises(ValidationError) as caught:
        _arena(OptionsPlugin(), {"plugins": {"limits": table}})
    assert (caught.value.record, caught.value.field) == ("configuration", field)
    assert caught.value.expected.startswith(expected)


def test_a_table_for_a_plugin_that_is_not_loaded_is_an_error_unless_it_is_blocked() -> None:
    with pytest.raises(ValidationError, match=r"plugins\.limts: expected the name of a loaded plugin; did you mean"):
        _arena(OptionsPlugin(), {"plugins": {"limts": {}}})
    pm = get_plugin_manager(autoload=False, blocked=["limits"])
    Arena({"plugins": {"limits": {"limit": 1}}}, plugin_manager=pm)  # blocked: its table is left alone


def test_a_plugin_without_declared_options_gets_the_table_as_a_dict() -> None:
    got = []

    class Plain:
        @hookimpl
        def arena_register_metrics(self, options):
            got.append(options)
            return []

    _arena(Plain(), {"plugins": {"plain": {"anything": [1, 2]}}}, name="plain")
    _arena(Plain(), name="plain")
    assert got == [{"anything": [1, 2]}, {}]


def test_options_that_are_not_an_attrs_class_are_a_plugin_error() -> None:
    class Wrong:
        @hookimpl
        def arena_plugin_options(self):
            return dict

    with pytest.raises(PluginError, match="arena_plugin_options returned <class 'dict'>, not an attrs class"):
        _arena(Wrong(), name="wrong")


def test_disabled_components_leave_out_one_component_and_say_so(baseline: dict) -> None:
    arena = Arena({"disabled_components": ["file_exists", "cost_percentile"]}, autoload=False)
    assert "file_exists" not in arena.scorer.checkers() and "tests_pass" in arena.scorer.checkers()
    assert "cost_percentile" not in arena.components.metrics and "cost" in arena.components.metrics
    task = {"id": "t", "success_criteria": [{"type": "file_exists", "file_path": "a.py"}]}
    with pytest.raises(ValidationError, match="'file_exists' of plugin 'checkers' is disabled by disabled_components"):
        arena.scorer.check_task(_task(task))
    with pytest.raises(UnknownComponentError, match="'cost_percentile' of plugin 'metrics' is disabled"):
        Arena({"disabled_components": ["cost_percentile"], "metrics": {"cost": "cost_percentile"}}, autoload=False)
    listed = {i.name: i for i in arena.plugins()}
    assert listed["checkers"].disabled == {"checkers": ("file_exists",)}
    assert listed["metrics"].disabled == {"metrics": ("cost_percentile",)}


def _task(data: dict):
    from arena_core.model.records import Task
    from arena_core.model.serde import structure

    return structure(data, Task)


def test_a_misspelt_disabled_component_is_an_error_not_a_silent_no_op() -> None:
    with pytest.raises(ValidationError, match="disabled_components: expected names of registered components; did you mean 'file_exists'"):
        Arena({"disabled_components": ["file_exist"]}, autoload=False)


def test_a_blocked_plugins_criterion_says_the_plugin_was_blocked() -> None:
    arena = Arena(autoload=False, blocked=("checkers",))
    with pytest.raises(ValidationError, match="blocked plugins, which may provide it, were not loaded: checkers"):
        arena.scorer.check_task(_task({"id": "t", "success_criteria": [{"type": "file_exists", "file_path": "a"}]}))


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return subprocess.run([sys.executable, "-m", "arena_core", *args], capture_output=True, text=True, cwd=cwd, env=env)


def test_the_cli_disables_a_component_or_a_plugin_by_name(tmp_path: Path) -> None:
    assert _cli("example", cwd=tmp_path).returncode == 0
    scored = _cli("score", "runs.jsonl", "--tasks", "tasks.json", "-q", cwd=tmp_path)
    assert scored.returncode == 0, scored.stderr
    uses = {c["type"] for t in json.loads((tmp_path / "tasks.json").read_text()) for c in t["success_criteria"]}
    used = sorted(uses)[0]
    refused = _cli("--disable", used, "score", "runs.jsonl", "--tasks", "tasks.json", "-q", cwd=tmp_path)
    assert refused.returncode == 2
    assert f"{used!r} of plugin 'checkers' is disabled by disabled_components (or --disable)" in refused.stderr
    blocked = _cli("--disable", "checkers", "score", "runs.jsonl", "--tasks", "tasks.json", "-q", cwd=tmp_path)
    assert "blocked plugins, which may provide it, were not loaded: checkers" in blocked.stderr
    listed = _cli("--disable", "cost_percentile", "plugins", "--all", cwd=tmp_path).stdout
    assert "disabled metrics: cost_percentile" in listed
    typo = _cli("--disable", "cost_percentil", "plugins", cwd=tmp_path)
    assert typo.returncode == 2 and "did you mean 'cost_percentile'" in typo.stderr


def test_a_bad_plugin_table_in_arena_toml_names_the_file_and_key(tmp_path: Path) -> None:
    (tmp_path / "arena.toml").write_text('[plugins.nowhere]\nx = 1\n')
    done = _cli("plugins", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(f"Error: {tmp_path / 'arena.toml'}: plugins.nowhere: expected the name of a loaded plugin")
    (tmp_path / "arena.toml").write_text('[plugins]\nmetrics = 3\n')
    done = _cli("plugins", cwd=tmp_path)
    assert "plugins.metrics: expected a table of the plugin's options, got 3" in done.stderr


class ZScoreTokens:
    """A rating metric: tokens as a z-score against the task's other submissions, from samples."""

    name = "token_zscore"
    requires = ("total_tokens",)
    needs_samples = ("total_tokens",)
    prepared_for: list = []

    def __init__(self, mean: float | None = None, sd: float | None = None) -> None:
        self.mean, self.sd = mean, sd

    def prepare(self, baseline):
        values = baseline.samples.get("total_tokens", ())
        ZScoreTokens.prepared_for.append(baseline.task_id)
        if len(values) < 2:
            return ZScoreTokens(baseline.median_tokens, 1.0)
        return ZScoreTokens(statistics.fmean(values), statistics.stdev(values) or 1.0)

    def score(self, submission, task, baseline):
        z = (submission.total_tokens - self.mean) / self.sd
        return max(0.0, min(100.0, 50.0 - 20.0 * z))


def test_a_metric_prepares_once_per_baseline_and_scores_against_it() -> None:
    class Plugin:
        @hookimpl
        def arena_register_metrics(self):
            return [ZScoreTokens()]

    arena = _arena(Plugin(), {"metrics": {"token_efficiency": "token_zscore"}}, name="rating")
    runs = [{"id": f"{t}-{i}", "task_id": t, "total_tokens": 1000 * (i + 1) + (7 if t == "b" else 0), "tool_calls": 4}
            for t in ("a", "b") for i in range(6)]
    ZScoreTokens.prepared_for.clear()
    result = arena.evaluate_many(runs, {"a": {"id": "a"}, "b": {"id": "b"}})
    assert result.path == "per-record"
    assert sorted(ZScoreTokens.prepared_for) == ["a", "b"]  # once per baseline, not per record
    values = [1000.0 * (i + 1) for i in range(6)]
    mean, sd = statistics.fmean(values), statistics.stdev(values)
    by_id = {e.submission_id: e for e in result}
    for i in range(6):
        expected = max(0.0, min(100.0, 50.0 - 20.0 * (values[i] - mean) / sd))
        assert by_id[f"a-{i}"].metric_scores["token_efficiency"] == round(expected, 2)
    ZScoreTokens.prepared_for.clear()
    arena.evaluate(runs[0], {"id": "a"}, arena.default_baseline)  # a single evaluation prepares too
    assert ZScoreTokens.prepared_for == [arena.default_baseline.task_id]


def test_a_prepare_that_returns_no_metric_is_a_plugin_error(baseline: dict) -> None:
    class Broken(ZScoreTokens):
        def prepare(self, baseline):
            return 42

    class Plugin:
        @hookimpl
        def arena_register_metrics(self):
            return [Broken()]

    arena = _arena(Plugin(), {"metrics": {"token_efficiency": "token_zscore"}}, name="rating")
    with pytest.raises(PluginError, match=r"prepare\(\) returned 42, not a metric"):
        arena.evaluate({"id": "s", "total_tokens": 1, "tool_calls": 1}, {"id": "t"}, baseline)
