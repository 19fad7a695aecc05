"""Regenerate this folder's SWE-bench 5 run report with SWE-bench's own ``make_run_report`` (run in a
throwaway virtual environment, never in arena-core's):

    python3 -m venv /tmp/swebench && /tmp/swebench/bin/pip install swebench==5.0.2
    /tmp/swebench/bin/python tests/data/formats/swe-bench-current/make.py

The dataset has four instances; the model predicted three of them (one an empty patch); of the two
it evaluated, one resolved. No container runs: the per-instance reports the harness would have
written are written here, as ``run_instance`` writes them, and the run report is SWE-bench's.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from swebench.harness.constants import LOG_REPORT, RUN_EVALUATION_LOG_DIR
from swebench.harness.reporting import make_run_report

HERE = Path(__file__).parent
MODEL = "openai/gpt-5-mini"
RUN_ID = "verified-mini"
DATASET = [{"instance_id": i} for i in ("astropy__astropy-12907", "django__django-11099", "django__django-11133",
                                        "sympy__sympy-20590")]  # fmt: skip
PREDICTIONS = {
    "astropy__astropy-12907": "diff --git a/x b/x\n",  # resolved
    "django__django-11099": "diff --git a/y b/y\n",  # evaluated, not resolved
    "django__django-11133": "",  # an empty patch
}  # sympy__sympy-20590: no prediction (incomplete)
RESOLVED = {"astropy__astropy-12907": True, "django__django-11099": False}


def main() -> None:
    work = Path(tempfile.mkdtemp())
    os.chdir(work)  # the harness writes and reads its logs under ./logs/run_evaluation
    predictions = {
        i: {"instance_id": i, "model_name_or_path": MODEL, "model_patch": patch} for i, patch in PREDICTIONS.items()
    }
    for instance_id, resolved in RESOLVED.items():
        folder = RUN_EVALUATION_LOG_DIR / RUN_ID / MODEL.replace("/", "__") / instance_id
        folder.mkdir(parents=True)
        (folder / LOG_REPORT).write_text(json.dumps({instance_id: {"patch_is_None": False, "patch_exists": True,
                                                                 "patch_successfully_applied": True,
                                                                 "resolved": resolved}}, indent=4))  # fmt: skip
    written = make_run_report(predictions, DATASET, RUN_ID, report_dir=str(work))
    shutil.copy(written, HERE / written.name)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
