"""Named scoring profiles: ``[profiles.NAME]`` tables and profile files, each the base
configuration with its own keys on top."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena_core.config.files import ConfigError, load_config

BASE = """
baseline_scope = "task"
confidence_interval = "spec"

[missing]
total_tokens = "reweight"

[profiles.robust]
confidence_interval = "bootstrap"
baseline_scope = "task_tool"

[profiles.robust.missing]
tool_calls = "neutral"

[profiles.robust.weights.default]
efficiency = 0.4
speed = 0.2
cost = 0.1
correctness = 0.3
"""


def test_a_profile_is_the_base_with_its_keys_on_top(tmp_path: Path) -> None:
    (tmp_path / "arena.toml").write_text(BASE)
    loaded = load_config(tmp_path / "arena.toml")
    name, robust = loaded.profile("robust")
    assert name == "robust"
    assert (robust.confidence_interval, robust.baseline_scope) == ("bootstrap", "task_tool")
    assert robust.missing["total_tokens"] == "reweight" and robust.missing["tool_calls"] == "neutral"  # tables merge
    assert robust.weights["default"]["efficiency"] == 0.4
    assert loaded.profile("default") == ("default", loaded.config)
    assert loaded.config.confidence_interval == "spec" and loaded.config.weights == {}


def test_a_profile_file_is_loaded_on_top_of_the_base(tmp_path: Path) -> None:
    (tmp_path / "arena.toml").write_text(BASE)
    (tmp_path / "student.toml").write_text('confidence_interval = "student_t"\n')
    name, config = load_config(tmp_path / "arena.toml").profile(str(tmp_path / "student.toml"))
    assert (name, config.confidence_interval, config.missing["total_tokens"]) == ("student", "student_t", "reweight")


def test_profile_errors_name_the_profile_and_the_key(tmp_path: Path) -> None:
    (tmp_path / "arena.toml").write_text(BASE + '\n[profiles.typo]\nbaseline_scop = "task"\n')
    with pytest.raises(ConfigError, match=r"arena.toml: profiles.typo.baseline_scop: unknown key; did you mean 'baseline_scope'"):
        load_config(tmp_path / "arena.toml")
    (tmp_path / "arena.toml").write_text(BASE)
    with pytest.raises(ConfigError, match=r"no profile or .toml file named 'robustt'.*robust"):
        load_config(tmp_path / "arena.toml").profile("robustt")


# ---------------------------------------------------------------------------
# token_efficiency_log: the logarithmic token score the spec's comment promises
# ---------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from arena_core import Arena  # noqa: E402

LOG = {"metrics": {"token_efficiency": "token_efficiency_log"}}


def test_the_log_score_follows_its_formula_and_charges_equal_ratios_equally() -> None:
    import math

    arena = Arena(LOG, autoload=False)
    base = {"median_tokens": 10_000, "min_tokens": 999, "max_tokens": 999_999, "median_tool_calls": 5,
            "min_tool_calls": 1, "max_tool_calls": 10, "median_execution_time": 300, "min_execution_time": 60,
            "max_execution_time": 1800, "median_cost": 0.05, "min_cost": 0.01, "max_cost": 0.2, "median_iterations": 1}
    scores = {}
    for tokens in (999, 31_622, 999_999, 5_000):
        ev = arena.evaluate({"id": "s", "total_tokens": tokens, "tool_calls": 1}, {"id": "t"}, base)
        scores[tokens] = ev.metric_scores["token_efficiency"]
    assert scores[999] == 100.0 and scores[999_999] == 0.0
    assert scores[31_622] == round((math.log(1e6) - math.log(31_623)) / (math.log(1e6) - math.log(1e3)) * 100, 2) == 50.0
    linear = Arena(autoload=False).evaluate({"id": "s", "total_tokens": 5_000, "tool_calls": 1}, {"id": "t"}, base)
    # Five times the minimum: almost perfect on the linear scale (99.6), a quarter off on the log one.
    assert (scores[5_000], linear.metric_scores["token_efficiency"]) == (76.7, 99.6)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 2_000_000), min_size=5, max_size=40))
def test_the_log_score_batch_form_equals_the_per_record_form(tokens: list[int]) -> None:
    import arena_core.engine.many as arena_module

    arena = Arena(LOG, autoload=False)
    subs = [{"id": f"s{i}", "task_id": "t", "total_tokens": t, "tool_calls": 3} for i, t in enumerate(tokens)]
    batch = [e.overall_score for e in arena.evaluate_many(subs, {"t": {"id": "t"}}, evaluated_at="x")]
    real = arena_module.evaluate_columns
    arena_module.evaluate_columns = lambda *args, **kwargs: None
    try:
        per_record = [e.overall_score for e in arena.evaluate_many(subs, {"t": {"id": "t"}}, evaluated_at="x")]
    finally:
        arena_module.evaluate_columns = real
    assert batch == per_record
