"""The facade a host application embeds: :class:`Arena`: scoring, ranking within tasks, the
stored pipeline; its boards come from :class:`~arena_core.arena.boards.Boards`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Any

import attrs

from arena_core.arena.boards import Boards
from arena_core.config.settings import ScoringConfig
from arena_core.engine import many, ranking
from arena_core.engine.ahead import needs_whole_runs
from arena_core.engine.baselines import compute_baseline, configured_default, default_baseline_for
from arena_core.engine.collector import collector_paused
from arena_core.engine.columns import Columns
from arena_core.engine.inputs import records_of
from arena_core.engine.scoring import Scorer
from arena_core.model import provenance
from arena_core.model.labels import Label
from arena_core.model.records import Baseline, Evaluation, Submission, Task
from arena_core.model.serde import structure, structure_each, structure_strict
from arena_core.model.votes import Vote
from arena_core.pricing.pricer import pricer_of, pricing_algorithms, structuring
from arena_core.registry.components import Components, collect
from arena_core.registry.info import PluginInfo, plugin_infos
from arena_core.registry.manager import ArenaPluginManager, get_plugin_manager
from arena_core.stats import irtdifficulty, quality
from arena_core.store import Store, pipeline
from arena_core.store.pipeline import BatchResult

__all__ = ["Arena", "PluginInfo", "worker_arena"]


class Arena(Boards):
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

    def use_labels(self, labels: Iterable[Label]) -> None:
        """Take people's labels of runs (``--labels``) for the runs scored from now on: recorded by
        the ``judge`` criteria of the runs they label, and scoring the requirements they label
        under ``label_policy = "override"`` (docs/judges.md)."""
        self.scorer.use_labels(labels)
        self._people_travel()

    def use_votes(self, votes: Iterable[Vote]) -> None:
        """Take people's votes between runs (``--votes``) for the runs scored from now on: what
        the ``community`` metric scores (docs/community.md)."""
        self.scorer.use_votes(votes)
        self._people_travel()

    def _people_travel(self) -> None:
        """A worker rebuilding this Arena gets the labels and votes of its own run."""
        if self.recipe is not None:
            self.scorer.remote_job = partial(
                _labelled_job, self.recipe, self.scorer.label_votes, self.scorer.vote_tally
            )

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
            strict, priced = self.config.strict, self.pricer is not None or needs_whole_runs(self.scorer, task_models)
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


def _labelled_job(
    recipe: tuple[Any, ...], label_votes: Mapping[tuple[str, str | None], tuple[int, int]],
    vote_tally: Mapping[str, tuple[float, int]],
    submission: Submission, task: Task, baseline: Baseline, evaluated_at: str,
) -> Evaluation:  # fmt: skip
    """:func:`_evaluate_on_worker` sent only the labels and votes of its own run."""
    own = {item: count for item, count in label_votes.items() if item[0] == submission.id}
    tally = {submission.id: vote_tally[submission.id]} if submission.id in vote_tally else {}
    return _evaluate_on_worker(recipe, submission, task, baseline, evaluated_at, own, tally)


def _evaluate_on_worker(
    recipe: tuple[Any, ...], submission: Submission, task: Task, baseline: Baseline, evaluated_at: str,
    label_votes: Mapping[tuple[str, str | None], tuple[int, int]] | None = None,
    vote_tally: Mapping[str, tuple[float, int]] | None = None,
) -> Evaluation:  # fmt: skip
    """One submission scored on a check executor's worker, by its :func:`worker_arena`, with the
    people's labels and votes of the run where it has some (:meth:`Arena.use_labels`,
    :meth:`Arena.use_votes`)."""
    scorer = worker_arena(*recipe).scorer
    if label_votes is not None:
        scorer.label_votes.update(label_votes)
    if vote_tally is not None:
        scorer.vote_tally.update(vote_tally)
    return scorer.evaluate(submission, task, baseline, evaluated_at)
