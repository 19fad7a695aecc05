"""``swebench``: SWE-bench harness and sb-cli run reports and per-instance ``report.json``,
joined by instance id with the agent's own logs when they are given too (mini-swe-agent
trajectories, OpenHands ``output.jsonl``), so a run's cost, calls and verdict land in one
submission.

Errors and empty patches count as unresolved, as SWE-bench counts them, and are flagged
(``harness_error``, ``empty_patch``), never silently. A per-instance report adds the tests:
``tests_passed`` / ``tests_total`` over FAIL_TO_PASS and PASS_TO_PASS, so a partial resolution
keeps its partial figure beside the verdict. The mapping is in docs/importers/swebench.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from arena_core.importing.runs import ImportedRun, files_under, present, regular_files, repository_of, verdict_task
from arena_core.io.decoding import InputError
from arena_plugins.importers.mini_swe_agent import graded_trajectory, is_trajectory
from arena_plugins.importers.openhands import is_output, output_runs
from arena_plugins.importers.swebench_reports import Verdicts, is_report

__all__ = ["SweBench"]

HARNESS = "swebench"


class SweBench:
    """SWE-bench verdicts, one submission per instance, joined with agent logs when given."""

    name = HARNESS
    description = "SWE-bench run reports and report.json, joined with mini-swe-agent or OpenHands logs"
    unrecorded = ()

    def detect(self, path: Path) -> bool:
        if path.is_dir():
            return any(self.detect_file(p) for p in regular_files(path))
        return is_report(path)

    def detect_file(self, path: Path) -> bool:
        """A SWE-bench report makes a folder SWE-bench's."""
        return is_report(path)

    def read(self, paths: Sequence[Path]) -> Iterator[ImportedRun | InputError]:
        files = list(files_under(paths, lambda p: is_report(p) or is_trajectory(p) or is_output(p)))
        verdicts = Verdicts()
        yield from verdicts.read_reports(files)
        if not verdicts.by_instance:
            return
        joined: set[str] = set()
        for path in files:
            if is_report(path):
                continue
            runs: Iterator[ImportedRun | InputError]
            if is_trajectory(path):
                runs = iter([graded_trajectory(path, verdicts)])
            elif is_output(path):
                runs = output_runs(path, verdicts)
            else:
                yield InputError(f"{path}: not a SWE-bench report, a mini-swe-agent trajectory or an OpenHands output")
                continue
            for run in runs:
                if isinstance(run, ImportedRun):
                    joined.add(str(run.submission.get("task_id")))
                yield run
        for instance_id in verdicts.submitted or list(verdicts.by_instance):
            if instance_id not in joined:
                yield _report_only(instance_id, verdicts)


def _report_only(instance_id: str, verdicts: Verdicts) -> ImportedRun:
    meta = present({"harness": HARNESS, "repo": repository_of(instance_id)})
    submission: dict[str, Any] = {"id": instance_id, "task_id": instance_id, "meta": meta}
    verdicts.apply(instance_id, submission)
    submission["meta"]["source"] = submission["meta"].pop("verdict_source")
    return ImportedRun(submission["meta"]["source"], submission, verdict_task(instance_id, "SWE-bench"))
