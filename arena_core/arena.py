"""The facade a host application embeds: :class:`Arena`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import math

import attrs
import numpy as np
from attrs import frozen

from arena_core import pipeline, provenance, quality, ranking
from arena_core.baselines import DEFAULT_BASELINE, compute_baseline
from arena_core.batch import Columns, evaluate_columns, group_baselines
from arena_core.bias import BiasFinding, detect_bias
from arena_core.pipeline import BatchResult
from arena_core.provenance import Provenance
from arena_core.quality import Outlier
from arena_core.store import Store
from arena_core.config import ScoringConfig
from arena_core.errors import ValidationError, closest
from arena_core.manager import DEFAULT_PLUGINS, ArenaPluginManager, get_plugin_manager
from arena_core.models import Baseline, Evaluation, Submission, Task
from arena_core.registry import FAMILIES, Components, collect
from arena_core.scoring import Scorer
from arena_core.serde import structure, structure_strict

__all__ = ["Arena", "PluginInfo"]


@frozen
class PluginInfo:
    """One loaded (or blocked) plugin, as ``Arena.plugins()`` and ``arena plugins`` list it."""

    name: str
    builtin: bool
    blocked: bool = False
    distribution: str | None = None
    version: str | None = None
    hooks: tuple[str, ...] = ()
    components: Mapping[str, tuple[str, ...]] = {}
    """Family (``metrics``, ``checkers``, ...) to the names the plugin registered."""


class Arena:
    """Scores submissions with the built-in plugins and every installed ``arena_core`` plugin.

    :param config: a :class:`~arena_core.config.ScoringConfig` or a dict of its fields.
    :param plugin_manager: use this manager instead of discovering plugins (tests, hosts that
        register their own plugins).
    :param autoload: load entry-point plugins (default: unless ``ARENA_DISABLE_PLUGIN_AUTOLOAD``).
    :param blocked: plugin names never to load, besides ``config.disabled_plugins``.
    :param profile: the name of the scoring profile ``config`` is, recorded in every
        evaluation's :attr:`~arena_core.models.Evaluation.provenance`.
    :raises PluginError: a plugin failed to load or registered a clashing name.
    :raises UnknownComponentError: the configuration names a component nobody registered.
    """

    def __init__(
        self,
        config: ScoringConfig | Mapping[str, Any] | None = None,
        *,
        plugin_manager: ArenaPluginManager | None = None,
        autoload: bool | None = None,
        blocked: tuple[str, ...] = (),
        profile: str = "default",
    ) -> None:
        self.config = structure_strict(config or {}, ScoringConfig)
        self.plugin_manager = plugin_manager or get_plugin_manager(
            autoload=autoload, blocked=(*self.config.disabled_plugins, *blocked)
        )
        self.components: Components = collect(self.plugin_manager)
        self.scorer = Scorer(self.components, self.config)
        #: The baseline used below 5 submissions when a task has no default of its own.
        self.default_baseline: Baseline = _configured_default(self.config.default_baseline)
        self._structure = structure_strict if self.config.strict else structure
        self._interval = self.components.interval_methods[self.config.confidence_interval]
        #: What every evaluation of this Arena records as having produced it.
        self.provenance: Provenance = provenance.build(profile, self.config, self.scorer.algorithms(), self.plugins())
        self.scorer.provenance = self.provenance

    def evaluate(
        self,
        submission: Submission | Mapping[str, Any],
        task: Task | Mapping[str, Any],
        baseline: Baseline | Mapping[str, Any],
        *,
        evaluated_at: str | None = None,
    ) -> Evaluation:
        """Score one submission: the spec's ``calculate_overall_score``, plus difficulty and provenance.

        Models or spec-shaped dicts are accepted for every argument.

        :raises ValidationError: naming the record and field, for any invalid input.
        """
        return self.scorer.evaluate(
            self._structure(submission, Submission),
            structure(task, Task),
            structure(baseline, Baseline),
            evaluated_at or datetime.now(timezone.utc).isoformat(),
        )

    def compute_baseline(
        self, task_id: str, submissions: Iterable[Submission | Mapping[str, Any]], *, task: Task | None = None
    ) -> Baseline:
        """The spec's ``calculate_task_baseline``; below 5 submissions, the task's default baseline
        (``task.default_baseline``) or the framework's :data:`~arena_core.baselines.DEFAULT_BASELINE`."""
        subs = [self._structure(s, Submission) for s in submissions]
        return compute_baseline(task_id, subs, _default_baseline(task, self.default_baseline),
                                samples=self.scorer.sample_fields())

    def rank(self, evaluations: Iterable[Evaluation | Mapping[str, Any]]) -> list[Evaluation]:
        """The spec's ``calculate_rankings``: best first, ties share a rank (1, 1, 3), with percentiles.

        Pass the evaluations of one task, as the spec does. Entries whose tool has fewer than
        ``min_submissions_per_tool`` evaluations in the list are ranked and marked ``provisional``.
        """
        evs = [structure(e, Evaluation) for e in evaluations]
        return ranking.rank(evs, self._provisional(e.tool for e in evs))

    def category_rankings(self, evaluations: Iterable[Evaluation | Mapping[str, Any]], metric: str) -> list[Evaluation]:
        """Rank by one dimension (``efficiency``, ``speed``, ``cost``, ``correctness``); ties share a rank."""
        return ranking.rank_by_metric([structure(e, Evaluation) for e in evaluations], metric)

    def confidence_interval(
        self, scores: Sequence[float], confidence_level: float = 0.95, *, method: str | None = None
    ) -> tuple[float, float]:
        """Confidence interval of the mean score, by the configured method (the spec's by default)."""
        chosen = self.components.interval_methods[method] if method else self._interval
        return chosen.interval(list(scores), confidence_level)

    def detect_outliers(self, submissions: Iterable[Submission | Mapping[str, Any]]) -> list[Outlier]:
        """The spec's ``detect_outliers``; ``to_dict`` gives its ``{submission_id, flags, recommended_action}``."""
        return quality.detect_outliers([self._structure(s, Submission) for s in submissions])

    def validate(self, evaluation: Evaluation | Mapping[str, Any], total_tokens: float | None = None) -> list[str]:
        """The spec's ``validate_evaluation_metrics``: a list of error strings, empty when all is well."""
        return quality.validate(evaluation, total_tokens)

    def detect_bias(self, evaluations: Iterable[Evaluation | Mapping[str, Any]], *, z: float = 1.96) -> list[BiasFinding]:
        """Per tool and dimension, its mean against the others', flagged beyond ``z`` standard errors."""
        return detect_bias([structure(e, Evaluation) for e in evaluations], z=z)

    def evaluate_many(
        self,
        submissions: Iterable[Submission | Mapping[str, Any]] | Mapping[str, Any],
        tasks: Mapping[str, Task | Mapping[str, Any]],
        baselines: Mapping[str, Baseline | Mapping[str, Any]] | None = None,
        *,
        evaluated_at: str | None = None,
        progress: Callable[[int], object] | None = None,
    ) -> Sequence[Evaluation]:
        """Score, baseline and rank many submissions: one evaluation per submission, in input order,
        with ``overall_ranking`` and ``percentile`` within its task (``provisional`` when its tool
        has fewer than ``min_submissions_per_tool`` submissions on the task).

        :param submissions: records (models or dicts), or columns: a mapping of field name to an
            array-like (NumPy, Arrow, pandas, lists), with ``id`` and ``task_id`` columns and NaN
            or None for a missing figure. Columns are never turned into a million objects.
        :param tasks: task id to task; every submission's ``task_id`` must be among them.
        :param baselines: task id to baseline; without one, baselines are computed from the
            submissions as :meth:`compute_baseline` does, grouped by the configured ``baseline_scope``.
        :param progress: called with the number of submissions scored as work completes.
        :return: a sequence of evaluations. When every component in use has a batch form (the
            built-ins do), it is an :class:`~arena_core.batch.EvaluationBatch` that builds each
            :class:`Evaluation` on access and offers ``columns()``; the numbers are those of the
            per-record path.
        """
        stamp = evaluated_at or datetime.now(timezone.utc).isoformat()
        task_models = {task_id: structure(t, Task) for task_id, t in tasks.items()}
        for task in task_models.values():
            self.scorer.check_task(task)
        if isinstance(submissions, Mapping):
            columns = Columns.from_mapping(submissions)
            subs: list[Submission] | None = None
        else:
            subs = [self._structure(s, Submission) for s in submissions]
            columns = Columns.from_submissions(subs)
        task_list = list(task_models.values())
        task_codes = _codes(columns, task_list)
        given = {task_id: structure(b, Baseline) for task_id, b in (baselines or {}).items()}
        baseline_list, baseline_codes = self._baselines_for(columns, task_list, task_codes, given, stamp)
        with_workspaces = subs is not None and any(s.workspace is not None for s in subs)
        result = None if with_workspaces else evaluate_columns(
            self.scorer, columns, task_list, task_codes, baseline_list, baseline_codes,
            self.config.min_submissions_per_tool, stamp,
        )
        if result is None:  # workspaces to check, or a component without a batch form
            if subs is None:
                subs = [structure(_row(columns, i), Submission) for i in range(columns.size)]
            result = self._evaluate_each(subs, task_list, task_codes, baseline_list, baseline_codes, stamp)
        if progress is not None:
            progress(len(result))
        return result

    def _baselines_for(
        self, columns: Columns, task_list: Sequence[Task], task_codes: np.ndarray, given: Mapping[str, Baseline], stamp: str
    ) -> tuple[list[Baseline], np.ndarray]:
        """One baseline per group of the configured scope, and each row's group."""
        scope = self.config.baseline_scope
        if scope == "task":
            keys: list[tuple[int, ...]] = [(code,) for code in range(len(task_list))]
            codes = task_codes
        else:
            extra = {"task_tool": (columns.tools,), "task_model": (columns.models,),
                     "task_tool_model": (columns.tools, columns.models)}[scope]
            index: dict[tuple[Any, ...], int] = {}
            codes = np.fromiter(
                (index.setdefault((int(task_codes[i]), *(e[i] for e in extra)), len(index)) for i in range(columns.size)),
                dtype=np.int64, count=columns.size,
            )
            keys = list(index)
        group_tasks = [task_list[key[0]] for key in keys]
        computed = group_baselines(
            columns, codes, len(keys), [_default_baseline(t, self.default_baseline) for t in group_tasks],
            [t.id for t in group_tasks], stamp, self.scorer.sample_fields(),
        )
        return [given.get(t.id, b) for t, b in zip(group_tasks, computed)], codes

    def _evaluate_each(
        self, subs: Sequence[Submission], task_list: Sequence[Task], task_codes: np.ndarray,
        baseline_list: Sequence[Baseline], baseline_codes: np.ndarray, stamp: str,
    ) -> list[Evaluation]:
        results: list[Evaluation] = [None] * len(subs)  # type: ignore[list-item]
        scored = self.scorer.evaluate_all(
            [(s, task_list[task_codes[i]], baseline_list[baseline_codes[i]]) for i, s in enumerate(subs)], stamp
        )
        for code in range(len(task_list)):
            indices = [int(i) for i in np.flatnonzero(task_codes == code)]
            evaluations = [scored[i] for i in indices]
            provisional = self._provisional(subs[i].tool for i in indices)
            for i, ev in zip(indices, ranking.annotate(evaluations, provisional)):
                results[i] = ev
        return results

    def _provisional(self, tools: Iterable[str | None]) -> frozenset[str | None]:
        return ranking.provisional_tools(tools, self.config.min_submissions_per_tool)

    async def process_batch(
        self,
        submissions: Iterable[Submission | Mapping[str, Any]],
        *,
        store: Store,
        tasks: Mapping[str, Task | Mapping[str, Any]] | None = None,
    ) -> BatchResult:
        """The spec's evaluation pipeline over ``store``, as one transaction (see :mod:`arena_core.pipeline`).

        :param tasks: tasks to store with the batch; other tasks must already be in the store.
        """
        return await pipeline.process_batch(self, submissions, store, tasks)

    def plugins(self, *, include_builtins: bool = True) -> list[PluginInfo]:
        """What is loaded, from which distribution, and what each plugin registered; blocked names last."""
        pm = self.plugin_manager
        registered = self.components.by_plugin()
        infos: list[PluginInfo] = []
        for name, plugin in pm.list_name_plugin():
            if plugin is None:  # pluggy keeps a blocked name with no plugin; listed below
                continue
            builtin = name in DEFAULT_PLUGINS and pm.distribution(name) is None
            if builtin and not include_builtins:
                continue
            dist = pm.distribution(name)
            hooks = tuple(sorted(h.name for h in pm.get_hookcallers(plugin) or ()))
            families = registered.get(name, {})
            infos.append(
                PluginInfo(
                    name=name,
                    builtin=builtin,
                    distribution=dist.name if dist else None,
                    version=dist.version if dist else None,
                    hooks=hooks,
                    components={f: tuple(families[f]) for f in FAMILIES if f in families},
                )
            )
        infos.extend(PluginInfo(name=n, builtin=n in DEFAULT_PLUGINS, blocked=True) for n in pm.blocked_names())
        return infos


def _configured_default(overrides: Mapping[str, float]) -> Baseline:
    fields = {a.name for a in attrs.fields(Baseline)}
    for key in overrides:
        if key not in fields:
            raise ValidationError("configuration", f"default_baseline.{key}", f"a baseline field{closest(key, fields)}")
    return attrs.evolve(DEFAULT_BASELINE, **overrides)


def _default_baseline(task: Task | None, fallback: Baseline = DEFAULT_BASELINE) -> Baseline:
    return task.default_baseline if task is not None and task.default_baseline else fallback


def _codes(columns: Columns, task_list: Sequence[Task]) -> np.ndarray:
    """Per row, the index of its task; an unknown task id names the submission."""
    index = {t.id: k for k, t in enumerate(task_list)}
    codes = np.fromiter(map(index.get, columns.task_ids, [-1] * columns.size), dtype=np.int64, count=columns.size)
    if (codes < 0).any():
        row = int(np.flatnonzero(codes < 0)[0])
        known = ", ".join(sorted(index)) or "none"
        raise ValidationError(
            f"submission {str(columns.ids[row])!r}", "task_id", f"one of the given tasks ({known})", columns.task_ids[row]
        )
    return codes


def _row(columns: Columns, i: int) -> dict[str, Any]:
    """One row of columns as a submission record (for the per-record fallback)."""
    record: dict[str, Any] = {"id": columns.ids[i], "task_id": columns.task_ids[i], "tool": columns.tools[i],
                              "model": columns.models[i], "success": bool(columns.success[i]),
                              "files_created": list(columns.files_created[i])}
    for name, values in columns.numeric.items():
        value = float(values[i])
        if not math.isnan(value):
            record[name] = int(value) if name in ("total_tokens", "tool_calls", "iterations", "tests_passed", "tests_total") else value
    return record
