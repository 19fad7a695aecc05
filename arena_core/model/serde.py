"""The boundary between plain data and models: one cattrs converter, strict about types.

Everything that accepts a model also accepts the spec-shaped dict, through :func:`structure`;
:func:`to_dict` gives the spec-shaped dict back. The converter is strict where cattrs' defaults
would quietly repair input: ``"12"`` is not a number, ``"false"`` is not a boolean and a string
is not a list of files. Unknown keys of a submission or task are kept under ``meta`` rather than
dropped, so a record passes through untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from itertools import chain, repeat
from typing import Any, TypeVar

import cattrs
from cattrs.errors import ClassValidationError, IterableValidationError

from arena_core.model.errors import ValidationError, closest
from arena_core.model.plain import plain_submission, plain_task
from arena_core.model.provenance import Provenance
from arena_core.model.records import Baseline, CriterionResult, Evaluation, Submission, SuccessCriterion, Task
from arena_core.model.scalars import (
    ByteSize,
    FieldError,
    structure_bool,
    structure_float,
    structure_int,
    structure_mapping,
    structure_size,
    structure_str,
    structure_str_tuple,
)

__all__ = ["converter", "structure", "structure_each", "structure_strict", "to_dict", "coerce"]

T = TypeVar("T")

converter = cattrs.Converter(detailed_validation=True)


converter.register_structure_hook(ByteSize, structure_size)
converter.register_structure_hook(int, structure_int)
converter.register_structure_hook(float, structure_float)
converter.register_structure_hook(str, structure_str)
converter.register_structure_hook(bool, structure_bool)
converter.register_structure_hook_func(lambda t: t == tuple[str, ...], structure_str_tuple)
converter.register_structure_hook_func(lambda t: t == Mapping[str, Any], structure_mapping)


def _with_extras_in_meta(cls: type[T]) -> None:
    """Structure ``cls`` keeping unknown keys under ``meta`` (explicit ``meta`` wins)."""
    known = frozenset(a.name for a in cls.__attrs_attrs__)  # type: ignore[attr-defined]
    base = converter.gen_structure_attrs_fromdict(cls)

    def hook(value: Any, _: type) -> T:
        if not isinstance(value, Mapping):
            raise FieldError(f"a {cls.__name__.lower()} record (a mapping)", value)
        extras = {k: v for k, v in value.items() if k not in known}
        if extras:
            value = {**value, "meta": {**extras, **structure_mapping(value.get("meta", {}), dict)}}
        return base(value, cls)

    converter.register_structure_hook(cls, hook)


_with_extras_in_meta(Submission)
_with_extras_in_meta(Task)


_CRITERION_KEYS = ("type", "weight", "description")


#: Criteria already structured, by their keys, values and value types: tasks repeat a few
#: criteria, and each structured once (they are frozen: shared) halves reading a task. Flat
#: criteria only (types in the key keep ``1``, ``1.0`` and ``True`` apart), ``_CACHE_SIZE`` at most.
_structured_criteria: dict[tuple[Any, ...], SuccessCriterion] = {}
_CACHE_SIZE = 4096
_FLAT = frozenset({str, int, float, type(None)})


def _structure_criterion(value: Any, _: type) -> SuccessCriterion:
    types = tuple(map(type, value.values())) if type(value) is dict else None
    if types is not None and _FLAT.issuperset(types):
        key = (tuple(value.items()), types)
        known = _structured_criteria.get(key)
        if known is None:
            known = _structure_new_criterion(value)
            if len(_structured_criteria) >= _CACHE_SIZE:
                _structured_criteria.clear()
            _structured_criteria[key] = known
        return known
    return _structure_new_criterion(value)


#: Whole criteria lists already structured, keyed as the criteria are: tasks of one kind repeat
#: their list, and one structured tuple, shared, lets per-task checks key on its identity.
_structured_lists: dict[tuple[Any, ...], tuple[SuccessCriterion, ...]] = {}


def _structure_criteria(values: list[Any] | tuple[Any, ...]) -> tuple[SuccessCriterion, ...]:
    """A task's ``success_criteria``, each as :func:`_structure_criterion` makes it; a list of
    flat dicts equal to one seen before (same keys, values and value types) gives the same tuple."""
    try:
        items = tuple(map(tuple, map(dict.items, values)))
        types = tuple(map(type, chain.from_iterable(map(dict.values, values))))
    except TypeError:  # not all dicts: each criterion on its own, which names what is wrong
        return tuple(map(_structure_criterion, values, repeat(SuccessCriterion)))
    if not _FLAT.issuperset(types):
        return tuple(map(_structure_criterion, values, repeat(SuccessCriterion)))
    key = (items, types)
    known = _structured_lists.get(key)
    if known is None:
        known = tuple(map(_structure_criterion, values, repeat(SuccessCriterion)))
        if len(_structured_lists) >= _CACHE_SIZE:
            _structured_lists.clear()
        _structured_lists[key] = known
    return known


def _structure_new_criterion(value: Any) -> SuccessCriterion:
    if not isinstance(value, Mapping):
        raise FieldError("a criterion table with a 'type'", value)
    if "type" not in value:
        raise FieldError("a criterion table with a 'type'", dict(value))
    params = {k: v for k, v in value.items() if k not in _CRITERION_KEYS}
    fields: dict[str, Any] = {"params": params}
    for key, hook, default in (("type", structure_str, None), ("weight", structure_float, 1.0)):
        try:
            fields[key] = hook(value.get(key, default), str)
        except FieldError as exc:  # named as success_criteria.N.KEY by the enclosing task
            raise ValidationError("criterion", key, exc.expected, exc.got) from None
    return SuccessCriterion(**fields, description=value.get("description"))


def _unstructure_criterion(c: SuccessCriterion) -> dict[str, Any]:
    out: dict[str, Any] = {"type": c.type, **c.params}
    if c.weight != 1.0:
        out["weight"] = c.weight
    if c.description is not None:
        out["description"] = c.description
    return out


converter.register_structure_hook(SuccessCriterion, _structure_criterion)
converter.register_unstructure_hook(SuccessCriterion, _unstructure_criterion)


def _unstructure_evaluation(ev: Evaluation) -> dict[str, Any]:
    """The spec's ``calculate_overall_score`` dict, plus what the engine records beside it."""
    out: dict[str, Any] = {"submission_id": ev.submission_id, "task_id": ev.task_id, "overall_score": ev.overall_score}
    out.update({f"{name}_score": score for name, score in ev.scores.items()})
    out["breakdown"] = {f"{name}_weight": weight for name, weight in ev.weights.items()}
    out["weight_profile"] = ev.weight_profile
    out["difficulty"] = ev.difficulty
    out["unadjusted_overall_score"] = ev.unadjusted_overall_score
    out["metric_scores"] = dict(ev.metric_scores)
    out["criteria"] = [converter.unstructure(c) for c in ev.criteria]
    out["evaluated_at"] = ev.evaluated_at
    for key in ("tool", "model", "overall_ranking", "percentile"):
        value = getattr(ev, key)
        if value is not None:
            out[key] = value
    out.update({f"{name}_ranking": r for name, r in ev.rankings.items()})
    if ev.provisional:
        out["provisional"] = True
    if ev.filled:
        out["filled"] = dict(ev.filled)
    if ev.coverage != 1.0 and ev.coverage is not None:
        out["coverage"] = ev.coverage
    if ev.baseline_version is not None:
        out["baseline_version"] = ev.baseline_version
    if ev.difficulty_factor is not None:
        out["difficulty_factor"] = ev.difficulty_factor
    if ev.provenance is not None:
        out["provenance"] = converter.unstructure(ev.provenance)
    return out


_EVALUATION_KEYS = frozenset(
    (
        "submission_id",
        "task_id",
        "overall_score",
        "breakdown",
        "weight_profile",
        "difficulty",
        "unadjusted_overall_score",
        "metric_scores",
        "criteria",
        "evaluated_at",
        "tool",
        "model",
        "overall_ranking",
        "percentile",
        "provisional",
        "filled",
        "coverage",
        "baseline_version",
        "difficulty_factor",
        "provenance",
    )
)


def _structure_evaluation(value: Any, _: type) -> Evaluation:
    if not isinstance(value, Mapping):
        raise FieldError("an evaluation record (a mapping)", value)
    breakdown = value.get("breakdown", {})
    weights = {k.removesuffix("_weight"): structure_float(v, float) for k, v in breakdown.items()}
    scores = {
        k.removesuffix("_score"): structure_float(v, float)
        for k, v in value.items()
        if k.endswith("_score") and k not in _EVALUATION_KEYS
    }
    overall = structure_float(value["overall_score"], float)
    return Evaluation(
        submission_id=structure_str(value["submission_id"], str),
        task_id=structure_str(value["task_id"], str),
        overall_score=overall,
        scores=scores,
        weights=weights,
        weight_profile=value.get("weight_profile", "default"),
        unadjusted_overall_score=structure_float(value.get("unadjusted_overall_score", overall), float),
        evaluated_at=structure_str(value.get("evaluated_at", ""), str),
        difficulty=value.get("difficulty"),
        metric_scores=dict(value.get("metric_scores", {})),
        criteria=tuple(converter.structure(c, CriterionResult) for c in value.get("criteria", ())),
        tool=value.get("tool"),
        model=value.get("model"),
        overall_ranking=value.get("overall_ranking"),
        percentile=value.get("percentile"),
        rankings={
            k.removesuffix("_ranking"): v for k, v in value.items() if k.endswith("_ranking") and k != "overall_ranking"
        },
        provisional=structure_bool(value.get("provisional", False), bool),
        filled=(filled := structure_mapping(value.get("filled", {}), dict)),
        coverage=structure_float(value["coverage"], float) if "coverage" in value else (None if filled else 1.0),
        baseline_version=structure_int(value["baseline_version"], int) if "baseline_version" in value else None,
        difficulty_factor=structure_float(value["difficulty_factor"], float) if "difficulty_factor" in value else None,
        provenance=converter.structure(value["provenance"], Provenance) if "provenance" in value else None,
    )


converter.register_structure_hook(Evaluation, _structure_evaluation)
converter.register_unstructure_hook(Evaluation, _unstructure_evaluation)


def _omit_none(cls: type) -> None:
    converter.register_unstructure_hook(
        cls,
        cattrs.gen.make_dict_unstructure_fn(cls, converter, _cattrs_omit_if_default=True),
    )


for _cls in (Submission, Task, Baseline):
    _omit_none(_cls)
converter.register_unstructure_hook(  # a criterion's details only where it has some
    CriterionResult,
    cattrs.gen.make_dict_unstructure_fn(CriterionResult, converter, details=cattrs.gen.override(omit_if_default=True)),
)


#: The key that names a record of each kind in errors.
_NAMED_BY = {"submission": "id", "task": "id", "evaluation": "submission_id", "baseline": "task_id"}


def _record_name(kind: str, data: Any) -> str:
    """``submission 'abc'``; a record without its own id is ``submission (no id)``, never named
    by another of its fields."""
    if kind == "scoringconfig":
        return "configuration"
    key = _NAMED_BY.get(kind)
    ident = data.get(key) if key is not None and isinstance(data, Mapping) else None
    if ident is None:
        return f"{kind} (no {key})" if key is not None and isinstance(data, Mapping) else kind
    return f"{kind} {ident!r}"


def _flatten(exc: BaseException, path: tuple[str, ...]) -> tuple[tuple[str, ...], BaseException]:
    """Find the first leaf error inside cattrs' exception groups, with its field path."""
    if isinstance(exc, ClassValidationError):
        with_notes, without = exc.group_exceptions()
        if with_notes:
            inner, note = with_notes[0]
            return _flatten(inner, (*path, note.name))
        return _flatten(without[0], path)
    if isinstance(exc, IterableValidationError):
        item_notes, item_without = exc.group_exceptions()
        if item_notes:
            item, index_note = item_notes[0]
            return _flatten(item, (*path, str(index_note.index)))
        return _flatten(item_without[0], path)
    return path, exc


def structure(data: Any, cls: type[T]) -> T:
    """Turn a spec-shaped dict into model ``cls``; a model passes through unchanged.

    :raises ValidationError: naming the record (by its ``id``), the field and what was expected.
    """
    if isinstance(data, cls):
        return data
    if type(data) is dict and (cls is Submission or cls is Task):
        quick = plain_submission(data) if cls is Submission else plain_task(data, _structure_criteria)
        if quick is not None:
            return quick  # type: ignore[return-value]
    kind = cls.__name__.lower()
    try:
        return converter.structure(data, cls)
    except ValidationError:
        raise
    except FieldError as exc:
        raise ValidationError(_record_name(kind, data), "(record)", exc.expected, exc.got) from None
    except (ClassValidationError, IterableValidationError) as exc:
        path, leaf = _flatten(exc, ())
        record = _record_name(kind, data)
        field = ".".join(path) or "(record)"
        if isinstance(leaf, ValidationError):
            raise (leaf.within(record, field) if path else leaf) from None
        if isinstance(leaf, FieldError):
            raise ValidationError(record, field, leaf.expected, leaf.got) from None
        if isinstance(leaf, KeyError):
            raise ValidationError(record, field, "a value (the field is required)") from None
        raise ValidationError(record, field, str(leaf)) from None
    except KeyError as exc:
        raise ValidationError(_record_name(kind, data), str(exc.args[0]), "a value (the field is required)") from None


def structure_strict(data: Any, cls: type[T]) -> T:
    """Like :func:`structure`, but a key that is not a field of ``cls`` is an error (with a
    suggestion) instead of going under ``meta``."""
    if isinstance(data, Mapping):
        known = [a.name for a in cls.__attrs_attrs__]  # type: ignore[attr-defined]
        for key in data:
            if key not in known:
                raise ValidationError(
                    _record_name(cls.__name__.lower(), data),
                    str(key),
                    f"a known field (strict mode){closest(str(key), known)}",
                    data[key],
                )
    return structure(data, cls)


def structure_each(items: Iterable[Any], structure_one: Callable[[Any], T]) -> list[T]:
    """``structure_one`` of each item; an error about a record without an id names its position
    in ``items`` (see :meth:`ValidationError.at_position`)."""
    out = []
    for index, item in enumerate(items):
        try:
            out.append(structure_one(item))
        except ValidationError as exc:
            raise exc.at_position(index) from None
    return out


def coerce(data: Any, cls: type[T]) -> T:
    """Like :func:`structure`; the name reads better where a model or a dict is accepted."""
    return structure(data, cls)


def to_dict(obj: Any) -> Any:
    """The spec-shaped plain data of a model (or list of models); fields left at ``None`` are omitted."""
    return converter.unstructure(obj)
