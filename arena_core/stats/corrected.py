"""A group's correctness corrected by people's labels: the prediction-powered mean of its runs'
correctness (``correctness_source = "corrected"``, docs/leaderboards.md).

The judges score every run; people label a random sample of them. A run's **people's
correctness** is what its correctness would be had people judged it: its ``judge`` criteria
credited by the people's majority on each requirement (every requirement labelled without a
tie; one counts as met only when its prerequisites are, DevAI's rule as the criterion's), its
other criteria as checked; or, for a run labelled as a whole, 100 or 0 by the people's majority.
Over a group's runs with a correctness score, the corrected mean is the judges' mean plus the
mean of people's minus judges' correctness over the labelled runs, with its interval from both
parts (:func:`~arena_core.stats.agreement.ppi_mean`, Angelopoulos et al. 2023). It is unbiased
for the mean people would give every run when the labelled runs are a random sample of the
group's runs: labels drawn for a panel's disagreement are kept apart, and a warning says where
the sample is not known to be random.

The mean is over runs (each run counts once), not over tasks: the correction is of the runs'
mean, so it sits beside the board's own figures rather than inside its task-weighted score.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from attrs import frozen

from arena_core.model.labels import Item, Label, people_verdicts
from arena_core.model.records import Evaluation, Task
from arena_core.stats.agreement import ppi_mean

__all__ = ["CorrectedRow", "corrected_correctness", "people_correctness"]


@frozen
class CorrectedRow:
    """One group's correctness, the judges' and the corrected, on the 0-100 scale."""

    group: str
    runs: int
    """Runs with a correctness score (the judges')."""
    labelled: int
    """Of those, runs whose people's correctness is known, from a random (or unstated) sample."""
    judge: float
    """The judges' mean correctness over the runs."""
    corrected: float
    low: float
    high: float
    warnings: tuple[str, ...] = ()


def people_correctness(evaluation: Evaluation, task: Task | None, people: Mapping[Item, bool | None]) -> float | None:
    """The run's correctness by the people's verdicts (0-100), or ``None`` where people did not
    judge all of it; ``people`` is each labelled item's people's verdict."""
    whole_run = people.get((evaluation.submission_id, None))
    if whole_run is not None:
        return 100.0 if whole_run else 0.0
    criteria = task.success_criteria if task is not None else ()
    if len(criteria) != len(evaluation.criteria):
        return None  # not the task the evaluation was made of
    earned = total = 0.0
    judged = False
    for criterion, result in zip(criteria, evaluation.criteria, strict=True):
        if result.type == "judge":
            credit = _people_credit(evaluation.submission_id, criterion.params.get("requirements"), people)
            if credit is None:
                return None
            judged = True
        elif result.status == "unscored":
            continue
        else:
            credit = result.credit
        earned += credit * result.weight
        total += result.weight
    return earned / total * 100.0 if judged and total > 0 else None


def _people_credit(run: str, requirements: Any, people: Mapping[Item, bool | None]) -> float | None:
    """The share of a ``judge`` criterion's requirements people found met, a requirement counting
    as met only when its prerequisites are; ``None`` unless people gave every one a verdict."""
    if not isinstance(requirements, (list, tuple)) or not requirements:
        return None
    own: dict[str, bool] = {}
    needs: dict[str, list[str]] = {}
    for given in requirements:
        ident = str(given.get("id", given.get("requirement_id")))
        verdict = people.get((run, ident))
        if verdict is None:
            return None
        own[ident] = verdict
        needs[ident] = [str(n) for n in given.get("prerequisites", ()) or ()]
    settled: dict[str, bool] = {}

    def met(node: str) -> bool:  # prerequisites form no cycle: checked when the task was scored
        if node not in settled:
            settled[node] = own[node] and all(met(n) for n in needs[node])
        return settled[node]

    return sum(met(node) for node in own) / len(own)


def corrected_correctness(
    evaluations: Iterable[Evaluation],
    groups: Iterable[str],
    tasks: Mapping[str, Task],
    labels: Sequence[Label],
    confidence_level: float = 0.95,
) -> dict[str, CorrectedRow]:
    """Each group's judges' and corrected mean correctness (see the module's note); ``groups``
    names each evaluation's group, in order."""
    people = people_verdicts(labels)
    samples: dict[str, set[str | None]] = defaultdict(set)
    for label in labels:
        samples[label.submission_id].add(label.sample)
    judged: dict[str, list[float]] = defaultdict(list)
    pairs: dict[str, list[tuple[float, float]]] = defaultdict(list)
    apart: dict[str, int] = defaultdict(int)
    unstated: dict[str, int] = defaultdict(int)
    for evaluation, group in zip(evaluations, groups, strict=True):
        score = evaluation.scores.get("correctness", math.nan)
        if math.isnan(score):
            continue
        judged[group].append(score)
        found = people_correctness(evaluation, tasks.get(evaluation.task_id), people)
        if found is None:
            continue
        drawn = samples[evaluation.submission_id]
        if "disagreement" in drawn:
            apart[group] += 1
            continue
        if None in drawn:
            unstated[group] += 1
        pairs[group].append((found, score))
    rows = {}
    for group, scores in judged.items():
        labelled = pairs.get(group, [])
        warnings = []
        if len(labelled) < 2:
            warnings.append(f"{len(labelled)} labelled runs: too few to correct the judges' mean")
            estimate = low = high = math.nan
        else:
            estimate, low, high = ppi_mean([p for p, _ in labelled], [j for _, j in labelled], scores, confidence_level)
        if unstated.get(group):
            warnings.append(
                f"{unstated[group]} labelled runs not known to be a random sample (their labels do not say)"
            )
        if apart.get(group):
            warnings.append(f"{apart[group]} runs labelled for a disagreement of the judges kept apart")
        mean = math.fsum(scores) / len(scores)
        rows[group] = CorrectedRow(group, len(scores), len(labelled), mean, estimate, low, high, tuple(warnings))
    return rows
