"""The records arena-core scores: frozen attrs classes whose field names are the spec's keys.

Models validate single fields where they are declared and cross-field rules in
``__attrs_post_init__``; converting from and to plain dicts happens only at the boundary
(:mod:`arena_core.model.serde`). A validator that fails raises :class:`~arena_core.model.errors.ValidationError`
naming the record, so the message says *which* submission was wrong, not just how.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

import attrs
from attrs import field, frozen

from arena_core.model.baselines import DEFAULT_BASELINE, Baseline
from arena_core.model.checks import (
    MAX_FIGURE,
    MAX_NAME_LENGTH,
    NAME_EXPECTED,
    describe,
    frozen_mapping,
    moment,
    non_empty_str,
    number,
    optional_str,
    printable_name,
    timestamp,
)
from arena_core.model.errors import ValidationError
from arena_core.model.provenance import Provenance

__all__ = [
    "MAX_FIGURE",
    "MAX_NAME_LENGTH",
    "NAME_EXPECTED",
    "Submission",
    "TOKEN_BREAKDOWN",
    "RUN_DETAILS",
    "Task",
    "SuccessCriterion",
    "Baseline",
    "DEFAULT_BASELINE",
    "CriterionResult",
    "Evaluation",
    "WeightProfile",
    "DIMENSIONS",
]

#: The four scored dimensions of the spec, in the order its overall formula adds them.
DIMENSIONS: tuple[str, ...] = ("efficiency", "speed", "cost", "correctness")


#: The token breakdown a submission may carry beside ``total_tokens``.
TOKEN_BREAKDOWN = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
#: A submission's optional text fields beside its names: when it ran, and who served its model.
RUN_DETAILS = ("started_at", "finished_at", "provider")


def with_derived(meta: Mapping[str, Any], name: str) -> dict[str, Any]:
    """``meta`` with ``name`` added to its ``derived`` list, the figures arena-core computed rather
    than read (a ``derived`` that is not a list is kept as its first item)."""
    given = meta.get("derived", ())
    derived = list(given) if isinstance(given, list | tuple) else [given]
    return {**meta, "derived": [*derived, name]}


@frozen
class Submission:
    """What one AI coding tool spent, and achieved, on one task."""

    id: str = field(validator=printable_name)
    """Unique id of the submission; errors and rankings name it."""
    total_tokens: int | None = field(default=None, validator=number(optional=True))
    """Prompt plus completion tokens. Required by token efficiency. Derived from
    ``input_tokens + output_tokens`` when only they are given (``meta.derived`` says so)."""
    tool_calls: int | None = field(default=None, validator=number(optional=True))
    """Tool or function calls the workflow made. Required by tool-call efficiency."""
    task_id: str | None = field(default=None, validator=printable_name)
    """The task this submission answers; checked against the task it is scored with."""
    tool: str | None = field(default=None, validator=printable_name)
    """The coding tool, e.g. ``aider/diff``."""
    model: str | None = field(default=None, validator=printable_name)
    """The model behind the tool."""
    iterations: int | None = field(default=None, validator=number(1, optional=True))
    """Refinement rounds. Absent counts as 1 (the spec's rule) unless ``missing.iterations`` says otherwise."""
    execution_time: float | None = field(default=None, validator=number(optional=True))
    """Wall time in seconds. Missing (or 0, as the spec has it) scores 50 for speed."""
    estimated_cost: float | None = field(default=None, validator=number(optional=True))
    """Estimated API cost in dollars. Missing (or 0) scores 50 for cost."""
    success: bool = True
    """Whether the workflow finished without errors (the spec's default is True)."""
    files_created: tuple[str, ...] = ()
    """Paths the workflow created, relative to its workspace."""
    correctness: float | None = field(default=None, validator=number(optional=True))
    """Reported fraction of the task's tests that pass (0 to 1), as leaderboards publish it."""
    tests_passed: int | None = field(default=None, validator=number(optional=True))
    """Reported number of passing tests."""
    tests_total: int | None = field(default=None, validator=number(optional=True))
    """Reported number of tests run."""
    workspace: str | None = field(default=None, validator=attrs.validators.optional(non_empty_str))
    """Where the submission's files are: a directory, or a git repository when ``workspace_ref``
    is given. Criteria are then checked against the files themselves."""
    workspace_ref: str | None = field(default=None, validator=attrs.validators.optional(non_empty_str))
    """The git ref (commit, branch, tag) of ``workspace`` to check."""
    meta: Mapping[str, Any] = field(factory=dict, converter=frozen_mapping)
    """Free-form data kept with the record and passed through untouched."""
    input_tokens: int | None = field(default=None, validator=number(optional=True))
    """Prompt tokens, cached ones included, where the harness records them (prices need them)."""
    output_tokens: int | None = field(default=None, validator=number(optional=True))
    """Completion tokens, reasoning included."""
    cache_read_tokens: int | None = field(default=None, validator=number(optional=True))
    """Of ``input_tokens``, those read from the provider's prompt cache."""
    cache_write_tokens: int | None = field(default=None, validator=number(optional=True))
    """Of ``input_tokens``, those written to the provider's prompt cache."""
    reasoning_tokens: int | None = field(default=None, validator=number(optional=True))
    """Of ``output_tokens``, those the model spent reasoning (billed as output)."""
    started_at: str | None = field(default=None, validator=timestamp)
    """When the run started (ISO-8601; UTC when no zone is given): the date it is priced at."""
    finished_at: str | None = field(default=None, validator=timestamp)
    """When the run finished (ISO-8601); priced at when ``started_at`` is absent."""
    provider: str | None = field(default=None, validator=printable_name)
    """Who served the model (``anthropic``, ``openai``, ``bedrock``...), where the harness says:
    one model can cost differently at different providers."""

    def __attrs_post_init__(self) -> None:
        if self.total_tokens is None and self.input_tokens is not None and self.output_tokens is not None:
            object.__setattr__(self, "total_tokens", self.input_tokens + self.output_tokens)
            object.__setattr__(self, "meta", with_derived(self.meta, "total_tokens"))
        cached = (self.cache_read_tokens or 0) + (self.cache_write_tokens or 0)
        if self.input_tokens is not None and cached > self.input_tokens:
            raise ValidationError(
                describe(self), "input_tokens", f"at least the cached tokens it includes ({cached})", self.input_tokens
            )
        reasoning = self.reasoning_tokens
        if reasoning is not None and self.output_tokens is not None and reasoning > self.output_tokens:
            expected = f"at least the reasoning tokens it includes ({reasoning})"
            raise ValidationError(describe(self), "output_tokens", expected, self.output_tokens)
        if self.started_at and self.finished_at and moment(self.finished_at) < moment(self.started_at):  # type: ignore[operator]
            raise ValidationError(
                describe(self), "finished_at", f"a time after started_at ({self.started_at})", self.finished_at
            )
        if self.correctness is not None and self.correctness > 1:
            raise ValidationError(describe(self), "correctness", "a pass rate between 0 and 1", self.correctness)
        if (self.tests_passed is None) != (self.tests_total is None):
            missing = "tests_total" if self.tests_total is None else "tests_passed"
            raise ValidationError(describe(self), missing, "to be given together with tests_passed/tests_total")
        if self.workspace_ref is not None and self.workspace is None:
            raise ValidationError(describe(self), "workspace", "the git repository that workspace_ref refers to")
        if self.tests_total is not None and self.tests_passed is not None and self.tests_passed > self.tests_total:
            raise ValidationError(
                describe(self), "tests_passed", f"at most tests_total ({self.tests_total})", self.tests_passed
            )

    @property
    def pass_rate(self) -> float | None:
        """The reported test pass rate: passed/total when given, else ``correctness``."""
        if self.tests_total:
            return self.tests_passed / self.tests_total  # type: ignore[operator]
        if self.tests_total == 0:
            return None
        return self.correctness


@frozen
class SuccessCriterion:
    """One thing a submission must achieve; ``type`` selects the criterion checker."""

    type: str = field(validator=non_empty_str)
    """Name of the registered checker, e.g. ``file_exists``."""
    params: Mapping[str, Any] = field(factory=dict, converter=frozen_mapping)
    """The checker's parameters: every other key of the criterion, e.g. ``file_path``."""
    weight: float = field(default=1.0, validator=number())
    """Relative weight in the correctness score; equal weights give the spec's pass rate."""
    description: str | None = field(default=None, validator=optional_str)
    """Human-readable explanation, shown in reports."""


@frozen
class Task:
    """A coding task: what to do, how hard it is, and how success is judged."""

    id: str = field(validator=printable_name)
    """Unique id of the task."""
    category: str | None = field(default=None, validator=printable_name)
    """Selects the weight profile; ``None`` uses the ``default`` profile."""
    difficulty: str | None = field(default=None, validator=printable_name)
    """Selects the difficulty adjuster; ``None`` applies no adjustment."""
    success_criteria: tuple[SuccessCriterion, ...] = ()
    """Criteria for the correctness score; none means full correctness, as in the spec."""
    default_baseline: Baseline | None = None
    """Baseline to use while the task has too few submissions for a dynamic one."""
    meta: Mapping[str, Any] = field(factory=dict, converter=frozen_mapping)
    """Free-form data kept with the record."""
    created_at: str | None = field(default=None, validator=timestamp)
    """When the problem was published (ISO-8601 date or time): what ``--since`` and ``--until``
    choose tasks by (docs/time.md)."""


def _weights(instance: Any, attribute: attrs.Attribute[Any], value: Mapping[str, float]) -> None:
    where = f"weight profile {instance.name!r}"
    if not value:
        raise ValidationError(where, "weights", "at least one dimension")
    for dimension, weight in value.items():
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight <= 1:
            raise ValidationError(where, f"weights.{dimension}", "a number between 0 and 1", weight)
    if not math.isclose(math.fsum(value.values()), 1.0, abs_tol=1e-9):
        raise ValidationError(where, "weights", "weights that add up to 1", dict(value))


@frozen
class WeightProfile:
    """How much each scored dimension counts in the overall score, for one task category."""

    name: str = field(validator=non_empty_str)
    """The category it applies to (or ``default``)."""
    weights: Mapping[str, float] = field(converter=frozen_mapping, validator=_weights)
    """Dimension to weight, in the order the overall sum adds them; the weights add up to 1."""


CriterionStatus = Literal["passed", "failed", "not_checkable", "error", "unscored"]


@frozen
class CriterionResult:
    """The verdict of one criterion checker on one submission."""

    type: str
    """The criterion type that was checked."""
    status: CriterionStatus
    """``passed``, ``failed``, ``not_checkable`` (nothing to check it against), ``error``, or
    ``unscored`` (no verdict could be had: a judge that could not answer; left out of the
    correctness score, never counted as failed)."""
    credit: float
    """Share of the criterion earned, 0 to 1 (partial credit for, e.g., tests passed)."""
    weight: float = 1.0
    """The criterion's weight in the correctness score."""
    reason: str = ""
    """Why it failed or could not be checked; empty when it passed."""
    details: tuple[Mapping[str, Any], ...] = ()
    """What the checker found part by part, where it has parts: a ``judge`` criterion's verdict
    per requirement (``requirement``, ``verdict``, ``reason``, each judge's answer, ``cost``,
    ``cached``, ``self_judged``). Omitted from the record when empty."""

    @classmethod
    def of(cls, passed: bool, reason: str = "") -> CriterionResult:
        """Shorthand for a pass/fail verdict without partial credit (type filled in later)."""
        return cls("", "passed" if passed else "failed", 1.0 if passed else 0.0, reason=reason)


@frozen(slots=False)
class Evaluation:
    """The scores of one submission, and everything needed to tell how they were made.

    Not slotted: attrs builds a frozen dict class by writing its ``__dict__`` (a slotted frozen
    class pays an ``object.__setattr__`` call per field), so an evaluation of 21 fields is made
    in 2.1 µs instead of 3.2 µs: the single-record path makes one per call.
    """

    submission_id: str
    task_id: str
    overall_score: float
    """Weighted sum of the dimension scores, difficulty-adjusted, rounded to 2 places."""
    scores: Mapping[str, float]
    """Dimension name to score (0-100, rounded to 2 places), in weight-profile order."""
    weights: Mapping[str, float]
    """Dimension name to the weight applied."""
    weight_profile: str
    """Name of the weight profile that supplied ``weights``."""
    unadjusted_overall_score: float
    """The overall score before the difficulty adjustment, rounded to 2 places."""
    evaluated_at: str
    """ISO-8601 time of evaluation; the spec's ranking tie-breaker."""
    difficulty: str | None = None
    """Name of the difficulty adjuster applied, ``None`` when the task has no difficulty."""
    metric_scores: Mapping[str, float] = field(factory=dict)
    """Scores of the parts of composite metrics (e.g. ``token_efficiency``), rounded."""
    criteria: tuple[CriterionResult, ...] = ()
    """One verdict per success criterion of the task, in task order."""
    tool: str | None = None
    model: str | None = None
    overall_ranking: int | None = None
    """Rank within the task, filled in by ranking."""
    percentile: float | None = None
    """Percentile within the task, filled in by ranking."""
    rankings: Mapping[str, int] = field(factory=dict)
    """Dimension to rank within the task, filled in by per-metric ranking."""
    provisional: bool = False
    """Set by ranking when the submission's tool has too few submissions to be ranked reliably."""
    filled: Mapping[str, str] = field(factory=dict)
    """Metrics (by slot) whose input was missing, to the policy that filled them in
    (``neutral``: scored 50; ``reweight``: left out; ``count_as_one``: one iteration assumed).
    Every other metric was measured."""
    coverage: float | None = 1.0
    """Share of the profile's weight whose metrics were measured (0-1; a part of a composite
    carries its share of the composite's weight); ``None`` when not recorded."""
    baseline_version: int | None = None
    """The :attr:`Baseline.version` the scores were computed against, when the pipeline scored
    them from a store: with it, a stored score re-derives after later batches moved the baseline."""
    difficulty_factor: float | None = None
    """The factor a fitted difficulty multiplied the score by (``difficulty_source = "irt"``,
    :mod:`arena_core.stats.irtdifficulty`); ``None`` when the label's adjuster applied."""
    provenance: Provenance | None = field(default=None, eq=False)
    """The profile, algorithms and plugin versions that produced the scores (shared by every
    evaluation of one Arena). Not part of equality: two evaluations with the same scores are
    equal however they were made."""

    @property
    def efficiency_score(self) -> float | None:
        return self.scores.get("efficiency")

    @property
    def speed_score(self) -> float | None:
        return self.scores.get("speed")

    @property
    def cost_score(self) -> float | None:
        return self.scores.get("cost")

    @property
    def correctness_score(self) -> float | None:
        return self.scores.get("correctness")
