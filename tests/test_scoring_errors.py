"""Bad input and broken plugins are reported by name, never scored silently."""

from __future__ import annotations

import pytest

from arena_core import Arena, PluginError, UnknownComponentError, ValidationError, hookimpl
from arena_core.registry.manager import get_plugin_manager

SUB = {"id": "s1", "total_tokens": 3000, "tool_calls": 5}


@pytest.mark.parametrize("field", ["total_tokens", "tool_calls"])
def test_missing_required_figure_names_record_field_and_metric(arena: Arena, baseline: dict, field: str) -> None:
    sub = {k: v for k, v in SUB.items() if k != field}
    with pytest.raises(ValidationError) as info:
        arena.evaluate(sub, {"id": "t"}, baseline)
    assert info.value.record == "submission 's1'"
    assert info.value.field == field
    assert f"{field} is needed by {field.replace('total_tokens', 'token').replace('tool_calls', 'tool_call')}_efficiency" in str(info.value)


def test_unknown_category_suggests_the_closest_and_the_setting(arena: Arena, baseline: dict) -> None:
    with pytest.raises(ValidationError) as info:
        arena.evaluate(SUB, {"id": "t9", "category": "debuging"}, baseline)
    message = str(info.value)
    assert message.startswith("task 't9': category: expected a category with a weight profile")
    assert "did you mean 'debugging'?" in message
    assert "category_profiles" in message


def test_unknown_category_can_be_mapped_to_a_profile(baseline: dict) -> None:
    arena = Arena({"category_profiles": {"code_editing": "refactoring"}}, autoload=False)
    ev = arena.evaluate(SUB, {"id": "t", "category": "code_editing"}, baseline)
    assert ev.weight_profile == "refactoring"
    assert ev.weights["efficiency"] == 0.45


def test_unknown_difficulty_is_an_error_not_a_multiplier_of_one(arena: Arena, baseline: dict) -> None:
    with pytest.raises(ValidationError, match=r"task 't': difficulty: expected one of beginner, intermediate, advanced, beginner_rescaled, intermediate_rescaled, advanced_rescaled; did you mean 'advanced'\?, got 'advance'"):
        arena.evaluate(SUB, {"id": "t", "difficulty": "advance"}, baseline)


def test_unknown_criterion_type_is_an_error_not_a_pass(arena: Arena, baseline: dict) -> None:
    task = {"id": "t", "success_criteria": [{"type": "no_errors"}, {"type": "file_exist", "file_path": "a"}]}
    with pytest.raises(ValidationError) as info:
        arena.evaluate(SUB, task, baseline)
    assert info.value.field == "success_criteria.1.type"
    assert "did you mean 'file_exists'?" in str(info.value)


def test_criterion_without_its_parameter_is_an_error(arena: Arena, baseline: dict) -> None:
    with pytest.raises(ValidationError, match=r"success_criteria.0.file_path: expected the path of the file"):
        arena.evaluate(SUB, {"id": "t", "success_criteria": [{"type": "file_exists"}]}, baseline)


def test_submission_for_another_task_is_refused(arena: Arena, baseline: dict) -> None:
    with pytest.raises(ValidationError, match=r"submission 's1': task_id: expected 't2', the task it is scored on, got 't1'"):
        arena.evaluate({**SUB, "task_id": "t1"}, {"id": "t2"}, baseline)


def test_unknown_configured_metric_is_refused_at_construction() -> None:
    with pytest.raises(UnknownComponentError, match=r"slot 'token_efficiency': no metric named 'token_eficiency'.*did you mean 'token_efficiency'"):
        Arena({"metrics": {"token_efficiency": "token_eficiency"}}, autoload=False)


def test_unknown_profile_in_configuration_is_refused_at_construction() -> None:
    with pytest.raises(UnknownComponentError, match="no weight profile named 'refactor'"):
        Arena({"category_profiles": {"code_editing": "refactor"}}, autoload=False)


class _Broken:
    name = "broken"
    requires = ()

    def __init__(self, result: object) -> None:
        self.result = result

    def score(self, submission, task, baseline):
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def _arena_with(metric: object) -> Arena:
    class Plugin:
        @hookimpl
        def arena_register_metrics(self):
            return [metric]

    pm = get_plugin_manager(autoload=False)
    pm.register(Plugin(), name="broken-plugin")
    return Arena({"metrics": {"speed": "broken"}}, plugin_manager=pm)


@pytest.mark.parametrize("result", [ZeroDivisionError("boom"), 150.0, float("nan"), -1.0])
def test_broken_metric_is_named_with_its_plugin(baseline: dict, result: object) -> None:
    arena = _arena_with(_Broken(result))
    with pytest.raises(PluginError) as info:
        arena.evaluate(SUB, {"id": "t"}, baseline)
    assert "metric 'broken' (plugin 'broken-plugin')" in str(info.value)
    assert "submission 's1'" in str(info.value)


def test_crashing_checker_fails_its_criterion_and_records_why(baseline: dict) -> None:
    class Crash:
        type = "crash"

        def check(self, submission, criterion, task):
            raise OSError("disk gone")

    class Plugin:
        @hookimpl
        def arena_register_criterion_checkers(self):
            return [Crash()]

    pm = get_plugin_manager(autoload=False)
    pm.register(Plugin(), name="crashy")
    ev = Arena(plugin_manager=pm).evaluate(
        SUB, {"id": "t", "success_criteria": [{"type": "crash"}, {"type": "no_errors"}]}, baseline
    )
    assert ev.correctness_score == 50.0
    assert ev.criteria[0].status == "error"
    assert ev.criteria[0].reason == "OSError: disk gone"
    assert ev.criteria[1].status == "passed"


def test_composite_metrics_in_a_cycle_are_refused() -> None:
    from arena_core.engine.composite import WeightedSum

    class Plugin:
        @hookimpl
        def arena_register_metrics(self):
            return [WeightedSum("loop_a", {"loop_b": 1.0}), WeightedSum("loop_b", {"loop_a": 1.0})]

    pm = get_plugin_manager(autoload=False)
    pm.register(Plugin(), name="loops")
    with pytest.raises(PluginError, match="cycle: loop_a -> loop_b -> loop_a"):
        Arena({"metrics": {"loop_a": "loop_a"}}, plugin_manager=pm)


def test_a_record_without_an_id_is_named_by_its_position_in_every_entry_point() -> None:
    from arena_core import Arena, ValidationError
    from arena_core.store import MemoryStore

    arena = Arena(autoload=False)
    good = {"id": "a", "task_id": "t", "total_tokens": 10, "tool_calls": 1}
    nameless = {"task_id": "t", "total_tokens": 10, "tool_calls": 1}
    calls = [
        lambda: arena.evaluate_many([good, good | {"id": "b"}, nameless], {"t": {"id": "t"}}),
        lambda: arena.evaluate_many([good, nameless | {"workspace": "."}], {"t": {"id": "t"}}),
        lambda: arena.process([good, nameless], store=MemoryStore(), tasks={"t": {"id": "t"}}),
        lambda: arena.compute_baseline("t", [nameless]),
    ]
    records = []
    for call in calls:
        try:
            call()
        except ValidationError as error:
            records.append((error.record, error.field, error.code))
    assert records == [
        ("submission at position 2 (no id)", "id", "missing_field"),
        ("submission at position 1 (no id)", "id", "missing_field"),
        ("submission at position 1 (no id)", "id", "missing_field"),
        ("submission at position 0 (no id)", "id", "missing_field"),
    ]


GOOD = {"category": "debugging", "success_criteria": [{"type": "no_errors"}]}
BAD_CRITERION = {"category": "debugging", "success_criteria": [{"type": "nope"}]}
BAD_CATEGORY = {"category": "debuging", "success_criteria": [{"type": "no_errors"}]}


@pytest.mark.parametrize(
    ("kinds", "expected"),
    [
        ([GOOD, BAD_CRITERION, BAD_CATEGORY, BAD_CATEGORY, BAD_CRITERION], "task 't1': success_criteria.0.type: expected a registered criterion type"),
        ([GOOD, GOOD, BAD_CATEGORY, BAD_CRITERION, BAD_CATEGORY], "task 't2': category: expected a category with a weight profile"),
    ],
)
def test_many_tasks_name_the_first_invalid_task_in_order(arena: Arena, kinds: list, expected: str) -> None:
    """Tasks are checked once per kind (category, difficulty, criteria), yet the error names the
    first invalid task in the given order, whichever kind it is."""
    tasks = {f"t{k}": {"id": f"t{k}", **kind} for k, kind in enumerate(kinds)}
    runs = [{"id": f"s{k}", "task_id": f"t{k}", "total_tokens": 10, "tool_calls": 1} for k in range(len(kinds))]
    with pytest.raises(ValidationError) as info:
        arena.evaluate_many(runs, tasks)
    assert str(info.value).startswith(expected)
