"""People's labels, and the review queue that draws the items they label, beside the store.

**Labels** (:class:`~arena_core.model.labels.Label`) are kept with their rater and time; a rater
labels an item once (a second label of the same item by the same rater is refused).

**The review queue** holds the items of the stored runs that people may be asked to label: each
requirement of a judge criterion, with the group the run is ranked in and whether the panel of
judges split on it. Each item gets a uniformly random key when queued; within a group, the
queue hands items out in the order of their keys, so the items of a group labelled at any time
are a uniform random sample of its items (what a corrected pass rate needs), and groups take
turns (the group with the fewest items drawn goes next). With a ``disagreement_share``, that
share of hand-outs draws instead from the items the panel split on; their labels are marked
``sample = "disagreement"`` (kept apart from the statistics) until the random order reaches
the item, which then counts in the random sample like any other.

An item is handed to ``reviews_per_item`` different reviewers; when their labels disagree, to
one more. A hand-out a reviewer does not answer within ``lease`` seconds goes to someone else;
a reviewer asking again gets its open item back first. Every change is one transaction (a crash
or ``kill -9`` loses nothing that was answered).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from attrs import frozen

from arena_core.model.errors import ArenaError
from arena_core.model.labels import Label
from arena_core.store.side import SideTables

__all__ = ["LabelStore", "QueuedItem", "ReviewItem", "item_id"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS labels (submission_id TEXT NOT NULL, requirement TEXT NOT NULL, rater TEXT NOT NULL, "
    "label INTEGER NOT NULL, at TEXT, sample TEXT, PRIMARY KEY (submission_id, requirement, rater))",
    "CREATE TABLE IF NOT EXISTS review_items (id TEXT PRIMARY KEY, submission_id TEXT NOT NULL, task_id TEXT NOT NULL, "
    "requirement TEXT NOT NULL, grp TEXT NOT NULL, split INTEGER NOT NULL, rkey DOUBLE PRECISION NOT NULL, "
    "random_drawn INTEGER NOT NULL DEFAULT 0, needed INTEGER NOT NULL, queued TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS review_handouts (item TEXT NOT NULL, reviewer TEXT NOT NULL, handed TEXT NOT NULL, "
    "answered INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (item, reviewer))",
)
_TABLES = ("labels", "review_items", "review_handouts")
#: A whole run's label keeps ``requirement`` as this (the key has no NULL).
_WHOLE = ""


def item_id(submission_id: str, requirement: str | None) -> str:
    """An item's id in the queue: opaque (a run's id may name its tool, which a reviewer must not see)."""
    return hashlib.sha256(f"{submission_id}\0{requirement or _WHOLE}".encode()).hexdigest()[:20]


@frozen
class QueuedItem:
    """What the queue may draw: a requirement of a stored run (``None``: the whole run)."""

    submission_id: str
    task_id: str
    requirement: str | None
    group: str
    split: bool = False
    """The panel of judges split on it."""


@frozen
class ReviewItem:
    """What a reviewer is handed."""

    id: str
    submission_id: str
    task_id: str
    requirement: str | None


class LabelStore:
    """Labels and the review queue in the SQLite file ``where``, or the PostgreSQL database a
    ``postgresql://`` URL names (see the module's note)."""

    def __init__(self, where: str | Path, *, reviews_per_item: int = 2, lease: float = 600.0) -> None:
        if reviews_per_item < 1:
            raise ArenaError(f"reviews_per_item: expected 1 or more, got {reviews_per_item}")
        self.where, self.reviews_per_item, self.lease = where, reviews_per_item, lease
        self._tables = SideTables(where, _TABLES, _SCHEMA)
        self._random = random.SystemRandom()

    def add(self, labels: Sequence[Label]) -> int:
        """Store ``labels``, all or none.

        :raises ArenaError: a rater labelled an item already (naming it), nothing stored.
        """
        with self._tables.transaction() as connection:
            self._refuse_stored(connection, labels)
            for label in labels:
                connection.execute(
                    self._tables.sql("INSERT INTO labels VALUES (?, ?, ?, ?, ?, ?)"),
                    (label.submission_id, label.requirement or _WHOLE, label.rater, int(label.label), label.at,
                     label.sample),
                )  # fmt: skip
        return len(labels)

    def refuse_stored(self, labels: Sequence[Label]) -> None:
        """:raises ArenaError: naming a label whose rater labelled its item already."""
        with self._tables.connect() as connection:
            self._refuse_stored(connection, labels)

    def _refuse_stored(self, connection: Any, labels: Sequence[Label]) -> None:
        for label in labels:
            found = connection.execute(
                self._tables.sql("SELECT 1 FROM labels WHERE submission_id = ? AND requirement = ? AND rater = ?"),
                (label.submission_id, label.requirement or _WHOLE, label.rater),
            ).fetchone()
            if found is not None:
                what = f"requirement {label.requirement!r} of " if label.requirement else ""
                raise ArenaError(
                    f"labels: {label.rater!r} labelled {what}run {label.submission_id!r} already; nothing stored"
                )

    def labels(self) -> list[Label]:
        """Every stored label, in the order stored."""
        with self._tables.connect() as connection:
            rows = connection.execute(
                "SELECT submission_id, requirement, rater, label, at, sample FROM labels ORDER BY at, submission_id"
            ).fetchall()
        return [Label(s, bool(v), r, q or None, a, p) for s, q, r, v, a, p in rows]

    def queue(self, items: Iterable[QueuedItem]) -> int:
        """Add the items not queued yet, each with its random key; the number added."""
        now = datetime.now(UTC).isoformat()
        added = 0
        with self._tables.transaction() as connection:
            known = {row[0] for row in connection.execute("SELECT id FROM review_items").fetchall()}
            for item in items:
                ident = item_id(item.submission_id, item.requirement)
                if ident in known:
                    continue
                known.add(ident)
                connection.execute(
                    self._tables.sql("INSERT INTO review_items (id, submission_id, task_id, requirement, grp, split, "
                                     "rkey, needed, queued) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"),
                    (ident, item.submission_id, item.task_id, item.requirement or _WHOLE, item.group, int(item.split),
                     self._random.random(), self.reviews_per_item, now),
                )  # fmt: skip
                added += 1
        return added

    def next(self, reviewer: str, *, disagreement_share: float = 0.0) -> ReviewItem | None:
        """The item to hand ``reviewer`` (see the module's note), or ``None`` when none is left."""
        now = datetime.now(UTC)
        expired = (now - timedelta(seconds=self.lease)).isoformat()
        sql = self._tables.sql
        with self._tables.transaction() as connection:
            open_one = connection.execute(
                sql("SELECT i.id, i.submission_id, i.task_id, i.requirement FROM review_handouts h JOIN review_items i ON "
                    "i.id = h.item WHERE h.reviewer = ? AND h.answered = 0 ORDER BY h.handed LIMIT 1"),
                (reviewer,),
            ).fetchone()  # fmt: skip
            if open_one is not None:
                return ReviewItem(open_one[0], open_one[1], open_one[2], open_one[3] or None)
            # Items still wanting a label that this reviewer has not been handed: those handed out
            # and answered, or handed within the lease, count against what an item needs.
            wanting = (
                "FROM review_items i WHERE i.needed > (SELECT COUNT(*) FROM review_handouts h WHERE h.item = i.id AND "
                "(h.answered = 1 OR h.handed > ?)) AND NOT EXISTS (SELECT 1 FROM review_handouts h WHERE h.item = i.id "
                "AND h.reviewer = ?)"
            )
            chosen = None
            if disagreement_share > 0 and self._random.random() < disagreement_share:
                chosen = connection.execute(
                    sql(f"SELECT i.id, i.submission_id, i.task_id, i.requirement {wanting} AND i.split = 1 AND i.random_drawn = 0 "
                        "ORDER BY i.rkey LIMIT 1"),
                    (expired, reviewer),
                ).fetchone()  # fmt: skip
            if chosen is None:
                chosen = self._random_draw(connection, wanting, expired, reviewer)
            if chosen is None:
                return None
            connection.execute(
                sql("DELETE FROM review_handouts WHERE item = ? AND reviewer = ?"), (chosen[0], reviewer)
            )
            connection.execute(
                sql("INSERT INTO review_handouts (item, reviewer, handed) VALUES (?, ?, ?)"),
                (chosen[0], reviewer, now.isoformat()),
            )
            return ReviewItem(chosen[0], chosen[1], chosen[2], chosen[3] or None)

    def _random_draw(
        self, connection: object, wanting: str, expired: str, reviewer: str
    ) -> tuple[str, str, str, str] | None:
        """The random stream's next item: of the group with the fewest items drawn, an item drawn
        already that still wants labels, else the next undrawn one (marked drawn: its labels so far,
        if the disagreement stream drew it first, now count as random)."""
        sql = self._tables.sql
        execute = connection.execute  # type: ignore[attr-defined]
        groups = execute(
            sql(f"SELECT i.grp, (SELECT COUNT(*) FROM review_items d WHERE d.grp = i.grp AND d.random_drawn = 1) AS n "
                f"{wanting} GROUP BY i.grp ORDER BY n, i.grp"),
            (expired, reviewer),
        ).fetchall()  # fmt: skip
        for group, _ in groups:
            row = execute(
                sql(f"SELECT i.id, i.submission_id, i.task_id, i.requirement, i.random_drawn {wanting} AND i.grp = ? "
                    "ORDER BY i.random_drawn DESC, i.rkey LIMIT 1"),
                (expired, reviewer, group),
            ).fetchone()  # fmt: skip
            if row is None:
                continue
            if not row[4] and not self._reached(execute, group, row[0], expired):
                continue
            return row[0], row[1], row[2], row[3]
        return None

    def _reached(self, execute: Any, group: str, wanted: str, expired: str) -> bool:
        """Move the group's random order up to ``wanted``, its next undrawn item for this reviewer,
        and mark it drawn; ``False`` when an undrawn item before it still wants labels from someone
        else (the sample must stay a prefix of the random order). Items the disagreement stream
        labelled fully on the way are drawn as they stand: their labels now count as random."""
        sql = self._tables.sql
        before = execute(
            sql("SELECT i.id, i.submission_id, i.requirement, i.needed > (SELECT COUNT(*) FROM review_handouts h "
                "WHERE h.item = i.id AND (h.answered = 1 OR h.handed > ?)) FROM review_items i WHERE i.grp = ? AND "
                "i.random_drawn = 0 AND i.rkey <= (SELECT rkey FROM review_items WHERE id = ?) ORDER BY i.rkey"),
            (expired, group, wanted),
        ).fetchall()  # fmt: skip
        if any(wants for ident, _, _, wants in before if ident != wanted):
            return False
        for ident, submission_id, requirement, _ in before:
            execute(sql("UPDATE review_items SET random_drawn = 1 WHERE id = ?"), (ident,))
            execute(
                sql("UPDATE labels SET sample = 'random' WHERE submission_id = ? AND requirement = ?"),
                (submission_id, requirement),
            )
        return True

    def answer(self, item: str, reviewer: str, label: bool) -> Label:
        """Store ``reviewer``'s label of ``item``, handed to it; when the labels an item was to get
        are in and disagree, it goes to one more reviewer.

        :raises LookupError: no such item. :raises PermissionError: not handed to this reviewer.
        :raises FileExistsError: this reviewer labelled it already.
        """
        sql = self._tables.sql
        now = datetime.now(UTC).isoformat()
        with self._tables.transaction() as connection:
            row = connection.execute(
                sql("SELECT submission_id, requirement, random_drawn, needed FROM review_items WHERE id = ?"), (item,)
            ).fetchone()
            if row is None:
                raise LookupError(item)
            submission_id, requirement, drawn, needed = row
            handout = connection.execute(
                sql("SELECT answered FROM review_handouts WHERE item = ? AND reviewer = ?"), (item, reviewer)
            ).fetchone()
            if handout is None:
                raise PermissionError(item)
            if handout[0]:
                raise FileExistsError(item)
            sample = "random" if drawn else "disagreement"
            connection.execute(
                sql("INSERT INTO labels VALUES (?, ?, ?, ?, ?, ?)"),
                (submission_id, requirement, reviewer, int(label), now, sample),
            )
            connection.execute(
                sql("UPDATE review_handouts SET answered = 1 WHERE item = ? AND reviewer = ?"), (item, reviewer)
            )
            given = [
                bool(v)
                for (v,) in connection.execute(
                    sql("SELECT label FROM labels WHERE submission_id = ? AND requirement = ?"),
                    (submission_id, requirement),
                ).fetchall()
            ]
            if len(given) >= needed and len(set(given)) > 1 and needed == self.reviews_per_item:
                connection.execute(sql("UPDATE review_items SET needed = needed + 1 WHERE id = ?"), (item,))
        return Label(submission_id, label, reviewer, requirement or None, now, sample)
