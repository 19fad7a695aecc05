"""The hooks arena-core calls: the whole contract between the engine and its plugins.

Plugins implement these with :data:`hookimpl`. The ``arena_register_*`` hooks are called
once when an :class:`~arena_core.Arena` is built; each returns components that carry a unique
``name`` (or ``type`` for checkers), and the engine calls those components directly while it
scores. No pluggy dispatch happens per record, which keeps scoring fast and lets a component
offer a vectorised form.

Third-party plugins are found through the entry-point group ``arena_core``::

    [project.entry-points.arena_core]
    my_plugin = "my_package.arena_plugin"
"""

# Hook specifications are bodies-less declarations: the docstring is the body.
# mypy: disable-error-code="empty-body"

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from arena_core.config.settings import ScoringConfig
    from arena_core.model.judging import JudgeProvider
    from arena_core.model.prices import PriceSource
    from arena_core.model.protocols import (
        Aggregator,
        CheckExecutor,
        CriterionChecker,
        DifficultyAdjuster,
        Importer,
        IntervalMethod,
        Metric,
    )
    from arena_core.model.records import Evaluation, WeightProfile
    from arena_core.store.drift import BaselineDrift, RankDrift
    from arena_core.store.pipeline import BatchResult
    from arena_core.workspace.confined import CommandRunner

__all__ = ["NAME", "hookspec", "hookimpl"]

#: The project name: pluggy's marker name and the entry-point group plugins register under.
NAME = "arena_core"

hookspec = pluggy.HookspecMarker(NAME)
#: Decorator marking a plugin's implementation of an arena-core hook.
hookimpl = pluggy.HookimplMarker(NAME)


# ---------------------------------------------------------------------------
# Plugin options (called once per Arena, before the registration hooks)
# ---------------------------------------------------------------------------


@hookspec(firstresult=True)
def arena_plugin_options() -> type | None:
    """Declare the options this plugin reads from its ``[plugins.NAME]`` configuration table.

    Return an attrs class (``@attrs.frozen``) whose fields are the options, with defaults for
    the optional ones. arena-core builds it from the table with the same strict converter as
    every other configuration (``"5"`` is not a number) and refuses keys that are not fields,
    so a mistake is reported like any configuration error, naming the file and the key
    (``arena.toml: plugins.license.header_lines: expected a whole number, got '5'``). Field
    validators may raise :class:`~arena_core.model.errors.ValidationError` for finer checks.
    The instance is the ``options`` argument of this plugin's registration hooks.

    Each plugin's own implementation is called, never another plugin's (``firstresult`` only
    makes ``pm.hook.arena_plugin_options()`` usable from a test).

    :return: the options class, or ``None`` for a plugin that takes no options (a table
        given for it is handed over as a plain dict).

    .. versionadded:: 0.3
    """


# ---------------------------------------------------------------------------
# Component registration hooks (called once per Arena, never per record)
# ---------------------------------------------------------------------------


@hookspec
def arena_register_metrics(config: ScoringConfig, options: Any) -> Sequence[Metric]:
    """Register metrics: algorithms that score a submission 0-100.

    A metric has a unique ``name`` and a ``score(submission, task, baseline)`` method (see
    :class:`arena_core.model.protocols.Metric`). The configuration decides which metric fills each
    scored dimension (``efficiency``, ``speed``, ``cost``, ``correctness``) and each part of a
    composite metric, so registering a metric adds a choice without changing any score.

    :param config: the configuration the Arena is built with (every parameter is optional: an
        implementation names only the arguments it uses, as pluggy allows).
    :param options: this plugin's ``[plugins.NAME]`` table: an instance of the class its
        :func:`arena_plugin_options` declares, or the table as a dict when it declares none
        (empty when the configuration has no table for it).
    :return: the plugin's metrics. All plugins' results are collected; two metrics with the
        same name raise :class:`~arena_core.model.errors.DuplicateComponentError`.

    .. versionadded:: 0.1

    .. versionchanged:: 0.3
        takes ``config`` and ``options``.
    """


@hookspec
def arena_register_criterion_checkers(config: ScoringConfig, options: Any) -> Sequence[CriterionChecker]:
    """Register criterion checkers, keyed by the criterion ``type`` they check.

    A task's success criterion ``{"type": "file_exists", "file_path": "app.py"}`` is checked by
    the checker whose ``type`` is ``"file_exists"``. A criterion of a type nobody registered is
    an error, never a silent pass.

    :param config: the configuration the Arena is built with (every parameter is optional: an
        implementation names only the arguments it uses, as pluggy allows).
    :param options: this plugin's ``[plugins.NAME]`` table: an instance of the class its
        :func:`arena_plugin_options` declares, or the table as a dict when it declares none
        (empty when the configuration has no table for it).
    :return: the plugin's checkers. All plugins' results are collected; two checkers for the
        same type raise :class:`~arena_core.model.errors.DuplicateComponentError`.

    .. versionadded:: 0.1

    .. versionchanged:: 0.3
        takes ``config`` and ``options``.
    """


@hookspec
def arena_register_weight_profiles(config: ScoringConfig, options: Any) -> Sequence[WeightProfile]:
    """Register weight profiles: how much each dimension counts in the overall score.

    A task uses the profile named after its category (``default`` when it has none); the
    configuration can map a category to another profile. Weights must be non-negative and
    add up to 1.

    :param config: the configuration the Arena is built with (every parameter is optional: an
        implementation names only the arguments it uses, as pluggy allows).
    :param options: this plugin's ``[plugins.NAME]`` table: an instance of the class its
        :func:`arena_plugin_options` declares, or the table as a dict when it declares none
        (empty when the configuration has no table for it).
    :return: the plugin's :class:`~arena_core.model.records.WeightProfile` objects. All plugins'
        results are collected; duplicate names raise
        :class:`~arena_core.model.errors.DuplicateComponentError`.

    .. versionadded:: 0.1

    .. versionchanged:: 0.3
        takes ``config`` and ``options``.
    """


@hookspec
def arena_register_difficulty_adjusters(config: ScoringConfig, options: Any) -> Sequence[DifficultyAdjuster]:
    """Register difficulty adjusters, keyed by the task difficulty they apply to.

    An adjuster maps the unadjusted overall score of a task of its difficulty to the final
    overall score (the spec multiplies and caps at 100).

    :param config: the configuration the Arena is built with (every parameter is optional: an
        implementation names only the arguments it uses, as pluggy allows).
    :param options: this plugin's ``[plugins.NAME]`` table: an instance of the class its
        :func:`arena_plugin_options` declares, or the table as a dict when it declares none
        (empty when the configuration has no table for it).
    :return: the plugin's adjusters. All plugins' results are collected; duplicate names raise
        :class:`~arena_core.model.errors.DuplicateComponentError`.

    .. versionadded:: 0.1

    .. versionchanged:: 0.3
        takes ``config`` and ``options``.
    """


@hookspec
def arena_register_interval_methods(config: ScoringConfig, options: Any) -> Sequence[IntervalMethod]:
    """Register confidence-interval methods for score distributions.

    A method has a unique ``name`` and ``interval(scores, confidence_level) -> (low, high)``
    (see :class:`arena_core.model.protocols.IntervalMethod`); the configuration's
    ``confidence_interval`` setting picks one by name (the spec's method by default). A batch
    form ``intervals(rows, confidence_level)``, ``interval`` of each row, serves a board at once.

    :param config: the configuration the Arena is built with (every parameter is optional: an
        implementation names only the arguments it uses, as pluggy allows).
    :param options: this plugin's ``[plugins.NAME]`` table: an instance of the class its
        :func:`arena_plugin_options` declares, or the table as a dict when it declares none
        (empty when the configuration has no table for it).
    :return: the plugin's interval methods. All plugins' results are collected; duplicate
        names raise :class:`~arena_core.model.errors.DuplicateComponentError`.

    .. versionadded:: 0.1

    .. versionchanged:: 0.3
        takes ``config`` and ``options``.
    """


@hookspec
def arena_register_aggregators(config: ScoringConfig, options: Any) -> Sequence[Aggregator]:
    """Register leaderboard aggregators: how a group's per-task results become one score.

    An aggregator has a unique ``name`` and ``aggregate(table, weights)`` returning a score per
    group for each row of task weights (see :class:`arena_core.model.protocols.Aggregator`);
    ``leaderboard_method`` in the configuration (or ``arena leaderboard --method``) picks one.
    Built in: ``task_mean`` (default: the mean over tasks of the group's per-task mean score),
    ``pooled`` (every run one sample), ``win_rate`` (HELM's mean win rate),
    ``bradley_terry`` (strengths fitted from per-task pairwise outcomes, on an Elo scale) and
    ``irt`` / ``irt_2pl`` (abilities fitted by item response theory to the runs' correctness).

    :param config: the configuration the Arena is built with (optional, as for every
        registration hook).
    :param options: this plugin's ``[plugins.NAME]`` table (see :func:`arena_plugin_options`).
    :return: the plugin's aggregators; duplicate names raise
        :class:`~arena_core.model.errors.DuplicateComponentError`.

    .. versionadded:: 0.4
    """


@hookspec
def arena_register_check_executors(config: ScoringConfig, options: Any) -> Sequence[CheckExecutor]:
    """Register check executors: where the checks of submissions with workspaces run.

    An executor has a unique ``name`` and ``start(workers)`` returning a
    :class:`concurrent.futures.Executor` (see :class:`arena_core.model.protocols.CheckExecutor`);
    ``check_executor`` in the configuration (or ``arena score --executor NAME``) picks one.
    Built in: ``threads`` (the default: ``check_concurrency`` threads in this process) and
    ``dask`` (a Dask cluster: ``dask_scheduler``, or a local cluster when it is empty; the
    ``distributed`` extra). An executor that is not ``local`` also scores the commands' runs,
    partitions of whole tasks at a time (:mod:`arena_core.partitioned`).

    :param config: the configuration the Arena is built with.
    :param options: this plugin's ``[plugins.NAME]`` table (see :func:`arena_plugin_options`).
    :return: the plugin's executors; duplicate names raise
        :class:`~arena_core.model.errors.DuplicateComponentError`.

    .. versionadded:: 0.4
    """


@hookspec
def arena_register_command_runners(config: ScoringConfig, options: Any) -> Sequence[CommandRunner]:
    """Register command runners: how the commands of a task's criteria are executed.

    Criterion checkers such as ``tests_pass`` and ``command_succeeds`` run the task's commands
    in a submission's workspace through the configured runner (``command_runner``; the
    built-in ``local`` one runs a subprocess and is not a sandbox). A host that scores
    untrusted submissions registers a runner that executes in a container or sandbox.

    A runner has a unique ``name`` and ``run(argv, *, cwd, env, timeout, output_limit)``
    returning a :class:`~arena_core.workspace.confined.CommandResult` (see
    :class:`arena_core.workspace.confined.CommandRunner`). It must never use a shell, must stop the
    command at ``timeout`` seconds (reporting ``timed_out``) and keep at most ``output_limit``
    bytes of output.

    :param config: the configuration the Arena is built with (every parameter is optional: an
        implementation names only the arguments it uses, as pluggy allows).
    :param options: this plugin's ``[plugins.NAME]`` table: an instance of the class its
        :func:`arena_plugin_options` declares, or the table as a dict when it declares none
        (empty when the configuration has no table for it).
    :return: the plugin's runners. All plugins' results are collected; duplicate names raise
        :class:`~arena_core.model.errors.DuplicateComponentError`.

    .. versionadded:: 0.2

    .. versionchanged:: 0.3
        takes ``config`` and ``options``.
    """


@hookspec
def arena_register_importers(config: ScoringConfig, options: Any) -> Sequence[Importer]:
    """Register importers: readers of the files a harness writes (eval logs, trial results,
    trajectories), so ``arena import NAME PATH...`` and ``--from NAME`` score its runs directly.

    An importer has a unique ``name``, ``detect(path) -> bool`` and ``read(paths)`` yielding an
    :class:`~arena_core.importing.runs.ImportedRun` per run (see
    :class:`arena_core.model.protocols.Importer`). It reports what the source says and nothing
    more: a figure the source does not record stays absent, a 0 that means "not recorded" is
    read as absent, and the source file, harness and version go under the submission's
    ``meta``. A source it cannot read is yielded as an
    :class:`~arena_core.io.decoding.InputError` naming the file, the record and the field.

    :param config: the configuration the Arena is built with (every parameter is optional: an
        implementation names only the arguments it uses, as pluggy allows).
    :param options: this plugin's ``[plugins.NAME]`` table: an instance of the class its
        :func:`arena_plugin_options` declares, or the table as a dict when it declares none
        (empty when the configuration has no table for it).
    :return: the plugin's importers. All plugins' results are collected; duplicate names
        raise :class:`~arena_core.model.errors.DuplicateComponentError`.

    .. versionadded:: 0.3
    """


@hookspec
def arena_register_price_sources(config: ScoringConfig, options: Any) -> Sequence[PriceSource]:
    """Register price sources: tables of what models cost, by the token, at a date.

    A source has a unique ``name``, a ``version`` (the table's edition, recorded in every
    evaluation priced from it), ``rates(model, provider, at)`` returning the model's
    :class:`~arena_core.model.prices.Rates` in force at ``at`` (``None`` when it does not know
    the model) and ``known_models()`` (see :class:`arena_core.model.prices.PriceSource`).
    ``price_source`` in the configuration picks one by name; ``cost_source = "priced"`` (or
    ``"priced_when_missing"``) prices runs from it, after the files of ``price_tables``. Model
    names reach it after ``[model_aliases]``. Built in: ``genai-prices`` (the ``prices`` extra).

    :param config: the configuration the Arena is built with.
    :param options: this plugin's ``[plugins.NAME]`` table (see :func:`arena_plugin_options`).
    :return: the plugin's price sources; duplicate names raise
        :class:`~arena_core.model.errors.DuplicateComponentError`.

    .. versionadded:: 0.5
    """


@hookspec
def arena_register_judges(config: ScoringConfig, options: Any) -> Sequence[JudgeProvider]:
    """Register judge providers: the kinds of judges a ``[judges.NAME]`` table can configure.

    A ``judge`` criterion names judges by the name of their table; each table says which
    provider builds it (``provider = "openai"``) and gives that provider's settings::

        [judges.sonnet]
        provider = "openai"              # any OpenAI-compatible chat-completions endpoint
        model = "claude-sonnet-4-5"
        base_url = "http://127.0.0.1:8000/v1"
        api_key_env = "JUDGE_API_KEY"    # the key is read from the environment, never stored

    A provider has a unique ``name`` and ``build(name, settings)`` returning a
    :class:`~arena_core.model.judging.Judge`: a ``model``, an ``identity`` (the provider, model
    and every parameter that changes a reply: the verdict cache is keyed by it) and
    ``ask(request) -> JudgeReply``, which never raises for a failed request but answers no
    verdict with the reason (the requirement is then unscored, never failed). A setting it does
    not take is a :class:`~arena_core.model.errors.ValidationError` naming ``judges.NAME.KEY``.
    Built in: ``openai`` (the ``judges`` extra) and ``recorded`` (verdicts read from a JSON
    Lines file: judgments made elsewhere, by people, Harbor, Inspect or Agent-as-a-Judge).
    Third-party judges (another SDK, a local classifier) plug in here.

    :param config: the configuration the Arena is built with.
    :param options: this plugin's ``[plugins.NAME]`` table (see :func:`arena_plugin_options`).
    :return: the plugin's providers; duplicate names raise
        :class:`~arena_core.model.errors.DuplicateComponentError`.

    .. versionadded:: 0.6
    """


# ---------------------------------------------------------------------------
# Pipeline lifecycle hooks (called by process_batch after its transaction commits)
# ---------------------------------------------------------------------------


@hookspec
def arena_evaluation_completed(evaluation: Evaluation) -> None:
    """Called once per evaluation of a batch, after the batch is committed to the store.

    Use it to notify the submitter. It is not called for a batch that failed, so it never
    announces a result that was rolled back. An exception raised here propagates to the caller
    of ``process_batch``; the batch stays committed.

    :param evaluation: the stored evaluation, with its rank and percentile within its task.
    :return: nothing; return values are ignored. Every implementation is called.

    .. versionadded:: 0.1
    """


@hookspec
def arena_batch_completed(result: BatchResult) -> None:
    """Called once per batch, after it is committed and after every ``arena_evaluation_completed``.

    :param result: the batch's evaluations (input order), its outliers and the updated baselines.
    :return: nothing; return values are ignored. Every implementation is called.

    .. versionadded:: 0.1
    """


@hookspec
def arena_drift_detected(alerts: Sequence[BaselineDrift | RankDrift]) -> None:
    """Called after a batch commits when it moved the arena beyond the configured thresholds,
    after ``arena_batch_completed``; not called for a batch that moved nothing that far.

    Use it to tell an operator that a published leaderboard changed under its readers: a task's
    baseline median moved by more than ``drift_threshold`` (its later runs are now scored against
    a different yardstick), or the leaderboard's top ``drift_top_k`` tools changed or reordered.
    ``arena ingest`` prints the same alerts.

    :param alerts: :class:`~arena_core.store.drift.BaselineDrift` (key, figure, before, after,
        the baseline versions) and :class:`~arena_core.store.drift.RankDrift` (the top tools
        before and after), in the order the batch found them; ``str()`` of each is one line.
    :return: nothing; return values are ignored. Every implementation is called.

    .. versionadded:: 0.5
    """
