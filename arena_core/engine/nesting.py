"""How deep runs' metas nest, found for a whole batch at once.

The model refuses a meta (its unknown keys under it) nested deeper than
:data:`~arena_core.model.scalars.MAX_NESTING`, rather than meet it as a recursion error when it
is written or stored. Building a model per run checked that; the column paths did not, and
``arena score`` took a run whose meta was 500 levels deep that ``arena report`` refused. Asking
each meta (:func:`~arena_core.model.scalars.nesting`) is a Python walk per run, 3.9 s over
500,000 metas of Aider's runs; here the containers of every run are walked together, a level
at a time (0.8 s), and the runs looked at one by one only when something lies that deep.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arena_core.model.scalars import JSON_SCALARS, MAX_NESTING, contents, nesting

__all__ = ["deep_rows", "type_depth"]


def deep_rows(metas: Sequence[Any], extras: Mapping[str, Sequence[Any]]) -> list[int]:
    """The rows whose meta as the model holds it nests deeper than ``MAX_NESTING``: ``metas``
    is each row's own ``meta`` (anything but a table counts as none), ``extras`` each unknown
    key's value per row (which the model puts under the meta).

    Every row's containers are walked together, a level at a time, and the rows one by one (by
    the model's own ``nesting``) only when something lies that deep: 500,000 metas of Aider's
    runs (15 values each, a list of flags among them) take about 0.8 s, ``nesting`` per row 3.9 s
    on the same machine. A file read as an Arrow table is not walked: its columns' types say
    how deep any of its values nests (:func:`type_depth`)."""
    level = [v for meta in metas if type(meta) is dict for v in meta.values() if type(v) not in JSON_SCALARS]
    for values in extras.values():
        level += [v for v in values if type(v) not in JSON_SCALARS]
    depth = 2  # the meta is the first level; its values' containers the second
    while level and depth <= MAX_NESTING:
        level = [item for container in level for item in contents(container) if type(item) not in JSON_SCALARS]
        depth += 1
    if not level:
        return []
    rows = []
    for row, meta in enumerate(metas):
        held = {**{name: values[row] for name, values in extras.items()}, **(meta if type(meta) is dict else {})}
        if nesting(held) > MAX_NESTING:
            rows.append(row)
    return rows


def type_depth(kind: Any) -> int:
    """How deep an Arrow type nests tables and lists (a struct of a list of numbers: 2), without
    recursion (a table may be read 1,000 levels deep): no value of a column of that type nests
    deeper."""
    import pyarrow

    deepest, pending = 0, [(kind, 0)]
    while pending:
        kind, depth = pending.pop()
        if pyarrow.types.is_struct(kind):
            inner = [kind.field(i).type for i in range(kind.num_fields)]
        elif pyarrow.types.is_map(kind):
            inner = [kind.key_type, kind.item_type]
        elif pyarrow.types.is_list(kind) or pyarrow.types.is_large_list(kind) or pyarrow.types.is_fixed_size_list(kind):
            inner = [kind.value_type]
        else:
            deepest = max(deepest, depth)
            continue
        deepest = max(deepest, depth + 1)
        pending += [(child, depth + 1) for child in inner]
    return deepest
