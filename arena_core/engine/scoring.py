"""Scoring one submission: the engine's hot path.

A :class:`Scorer` resolves, once, which metric fills every slot of every weight profile,
binds composite metrics to their parts and checks every configured name. Scoring a
submission then calls plain methods: no plugin lookup, no hook dispatch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from arena_core.config.settings import ScoringConfig
from arena_core.engine.coverage import coverage, slot_shares
from arena_core.engine.criteria import check_criteria
from arena_core.engine.gating import UNSOLVED, gated_result, left_out
from arena_core.engine.judges import build_judges, judge_pricer
from arena_core.engine.people import PeopleEvidence
from arena_core.engine.prepared import needs_preparing, prepare
from arena_core.engine.rounding import round_scalar
from arena_core.engine.telemetry import ZERO_MEANS_MISSING, Guarded, guard, missing_error, required_fields
from arena_core.model.errors import ArenaError, PluginError, UnknownComponentError, ValidationError, closest
from arena_core.model.judging import Judge
from arena_core.model.protocols import CriterionChecker, DifficultyAdjuster, Metric, Score, bind
from arena_core.model.provenance import Provenance
from arena_core.model.records import Baseline, CriterionResult, Evaluation, Submission, Task, WeightProfile
from arena_core.pricing.pricer import Pricer
from arena_core.registry.components import Components
from arena_core.workspace.confined import WorkspaceSettings

__all__ = ["UNSCORED", "Scorer"]

#: What ``filled`` says of a dimension whose metric had no verdict to give (a ``Score`` of NaN:
#: a judge that could not answer any requirement): left out of the overall score, never 0.
UNSCORED = "unscored"


class Scorer(PeopleEvidence):
    """Scores submissions with the components and configuration it was built with.

    :raises UnknownComponentError: a configured name, or a metric a profile needs, is not registered.
    """

    def __init__(self, components: Components, config: ScoringConfig) -> None:
        self.components = components
        self.config = config
        self._bound: dict[str, Metric] = {}
        self._shares: dict[str, dict[str, tuple[str, float]]] = {}
        self._plans: dict[tuple[str | None, str | None], tuple[WeightProfile, DifficultyAdjuster | None]] = {}
        """(category, difficulty) to its weight profile and adjuster, found once (a failure is not kept)."""
        self._checked: dict[int, object] = {}
        """Criteria that passed :meth:`check_task`, by identity (criteria are frozen, and tasks
        read from files share equal ones): each is validated once, not once per task."""
        #: Recorded on every evaluation; the Arena sets it once the plugins are known.
        self.provenance: Provenance | None = None
        self._binding: list[str] = []
        #: Registered weight profiles, with the configuration's ``weights`` tables on top.
        self.profiles: dict[str, WeightProfile] = {
            **components.weight_profiles,
            **{name: WeightProfile(name, weights) for name, weights in config.weights.items()},
        }
        runner = components.command_runners.get(config.command_runner)
        if runner is None and config.command_runner != "local":  # the default may be blocked: no commands run
            try:
                components.command_runners[config.command_runner]
            except UnknownComponentError as exc:
                raise UnknownComponentError(f"command_runner: {exc}") from None
        #: Where the checks of submissions with workspaces run (``check_executor``); ``None``
        #: when the default's plugin is blocked: checks then run one at a time, here.
        self.check_executor = components.check_executors.get(config.check_executor)
        if self.check_executor is None and config.check_executor != "threads":
            try:
                components.check_executors[config.check_executor]
            except UnknownComponentError as exc:
                raise UnknownComponentError(f"check_executor: {exc}") from None
        #: For an executor that is not ``local``: a picklable ``(submission, task, baseline,
        #: evaluated_at) -> Evaluation`` that rebuilds this Arena on the worker (set by the Arena).
        self.remote_job: Callable[[Submission, Task, Baseline, str], Evaluation] | None = None
        #: Set by the Arena under ``difficulty_source = "irt"``: adjusts a scored batch by the
        #: difficulties fitted to it (:mod:`arena_core.stats.irtdifficulty`, which the engine
        #: cannot import); ``evaluate_many`` applies it last.
        self.refit_difficulty: Callable[[Sequence[Evaluation]], Sequence[Evaluation]] | None = None
        check = getattr(runner, "check", None)
        if check is not None:  # a runner that cannot confine here says why, before anything runs
            check()
        self._workspaces = WorkspaceSettings.of(runner, config)
        #: The judges ``[judges.NAME]`` configure, by name, and what prices their requests.
        self._judges = build_judges(components, config)
        self._checkers: dict[str, CriterionChecker] | None = None
        self._judge_pricer = judge_pricer(components, config)
        PeopleEvidence.__init__(self)
        for profile_name in config.category_profiles.values():
            if profile_name not in self.profiles:
                components.weight_profiles[profile_name]  # raises UnknownComponentError with suggestions
        for adjuster_name in config.difficulty_adjusters.values():
            components.difficulty_adjusters[adjuster_name]
        for slot in config.metrics:
            self.metric(slot)
        for profile in self.profiles.values():
            for dimension in profile.weights:
                self.metric(dimension)
        #: Absent iterations count as 1 (``missing.iterations = "count_as_one"``, the spec's rule),
        #: in baselines as in the iteration metric.
        self.assumes_one_iteration = config.missing.get("iterations") == "count_as_one"
        #: The dimension that gates the others (``gate``), ``None`` without one.
        self.gate = config.gate or None
        if self.gate is not None and not any(self.gate in p.weights for p in self.profiles.values()):
            dimensions = list(dict.fromkeys(d for p in self.profiles.values() for d in p.weights))
            raise ValidationError(
                "configuration", "gate", f"a dimension of a weight profile ({', '.join(dimensions)})", self.gate
            )
        #: Whether a metric in use has a per-baseline ``prepare`` step (see engine/prepared.py).
        self.preparing = any(needs_preparing(m) for m in self._bound.values())

    # -- Resolver protocol, used by composite metrics while binding ---------------------------

    def metric(self, slot: str) -> Metric:
        """The bound metric that fills ``slot``."""
        bound = self._bound.get(slot)
        if bound is not None:
            return bound
        if slot in self._binding:
            cycle = " -> ".join((*self._binding, slot))
            raise PluginError(f"metrics refer to each other in a cycle: {cycle}")
        name = self.config.metrics.get(slot, slot)
        try:
            component = self.components.metrics[name]
        except UnknownComponentError as exc:
            raise UnknownComponentError(f"slot {slot!r}: {exc}") from None
        self._binding.append(slot)
        try:
            bound = guard(bind(component, self), slot, self.config.missing)
        finally:
            self._binding.pop()
        self._bound[slot] = bound
        return bound

    def metrics_in_use(self) -> Mapping[str, Metric]:
        """Slot to its bound metric, for :meth:`evaluate` without a per-baseline preparation."""
        return self._bound

    def slots(self) -> list[str]:
        """Every metric slot in use: the profiles' dimensions and the parts of composites."""
        return list(self._bound)

    def sample_fields(self) -> tuple[str, ...]:
        """Figures whose values baselines must keep (:attr:`Baseline.samples`): those named by the
        ``needs_samples`` of any metric in use."""
        return tuple(
            dict.fromkeys(f for m in self._bound.values() for f in getattr(_unwrapped(m), "needs_samples", ()))
        )

    def algorithms(self) -> dict[str, str]:
        """Slot to the name of the registered metric that fills it."""
        return {slot: metric.name for slot, metric in self._bound.items()}

    def coverage(self, filled: Mapping[str, str], profile_name: str) -> float:
        """The share of the named profile's weight whose metrics were measured, given an
        evaluation's ``filled`` (see :mod:`arena_core.engine.coverage`); NaN for a profile this
        configuration does not have (an evaluation stored under another one)."""
        if profile_name not in self.profiles:
            return math.nan
        return coverage(filled, self.shares(profile_name))

    def shares(self, profile_name: str) -> Mapping[str, tuple[str, float]]:
        """Slot to (its dimension, its share of the named profile's weight)."""
        shares = self._shares.get(profile_name)
        if shares is None:
            shares = self._shares[profile_name] = slot_shares(self.profiles[profile_name], self.metric)
        return shares

    def checkers(self) -> Mapping[str, CriterionChecker]:
        """The registered checkers, each bound to this scorer when it binds (a ``judge`` criterion
        to the configured judges)."""
        if self._checkers is None:
            self._checkers = {kind: bind(checker, self) for kind, checker in self.components.checkers.items()}
        return self._checkers

    def workspace_settings(self) -> WorkspaceSettings:
        return self._workspaces

    def judges(self) -> Mapping[str, Judge]:
        return self._judges

    def judge_pricer(self) -> Pricer | None:
        return self._judge_pricer

    def missing_policy(self, figure: str) -> str:
        return self.config.missing.get(figure, "error")

    # -- per task -------------------------------------------------------------------------------

    def profile_for(self, task: Task) -> WeightProfile:
        """The weight profile for the task's category (``default`` without one)."""
        category = task.category or "default"
        name = self.config.category_profiles.get(category, category)
        profiles = self.profiles
        if name not in profiles:
            raise ValidationError(
                f"task {task.id!r}",
                "category",
                f"a category with a weight profile ({', '.join(profiles)}){closest(name, profiles)}; "
                "map other categories to a profile with the category_profiles setting",
                task.category,
            )
        return profiles[name]

    def plan_for(self, task: Task) -> tuple[WeightProfile, DifficultyAdjuster | None]:
        """:meth:`profile_for` and :meth:`adjuster_for` together, found once per (category,
        difficulty) pair."""
        plan = self._plans.get((task.category, task.difficulty))
        if plan is None:
            plan = self._plans[task.category, task.difficulty] = (self.profile_for(task), self.adjuster_for(task))
        return plan

    def adjuster_for(self, task: Task) -> DifficultyAdjuster | None:
        """The difficulty adjuster for the task, ``None`` when it has no difficulty."""
        if task.difficulty is None:
            return None
        name = self.config.difficulty_adjusters.get(task.difficulty, task.difficulty)
        adjusters = self.components.difficulty_adjusters
        if name not in adjusters:
            raise ValidationError(
                f"task {task.id!r}",
                "difficulty",
                f"one of {', '.join(adjusters)}{closest(name, adjusters)}",
                task.difficulty,
            )
        return adjusters[name]

    def check_task(self, task: Task) -> None:
        """Fail early, before any work, when the task's category or difficulty has no component,
        or a criterion names no registered checker or parameters its checker does not accept
        (see :func:`arena_core.engine.criteria.check_criteria`)."""
        self.plan_for(task)
        check_criteria(task, self.checkers(), self.components.checkers.absence, self._checked)

    # -- per submission ---------------------------------------------------------------------------

    def prepared(self, baseline: Baseline, profile: WeightProfile) -> dict[str, Metric]:
        """The metrics of ``profile``'s dimensions, prepared for ``baseline``."""
        return {d: prepare(self._bound[d], baseline) for d in profile.weights}

    def evaluate(
        self,
        submission: Submission,
        task: Task,
        baseline: Baseline,
        evaluated_at: str,
        metrics: Mapping[str, Metric] | None = None,
        *,
        gate: Score | None = None,
        unsolved: bool = False,
    ) -> Evaluation:
        """Score ``submission`` on ``task`` against ``baseline``.

        :param metrics: the dimensions' metrics already prepared for ``baseline`` (by
            :meth:`prepared`), so that many submissions share one preparation.
        :param gate: under a ``gate``, the gate's result when known (checked in a first pass).
        :param unsolved: under a ``gate``, no run of the task passed it: the other dimensions
            have no baseline to be scored against and are left out (see engine/gating.py).

        :raises ValidationError: the submission lacks a figure a metric requires (under the
            ``error`` policy), belongs to another task, or the task names an unknown category,
            difficulty or criterion type.
        :raises PluginError: a metric failed or returned a score outside 0-100.
        """
        if submission.task_id is not None and submission.task_id != task.id:
            raise ValidationError(
                f"submission {submission.id!r}",
                "task_id",
                f"{task.id!r}, the task it is scored on",
                submission.task_id,
            )
        profile, adjuster = self.plan_for(task)
        if metrics is None:
            metrics = self.prepared(baseline, profile) if self.preparing else self._bound
        scores: dict[str, float] = {}  # rounded, as the evaluation shows them
        parts: dict[str, float] = {}
        filled: dict[str, str] = {}
        criteria: tuple[CriterionResult, ...] = ()
        overall = 0.0
        weights = profile.weights
        gated = self.gate if self.gate in weights else None
        if gated is not None:
            gate = gated_result(gate or self._score(metrics[gated], submission, task, baseline, profile))
        credit = gate.value / 100.0 if gated is not None and gate is not None else 1.0
        result: float | Score | None
        for dimension, weight in weights.items():
            if dimension == gated:
                result = gate
            elif gated is not None and unsolved:
                filled[dimension] = UNSOLVED
                continue
            else:
                result = self._score(metrics[dimension], submission, task, baseline, profile)
            if result is None:
                filled[dimension] = "reweight"
                continue
            if isinstance(result, Score) and math.isnan(result.value):  # no verdict: left out, its reasons kept
                filled[dimension] = UNSCORED
                criteria = result.criteria or criteria
                continue
            if isinstance(result, (float, int)):
                value = result
            else:
                value = result.value
                if result.parts:
                    parts.update(result.parts)
                if result.filled:
                    filled.update(result.filled)
                if result.criteria:
                    criteria = result.criteria
            if gated is not None and dimension != gated:
                value *= credit
            scores[dimension] = round_scalar(value, 2)
            overall += value * weight
        if len(scores) < len(weights):
            if not scores:
                raise ValidationError(
                    f"submission {submission.id!r}",
                    "(record)",
                    "at least one measured metric; every metric was left out",
                )
            overall, weights = left_out(overall, weights, scores, gated, gate)
        adjusted = adjuster.adjust(overall) if adjuster is not None else overall
        return Evaluation(  # the first thirteen fields by position: a keyword each costs a lookup
            submission.id,
            task.id,
            round_scalar(adjusted, 2),
            scores,
            weights,
            profile.name,
            round_scalar(overall, 2),
            evaluated_at,
            adjuster.name if adjuster is not None else None,
            {p: round_scalar(v, 2) for p, v in parts.items()} if parts else {},
            criteria,
            submission.tool,
            submission.model,
            filled=filled,
            coverage=coverage(filled, self.shares(profile.name)) if filled else 1.0,
            provenance=self.provenance,
        )

    def _score(
        self, metric: Metric, submission: Submission, task: Task, baseline: Baseline, profile: WeightProfile
    ) -> float | Score | None:
        """One metric's result, checked to lie in 0-100; a failing metric names its plugin."""
        try:
            result = metric.score(submission, task, baseline)
        except ValidationError as exc:
            raise self._all_missing(submission, profile) or exc from None
        except ArenaError:
            raise
        except Exception as exc:
            raise PluginError(
                f"metric {metric.name!r} ({self._owner(metric)}) failed on submission {submission.id!r}: {exc!r}"
            ) from exc
        value = result if result is None or isinstance(result, (float, int)) else result.value
        if value is not None and not 0.0 <= value <= 100.0 and not (isinstance(result, Score) and math.isnan(value)):
            raise PluginError(
                f"metric {metric.name!r} ({self._owner(metric)}) scored submission {submission.id!r} "
                f"{value!r}; expected a score from 0 to 100"
            )
        return result

    def required_fields(self, profile: WeightProfile) -> dict[str, list[str]]:
        """Field to the metrics of ``profile`` that refuse a submission without it (policy ``error``)."""
        return required_fields(self._bound[d] for d in profile.weights)

    def _all_missing(self, submission: Submission, profile: WeightProfile) -> ValidationError | None:
        """Every required field ``submission`` lacks, in one error; ``None`` if it lacks none."""
        needed = self.required_fields(profile)
        missing = {
            f: 1
            for f in needed
            if getattr(submission, f) is None or (f in ZERO_MEANS_MISSING and getattr(submission, f) == 0)
        }
        return missing_error(submission.id, missing, 1, needed) if missing else None

    def _owner(self, metric: Metric) -> str:
        registry = self.components.metrics
        return f"plugin {registry.owner(metric.name)!r}" if metric.name in registry else "unregistered"


def _unwrapped(metric: Metric) -> Metric:
    """The metric behind its missing-telemetry guard."""
    return metric.inner if isinstance(metric, Guarded) else metric
