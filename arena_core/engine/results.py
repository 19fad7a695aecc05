"""The batch path's result: evaluations held as columns, built as objects only on access."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from attrs import frozen

from arena_core.engine.batch import CheckColumn
from arena_core.engine.columns import Coded, factorize
from arena_core.engine.grouped import competition_ranks_by_group
from arena_core.engine.jsonlines import json_line_blocks
from arena_core.engine.objects import BLOCK, evaluations_of
from arena_core.engine.rounding import round_exact
from arena_core.engine.rowparts import criteria_lists, filled_by_row, filled_texts, kept_weights
from arena_core.engine.sequences import BuiltOnAccess
from arena_core.io.arrays import ArrowText, from_numpy, text_array
from arena_core.model.protocols import DifficultyAdjuster
from arena_core.model.provenance import Provenance
from arena_core.model.records import Evaluation, SuccessCriterion, Task, WeightProfile
from arena_core.model.serde import to_dict


@frozen(eq=False)
class EvaluationBatch(BuiltOnAccess[Evaluation]):
    """Evaluations of many submissions, held as columns; indexing builds an :class:`Evaluation`.

    ``columns()`` gives the arrays (scores, ranks, percentiles) without building objects. Each
    array has one entry per submission, in input order.
    """

    size: int
    ids: Sequence[str]
    task_ids: Sequence[str]
    tools: Sequence[str | None]
    models: Sequence[str | None]
    overall: np.ndarray
    """Overall scores, adjusted for difficulty and rounded to 2 places."""
    raw_unadjusted: np.ndarray
    """Overall scores before the difficulty adjustment, unrounded."""
    raw_scores: Mapping[str, np.ndarray]
    """Dimension to unrounded scores (NaN where the dimension was left out)."""
    scores: Mapping[str, np.ndarray]
    raw_parts: Mapping[str, np.ndarray]
    """Composite part (``token_efficiency``) to unrounded scores."""
    provisional: np.ndarray
    task_codes: np.ndarray
    """Per row, the index of its task in :attr:`task_list`."""
    task_list: Sequence[Task]
    profiles: Sequence[WeightProfile]
    """Per task, the weight profile it was scored with."""
    adjusters: Sequence[DifficultyAdjuster | None]
    criteria: Mapping[int, tuple[np.ndarray, list[tuple[SuccessCriterion, CheckColumn]]]]
    """``id(task)`` to (rows checked, each criterion with its verdicts on those rows)."""
    filled: Sequence[tuple[str, str, np.ndarray]]
    """(slot, policy, row mask) for each metric left out or filled in."""
    coverage: np.ndarray
    """Per row, the share of its profile's weight whose metrics were measured."""
    evaluated_at: str
    provenance: Provenance | None
    gate: str | None = None
    """The dimension that gated the others (``gate``), whose weight took theirs when left out."""

    #: Which path scored these: always the batch path here (see :class:`EvaluationList`).
    path: ClassVar[str] = "batch"
    #: Why the per-record path ran instead: never, here.
    fallback_reason: ClassVar[str | None] = None

    def __len__(self) -> int:
        return self.size

    # What a leaderboard never reads is made when first read: ranks sort every task, and each
    # rounding is a few passes over every row.
    @cached_property
    def unadjusted(self) -> np.ndarray:
        """Overall scores before the difficulty adjustment, rounded to 2 places."""
        return round_exact(self.raw_unadjusted, 2)

    @cached_property
    def parts(self) -> dict[str, np.ndarray]:
        """Composite part (``token_efficiency``) to rounded scores."""
        return {p: round_exact(v, 2) for p, v in self.raw_parts.items()}

    @cached_property
    def _ranking(self) -> tuple[np.ndarray, np.ndarray]:
        return competition_ranks_by_group(self.task_codes, self.overall)

    @property
    def ranks(self) -> np.ndarray:
        """Per row, its rank among its task's rows by overall score (best first; ties share: 1 1 3)."""
        return self._ranking[0]

    @property
    def percentiles(self) -> np.ndarray:
        """Per row, the share of its task's rows scoring below it, in percent (1 place)."""
        return self._ranking[1]

    def columns(self) -> dict[str, Any]:
        """Column name to array: ids, tool, model, overall and dimension scores (NaN where left
        out), ranks; and ``metric_scores``, a mapping of each composite part (``token_efficiency``)
        to its scores."""
        out: dict[str, Any] = {
            "submission_id": self.ids,
            "task_id": self.task_ids,
            "tool": self.tools,
            "model": self.models,
            "overall_score": self.overall,
            "unadjusted_overall_score": self.unadjusted,
        }
        out.update({f"{d}_score": v for d, v in self.scores.items()})
        out["metric_scores"] = dict(self.parts)
        out.update({"overall_ranking": self.ranks, "percentile": self.percentiles, "provisional": self.provisional})
        return out

    def table(self) -> dict[str, Any]:
        """Flat columns, one value per evaluation, for a table (Arrow, Parquet, a data frame):
        the CSV writer's columns, in its order, then each composite part as
        ``metric_scores.PART``. Scores left out are NaN; ``filled`` is ``SLOT=POLICY;...``."""
        return self._flat(list)

    def to_arrow(self) -> Any:
        """The evaluations as a ``pyarrow.Table`` of :meth:`table`'s columns (needs pyarrow);
        text held as codes (tasks, tools, profiles) goes to Arrow as codes, not a string per row."""
        import pyarrow

        columns = self._flat(_arrow_text)  # arrays of numbers from their buffers: see io.arrays
        return pyarrow.table(
            {
                k: from_numpy(v) if isinstance(v, np.ndarray) and v.dtype.kind in "biuf" else v
                for k, v in columns.items()
            }
        )

    def _flat(self, text: Any) -> dict[str, Any]:
        """:meth:`table`'s columns, each text column made by ``text`` from a sequence."""
        codes = self.task_codes
        out: dict[str, Any] = {
            "submission_id": text(self.ids),
            "task_id": text(self.task_ids),
            "tool": text(self.tools),
            "model": text(self.models),
            "overall_score": self.overall,
        }
        out.update({f"{d}_score": self.scores[d] for d in self.dimensions()})
        out.update(
            {
                "unadjusted_overall_score": self.unadjusted,
                "overall_ranking": self.ranks,
                "percentile": self.percentiles,
                "provisional": self.provisional,
                "weight_profile": text(_named(codes, [p.name for p in self.profiles])),
                "difficulty": text(_named(codes, [a.name if a is not None else None for a in self.adjusters])),
                "filled": text(filled_texts(self.filled, self.size)),
                "coverage": self.coverage,
            }
        )
        out.update({f"metric_scores.{p}": v for p, v in self.parts.items()})
        return out

    def to_pandas(self) -> Any:
        """The evaluations as a pandas ``DataFrame``, by way of Arrow (needs pyarrow and pandas)."""
        return self.to_arrow().to_pandas()

    def to_polars(self) -> Any:
        """The evaluations as a polars ``DataFrame``, by way of Arrow (needs pyarrow and polars)."""
        import polars

        return polars.from_arrow(self.to_arrow())

    def dimensions(self) -> list[str]:
        """The dimensions scored, in the order they first appear going through the evaluations
        (as a writer listing every evaluation's ``scores`` would meet them)."""
        first: list[tuple[int, int, str]] = []
        for dimension, raw in self.raw_scores.items():
            present = np.flatnonzero(~np.isnan(raw))
            if len(present):
                row = int(present[0])
                order = list(self.profiles[self.task_codes[row]].weights)
                first.append((row, order.index(dimension), dimension))
        return [d for _, _, d in sorted(first)]

    def json_lines(self, *, lead: bytes = b"") -> Iterator[bytes]:
        """The evaluations as JSON Lines, a block of lines at a time: ``lead``, the bytes of
        ``orjson.dumps(to_dict(evaluation))`` and a newline for each, encoded a column at a time
        (:mod:`arena_core.engine.jsonlines`)."""
        return json_line_blocks(self, lead=lead)

    def records(self, *, block: int = 65_536) -> Iterator[dict[str, Any]]:
        """Each evaluation as :func:`~arena_core.model.serde.to_dict` gives it, in order, built
        from the arrays without an :class:`Evaluation` per submission (for the terminal table
        and callers that want dicts; files are written from :meth:`json_lines` and :meth:`table`).

        :param block: rows prepared at a time: what is held beside the arrays is one block's
            Python values, not the whole result's.
        """
        filled = filled_by_row(self.filled)
        shared = to_dict(self.provenance) if self.provenance is not None else None
        # Per profile, which of all the dimensions are its own and, per row, whether it has them
        # all (then its breakdown is the profile's own; a row missing some is rare and done by
        # hand). Profiles repeat across tasks, so each is prepared once.
        all_dims = list(self.scores)
        matrix = np.column_stack([self.scores[d] for d in all_dims]) if all_dims else np.empty((self.size, 0))
        prepared: dict[str, tuple[Any, ...]] = {}
        by_profile: list[tuple[Any, ...] | None] = []
        used = set(np.unique(self.task_codes).tolist())
        for code, profile in enumerate(self.profiles):
            if code not in used:  # a task of the result without rows: its profile may lack dimensions
                by_profile.append(None)
                continue
            if profile.name not in prepared:
                dims = list(profile.weights)
                where = [all_dims.index(d) for d in dims]
                complete = ~np.isnan(matrix[:, where]).any(axis=1)
                breakdown = {f"{d}_weight": w for d, w in profile.weights.items()}
                own = None if where == list(range(len(all_dims))) else where
                prepared[profile.name] = (profile, dims, [f"{d}_score" for d in dims], own, complete, breakdown)
            by_profile.append(prepared[profile.name])
        part_names = list(self.parts)
        part_matrix = np.column_stack([self.parts[p] for p in part_names]) if part_names else np.empty((self.size, 0))
        part_complete = np.asarray(~np.isnan(part_matrix).any(axis=1))
        difficulties = [a.name if a is not None else None for a in self.adjusters]
        for start in range(0, self.size, block):
            stop = min(start + block, self.size)
            overall, unadjusted = self.overall[start:stop].tolist(), self.unadjusted[start:stop].tolist()
            ranks, percentiles = self.ranks[start:stop].tolist(), self.percentiles[start:stop].tolist()
            provisional, codes = self.provisional[start:stop].tolist(), self.task_codes[start:stop].tolist()
            coverage = self.coverage[start:stop].tolist()
            criteria = criteria_lists(self.criteria, start, stop)
            score_rows, part_rows = matrix[start:stop].tolist(), part_matrix[start:stop].tolist()
            parts_whole = part_complete[start:stop].tolist()
            ids, task_ids = self.ids[start:stop], self.task_ids[start:stop]
            tools, models = self.tools[start:stop], self.models[start:stop]
            for j in range(stop - start):
                i = start + j
                code = codes[j]
                profile, dims, names, own, complete, breakdown = by_profile[code]
                record: dict[str, Any] = {
                    "submission_id": str(ids[j]),
                    "task_id": str(task_ids[j]),
                    "overall_score": overall[j],
                }
                values = score_rows[j] if own is None else [score_rows[j][k] for k in own]
                if complete[i]:
                    record.update(zip(names, values, strict=True))
                    record["breakdown"] = dict(breakdown)
                else:
                    present = [d for d, v in zip(dims, values, strict=True) if v == v]  # not NaN
                    record.update((f"{d}_score", v) for d, v in zip(dims, values, strict=True) if v == v)
                    record["breakdown"] = {
                        f"{d}_weight": w for d, w in kept_weights(profile.weights, present, self.gate).items()
                    }
                record["weight_profile"] = profile.name
                record["difficulty"] = difficulties[code]
                record["unadjusted_overall_score"] = unadjusted[j]
                parts = part_rows[j]
                record["metric_scores"] = (
                    dict(zip(part_names, parts, strict=True))
                    if parts_whole[j]
                    else {p: v for p, v in zip(part_names, parts, strict=True) if v == v}
                )
                record["criteria"] = criteria[j]
                record["evaluated_at"] = self.evaluated_at
                if tools[j] is not None:
                    record["tool"] = tools[j]
                if models[j] is not None:
                    record["model"] = models[j]
                record["overall_ranking"] = ranks[j]
                record["percentile"] = percentiles[j]
                if provisional[j]:
                    record["provisional"] = True
                if i in filled:
                    record["filled"] = filled[i]
                    if coverage[j] != 1.0:
                        record["coverage"] = coverage[j]
                if shared is not None:
                    record["provenance"] = shared
                yield record

    def _item(self, i: int) -> Evaluation:
        return evaluations_of(self, i, i + 1)[0]

    def __iter__(self) -> Iterator[Evaluation]:
        """The evaluations in order, built a block of rows at a time (:mod:`arena_core.engine.objects`)."""
        for start in range(0, self.size, BLOCK):
            yield from evaluations_of(self, start, min(self.size, start + BLOCK))


class EvaluationList(list[Evaluation]):
    """Evaluations made one record at a time, saying why the batch path did not run."""

    #: ``"per-record"``.
    path = "per-record"

    def __init__(self, evaluations: Sequence[Evaluation], fallback_reason: str) -> None:
        super().__init__(evaluations)
        #: The submission with a workspace, or the component in use without a batch form.
        self.fallback_reason: str | None = fallback_reason


def _named(codes: np.ndarray, names: list[str | None]) -> Coded:
    """Per row, the name of its task's profile or adjuster (``codes`` index ``names``, one per
    task; tasks share names): a :class:`Coded` of the distinct names."""
    task_name, distinct = factorize(names)
    return Coded(task_name[codes], distinct)


def _arrow_text(values: Sequence[Any]) -> Any:
    """A text column as Arrow, as ``pyarrow.array(list(values))`` makes it (all absent: the null
    type); codes are decoded by Arrow from the distinct values, without a string per row."""
    import pyarrow

    if isinstance(values, ArrowText):  # as it was read, without a string per row
        return values.array if values.array.type == pyarrow.string() else values.array.cast(pyarrow.string())
    if not isinstance(values, Coded) or all(v is None for v in values.distinct):
        return pyarrow.array(list(values))
    dictionary = text_array(values.distinct)
    return pyarrow.DictionaryArray.from_arrays(from_numpy(values.codes), dictionary).dictionary_decode()
