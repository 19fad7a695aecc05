"""What a plugin component looks like: the protocols the engine calls.

Components are plain objects; nothing needs to inherit from these protocols. The engine
checks the shape when it collects components, so a mistake is reported at start-up with
the plugin's name, not halfway through a batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from arena_core.importing.runs import ImportedRun
    from arena_core.io.decoding import InputError
    from arena_core.model.judging import Judge
    from arena_core.model.records import Baseline, CriterionResult, Submission, SuccessCriterion, Task
    from arena_core.pricing.pricer import Pricer
    from arena_core.workspace.confined import WorkspaceSettings

__all__ = [
    "Metric",
    "Score",
    "CriterionChecker",
    "DifficultyAdjuster",
    "IntervalMethod",
    "Importer",
    "Resolver",
    "bind",
]


#: The empty, read-only mapping shared by every :class:`Score` without parts or fills.
_NOTHING: Mapping[str, Any] = MappingProxyType({})


class Score(NamedTuple):
    """A metric's result when it has more to say than a number.

    A metric may return a plain ``float``; composite metrics return the scores of their parts
    and the correctness metric the verdict of each criterion, which the evaluation records.
    (A named tuple rather than an attrs class: it is made several times per evaluation, and
    a tuple is built in a fraction of the time; it is just as immutable.)
    """

    value: float
    parts: Mapping[str, float] = _NOTHING
    criteria: tuple[CriterionResult, ...] = ()
    filled: Mapping[str, str] = _NOTHING
    """Slot to the missing-telemetry policy that produced its score (``neutral``, ``reweight``)."""


@runtime_checkable
class Metric(Protocol):
    """Scores one submission 0-100 against a task and its baseline.

    ``requires`` lists the submission fields the metric cannot do without (e.g.
    ``("total_tokens",)``); when one is missing the engine applies the configured policy
    (refuse, score 50, or leave the metric out) instead of calling the metric. ``score`` may
    itself return ``None`` for "not measured": the engine then leaves the metric out and
    renormalises the remaining weights. A metric built from other components implements
    ``bind(resolver) -> Metric`` returning a copy wired to them (see :class:`Resolver`).
    """

    @property
    def name(self) -> str: ...

    @property
    def requires(self) -> tuple[str, ...]: ...

    def score(self, submission: Submission, task: Task, baseline: Baseline) -> float | Score | None: ...


@runtime_checkable
class CriterionChecker(Protocol):
    """Checks one success criterion of one submission.

    ``check`` returns a bool, or a :class:`~arena_core.model.records.CriterionResult` for partial
    credit or for "not checkable" with a reason; it judges what the submission reports.

    A checker that needs other components (the configured judges) has ``bind(resolver)``
    returning a copy wired to them, as a composite metric does (see :class:`Resolver`); one
    whose checks are slow without a workspace (it asks a model) says ``slow = True``, so that
    they run before a store's write transaction, not inside it.

    A checker may also have ``check_workspace(workspace, submission, criterion, task)``, same
    return values, used instead of ``check`` when the submission has a workspace: it reaches
    files through :meth:`Workspace.path <arena_core.workspace.confined.Workspace.path>` (confined to
    the workspace) and runs the task's commands with :meth:`Workspace.run
    <arena_core.workspace.confined.Workspace.run>`. Raising :class:`~arena_core.workspace.confined.WorkspaceError`
    fails the criterion with its message; any other exception records an ``error``.

    For the batch path it may have ``check_batch(batch, criterion, task)``, and
    ``task_independent = True`` when that reads the task only to name it in an error: tasks with
    equal criteria are then checked together, in one call.
    """

    type: str

    def check(self, submission: Submission, criterion: SuccessCriterion, task: Task) -> bool | CriterionResult: ...


@runtime_checkable
class DifficultyAdjuster(Protocol):
    """Turns the unadjusted overall score of a task of difficulty ``name`` into the final one."""

    name: str

    def adjust(self, score: float) -> float: ...


@runtime_checkable
class IntervalMethod(Protocol):
    """A confidence interval for the mean of a list of scores (0-100).

    It may add ``intervals(rows, confidence_level) -> list[(low, high)]``, ``interval`` of each
    row (an array of scores) at once: a leaderboard then calls it once for all of its groups.
    """

    name: str

    def interval(self, scores: Sequence[float], confidence_level: float) -> tuple[float, float]: ...


@runtime_checkable
class Aggregator(Protocol):
    """How a leaderboard turns a group's per-task results into one score.

    ``aggregate(table, weights)`` gets a :class:`~arena_core.stats.tasktable.TaskTable` and a
    ``(resamples, tasks)`` array of task weights (how many times each task is drawn; the
    estimate itself is one row of ones) and returns a ``(resamples, groups)`` array of scores
    (NaN where a group ran none of the drawn tasks). One call scores every bootstrap resample
    of the tasks, which is what the leaderboard's task-clustered interval needs.

    It may also have ``units(table, group) -> array``: the values whose mean is the group's
    score (its per-task means, or its runs); a leaderboard then computes the group's interval
    from them with the configured interval method. Without ``units`` the interval is the
    bootstrap over tasks. ``description`` (one line) is shown by ``arena plugins``.

    An aggregator that reads single runs (the table's ``run_*`` arrays) rather than its per-task
    cells says so with ``reads_runs = True``: a streamed leaderboard, which keeps cells only,
    then reads the runs whole instead. One whose score reads some dimensions only (IRT: the
    verdicts) names them in ``reads`` (``("correctness",)``): a figure only other dimensions
    need is then not asked for, where missing. One that can score a board held as its cells
    that hold runs (:class:`arena_core.stats.celltable.CellTable`) says so with ``cells = True``:
    a board too large for its dense table is then given as its cells rather than refused.
    """

    name: str

    def aggregate(self, table: Any, weights: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class CheckExecutor(Protocol):
    """Where the checks of submissions with workspaces run (``check_executor``).

    ``start(workers)`` returns a :class:`concurrent.futures.Executor`, used as a context
    manager (leaving it shuts the executor down). An executor whose ``local`` attribute is true
    runs jobs in this process (threads) and gets closures; any other gets picklable jobs, each a
    function that builds its own ``Arena`` from the configuration on the worker, once.
    """

    name: str

    def start(self, workers: int) -> Any: ...


@runtime_checkable
class Importer(Protocol):
    """Reads the files a harness wrote (``arena import NAME``, ``--from NAME``) into submissions.

    ``detect(path)`` says, cheaply (a peek at a name or a file's first bytes), whether ``path``
    is this harness's output; ``read(paths)`` yields an
    :class:`~arena_core.importing.runs.ImportedRun` per run, one source at a time so a large
    directory is never held whole, and an :class:`~arena_core.io.decoding.InputError` (yielded,
    not raised) for each source it cannot read, naming the file, the record and the field, so
    the others are still imported or reported together.

    It may also have ``detect_file(path)``: whether a file found under a folder makes the folder
    this harness's output. Format detection then lists a folder once for all the importers that
    have one and reads each file's head once for them (see
    :func:`~arena_core.importing.collect.detect_format`); without it, ``detect(folder)`` walks the
    folder on its own.

    It may also have ``description`` (one line, for ``arena import --help`` and ``arena
    plugins``) and ``unrecorded``: the submission fields this format never records, which are
    then left out of the overall score rather than refused (``[missing]`` can say otherwise).
    """

    name: str

    def detect(self, path: Path) -> bool: ...

    def read(self, paths: Sequence[Path]) -> Iterable[ImportedRun | InputError]: ...


class Resolver(Protocol):
    """Given to ``Metric.bind``: looks up the components a composite metric is built from."""

    def metric(self, slot: str) -> Metric:
        """The bound metric configured for ``slot`` (by default the metric named ``slot``)."""
        ...

    def checkers(self) -> Mapping[str, CriterionChecker]:
        """All registered criterion checkers by type."""
        ...

    def workspace_settings(self) -> WorkspaceSettings:
        """How submissions' workspaces are opened and commands run (the configured runner,
        timeout, output limit and workspace root)."""
        ...

    def judges(self) -> Mapping[str, Judge]:
        """The judges the configuration names (``[judges.NAME]``), built by their providers."""
        ...

    def judge_pricer(self) -> Pricer | None:
        """What prices a judge's requests (price tables, then the price source), or ``None``."""
        ...

    def labels(self) -> Mapping[tuple[str, str | None], tuple[int, int]]:
        """People's labels given to this scorer (``--labels``): ``(met, unmet)`` raters per
        ``(run id, requirement)`` (``None``: the run as a whole); a live mapping, kept current."""
        ...

    def votes(self) -> Mapping[str, tuple[float, int]]:
        """People's votes between runs given to this scorer (``--votes``): ``(points won,
        votes)`` per run id, ties half a point; a live mapping, kept current."""
        ...

    def missing_policy(self, figure: str) -> str:
        """The configured ``[missing]`` policy of ``figure``: what a metric does without it."""
        ...


B = TypeVar("B")


def bind(component: B, resolver: Resolver) -> B:
    """``component.bind(resolver)`` when it has one, else the component itself: a metric built
    from other components, or a criterion checker that needs the configured judges."""
    binder = getattr(component, "bind", None)
    return binder(resolver) if binder is not None else component
