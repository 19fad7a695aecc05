"""The facade a host application embeds: :class:`Arena`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Any

import attrs
import numpy as np

from arena_core.config.settings import ScoringConfig
from arena_core.engine import many, ranking
from arena_core.engine.baselines import compute_baseline, configured_default, default_baseline_for
from arena_core.engine.collector import collector_paused
from arena_core.engine.columns import Columns
from arena_core.engine.inputs import records_of
from arena_core.engine.scoring import Scorer
from arena_core.model import provenance
from arena_core.model.records import Baseline, Evaluation, Submission, Task
from arena_core.model.serde import structure, structure_each, structure_strict
from arena_core.pricing.pricer import pricer_of, pricing_algorithms, structuring
from arena_core.registry.components import Components, collect
from arena_core.registry.info import PluginInfo, plugin_infos
from arena_core.registry.manager import ArenaPluginManager, get_plugin_manager
from arena_core.stats import irtdifficulty, quality
from arena_core.stats.bias import BiasFinding, detect_bias
from arena_core.stats.irttasks import Selection, select_tasks
from arena_core.stats.leaderboard import GroupRow, leaderboard
from arena_core.stats.pairwise import PairRow, pairwise
from arena_core.stats.pareto import X_FIELDS, ParetoPoint, check_axes, pareto
from arena_core.stats.repeats import Repeats, repeats
from arena_core.stats.runs import gather_runs, task_table
from arena_core.stats.taskhealth import TaskHealth, task_health
from arena_core.stats.tasktable import TaskTable
from arena_core.store import Store, pipeline
from arena_core.store.pipeline import BatchResult

__all__ = ["Arena", "PluginInfo", "worker_arena"]


class Arena:
    """Scores submissions with the built-in plugins and every installed ``arena_core`` plugin.

    :param config: a :class:`~arena_core.config.settings.ScoringConfig` or a dict of its fields.
    :param plugin_manager: use this manager instead of discovering plugins (tests, hosts that
        register their own plugins).
    :param autoload: load entry-point plugins (default: unless ``ARENA_DISABLE_PLUGIN_AUTOLOAD``).
    :param blocked: plugin names never to load, besides ``config.disabled_plugins``.
    :param profile: the name of the scoring profile ``config`` is, recorded in every
        evaluation's :attr:`~arena_core.model.records.Evaluation.provenance`.
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
        self.components: Components = collect(self.plugin_manager, self.config)
        self.scorer = Scorer(self.components, self.config)
        if self.config.difficulty_source == "irt":
            self.scorer.refit_difficulty = partial(irtdifficulty.refit, minimum=self.config.min_submissions_per_tool)
        #: What a worker builds this Arena again from (:func:`worker_arena`); ``None``: plugins registered by hand.
        self.recipe = None if plugin_manager else (self.config, profile, autoload, blocked)
        if self.recipe is not None:
            self.scorer.remote_job = partial(_evaluate_on_worker, self.recipe)
        #: The baseline used below 5 submissions when a task has no default of its own.
        self.default_baseline: Baseline = configured_default(self.config.default_baseline)
        self.pricer = pricer_of(self.config, self.components.price_sources)
        self._structure = structuring(structure_strict if self.config.strict else structure, self.pricer)
        self._interval = self.components.interval_methods[self.config.confidence_interval]
        #: What every evaluation of this Arena records as having produced it.
        algorithms = {**self.scorer.algorithms(), **pricing_algorithms(self.config, self.pricer)}
        self.provenance: provenance.Provenance = provenance.build(profile, self.config, algorithms, self.plugins())
        self.scorer.provenance = self.provenance

    def record_inputs(self, importer: str, formats: Iterable[str]) -> None:
        """Record in the provenance of every evaluation made from now on the importer that read
        the runs and the format versions it read (``algorithms.importer``, ``input_formats``)."""
        given = {"importer": importer, "input_formats": ", ".join(sorted(set(formats))) or "unversioned"}
        self.provenance = attrs.evolve(self.provenance, algorithms={**self.provenance.algorithms, **given})
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
            evaluated_at or datetime.now(UTC).isoformat(),
        )

    def structure_submission(self, record: Submission | Mapping[str, Any]) -> Submission:
        """``record`` as a :class:`Submission`, as strictly as the configuration says (``strict``:
        unknown keys are errors rather than ``meta``), its cost priced as ``cost_source`` says.

        :raises ValidationError: naming the record and field (a model no price table knows).
        """
        return self._structure(record, Submission)  # type: ignore[no-any-return]

    def compute_baseline(
        self, task_id: str, submissions: Iterable[Submission | Mapping[str, Any]], *, task: Task | None = None
    ) -> Baseline:
        """The spec's ``calculate_task_baseline``; below 5 submissions, the task's default baseline
        (``task.default_baseline``) or the framework's :data:`~arena_core.engine.baselines.DEFAULT_BASELINE`."""
        subs = structure_each(submissions, self.structure_submission)
        return compute_baseline(
            task_id,
            subs,
            default_baseline_for(task, self.default_baseline),
            samples=self.scorer.sample_fields(),
            assume_one=self.scorer.assumes_one_iteration,
        )

    def rank(self, evaluations: Iterable[Evaluation | Mapping[str, Any]]) -> list[Evaluation]:
        """The spec's ``calculate_rankings``: best first, ties share a rank (1, 1, 3), with percentiles.

        Pass the evaluations of one task, as the spec does. Entries whose tool has fewer than
        ``min_submissions_per_tool`` evaluations in the list are ranked and marked ``provisional``.
        """
        evs = [structure(e, Evaluation) for e in evaluations]
        return ranking.rank(evs, many.provisional_tools(self.scorer, (e.tool for e in evs)))

    def category_rankings(self, evaluations: Iterable[Evaluation | Mapping[str, Any]], metric: str) -> list[Evaluation]:
        """Rank by one dimension (``efficiency``, ``speed``, ``cost``, ``correctness``); ties share a rank."""
        return ranking.rank_by_metric([structure(e, Evaluation) for e in evaluations], metric)

    def confidence_interval(
        self, scores: Sequence[float], confidence_level: float = 0.95, *, method: str | None = None
    ) -> tuple[float, float]:
        """Confidence interval of the mean score, by the configured method (the spec's by default)."""
        chosen = self.components.interval_methods[method] if method else self._interval
        return chosen.interval(list(scores), confidence_level)

    def detect_outliers(self, submissions: Iterable[Submission | Mapping[str, Any]]) -> list[quality.Outlier]:
        """The spec's ``detect_outliers``; ``to_dict`` gives its ``{submission_id, flags, recommended_action}``."""
        return quality.detect_outliers(structure_each(submissions, self.structure_submission))

    def validate(self, evaluation: Evaluation | Mapping[str, Any], total_tokens: float | None = None) -> list[str]:
        """The spec's ``validate_evaluation_metrics`` (error strings; none: all is well), the
        suspicious pair (efficiency and speed above 95) judged on measured scores only."""
        filled = evaluation.filled if isinstance(evaluation, Evaluation) else evaluation.get("filled") or {}
        profile = evaluation.weight_profile if isinstance(evaluation, Evaluation) else evaluation.get("weight_profile")
        shares = self.scorer.shares(profile) if profile in self.scorer.profiles else {}
        unmeasured = {shares.get(slot, (slot, 0.0))[0] for slot in filled}
        return quality.validate(evaluation, total_tokens, unmeasured)

    def leaderboard(
        self,
        evaluations: Iterable[Evaluation | Mapping[str, Any]] | TaskTable | None = None,
        *,
        store: Store | None = None,
        by: str = "tool",
        method: str | None = None,
        interval: str | None = None,
        test: str = "t",
        adjustment: str = "holm",
        ranks: str | None = None,
        **selection: Any,
    ) -> list[GroupRow]:
        """Groups (``by`` ``tool``, ``model``, ``tool,model`` or ``meta.KEY``) ranked by their score,
        with task-clustered intervals, rank intervals and tiers: the rows of ``arena leaderboard
        --format json``, from evaluations (or a :class:`TaskTable` of their cells: what the
        streaming path gives) or from what ``store`` holds (see docs/leaderboards.md).

        :param method: the aggregator (``leaderboard_method`` by default: ``task_mean``).
        :param interval: the interval method for the aggregator's units (``leaderboard_interval``
            by default: ``student_t``).
        :param test: the paired test behind each row's ``inverts`` (``t`` or ``permutation``), and
            ``adjustment`` its correction for the number of pairs (``holm`` or ``bh``).
        :param ranks: how rank ranges and tiers are made (``leaderboard_ranks``, by default ``paired_bootstrap``).
        :param selection: ``tasks`` (ids to keep), ``where`` (``{KEY: VALUE}`` on the submissions'
            meta), ``cluster`` (``meta.KEY`` naming each task's family, e.g. ``meta.repo``:
            intervals and rank ranges then resample families) and ``meta`` (submission id to
            meta, for ``meta.KEY``, ``where`` and ``cluster``; read from ``store`` when it is given).
        """
        table = task_table(self.scorer, evaluations, store, by, **selection)
        return self._board(table, method, interval, test, adjustment, ranks)

    def _board(
        self,
        table: TaskTable,
        method: str | None,
        interval: str | None,
        test: str,
        adjust: str,
        ranks: str | None = None,
    ) -> list[GroupRow]:
        return leaderboard(
            table,
            self.components.aggregators[method or self.config.leaderboard_method],
            self.components.interval_methods[interval or self.config.leaderboard_interval],
            min_tasks=self.config.min_tasks_per_group,
            test=test,
            adjustment=adjust,
            ranks=ranks or self.config.leaderboard_ranks,
        )

    def pairwise(
        self,
        evaluations: Iterable[Evaluation | Mapping[str, Any]] | TaskTable | None = None,
        *,
        store: Store | None = None,
        by: str = "tool",
        test: str = "t",
        adjustment: str = "holm",
        **selection: Any,
    ) -> list[PairRow]:
        """Paired tests between every two ranked groups of the leaderboard (best first) on the
        tasks both ran: ``arena leaderboard --pairwise`` (see :mod:`arena_core.stats.pairwise`)."""
        table = task_table(self.scorer, evaluations, store, by, **selection)
        board = self._board(table, None, None, test, adjustment, "overlap")  # the order only: no rank bootstrap
        index = {name: g for g, name in enumerate(table.groups)}
        ranked = [index[row.group] for row in board if not row.provisional]
        return pairwise(table, ranked, test=test, adjustment=adjustment)

    def pareto(
        self,
        evaluations: Iterable[Evaluation | Mapping[str, Any]],
        submissions: Columns | Iterable[Submission | Mapping[str, Any]],
        *,
        by: str = "tool",
        x: str = "cost",
        y: str = "correctness",
        **selection: Any,
    ) -> list[ParetoPoint]:
        """Each group's mean ``x`` (``cost``, ``time`` or ``tokens`` per run, from ``submissions``)
        against its mean ``y`` (``correctness`` or ``overall`` score), and the Pareto front:
        ``arena pareto`` (see :mod:`arena_core.stats.pareto`)."""
        check_axes(x, y)
        if not isinstance(submissions, Columns):
            submissions = Columns.from_submissions(structure_each(submissions, self.structure_submission))
        figure = dict(zip(submissions.ids, submissions.numeric[X_FIELDS[x]].tolist(), strict=True))
        runs = gather_runs(self.scorer, evaluations, None, by, **selection)
        return pareto(runs, np.array([figure.get(i, np.nan) for i in runs.ids], dtype=float), y)

    def task_health(
        self,
        evaluations: Iterable[Evaluation | Mapping[str, Any]] | None = None,
        *,
        store: Store | None = None,
        by: str = "tool",
        model: str = "rasch",
        labels: Mapping[str, str | None] | None = None,
        **selection: Any,
    ) -> list[TaskHealth]:
        """One row per task: runs, groups, solve rates, discrimination, fitted difficulty (IRT
        ``model``: ``rasch`` or ``2pl``) and flags, ``arena tasks`` (see
        :mod:`arena_core.stats.taskhealth`); ``meta=`` gives the importers' flags, ``labels``
        (task to difficulty label) the labels the fit is checked against."""
        runs = gather_runs(self.scorer, evaluations, store, by, **selection)
        meta = selection.get("meta")
        if meta is None and store is not None:
            with store.transaction(write=False) as tx:
                meta = {s.id: s.meta for t in tx.task_ids() for s in tx.submissions(t)}
        return task_health(runs, meta, model=model, labels=labels)

    def select_tasks(
        self, evaluations: Iterable[Evaluation | Mapping[str, Any]] | None, size: int, *, by: str = "tool",
        model: str = "rasch", store: Store | None = None, **selection: Any,
    ) -> Selection:  # fmt: skip
        """The ``size`` most informative tasks, and how they rank the groups (``arena tasks --select``;
        see :mod:`arena_core.stats.irttasks`)."""
        return select_tasks(gather_runs(self.scorer, evaluations, store, by, **selection), size, model)

    def repeats(
        self,
        evaluations: Iterable[Evaluation | Mapping[str, Any]] | None = None,
        ks: Sequence[int] = (1,),
        *,
        store: Store | None = None,
        by: str = "tool",
        **selection: Any,
    ) -> dict[str, Repeats]:
        """Per group, pass@k and pass^k for each of ``ks``, the flip rate and HAL's outcome
        consistency: ``arena leaderboard --pass-k`` (see :mod:`arena_core.stats.repeats`)."""
        runs = gather_runs(self.scorer, evaluations, store, by, **selection)
        return repeats(runs, ks, self.components.interval_methods[self.config.leaderboard_interval])

    def detect_bias(
        self, evaluations: Iterable[Evaluation | Mapping[str, Any]], *, z: float = 1.96
    ) -> list[BiasFinding]:
        """Per tool and dimension, its mean against the others', flagged beyond ``z`` standard errors."""
        return detect_bias([structure(e, Evaluation) for e in evaluations], z=z)

    def evaluate_many(
        self,
        submissions: Iterable[Submission | Mapping[str, Any]] | Mapping[str, Any] | Columns,
        tasks: Mapping[str, Task | Mapping[str, Any]],
        baselines: Mapping[str, Baseline | Mapping[str, Any]] | None = None,
        *,
        evaluated_at: str | None = None,
        progress: Callable[[int], object] | None = None,
    ) -> Sequence[Evaluation]:
        """Score, baseline and rank many submissions: one evaluation per submission, in input order,
        with ``overall_ranking`` and ``percentile`` within its task (``provisional`` when its tool
        has fewer than ``min_submissions_per_tool`` submissions on the task).

        :param submissions: records (models or dicts); columns: a mapping of field name to an
            array-like (NumPy, Arrow, pandas, lists), with ``id`` and ``task_id`` columns and NaN
            or None for a missing figure; or a table: a ``pyarrow.Table``, a pandas or polars
            ``DataFrame`` (a null is a missing figure). Columns and tables are never turned into
            a million objects, unless a row is invalid: then the rows are read as records, and
            the first invalid one is refused with its own error.
        :param tasks: task id to task; every submission's ``task_id`` must be among them.
        :param baselines: task id to baseline; without one, baselines are computed from the
            submissions as :meth:`compute_baseline` does, grouped by the configured ``baseline_scope``.
        :param progress: called with the number of submissions scored as work completes.
        :return: a sequence of evaluations. When every component in use has a batch form (the
            built-ins do), it is an :class:`~arena_core.engine.batch.EvaluationBatch` that builds each
            :class:`Evaluation` on access and offers ``columns()``; the numbers are those of the
            per-record path.
        """
        with collector_paused():  # millions of acyclic records: see arena_core.engine.collector
            task_models = [structure(t, Task) for t in tasks.values()]
            strict, priced = self.config.strict, self.pricer is not None
            records = records_of(submissions, self.structure_submission, strict=strict, as_records=priced)
            given = {task_id: structure(b, Baseline) for task_id, b in (baselines or {}).items()}
            stamp = evaluated_at or datetime.now(UTC).isoformat()
            result = many.evaluate_many(self.scorer, records, task_models, given, self.default_baseline, stamp)
            if progress is not None:
                progress(len(result))
        return result

    async def process_batch(
        self,
        submissions: Iterable[Submission | Mapping[str, Any]],
        *,
        store: Store,
        tasks: Mapping[str, Task | Mapping[str, Any]] | None = None,
        replace: bool = False,
    ) -> BatchResult:
        """The spec's evaluation pipeline over ``store``, as one transaction, off the event loop
        (see :mod:`arena_core.store.pipeline`); :meth:`process` is the same, synchronously.

        :param tasks: tasks to store with the batch (all of them); other tasks must already be in the store.
        :param replace: let re-submitted ids replace the stored ones instead of refusing them.
        """
        return await pipeline.process_batch(self, submissions, store, tasks, replace=replace)

    def process(
        self, submissions: Iterable[Submission | Mapping[str, Any]], *, store: Store,
        tasks: Mapping[str, Task | Mapping[str, Any]] | None = None, replace: bool = False,
    ) -> BatchResult:  # fmt: skip
        """:meth:`process_batch` in the calling thread, for code without an event loop."""
        return pipeline.run_batch(self, list(submissions), store, tasks, replace=replace)

    def plugins(self, *, include_builtins: bool = True) -> list[PluginInfo]:
        """What is loaded, from which distribution, and what each plugin registered; blocked names last."""
        return plugin_infos(self.plugin_manager, self.components, include_builtins=include_builtins)


#: Arenas built on a worker process, by the configuration they were built from.
_WORKER_ARENAS: dict[str, Arena] = {}


def worker_arena(
    config: ScoringConfig,
    profile: str,
    autoload: bool | None = None,
    blocked: tuple[str, ...] = (),
    *,
    built: Arena | None = None,
) -> Arena:
    """The Arena a worker process scores with: built there once per configuration, of its plugins.
    ``built``: this process's own Arena of that recipe, which workers forked from it then share."""
    key = repr((config, profile, autoload, blocked))
    if key not in _WORKER_ARENAS:
        _WORKER_ARENAS[key] = built or Arena(config, autoload=autoload, blocked=blocked, profile=profile)
    return _WORKER_ARENAS[key]


def _evaluate_on_worker(
    recipe: tuple[Any, ...], submission: Submission, task: Task, baseline: Baseline, evaluated_at: str
) -> Evaluation:
    """One submission scored on a check executor's worker, by its :func:`worker_arena`."""
    return worker_arena(*recipe).scorer.evaluate(submission, task, baseline, evaluated_at)
