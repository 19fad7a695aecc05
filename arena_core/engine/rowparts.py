"""Per-row parts of a batch result that its record and JSON Lines writers both build: each row's
criteria verdicts, shared by the rows that read alike, the weights of a row that missed some of
its profile's dimensions, and the metrics a row had filled in or left out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import orjson

from arena_core.engine.batch import STATUSES, CheckColumn
from arena_core.engine.columns import Coded, factorize
from arena_core.model.records import CriterionResult, SuccessCriterion

__all__ = ["criteria_lists", "filled_by_row", "filled_texts", "kept_weights", "verdicts"]

_PASSED = STATUSES.index("passed")

#: ``id(task)`` to (rows checked, each criterion with its verdicts on those rows), as a batch
#: result holds them.
Verdicts = Mapping[int, tuple[np.ndarray, list[tuple[SuccessCriterion, CheckColumn]]]]


def filled_by_row(filled: Sequence[tuple[str, str, np.ndarray]]) -> dict[int, dict[str, str]]:
    """Row to its ``filled`` (slot to policy), for the rows that have one, from a batch result's
    (slot, policy, row mask) entries."""
    out: dict[int, dict[str, str]] = {}
    for slot, policy, mask in filled:
        for row in np.flatnonzero(mask).tolist():
            out.setdefault(row, {})[slot] = policy
    return out


def filled_texts(filled: Sequence[tuple[str, str, np.ndarray]], size: int) -> Sequence[str]:
    """Per row, its ``filled`` as text (``SLOT=POLICY;...`` in the entries' order, ``""`` for
    none), as :class:`Coded`: each row's entries are bits of one integer, and each distinct set
    of them is written once."""
    if len(filled) > 62:  # more entries than bits: row by row
        out = np.full(size, "", dtype=object)
        for slot, policy, mask in filled:
            out[mask] = out[mask] + np.where(out[mask] == "", "", ";") + f"{slot}={policy}"
        return list(out.tolist())
    bits = np.zeros(size, dtype=np.int64)
    for place, (_, _, mask) in enumerate(filled):
        bits |= mask.astype(np.int64) << place
    present = np.zeros(1 << len(filled), dtype=bool) if len(filled) <= 16 else None
    if present is not None:  # few entries: the sets present, without a sort
        present[bits] = True
        distinct = np.flatnonzero(present)
        code_of = np.zeros(len(present), dtype=np.int64)
        code_of[distinct] = np.arange(len(distinct))
        codes = code_of[bits]
    else:
        distinct, inverse = np.unique(bits, return_inverse=True)
        codes = inverse.reshape(-1)
    first = np.full(len(distinct), size, dtype=np.int64)
    np.minimum.at(first, codes, np.arange(size))
    seen = np.argsort(first, kind="stable")  # the sets in first-seen order, as Coded holds them
    renumber = np.empty(len(seen), dtype=np.int64)
    renumber[seen] = np.arange(len(seen))
    names = [f"{slot}={policy}" for slot, policy, _ in filled]
    texts = [";".join(n for i, n in enumerate(names) if d >> i & 1) for d in distinct[seen].tolist()]
    values: dict[str, int] = {}  # sets that read alike (an entry repeated per profile) are one value
    merged = np.array([values.setdefault(t, len(values)) for t in texts], dtype=np.int64)
    return Coded(merged[renumber[codes]], list(values))


def criteria_lists(
    verdicts: Verdicts, start: int, stop: int, *, prefix: bytes | None = None, suffix: bytes = b""
) -> list[Any]:
    """Per row of ``start:stop``, its criteria's verdicts as
    :func:`~arena_core.model.serde.to_dict` gives them. Within a task, each criterion's
    distinct verdicts are built once, and so is each distinct list of them, shared (read-only)
    by the rows that have it: most rows of a task read alike. Verdicts are told apart by
    integer codes (status, credit, and the reason of a row that did not pass), so only the
    reasons are Python values per row.

    :param prefix: for a JSON writer: each list as ``prefix``, its JSON and ``suffix``, encoded
        once per distinct list.
    """
    out: list[Any] = [[] if prefix is None else prefix + b"[]" + suffix] * (stop - start)
    entries = {id(entry): entry for entry in verdicts.values()}  # tasks checked together share one
    for rows, columns in entries.values():
        low, high = (int(x) for x in np.searchsorted(rows, [start, stop]))
        if low == high:
            continue
        combined = np.zeros(high - low, dtype=np.int64)
        built: list[list[dict[str, Any]]] = []
        for criterion, column in columns:
            codes, keys = _verdict_codes(column, low, high)
            combined = combined * len(keys) + codes
            built.append(
                [
                    {
                        "type": criterion.type,
                        "status": STATUSES[status],
                        "credit": value,
                        "weight": criterion.weight,
                        "reason": reason,
                    }
                    for status, value, reason in keys
                ]
            )
        distinct, lists = np.unique(combined, return_inverse=True)  # each row's verdicts
        shown: list[Any] = []
        for key in distinct.tolist():
            chosen = []
            for choices in reversed(built):
                key, k = divmod(key, len(choices))
                chosen.append(choices[k])
            shown.append(chosen[::-1])
        if prefix is not None:
            shown = [prefix + orjson.dumps(listed) + suffix for listed in shown]
        for local, row in zip(lists.tolist(), (rows[low:high] - start).tolist(), strict=True):
            out[row] = shown[local]
    return out


def _verdict_codes(column: CheckColumn, low: int, high: int) -> tuple[np.ndarray, list[tuple[int, float, str]]]:
    """A code per row of ``low:high`` of a criterion's verdicts, and the (status, credit, reason)
    of each code: rows alike in status and credit share a code, unless the reasons of those that
    did not pass differ."""
    status, credit = column.status[low:high], column.credit[low:high]
    credits, credit_codes = np.unique(credit, return_inverse=True)
    key = status.astype(np.int64) * len(credits) + credit_codes
    failing = np.flatnonzero(status != _PASSED)
    reasons = [""]
    if len(failing):
        if column.reason_by is None:
            reason_codes, distinct_reasons = factorize([column.reason(low + i) for i in failing.tolist()])
        else:  # one reason per distinct value, asked of its first row
            _, first, by_value = np.unique(column.reason_by[low + failing], return_index=True, return_inverse=True)
            asked = [column.reason(low + i) for i in failing[first].tolist()]
            text_codes, distinct_reasons = factorize(asked)
            reason_codes = text_codes[by_value]
        reason_of = np.zeros(high - low, dtype=np.int64)
        reason_of[failing] = reason_codes + 1
        reasons += distinct_reasons
        key = key * len(reasons) + reason_of
    distinct, codes = np.unique(key, return_inverse=True)
    keys = []
    for value in distinct.tolist():
        value, reason = divmod(value, len(reasons))
        verdict, credit_code = divmod(value, len(credits))
        keys.append((verdict, float(credits[credit_code]), reasons[reason]))
    return codes, keys


def kept_weights(weights: Mapping[str, float], present: Sequence[str], gate: str | None = None) -> dict[str, float]:
    """The weights of the dimensions that were measured, renormalised to sum to 1 (summed in
    profile order, as the per-record path sums them); under a ``gate`` that was measured, the
    weights of the others left out are added to the gate's instead."""
    if gate is not None and gate in present:
        moved = 0.0
        for d in weights:
            if d not in present:
                moved += weights[d]
        return {d: weights[d] + moved if d == gate else weights[d] for d in present}
    kept = 0.0
    for d in present:
        kept += weights[d]
    return {d: weights[d] / kept for d in present}


def verdicts(criterion: SuccessCriterion, column: CheckColumn, rows: np.ndarray) -> list[CriterionResult]:
    """The criterion's result on each of the checked ``rows`` (positions in ``column``), its
    verdicts read from the column for all of them at once; a reason asked only of a row that
    did not pass."""
    found = []
    for row, code, credit in zip(
        rows.tolist(), column.status[rows].tolist(), column.credit[rows].tolist(), strict=True
    ):
        status = STATUSES[code]
        reason = "" if status == "passed" else column.reason(row)
        found.append(CriterionResult(criterion.type, status, float(credit), criterion.weight, reason))  # type: ignore[arg-type]
    return found
