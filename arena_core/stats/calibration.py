"""How far a judge can be trusted, group by group, and the pass rate corrected by people's labels.

The unit is an **item**: a requirement of a run (or a whole run, where the labels are of whole
runs; a judge that gave verdicts per requirement then says a run is met when it met every
requirement, not met when it missed one). A judge's verdict of an item is its own; a panel's is
the majority of its judges (a tie: no verdict). People's verdict of an item is the majority of
their labels (a tie: none; the item is counted in ``ties``, not compared).

Per group (a tool, a model, a judge, a task category, a requirement category, and every item
together), :func:`calibrate` gives:

- ``items``: items the judge gave a verdict on; ``n``: those people labelled (with a majority);
- agreement, Cohen's kappa and the confusion matrix of the judge against the people's majority,
  sensitivity and specificity; Krippendorff's alpha with the judge as one more rater beside
  each person (nominal, any number of raters per item);
- the judge's pass rate over its ``items`` and the people's over their ``n``;
- the **corrected pass rate**: the prediction-powered mean (the judge's rate over every item,
  plus the mean of label minus judge over the labelled ones) with its interval (the normal
  interval, cut to [0, 1]); valid when the labelled items are a uniform random sample of the
  group's items;
- inter-rater alpha among people (items with two raters or more) and inter-judge alpha among a
  panel's judges;
- warnings: no labels; labels that do not say they were drawn at random; labelled items whose
  judge pass rate differs from the others' (Fisher's exact test, p < 0.01), which a random
  sample would rarely show.

Items drawn because a panel disagreed (labels with ``sample = "disagreement"``) are kept apart:
counted in ``set_apart``, left out of every statistic, since they are not a random sample.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
from attrs import frozen

from arena_core.io.judgements import VerdictLine
from arena_core.model.errors import ValidationError
from arena_core.model.labels import Item, Label, item_of, majority
from arena_core.model.records import Evaluation, Task
from arena_core.stats.agreement import cohen_kappa, confusion, krippendorff_alpha, ppi_mean

__all__ = ["ALL", "CalibrationRow", "calibrate", "requirement_categories", "verdicts_of"]

#: The group of the row over every item.
ALL = "(all)"
#: Below this p-value, the labelled items are said not to look like a random sample.
SAMPLE_P = 0.01
#: Fewer labels than this, and the interval's normal approximation is said to be rough.
FEW_LABELS = 30


@frozen
class CalibrationRow:
    """One group's calibration (see the module's note); NaN where a figure has nothing to go on."""

    group: str
    items: int
    n: int
    agreement: float
    kappa: float
    alpha: float
    tp: int
    fp: int
    fn: int
    tn: int
    sensitivity: float
    specificity: float
    judge_rate: float
    people_rate: float
    corrected: float
    corrected_low: float
    corrected_high: float
    raters_alpha: float
    """Krippendorff's alpha among people, on the items two or more of them labelled."""
    judges_alpha: float
    """Krippendorff's alpha among the judges of a panel, on every item two or more judged."""
    ties: int
    """Labelled items the people split on evenly: no people's verdict to compare."""
    set_apart: int
    """Labelled items drawn because a panel disagreed: left out of the statistics."""
    warnings: tuple[str, ...] = ()


def calibrate(
    verdicts: Sequence[VerdictLine],
    labels: Sequence[Label],
    group_of: Callable[[Item], str | None] | None = None,
    *,
    by_judge: bool = False,
    confidence_level: float = 0.95,
) -> list[CalibrationRow]:
    """The rows of ``arena calibrate``: one per group, then the row of every item (``(all)``).

    :param group_of: each item's group (``None``: left out), unless ``by_judge``.
    :param by_judge: one row per judge, each judged alone.
    :raises ValidationError: labels of whole runs and of requirements mixed.
    """
    levels = {label.requirement is None for label in labels}
    if len(levels) > 1:
        raise ValidationError(
            "labels",
            "requirement",
            "labels of one level: every one of a requirement, or every one of a whole run",
            "both",
        )
    whole_runs = levels == {True}
    by_judge_items = _judged(verdicts, whole_runs)
    votes: dict[Item, list[tuple[str, bool]]] = defaultdict(list)
    apart: set[Item] = set()
    random: set[Item] = set()
    for label in labels:
        votes[item_of(label)].append((label.rater, label.label))
        if label.sample == "disagreement":
            apart.add(item_of(label))
        elif label.sample == "random":
            random.add(item_of(label))
    people = {item: majority([v for _, v in given]) for item, given in votes.items() if item not in apart}
    panel = _panel(by_judge_items)
    rows = []
    if by_judge:
        for judge in sorted(by_judge_items):
            own = by_judge_items[judge]
            rows.append(_row(judge, own, {judge: own}, votes, people, apart, random, confidence_level))
    elif group_of is not None:
        grouped: dict[str, set[Item]] = defaultdict(set)
        for item in panel:
            group = group_of(item)
            if group is not None:
                grouped[group].add(item)
        for group in sorted(grouped):
            chosen = grouped[group]
            judges = {j: {i: v for i, v in own.items() if i in chosen} for j, own in by_judge_items.items()}
            rows.append(
                _row(group, {i: panel[i] for i in chosen}, judges, votes, people, apart, random, confidence_level)
            )
    rows.append(_row(ALL, panel, by_judge_items, votes, people, apart, random, confidence_level))
    return rows


def verdicts_of(evaluations: Iterable[Evaluation]) -> list[VerdictLine]:
    """Every judge's own verdict on every requirement of the evaluations' ``judge`` criteria, as
    their details keep them (what a store's evaluations say, without asking a judge again)."""
    found = []
    for evaluation in evaluations:
        for result in evaluation.criteria:
            if result.type != "judge":
                continue
            for part in result.details:
                for judge, answer in (part.get("judges") or {}).items():
                    verdict = answer.get("verdict") if isinstance(answer, Mapping) else None
                    found.append(
                        VerdictLine(
                            evaluation.submission_id,
                            str(part.get("requirement")),
                            judge,
                            verdict if isinstance(verdict, bool) else None,
                            str(answer.get("reason") or "") if isinstance(answer, Mapping) else "",
                        )
                    )
    return found


def requirement_categories(tasks: Iterable[Task]) -> dict[tuple[str, str], str]:
    """``(task id, requirement id)`` to the requirement's ``category``, for the judge criteria
    of ``tasks`` that give one (``--by requirement_category``)."""
    return {
        (task.id, str(given.get("id", given.get("requirement_id")))): str(given["category"])
        for task in tasks
        for criterion in task.success_criteria
        if criterion.type == "judge"
        for given in criterion.params.get("requirements", ()) or ()
        if isinstance(given, Mapping) and given.get("category") is not None
    }


def _judged(verdicts: Sequence[VerdictLine], whole_runs: bool) -> dict[str, dict[Item, bool | None]]:
    """Judge to item to verdict, at the labels' level: a whole run's verdict where a judge gave
    one, else made from its requirements' (met when all are, not met when one is not)."""
    found: dict[str, dict[Item, bool | None]] = defaultdict(dict)
    parts: dict[str, dict[str, list[bool | None]]] = defaultdict(lambda: defaultdict(list))
    for line in verdicts:
        if line.requirement is None:
            if whole_runs:
                found[line.judge][(line.submission_id, None)] = line.verdict
        elif whole_runs:
            parts[line.judge][line.submission_id].append(line.verdict)
        else:
            found[line.judge][(line.submission_id, line.requirement)] = line.verdict
    for judge, runs in parts.items():
        for run, given in runs.items():
            whole = False if False in given else None if None in given else True
            found[judge].setdefault((run, None), whole)
    return dict(found)


def _panel(judged: Mapping[str, Mapping[Item, bool | None]]) -> dict[Item, bool | None]:
    """Each item's panel verdict: the majority of the judges that answered (a tie: none)."""
    answers: dict[Item, list[bool]] = defaultdict(list)
    for own in judged.values():
        for item, verdict in own.items():
            answers.setdefault(item, [])
            if verdict is not None:
                answers[item].append(verdict)
    return {item: majority(given) for item, given in answers.items()}


def _row(
    group: str,
    verdict_of: Mapping[Item, bool | None],
    judges: Mapping[str, Mapping[Item, bool | None]],
    votes: Mapping[Item, list[tuple[str, bool]]],
    people: Mapping[Item, bool | None],
    apart: set[Item],
    random: set[Item],
    confidence_level: float,
) -> CalibrationRow:
    judged = {item: v for item, v in verdict_of.items() if v is not None and item not in apart}
    labelled = [item for item in judged if people.get(item) is not None]
    ties = sum(1 for item in judged if item in people and people[item] is None)
    everything = np.array([float(v) for v in judged.values()])
    y = np.array([float(people[i]) for i in labelled])  # type: ignore[arg-type]
    f = np.array([float(judged[i]) for i in labelled])
    cells = confusion(f.astype(bool).tolist(), y.astype(bool).tolist())
    raters = sorted({rater for item in labelled for rater, _ in votes[item]})
    row_of = {rater: row for row, rater in enumerate(raters, start=1)}  # the judge's is row 0
    with_judge = np.full((1 + len(raters), len(labelled)), np.nan)
    for column, item in enumerate(labelled):
        with_judge[0, column] = f[column]
        for rater, value in votes[item]:
            with_judge[row_of[rater], column] = float(value)
    estimate, low, high = ppi_mean(y, f, everything, confidence_level) if len(labelled) else (math.nan,) * 3
    low, high = max(low, 0.0), min(high, 1.0)  # a rate's interval: the normal one cut to [0, 1]
    return CalibrationRow(
        group=group,
        items=len(judged),
        n=len(labelled),
        agreement=float(np.mean(y == f)) if len(labelled) else math.nan,
        kappa=cohen_kappa(f.astype(bool).tolist(), y.astype(bool).tolist()),
        alpha=krippendorff_alpha(with_judge) if len(labelled) else math.nan,
        tp=cells.tp,
        fp=cells.fp,
        fn=cells.fn,
        tn=cells.tn,
        sensitivity=cells.sensitivity,
        specificity=cells.specificity,
        judge_rate=float(everything.mean()) if len(everything) else math.nan,
        people_rate=float(y.mean()) if len(labelled) else math.nan,
        corrected=estimate,
        corrected_low=low,
        corrected_high=high,
        raters_alpha=krippendorff_alpha(with_judge[1:]) if len(raters) > 1 else math.nan,
        judges_alpha=_judges_alpha(judges, {i for i in verdict_of if i not in apart}),
        ties=ties,
        set_apart=sum(1 for item in verdict_of if item in apart),
        warnings=_warnings(judged, labelled, random, len(y)),
    )


def _judges_alpha(judges: Mapping[str, Mapping[Item, bool | None]], items: set[Item]) -> float:
    if len(judges) < 2:
        return math.nan
    order = sorted(items, key=lambda i: (i[0], i[1] or ""))
    matrix = np.array(
        [[np.nan if (v := own.get(i)) is None else float(v) for i in order] for own in judges.values()], dtype=float
    )
    return krippendorff_alpha(matrix) if matrix.size else math.nan


def _warnings(judged: Mapping[Item, bool | None], labelled: list[Item], random: set[Item], n: int) -> tuple[str, ...]:
    if not labelled:
        return ("no labelled item: nothing to calibrate against",)
    found = []
    others = [item for item in judged if item not in set(labelled)]
    if others and not all(item in random for item in labelled):
        found.append(
            "the labels do not say their items were drawn at random: the corrected rate assumes "
            "a uniform random sample of the group's items"
        )
    if others:
        from scipy.stats import fisher_exact

        inside = sum(1 for i in labelled if judged[i])
        outside = sum(1 for i in others if judged[i])
        table = [[inside, len(labelled) - inside], [outside, len(others) - outside]]
        p = float(fisher_exact(table).pvalue)
        if p < SAMPLE_P:
            found.append(
                f"the labelled items are not like the others: the judge passes {inside / len(labelled):.0%} of "
                f"them and {outside / len(others):.0%} of the others (Fisher's exact p = {p:.2g}); "
                "a random sample would rarely differ so"
            )
    if n < FEW_LABELS:
        found.append(f"only {n} labelled items: the interval is wide and its normal approximation rough")
    return tuple(found)
