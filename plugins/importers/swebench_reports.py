"""SWE-bench's verdicts: harness and sb-cli run reports, per-instance ``report.json``, and SWE-bench
Pro's ``eval_results.json`` (instance id to resolved or not) with its ``infra_errors.json``
(instance id to why it could not be evaluated: a harness error, which SWE-bench Pro leaves out of
its accuracy and ``infra_failures = "exclude"`` leaves out too).

Shared by the importers that join a run's verdicts to the agent's own logs (``swebench``,
``mini-swe-agent``, ``openhands``), by instance id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import define, field

from arena_core.importing.runs import load_json, peek, value
from arena_core.io.decoding import InputError

__all__ = ["Verdict", "Verdicts", "is_report", "model_from_name"]

#: The id lists of a run report, and the flag each gives (resolved and unresolved give none).
#: Listed by precedence: an id in several lists takes the first.
RUN_LISTS = {
    "resolved_ids": None,
    "unresolved_ids": None,
    "empty_patch_ids": "empty_patch",
    "error_ids": "harness_error",
    "failed_ids": "harness_error",
    "infra_failure_ids": "harness_error",
    "ambiguous_failure_ids": "harness_error",
    "incomplete_ids": "not_completed",
    "pending_ids": "not_completed",
}


@define
class Verdict:
    """What SWE-bench says of one instance of one run."""

    resolved: bool
    source: str
    flags: list[str] = field(factory=list)
    tests_passed: int | None = None
    tests_total: int | None = None
    """Over FAIL_TO_PASS and PASS_TO_PASS (per-instance reports only)."""
    model: str | None = None
    """The model, where only the report's file name says it (:func:`model_from_name`)."""


#: SWE-bench Pro's files, by name: its verdicts and the instances it could not evaluate.
PRO_RESULTS, PRO_INFRA_ERRORS = "eval_results.json", "infra_errors.json"


def model_from_name(path: Path) -> str:
    """The model a harness run report's name gives: SWE-bench names it
    ``<model_name_or_path>.<run_id>.json`` with ``/`` written ``__``. A model name often holds a
    dot (``gpt-4.1``) and a run id seldom does, so the run id is taken after the last dot."""
    stem = path.name.removesuffix(".json")
    return (stem.rsplit(".", 1)[0] if "." in stem else stem).replace("__", "/")


def is_report(path: Path) -> bool:
    """A run report, a per-instance ``report.json`` (wrapped in its instance id or not), or one
    of SWE-bench Pro's two files."""
    if path.suffix != ".json":
        return False
    head = peek(path, 2048)
    if path.name in (PRO_RESULTS, PRO_INFRA_ERRORS):
        return head.lstrip().startswith(b"{")
    return b'"submitted_ids"' in head or b'"total_instances"' in head or b'"tests_status"' in head


class Verdicts:
    """The verdicts of the reports read, by instance id, and the run reports' published totals."""

    def __init__(self) -> None:
        self.by_instance: dict[str, Verdict] = {}
        self.submitted: list[str] = []
        """Instance ids the run reports list as submitted, in their order."""
        self._listed: set[str] = set()  # the same ids, asked about: asking the list was quadratic
        self.run_reports: list[Path] = []
        self.resolved_published = 0

    def read_reports(self, files: Sequence[Path]) -> list[InputError]:
        """Add the verdicts of the reports among ``files`` (the others are left alone); the
        reports that cannot be read are returned, for the importer to yield."""
        errors = []
        for path in files:
            if is_report(path):
                try:
                    self.read(path)
                except InputError as exc:
                    errors.append(exc)
        return errors

    def read(self, path: Path) -> None:
        """Add the verdicts of one report. :raises InputError: naming the file and the field."""
        data = load_json(path)
        where = str(path)
        if not isinstance(data, Mapping):
            raise InputError(f"{where}: expected a SWE-bench report (a table)")
        if path.name in (PRO_RESULTS, PRO_INFRA_ERRORS):
            self._pro(data, path)
        elif "submitted_ids" in data or "total_instances" in data:
            self._run_report(data, path)
        elif "tests_status" in data:
            self._instance(path.parent.name, data, where)
        else:
            for instance_id, report in data.items():
                if not isinstance(report, Mapping) or "resolved" not in report:
                    raise InputError(f"{where}: {instance_id}: expected a per-instance report with 'resolved'")
                self._instance(instance_id, report, where)

    def _run_report(self, data: Mapping[str, Any], path: Path) -> None:
        where = str(path)
        submitted = value(data, "submitted_ids", where, list, required=True)
        lists = {name: value(data, name, where, list) or [] for name in RUN_LISTS}
        for name, ids in lists.items():
            for index, instance_id in enumerate(ids):
                if not isinstance(instance_id, str):
                    raise InputError(f"{where}: {name}.{index}: expected an instance id, got {instance_id!r}")
        self.run_reports.append(path)
        self.resolved_published += value(data, "resolved_instances", where, int) or 0
        # The harness's own report names the model only in its file name; sb-cli's (which has
        # pending_instances) is named after the dataset and the run.
        model = None if "pending_instances" in data else model_from_name(path)
        # each list asked as a set: asking the lists themselves made a report of 20,000 ids take
        # seconds, growing with the square of its size
        members = {name: set(ids) for name, ids in lists.items()}
        for instance_id in submitted:
            if not isinstance(instance_id, str):
                raise InputError(f"{where}: submitted_ids: expected instance ids, got {instance_id!r}")
            flag = "not_graded"
            for name, given in RUN_LISTS.items():
                if instance_id in members[name]:
                    flag = given  # type: ignore[assignment]
                    break
            resolved = instance_id in members["resolved_ids"]
            self.by_instance[instance_id] = Verdict(resolved, where, [flag] if flag else [], model=model)
            self._submit(instance_id)
        given_ids = set(submitted)  # every one text by now
        for instance_id in lists["incomplete_ids"]:  # no prediction: SWE-bench counts it unresolved, over the dataset
            if instance_id not in given_ids:
                self.by_instance[instance_id] = Verdict(False, where, ["not_completed"], model=model)
                self._submit(instance_id)

    def _pro(self, data: Mapping[str, Any], path: Path) -> None:
        """SWE-bench Pro: ``eval_results.json`` maps ids to true or false; ``infra_errors.json``
        maps the ids it could not evaluate to the reason."""
        where, infra = str(path), path.name == PRO_INFRA_ERRORS
        for instance_id, given in data.items():
            if infra and not isinstance(given, str):
                raise InputError(
                    f"{where}: {instance_id}: expected the reason it could not be evaluated, got {given!r}"
                )
            if not infra and not isinstance(given, bool):
                raise InputError(f"{where}: {instance_id}: expected true or false (resolved), got {given!r}")
            verdict = Verdict(False, where, ["harness_error"]) if infra else Verdict(given, where)
            self.by_instance[instance_id] = verdict
            if instance_id not in self._listed:
                self._submit(instance_id)
        self.run_reports.append(path)

    def _submit(self, instance_id: str) -> None:
        """Note ``instance_id`` as submitted: in order, and in the set it is asked about by."""
        self.submitted.append(instance_id)
        self._listed.add(instance_id)

    def _instance(self, instance_id: str, report: Mapping[str, Any], where: str) -> None:
        resolved = value(report, "resolved", where, bool, required=True)
        verdict = Verdict(resolved, where)
        if report.get("patch_is_None") or report.get("patch_exists") is False:
            verdict.flags.append("empty_patch")
        elif report.get("patch_successfully_applied") is False:
            verdict.flags.append("patch_not_applied")
        status = value(report, "tests_status", where, dict) or {}
        passed = total = 0
        for group in ("FAIL_TO_PASS", "PASS_TO_PASS"):
            success = value(status, f"{group}.success", where, list) or []
            failure = value(status, f"{group}.failure", where, list) or []
            passed += len(success)
            total += len(success) + len(failure)
        if total:
            verdict.tests_passed, verdict.tests_total = passed, total
            if not resolved and passed:
                verdict.flags.append("partially_resolved")
        known = self.by_instance.get(instance_id)
        if known is not None and known.resolved != resolved:
            verdict.flags.append("reports_disagree")
        self.by_instance[instance_id] = verdict

    def apply(self, instance_id: str, submission: dict[str, Any]) -> None:
        """Set the verdict of ``instance_id`` on an agent's submission (``success``, the test
        counts, flags); a run no report grades is flagged ``not_graded`` and counted unresolved."""
        verdict = self.by_instance.get(instance_id)
        meta = submission.setdefault("meta", {})
        flags = meta.setdefault("flags", [])
        if verdict is None:
            submission["success"] = False
            flags.append("not_graded")
            return
        submission["success"] = verdict.resolved
        if verdict.model is not None and not submission.get("model"):  # a joined log's own model comes first
            submission["model"] = verdict.model
            flags.append("model_from_name")
        if verdict.tests_total:
            submission["tests_passed"], submission["tests_total"] = verdict.tests_passed, verdict.tests_total
        flags.extend(f for f in verdict.flags if f not in flags)
        meta["verdict_source"] = verdict.source
