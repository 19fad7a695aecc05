"""The runs and evaluations a SQLite or PostgreSQL store keeps, beside their typed columns.

Both stores keep each record as its spec-shaped JSON beside the columns a batch reads (a run's
figures, an evaluation's score, tool and provisional mark), and derive an evaluation's rank and
percentile from its task's stored scores when it is read: so a batch reads a few numbers per
stored row of its tasks and writes only its own rows (:mod:`arena_core.store.standings`), on
either database. This class is that part of their transactions, written once in SQL both
understand; each store gives its connection (or cursor) and its parameter mark.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import orjson

from arena_core.model.records import Evaluation, Submission
from arena_core.model.serde import structure, to_dict
from arena_core.store.cells import CellLedger
from arena_core.store.figurecache import PendingFigures
from arena_core.store.standings import Scores, Standing
from arena_core.store.statements import LOOKED_UP, dump_record
from arena_core.store.taskfigures import FIGURES, FIGURES_OF_TASK, SCORES_OF_TASK, TaskFigures

__all__ = [
    "EVALUATION_COLUMNS",
    "FIGURES",
    "FIGURES_OF_TASK",
    "SCORES_OF_TASK",
    "SUBMISSION_COLUMNS",
    "TypedRows",
    "dump_record",
    "evaluation_of",
]

#: The typed columns of each table, beside its key and JSON, with their kinds in SQLite's and
#: PostgreSQL's words.
SUBMISSION_COLUMNS = (("tool", "TEXT"), ("model", "TEXT"), *((f, "REAL") for f in FIGURES))
EVALUATION_COLUMNS = (
    ("tool", "TEXT"),
    ("overall_score", "REAL"),
    ("provisional", "INTEGER"),
    ("model", "TEXT"),
    ("evaluated_at", "TEXT"),
    ("baseline_version", "INTEGER"),
)
_SUBMISSION_NAMES = tuple(name for name, _ in SUBMISSION_COLUMNS)
_EVALUATION_NAMES = tuple(name for name, _ in EVALUATION_COLUMNS)

#: An evaluation with its rank and percentile derived from the task's stored scores: the
#: competition rank (1, 1, 3) and the number of scores strictly below, of how many.
_RANKED = """SELECT data, provisional,
    RANK() OVER (PARTITION BY task_id ORDER BY overall_score DESC),
    RANK() OVER (PARTITION BY task_id ORDER BY overall_score) - 1,
    COUNT(*) OVER (PARTITION BY task_id)
    FROM evaluations WHERE task_id = ?"""


def evaluation_of(data: str, provisional: int, rank: int, below: int, count: int) -> Evaluation:
    """A stored evaluation's record with its provisional mark, rank and percentile as read."""
    record = orjson.loads(data)
    record.update(overall_ranking=rank, percentile=round(below / count * 100, 1), provisional=bool(provisional))
    return structure(record, Evaluation)


def _upsert(table: str, key: str, names: tuple[str, ...]) -> str:
    columns = (key, "task_id", "data", *names)
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
        f"ON CONFLICT ({key}) DO UPDATE SET " + ", ".join(f"{n} = excluded.{n}" for n in columns[1:])
    )


#: What an id looked up and not stored is known as, in a transaction's ids (``TypedRows``).
_UNSTORED = object()
_PUT_SUBMISSION = _upsert("submissions", "id", _SUBMISSION_NAMES)
_PUT_EVALUATION = _upsert("evaluations", "submission_id", _EVALUATION_NAMES)


class TypedRows(TaskFigures):
    """The typed-column reads and writes of a store's transaction.

    :param connection: what runs the store's SQL: ``execute(sql, args)`` returning an iterable
        cursor with ``fetchone`` and ``fetchall`` (a sqlite3 connection, a psycopg cursor).
    :param mark: the driver's parameter mark; the SQL here is written with ``?``.
    :param figures: the tasks' figures and scores the store keeps, in a write transaction.
    """

    def __init__(self, connection: Any, mark: str = "?", figures: PendingFigures | None = None) -> None:
        super().__init__(connection, mark, figures)
        self.ledger = CellLedger()
        """What this transaction changed in the leaderboard's cells, written before they are read
        and before it commits."""
        self._last_read: dict[str, tuple[str, Evaluation]] = {}
        """The last task's evaluations read, by id, with their stored text: replacing one takes
        its figures away from its cells, and the same text gives the same figures without
        parsing it again (re-deriving a task reads its evaluations, then replaces them all)."""
        self._task_of_id: dict[str, object] = {}
        """The ids this transaction looked up and has not written since, with their stored task
        (``_UNSTORED``: not stored). Runs are written only through it, so what it found stays
        true until it writes the id: a batch looks its ids up once, then stores them a task at
        a time (an id written is forgotten, so a batch of a million runs keeps none of them)."""

    def submissions(self, task_id: str) -> list[Submission]:
        rows = self._run("SELECT data FROM submissions WHERE task_id = ? ORDER BY seq", task_id).fetchall()
        return [structure(json.loads(row[0]), Submission) for row in rows]

    def submission_records(self, task_id: str) -> list[str]:
        """The task's stored runs as their JSON records, first stored first, unparsed (a board
        reads them as columns: :mod:`arena_core.store.current`)."""
        return [row[0] for row in self._run("SELECT data FROM submissions WHERE task_id = ? ORDER BY seq", task_id)]

    def put_submission(self, submission: Submission) -> None:
        self.put_submissions([submission])

    def put_submissions(self, submissions: Sequence[Submission]) -> None:
        """Store runs (replacing those with the same ids) in one statement run for all of them."""
        rows = [
            (s.id, s.task_id, dump_record(s), s.tool, s.model, *(getattr(s, f) for f in FIGURES)) for s in submissions
        ]
        if self._figures is not None:
            moved = self.tasks_of([s.id for s in submissions])  # before they are written
            kept: dict[str, list[tuple[Any, ...]]] = {}
            for row in rows:  # the kept figures' rows: the id, then the tool, the model and the figures
                kept.setdefault(row[1] or "", []).append((row[0], *row[3:]))
            self._figures.wrote(kept, moved, FIGURES)
        self._many(_PUT_SUBMISSION, rows)
        for s in submissions:
            self._task_of_id.pop(s.id, None)

    def task_of(self, submission_id: str) -> str | None:
        """The task a stored submission answers, ``None`` when the id is not stored."""
        row = self._run("SELECT task_id FROM submissions WHERE id = ?", submission_id).fetchone()
        return None if row is None else str(row[0])

    def tasks_of(self, submission_ids: Sequence[str]) -> dict[str, str]:
        """The task of each of ``submission_ids`` that is stored, looked up a few hundred at a time
        (those this transaction looked up and has not written since are not looked up again)."""
        known = self._task_of_id
        unknown = [i for i in submission_ids if i not in known]
        for start in range(0, len(unknown), LOOKED_UP):
            part = unknown[start : start + LOOKED_UP]
            among, args = self._among("id", part)
            known.update(dict.fromkeys(part, _UNSTORED))
            known.update(self._run(f"SELECT id, task_id FROM submissions WHERE {among}", *args).fetchall())
        return {i: task for i in submission_ids if (task := known[i]) is not _UNSTORED}  # type: ignore[misc]

    def evaluations(self, task_id: str) -> list[Evaluation]:
        """Every stored evaluation of the task, first stored first, ranked among the task's scores."""
        rows = self._run(f"{_RANKED} ORDER BY seq", task_id).fetchall()
        read = [evaluation_of(*row) for row in rows]
        self._last_read = {e.submission_id: (row[0], e) for row, e in zip(rows, read, strict=True)}
        return read

    def ranked(self, task_id: str, *, offset: int = 0, limit: int = -1) -> list[Evaluation]:
        """A page of the task's evaluations, best first (equal scores first stored first): the
        ranks come from the scores' index, and only the page's records are parsed."""
        every = "LIMIT -1" if self._mark == "?" else "LIMIT ALL"  # SQLite's words, PostgreSQL's
        page = f"{_RANKED} ORDER BY overall_score DESC, seq"
        rows = self._run(f"{page} {every} OFFSET ?", task_id, offset) if limit < 0 else (
            self._run(f"{page} LIMIT ? OFFSET ?", task_id, limit, offset)
        )  # fmt: skip
        return [evaluation_of(*row) for row in rows.fetchall()]

    def put_evaluation(self, evaluation: Evaluation) -> None:
        """Store the evaluation without its rank and percentile, which are derived when it is
        read, and move the cells it leaves and joins."""
        self.put_evaluations([evaluation])

    def put_evaluations(self, evaluations: Sequence[Evaluation]) -> None:
        """Store evaluations as :meth:`put_evaluation` does, the ones they replace looked up a
        few hundred at a time and the rows written in one statement run for all of them (a
        batch of a million runs had made two million statements)."""
        rows = []  # built before the look-up below, which waits for the runs' upsert in a pipeline
        for evaluation in evaluations:
            data = to_dict(evaluation)
            data.pop("overall_ranking", None)
            data.pop("percentile", None)
            rows.append(
                (
                    evaluation.submission_id,
                    evaluation.task_id,
                    orjson.dumps(data).decode(),
                    evaluation.tool,
                    evaluation.overall_score,
                    int(evaluation.provisional),
                    evaluation.model,
                    evaluation.evaluated_at,
                    evaluation.baseline_version,
                )
            )
        ids = [e.submission_id for e in evaluations]
        moved: dict[str, str] = {}  # the task each replaced one was stored under
        for start in range(0, len(ids), LOOKED_UP):
            among, args = self._among("submission_id", ids[start : start + LOOKED_UP])
            replaced = self._run(
                f"SELECT submission_id, data, task_id FROM evaluations WHERE {among}", *args
            ).fetchall()
            moved.update((submission_id, task_id) for submission_id, _, task_id in replaced)
            for submission_id, data, _ in replaced:
                text, known = self._last_read.get(submission_id, (None, None))
                self.ledger.add(known if text == data and known is not None else evaluation_of(data, 0, 0, 0, 1), -1)
        self.ledger.add_all(evaluations)
        if self._figures is not None:
            written: dict[str, list[tuple[Any, ...]]] = {}
            for e in evaluations:
                written.setdefault(e.task_id, []).append((e.submission_id, e.overall_score, e.tool, e.provisional))
            self._figures.scored(written, moved)
        self._many(_PUT_EVALUATION, rows)

    def evaluation_columns(self) -> dict[str, list[Any]]:
        """Every stored evaluation's submission id, task, tool, model, overall score, time of
        evaluation and baseline version, first stored first, without parsing a stored record."""
        names = ("submission_id", "task_id", "tool", "model", "overall_score", "evaluated_at", "baseline_version")
        rows = self._run(f"SELECT {', '.join(names)} FROM evaluations ORDER BY seq").fetchall()
        return {
            name: list(values)
            for name, values in zip(names, zip(*rows, strict=True) if rows else [()] * 7, strict=True)
        }

    def standing(self, task_id: str, evaluations: Sequence[Evaluation]) -> Standing | None:
        """Where ``evaluations`` stand among the task's stored ones, counted through the
        indexes of scores and of tools; ``None`` when they are to be placed among the task's
        scores read instead (:func:`~arena_core.store.standings.rank_task` does): when one of
        them is stored already (it would replace a stored row, whose score must not count), or
        when this writer keeps the task's scores, or has been the store's only writer since its
        last transaction and has room to keep them (one stretch of an index, as the task's
        figures are read for its baseline). Counting costs a few milliseconds a post at 10,000
        runs a task on PostgreSQL, and grows with the task; a writer that shares the store with
        others counts, since what it would read would be forgotten at the next write of another."""
        figures = self._figures
        if figures is not None and (
            isinstance(figures.get("scores", task_id), Scores) or figures.worth_keeping(task_id)
        ):
            return None
        among, args = self._among("submission_id", [e.submission_id for e in evaluations])
        if self._run(f"SELECT 1 FROM evaluations WHERE {among} LIMIT 1", *args).fetchone():
            return None
        tools = self._run(
            "SELECT tool, COUNT(*), MIN(provisional), MAX(provisional) FROM evaluations WHERE task_id = ? GROUP BY tool",
            task_id,
        ).fetchall()
        counted = [
            self._run(
                "SELECT (SELECT COUNT(*) FROM evaluations WHERE task_id = ? AND overall_score > ?), "
                "(SELECT COUNT(*) FROM evaluations WHERE task_id = ? AND overall_score < ?)",
                task_id,
                e.overall_score,
                task_id,
                e.overall_score,
            ).fetchone()
            for e in evaluations
        ]
        return Standing(
            [int(above) for above, _ in counted],
            [int(below) for _, below in counted],
            {tool: (int(n), bool(least), bool(most)) for tool, n, least, most in tools},
        )

    def mark_provisional(self, task_id: str, tool: str | None, provisional: bool) -> None:
        if self._figures is not None:
            self._figures.marked(task_id, tool, provisional)
        self._run(
            "UPDATE evaluations SET provisional = ? WHERE task_id = ? AND tool IS NOT DISTINCT FROM ?",
            int(provisional),
            task_id,
            tool,
        )

    def keep_evaluation_version(self, evaluation: Evaluation, reason: str, superseded_at: str) -> None:
        """Keep ``evaluation`` among the superseded ones (see :mod:`arena_core.store.repricing`)."""
        self._run(
            "INSERT INTO evaluation_versions (submission_id, superseded_at, reason, data) VALUES (?, ?, ?, ?)",
            evaluation.submission_id,
            superseded_at,
            reason,
            dump_record(evaluation),
        )

    def keep_evaluation_versions(self, evaluations: Sequence[Evaluation], reason: str, superseded_at: str) -> None:
        """:meth:`keep_evaluation_version` for many, in one statement run for all of them."""
        self._many(
            "INSERT INTO evaluation_versions (submission_id, superseded_at, reason, data) VALUES (?, ?, ?, ?)",
            [(e.submission_id, superseded_at, reason, dump_record(e)) for e in evaluations],
        )

    def evaluation_versions(self, submission_id: str) -> list[tuple[str, str, Evaluation]]:
        """(superseded at, reason, evaluation) of every superseded evaluation of a run, oldest first."""
        rows = self._run(
            "SELECT superseded_at, reason, data FROM evaluation_versions WHERE submission_id = ? ORDER BY seq",
            submission_id,
        ).fetchall()
        return [(at, reason, structure(json.loads(data), Evaluation)) for at, reason, data in rows]
