"""The default configuration reproduces the spec's calculate_overall_score to the last digit."""

from __future__ import annotations

import pytest
import spec_reference as spec
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core import Arena, to_dict

# ---------------------------------------------------------------------------
# Generated inputs: small integer ranges on purpose, so that values often land exactly on a
# baseline's min, median or max, where the formulas change branch.
# ---------------------------------------------------------------------------


@st.composite
def baselines(draw: st.DrawFn) -> dict:
    def triple(lo: int, hi: int, scale: float = 1.0) -> tuple[float, float, float]:
        values = sorted(draw(st.lists(st.integers(lo, hi), min_size=3, max_size=3)))
        return tuple(v * scale if scale != 1.0 else v for v in values)  # type: ignore[return-value]

    tk = triple(0, 40, 100.0)
    tc = triple(0, 20)
    et = triple(1, 40, 30.0)
    co = triple(1, 30, 0.01)
    return {
        "min_tokens": tk[0], "median_tokens": tk[1], "max_tokens": tk[2],
        "min_tool_calls": tc[0], "median_tool_calls": tc[1], "max_tool_calls": tc[2],
        "min_execution_time": et[0], "median_execution_time": et[1], "max_execution_time": et[2],
        "min_cost": co[0], "median_cost": co[1], "max_cost": co[2],
        "median_iterations": draw(st.sampled_from([1, 1.5, 2, 3, 4, 5, 7.5])),
    }


FILES = ["app.py", "README.md", "tests/test_app.py"]


@st.composite
def submissions(draw: st.DrawFn) -> dict:
    sub = {
        "id": "s",
        "total_tokens": draw(st.integers(0, 4200)) * 1,
        "tool_calls": draw(st.integers(0, 22)),
    }
    if draw(st.booleans()):
        sub["iterations"] = draw(st.integers(1, 12))
    if draw(st.booleans()):
        sub["execution_time"] = draw(st.one_of(st.just(0), st.integers(0, 1300).map(float)))
    if draw(st.booleans()):
        sub["estimated_cost"] = draw(st.one_of(st.just(0.0), st.integers(0, 35).map(lambda c: c * 0.01)))
    if draw(st.booleans()):
        sub["success"] = draw(st.booleans())
    if draw(st.booleans()):
        sub["files_created"] = draw(st.lists(st.sampled_from(FILES), unique=True))
    return sub


@st.composite
def tasks(draw: st.DrawFn) -> dict:
    criteria = draw(
        st.lists(
            st.one_of(
                st.sampled_from(FILES).map(lambda f: {"type": "file_exists", "file_path": f}),
                st.just({"type": "no_errors"}),
            ),
            max_size=4,
        )
    )
    return {"id": "t", "success_criteria": criteria}


SCORE_KEYS = ("overall_score", "efficiency_score", "speed_score", "cost_score", "correctness_score", "breakdown")


def _spec_part(evaluation: dict) -> dict:
    return {k: evaluation[k] for k in SCORE_KEYS}


@settings(max_examples=800, deadline=None)
@given(submissions(), tasks(), baselines())
def test_overall_score_equals_spec(arena: Arena, submission: dict, task: dict, baseline: dict) -> None:
    expected = spec.calculate_overall_score(submission, task, baseline)
    assert _spec_part(to_dict(arena.evaluate(submission, task, baseline))) == expected


@settings(max_examples=300, deadline=None)
@given(
    submissions(), tasks(), baselines(),
    st.sampled_from(sorted(spec.TASK_CATEGORY_WEIGHTS)),
    st.sampled_from(["beginner", "intermediate", "advanced"]),
)
def test_category_weights_and_difficulty_follow_spec(
    arena: Arena, submission: dict, task: dict, baseline: dict, category: str, difficulty: str
) -> None:
    ev = arena.evaluate(submission, {**task, "category": category, "difficulty": difficulty}, baseline)
    weights = spec.TASK_CATEGORY_WEIGHTS[category]
    parts = {
        "efficiency": spec.calculate_efficiency_score(submission, baseline),
        "speed": spec.calculate_speed_score(submission, baseline),
        "cost": spec.calculate_cost_score(submission, baseline),
        "correctness": spec.calculate_correctness_score(submission, task),
    }
    unadjusted = sum(parts[d] * weights[d] for d in ("efficiency", "speed", "cost", "correctness"))
    assert ev.weights == weights
    assert ev.weight_profile == category
    assert ev.difficulty == difficulty
    assert ev.unadjusted_overall_score == round(unadjusted, 2)
    assert ev.overall_score == round(spec.apply_difficulty_adjustment(unadjusted, difficulty), 2)


# ---------------------------------------------------------------------------
# Every branch of every formula, at its boundary, checked against the oracle and a literal.
# ---------------------------------------------------------------------------

B = {
    "min_tokens": 1000, "median_tokens": 5000, "max_tokens": 10000,
    "min_tool_calls": 2, "median_tool_calls": 10, "max_tool_calls": 30,
    "min_execution_time": 60, "median_execution_time": 300, "max_execution_time": 1800,
    "min_cost": 0.01, "median_cost": 0.05, "max_cost": 0.20,
    "median_iterations": 3,
}
BASE_SUB = {"id": "s", "total_tokens": 5500, "tool_calls": 16}


@pytest.mark.parametrize(
    ("field", "value", "metric", "expected"),
    [
        ("total_tokens", 999, "token_efficiency", 100.0),
        ("total_tokens", 1000, "token_efficiency", 100.0),
        ("total_tokens", 5500, "token_efficiency", 50.0),
        ("total_tokens", 10000, "token_efficiency", 0.0),
        ("total_tokens", 10001, "token_efficiency", 0.0),
        ("tool_calls", 1, "tool_call_efficiency", 100.0),
        ("tool_calls", 2, "tool_call_efficiency", 100.0),
        ("tool_calls", 16, "tool_call_efficiency", 50.0),
        ("tool_calls", 30, "tool_call_efficiency", 0.0),
        ("tool_calls", 31, "tool_call_efficiency", 0.0),
        ("iterations", 1, "iteration_efficiency", 100.0),
        ("iterations", 2, "iteration_efficiency", 85.0),
        ("iterations", 3, "iteration_efficiency", 70.0),  # at the median
        ("iterations", 4, "iteration_efficiency", 40.0),  # above the median
        ("iterations", 8, "iteration_efficiency", 0.0),  # floored at 0
    ],
)
def test_efficiency_part_boundaries(arena: Arena, field: str, value: float, metric: str, expected: float) -> None:
    sub = {**BASE_SUB, field: value}
    ev = arena.evaluate(sub, {"id": "t"}, B)
    assert ev.metric_scores[metric] == expected
    oracle = {
        "token_efficiency": spec.calculate_token_efficiency_score,
        "tool_call_efficiency": spec.calculate_tool_call_efficiency_score,
        "iteration_efficiency": spec.calculate_iteration_efficiency_score,
    }[metric]
    assert oracle(sub, B) == expected


def test_iteration_floor_of_50_up_to_a_high_median(arena: Arena) -> None:
    sub = {**BASE_SUB, "iterations": 6}
    ev = arena.evaluate(sub, {"id": "t"}, {**B, "median_iterations": 10})
    assert ev.metric_scores["iteration_efficiency"] == 50.0 == spec.calculate_iteration_efficiency_score(
        sub, {**B, "median_iterations": 10}
    )


@pytest.mark.parametrize(
    ("extra", "dimension", "expected"),
    [
        ({}, "speed", 50.0),  # time missing
        ({"execution_time": 0}, "speed", 50.0),  # the spec's "0 means missing"
        ({"execution_time": 30}, "speed", 100.0),
        ({"execution_time": 60}, "speed", 100.0),
        ({"execution_time": 1800}, "speed", 0.0),
        ({"execution_time": 5000}, "speed", 0.0),
        ({"execution_time": 930}, "speed", round(0.5**0.7 * 100, 2)),
        ({}, "cost", 50.0),
        ({"estimated_cost": 0.0}, "cost", 50.0),
        ({"estimated_cost": 0.005}, "cost", 100.0),
        ({"estimated_cost": 0.01}, "cost", 100.0),
        ({"estimated_cost": 0.2}, "cost", 0.0),
        ({"estimated_cost": 0.5}, "cost", 0.0),
        ({"estimated_cost": 0.105}, "cost", 50.0),
    ],
)
def test_speed_and_cost_boundaries(arena: Arena, extra: dict, dimension: str, expected: float) -> None:
    sub = {**BASE_SUB, **extra}
    ev = arena.evaluate(sub, {"id": "t"}, B)
    assert ev.scores[dimension] == expected
    oracle = spec.calculate_speed_score if dimension == "speed" else spec.calculate_cost_score
    assert round(oracle(sub, B), 2) == expected


@pytest.mark.parametrize(
    ("criteria", "sub_extra", "expected"),
    [
        ([], {}, 100.0),
        ([{"type": "no_errors"}], {"success": False}, 0.0),
        ([{"type": "no_errors"}], {}, 100.0),
        ([{"type": "file_exists", "file_path": "a.py"}, {"type": "no_errors"}], {"files_created": ["b.py"]}, 50.0),
        (
            [{"type": "file_exists", "file_path": "a.py"}, {"type": "file_exists", "file_path": "b.py"},
             {"type": "no_errors"}],
            {"files_created": ["b.py"]},
            round(2 / 3 * 100, 2),
        ),
    ],
)
def test_correctness_pass_rate(arena: Arena, criteria: list, sub_extra: dict, expected: float) -> None:
    sub = {**BASE_SUB, **sub_extra}
    task = {"id": "t", "success_criteria": criteria}
    assert arena.evaluate(sub, task, B).correctness_score == expected
    assert round(spec.calculate_correctness_score(sub, task), 2) == expected


def test_difficulty_caps_at_100(arena: Arena) -> None:
    best = {"id": "s", "total_tokens": 1, "tool_calls": 1, "execution_time": 1, "estimated_cost": 0.001}
    ev = arena.evaluate(best, {"id": "t", "difficulty": "advanced"}, B)
    assert ev.unadjusted_overall_score == 100.0
    assert ev.overall_score == 100.0


def test_intermediate_bonus_is_ten_percent_of_the_unrounded_score(arena: Arena) -> None:
    task = {"id": "t"}
    raw = (
        spec.calculate_efficiency_score(BASE_SUB, B) * 0.35
        + spec.calculate_speed_score(BASE_SUB, B) * 0.25
        + spec.calculate_cost_score(BASE_SUB, B) * 0.20
        + spec.calculate_correctness_score(BASE_SUB, task) * 0.20
    )
    hard = arena.evaluate(BASE_SUB, {**task, "difficulty": "intermediate"}, B)
    assert hard.unadjusted_overall_score == round(raw, 2)
    assert hard.overall_score == round(spec.apply_difficulty_adjustment(raw, "intermediate"), 2)
    assert hard.overall_score > hard.unadjusted_overall_score
