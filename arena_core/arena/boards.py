"""The boards an :class:`~arena_core.arena.Arena` computes from evaluations (or a store): the
leaderboard of groups with intervals, rank ranges, tiers and inversions; paired tests; Pareto
fronts; task health; the most informative tasks; predictions of the cells not run and the
adaptive evaluation of a new agent; repeated attempts; bias."""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from arena_core.config.settings import ScoringConfig
from arena_core.engine.columns import Columns
from arena_core.engine.scoring import Scorer
from arena_core.model.records import Evaluation, Submission, Task
from arena_core.model.serde import structure, structure_each
from arena_core.registry.components import Components
from arena_core.stats.adaptive import AdaptiveTest
from arena_core.stats.bias import BiasFinding, detect_bias
from arena_core.stats.celltable import CellTable, runs_are_sparse
from arena_core.stats.irttasks import Selection, select_tasks
from arena_core.stats.leaderboard import GroupRow, leaderboard
from arena_core.stats.pairwise import PairRow, pairwise
from arena_core.stats.pareto import X_FIELDS, ParetoPoint, check_axes, pareto
from arena_core.stats.prediction import CellPrediction, GroupExpectation, board_fit, predict
from arena_core.stats.repeats import Repeats, repeats
from arena_core.stats.room import BoardTooLarge
from arena_core.stats.runs import gather_runs, needs_meta, task_table
from arena_core.stats.similar import SimilarTask, similar_tasks
from arena_core.stats.taskfeatures import FeatureEffect, feature_effects
from arena_core.stats.taskhealth import TaskHealth, task_health
from arena_core.stats.tasktable import Runs, TaskTable
from arena_core.store import Store
from arena_core.store.current import CurrentScores, stored_tasks

__all__ = ["Boards"]


class Boards:
    """The board methods of :class:`~arena_core.arena.Arena` (what it holds, they read)."""

    config: ScoringConfig
    components: Components
    scorer: Scorer

    def structure_submission(self, record: Submission | Mapping[str, Any]) -> Submission:
        raise NotImplementedError  # the Arena's

    def leaderboard(
        self,
        evaluations: Iterable[Evaluation | Mapping[str, Any]] | TaskTable | CellTable | None = None,
        *,
        store: Store | None = None,
        by: str = "tool",
        method: str | None = None,
        interval: str | None = None,
        test: str = "t",
        adjustment: str = "holm",
        ranks: str | None = None,
        order: str | None = None,
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
        :param order: ``score`` or ``outcome-first`` (``leaderboard_order``; the ``gated`` profile's
            is ``outcome-first``: significantly higher correctness ranks above).
        :param selection: ``tasks`` (ids to keep), ``where`` (``{KEY: VALUE}`` on the submissions'
            meta), ``cluster`` (``meta.KEY`` naming each task's family, e.g. ``meta.repo``:
            intervals and rank ranges then resample families) and ``meta`` (submission id to
            meta, for ``meta.KEY``, ``where`` and ``cluster``; read from ``store`` when it is given).
        """
        aggregator = self.components.aggregators[method or self.config.leaderboard_method]
        if isinstance(evaluations, CellTable):  # a streamed board too large for its dense table
            return self._board(evaluations, method, interval, test, adjustment, ranks, order)
        if not getattr(aggregator, "cells", False) or selection.get("cluster") or isinstance(evaluations, TaskTable):
            return self._board(
                self._table(evaluations, store, by, selection), method, interval, test, adjustment, ranks, order
            )
        runs = self._runs(evaluations, store, by, selection)
        table: TaskTable | CellTable | None = None
        if not runs_are_sparse(runs):
            with contextlib.suppress(BoardTooLarge):  # too large: ranked from the cells that hold runs
                table = TaskTable.of(runs)
        return self._board(
            table if table is not None else CellTable.of(runs), method, interval, test, adjustment, ranks, order
        )

    def _table(self, evaluations: Any, store: Store | None, by: str, selection: dict[str, Any]) -> TaskTable:
        """The cells grouped ``by`` of the evaluations given (or a table of them), or of ``store``'s board."""
        return task_table(self.scorer, self._chosen(evaluations, store, by, selection), by, **selection)

    def _runs(self, evaluations: Any, store: Store | None, by: str, selection: dict[str, Any]) -> Runs:
        """The runs grouped ``by`` of the evaluations given, or of ``store``'s board."""
        return gather_runs(self.scorer, self._chosen(evaluations, store, by, selection), by, **selection)

    def _chosen(
        self,
        evaluations: Iterable[Evaluation | Mapping[str, Any]] | TaskTable | None,
        store: Store | None,
        by: str,
        selection: dict[str, Any],
    ) -> Any:
        """The evaluations given, or ``store``'s board: every stored run scored against its task's
        current baseline (:mod:`arena_core.store.current`), with ``selection`` given what it
        reads from the store (the runs' meta when grouping or selecting by meta or leaving
        harness errors out, the tasks' meta for ``cluster``)."""
        if store is None:
            if evaluations is None:
                raise ValueError("give evaluations or store=")
            return evaluations
        if evaluations is not None:
            raise ValueError("give evaluations or store=, not both")
        current, meta = self.current_scores(store).read(store)
        wants = needs_meta(by) or selection.get("where") or selection.get("cluster")
        if selection.get("meta") is None and (wants or self.config.infra_failures == "exclude"):
            selection["meta"] = meta
        if selection.get("cluster") and selection.get("task_meta") is None:
            with store.transaction(write=False) as tx:
                selection["task_meta"] = {t: task.meta for t, task in stored_tasks(tx).items()}
        return current

    def current_scores(self, store: Store) -> CurrentScores:
        """The current evaluations of ``store``'s runs, kept by this arena between boards and
        rescored task by task as the store changes (:class:`~arena_core.store.current.CurrentScores`)."""
        held: weakref.WeakKeyDictionary[Store, CurrentScores] = self.__dict__.setdefault(
            "_current_scores", weakref.WeakKeyDictionary()
        )
        try:
            return held.setdefault(store, CurrentScores(self))  # type: ignore[arg-type]
        except TypeError:  # a store that cannot be weakly referenced or hashed: scored anew each time
            return CurrentScores(self)  # type: ignore[arg-type]

    def _board(
        self,
        table: TaskTable | CellTable,
        method: str | None,
        interval: str | None,
        test: str,
        adjust: str,
        ranks: str | None = None,
        order: str | None = None,
    ) -> list[GroupRow]:
        return leaderboard(
            table,
            self.components.aggregators[method or self.config.leaderboard_method],
            self.components.interval_methods[interval or self.config.leaderboard_interval],
            min_tasks=self.config.min_tasks_per_group,
            test=test,
            adjustment=adjust,
            ranks=ranks or self.config.leaderboard_ranks,
            order=order or self.config.leaderboard_order,
        )

    def pairwise(
        self,
        evaluations: Iterable[Evaluation | Mapping[str, Any]] | TaskTable | CellTable | None = None,
        *,
        store: Store | None = None,
        by: str = "tool",
        test: str = "t",
        adjustment: str = "holm",
        order: str | None = None,
        **selection: Any,
    ) -> list[PairRow]:
        """Paired tests between every two ranked groups of the leaderboard (best first) on the
        tasks both ran: ``arena leaderboard --pairwise`` (see :mod:`arena_core.stats.pairwise`)."""
        table = self._table(evaluations, store, by, selection)
        board = self._board(table, None, None, test, adjustment, "overlap", order)  # the order only: no rank bootstrap
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
        runs = gather_runs(self.scorer, evaluations, by, **selection)
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
        if store is not None and selection.get("meta") is None:
            selection["meta"] = self.current_scores(store).read(store)[1]  # the importers' flags, always
        runs = self._runs(evaluations, store, by, selection)
        return task_health(runs, selection.get("meta"), model=model, labels=labels)

    def select_tasks(
        self, evaluations: Iterable[Evaluation | Mapping[str, Any]] | None, size: int, *, by: str = "tool",
        model: str = "rasch", store: Store | None = None, **selection: Any,
    ) -> Selection:  # fmt: skip
        """The ``size`` most informative tasks, and how they rank the groups (``arena tasks --select``;
        see :mod:`arena_core.stats.irttasks`)."""
        return select_tasks(self._runs(evaluations, store, by, selection), size, model)

    def predict(
        self,
        evaluations: Iterable[Evaluation | Mapping[str, Any]] | TaskTable | CellTable | None = None,
        *,
        store: Store | None = None,
        by: str = "tool",
        model: str = "rasch",
        cells: str = "missing",
        tasks: Mapping[str, Task] | None = None,
        features: Sequence[str] = (),
        **selection: Any,
    ) -> tuple[list[GroupExpectation], list[CellPrediction]]:
        """Each group's expected score on every task, and its chance on each of the ``cells``
        (``missing``, ``all``, ``none``) by the item response fit ``model`` (``arena predict``;
        see :mod:`arena_core.stats.prediction`). With ``tasks``, those no group ran are on the
        board too; with ``features`` (``category``, ``difficulty``, ``created_at``, ``meta.KEY``)
        the difficulties are explained by them (:mod:`arena_core.stats.taskfeatures`)."""
        table = self._table(evaluations, store, by, selection)
        return predict(board_fit(table, model, tasks, features), cells)

    def feature_effects(
        self,
        evaluations: Iterable[Evaluation | Mapping[str, Any]] | None = None,
        *,
        tasks: Mapping[str, Task],
        features: Sequence[str],
        store: Store | None = None,
        by: str = "tool",
        model: str = "rasch",
        **selection: Any,
    ) -> list[FeatureEffect]:
        """How much each value of each of ``features`` moves a task's fitted difficulty, with a
        95% interval (``arena tasks --features``; see :mod:`arena_core.stats.taskfeatures`)."""
        table = self._table(evaluations, store, by, selection)
        board = board_fit(table, model, tasks, features)
        assert board.features is not None
        return feature_effects(board.fit, board.features, board.counts)

    def similar_tasks(
        self,
        evaluations: Iterable[Evaluation | Mapping[str, Any]] | None = None,
        *,
        task: str,
        count: int = 10,
        tasks: Mapping[str, Task] | None = None,
        features: Sequence[str] = (),
        store: Store | None = None,
        by: str = "tool",
        model: str = "rasch",
        **selection: Any,
    ) -> list[SimilarTask]:
        """The ``count`` tasks most like ``task``: solved by the same groups, and alike in
        ``features`` (``arena tasks --similar``; see :mod:`arena_core.stats.similar`)."""
        table = self._table(evaluations, store, by, selection)
        return similar_tasks(board_fit(table, model, tasks, features), task, count)

    def adaptive(
        self,
        evaluations: Iterable[Evaluation | Mapping[str, Any]] | None = None,
        *,
        store: Store | None = None,
        by: str = "tool",
        model: str = "rasch",
        categories: Mapping[str, str | None] | None = None,
        **selection: Any,
    ) -> AdaptiveTest:
        """The board's tasks fitted, to place a new agent on it: which tasks it should run next
        and where it stands (``arena adaptive``; see :mod:`arena_core.stats.adaptive`);
        ``categories`` (task to category) balances the tasks chosen over them."""
        table = self._table(evaluations, store, by, selection)
        return AdaptiveTest(table, model, categories)

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
        runs = self._runs(evaluations, store, by, selection)
        return repeats(runs, ks, self.components.interval_methods[self.config.leaderboard_interval])

    def detect_bias(
        self, evaluations: Iterable[Evaluation | Mapping[str, Any]], *, z: float = 1.96
    ) -> list[BiasFinding]:
        """Per tool and dimension, its mean against the others', flagged beyond ``z`` standard errors."""
        return detect_bias([structure(e, Evaluation) for e in evaluations], z=z)
