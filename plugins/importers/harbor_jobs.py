"""A Harbor job's own files beside its trials: the job's ``result.json`` (``JobResult``: the
totals Harbor accumulated trial by trial, ``pass_at_k`` per agent, model and dataset) and the
``analysis.json`` that ``harbor analyze`` writes (its rubric's checks of each trial).

The job's totals are checked against the trials read from its folder: a trial missing from the
folder, or figures that do not add up to what Harbor counted, flag every trial of the job
``job_totals_disagree`` (``meta.job_check`` says what differs), since which trial is off cannot
be told. The analysis' checks go to ``meta.analysis``; a failed one adds a flag
``analysis_CHECK_failed`` (``analysis_reward_hacking_failed``) without changing the verdict.
"""

from __future__ import annotations

import math
import os
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from arena_core.importing.runs import ImportedRun, amount, count, load_json, value
from arena_core.io.decoding import InputError

__all__ = ["Below", "JobNotes"]


class JobNotes:
    """What the job files of a folder add to its trials' submissions."""

    def __init__(self) -> None:
        self.by_trial: dict[Path, dict[str, Any]] = {}
        """Trial ``result.json`` to the meta it gains (``flags`` added to its own)."""

    def read(
        self, jobs: Sequence[Path], analyses: Sequence[Path], trials: Sequence[Path], usage: Any
    ) -> list[InputError]:
        """Check each job against its ``trials`` (``usage(path)`` gives a trial's figures) and
        note each analysis; the files that cannot be read are returned, for the importer to yield."""
        errors: list[InputError] = []
        if not jobs and not analyses:
            return errors
        below = Below(trials)
        for path in jobs:
            try:
                self._job(path, below.under(path.parent), usage)
            except InputError as exc:
                errors.append(exc)
        for path in analyses:
            try:
                self._analysis(path, below.under(path.parent))
            except InputError as exc:
                errors.append(exc)
        return errors

    def apply(self, trial: Path, run: ImportedRun) -> ImportedRun:
        """``run`` (of the trial ``trial``) with what the job files say of it in its meta."""
        notes = self.by_trial.get(trial)
        if not notes:
            return run
        meta = dict(run.submission.get("meta") or {})
        meta["flags"] = [*meta.get("flags", []), *notes.get("flags", [])]
        meta.update({k: v for k, v in notes.items() if k != "flags"})
        return ImportedRun(run.where, {**run.submission, "meta": meta}, run.task)

    def _note(self, trial: Path) -> dict[str, Any]:
        return self.by_trial.setdefault(trial, {})

    def _job(self, path: Path, trials: list[Path], usage: Any) -> None:
        where = str(path)
        data = load_json(path)
        stats = value(data, "stats", where, dict, required=True)
        completed = count(stats, "n_completed_trials", f"{where}: stats")
        if completed is None:
            completed = count(stats, "n_trials", f"{where}: stats")  # before Harbor 0.25
        sums = {"n_input_tokens": 0, "n_cache_tokens": 0, "n_output_tokens": 0, "cost_usd": 0.0}
        for trial in trials:
            for key, figure in usage(trial).items():
                sums[key] += figure
        differences = (
            []
            if completed is None or completed == len(trials)
            else [f"{completed} trials completed, {len(trials)} in the folder"]
        )
        for key, total in sums.items():
            recorded = (amount if key == "cost_usd" else count)(stats, key, f"{where}: stats")
            if recorded is not None and not math.isclose(recorded, total, rel_tol=1e-9, abs_tol=1e-9):
                differences.append(f"{key} {_shown(recorded)} recorded, {_shown(total)} in the trials")
        pass_at_k = _pass_at_k(stats, where)
        for trial in trials:
            note = self._note(trial)
            note["job_id"] = value(data, "id", where, str)
            if pass_at_k:
                note["job_pass_at_k"] = pass_at_k
            if differences:
                note["job_check"] = "; ".join(differences)
                note.setdefault("flags", []).append("job_totals_disagree")

    def _analysis(self, path: Path, trials: list[Path]) -> None:
        where = str(path)
        results = value(load_json(path), "results", where, list, required=True)
        by_name = {t.parent.name: t for t in trials}
        for index, result in enumerate(results):
            at = f"{where}: results.{index}"
            name = value(result, "trial_name", at, str)
            trial = by_name.get(name or "")
            if trial is None:
                continue
            checks = value(result, "checks", at, dict) or {}
            outcomes = {check: value(checks, f"{check}.outcome", at, str, required=True) for check in checks}
            note = self._note(trial)
            note["analysis"] = outcomes
            note.setdefault("flags", []).extend(f"analysis_{c}_failed" for c, o in outcomes.items() if o == "fail")


class Below:
    """Which of ``files`` lie below a folder (``folder in file.parents``), asked for each job and
    analysis file of an import. The paths are compared as text: a file is below ``folder`` when its
    text starts with the folder's and a separator, and every relative path is below ``.``. The
    texts are sorted once and each folder's are found by bisection: asking every file for every
    job grew with jobs x trials (200 jobs of 500 trials: 2.8 s, 0.14 s so)."""

    def __init__(self, files: Sequence[Path]) -> None:
        self.files = list(files)
        by_text = sorted((str(f), i) for i, f in enumerate(self.files))
        self.texts = [text for text, _ in by_text]
        self.positions = [i for _, i in by_text]

    def under(self, folder: Path) -> list[Path]:
        """The files below ``folder``, in the order given."""
        text = str(folder)
        if text == ".":
            return [f for f in self.files if not f.is_absolute()]
        prefix = os.path.join(text, "")
        # the texts that start with PREFIX (ending in a separator) are those from PREFIX up to,
        # not including, the same text with the separator's successor in its place
        start = bisect_left(self.texts, prefix)
        end = bisect_left(self.texts, prefix[:-1] + chr(ord(prefix[-1]) + 1), start)
        return [self.files[i] for i in sorted(self.positions[start:end])]


def _shown(figure: float) -> str:
    return str(round(figure, 6)) if isinstance(figure, float) else str(figure)


def _pass_at_k(stats: Mapping[str, Any], where: str) -> dict[str, float] | None:
    """The job's ``pass_at_k`` when a single agent, model and dataset ran (else per key is ambiguous)."""
    evals = value(stats, "evals", f"{where}: stats", dict) or {}
    found = [value(e, "pass_at_k", f"{where}: stats.evals", dict) for e in evals.values() if isinstance(e, Mapping)]
    found = [f for f in found if f]
    return {str(k): float(v) for k, v in found[0].items()} if len(found) == 1 else None
