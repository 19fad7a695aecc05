"""DevAI judgments (Agent-as-a-Judge, Zhuge et al. 2024): requirement lists judged by people and
by agent judges, per developer agent.

DevAI's judgment folders hold, per developer agent (``OpenHands``, ``MetaGPT``, ``GPT-Pilot``),
one JSON file per task (55 tasks, 365 requirements with prerequisites) in
``human_as_a_judge/`` (the human judges' consensus) and ``agent_as_a_judge/SETTING/`` (an agent
judge's verdicts, ``gray_box`` or ``black_box``)::

    {"name": "01_Image_Classification_ResNet18_Fashion_MNIST_DL", "query": "...", "tags": [...],
     "requirements": [{"requirement_id": 0, "prerequisites": [], "criteria": "...",
                       "category": "Dataset or Environment", "satisfied": true}, ...],
     "preferences": [...], "is_training_needed": true, ...}

Each (agent, task) is a run (``AGENT/TASK``, tool ``AGENT``) of a task with one ``judge``
criterion, judged by ``devai`` (configure it as a ``recorded`` judge over the verdicts written
by ``--verdicts-out``); each agent judge's ``satisfied`` is a verdict (judge
``agent-as-a-judge/SETTING``), each human one a label (rater ``human-as-a-judge``).
``satisfied: null`` is no verdict (no label). DevAI records no telemetry: every figure but
correctness is absent. Give the judgment root, or one agent's folder.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena_core.importing.runs import ImportedRun, load_json, unlinked_file
from arena_core.io.decoding import InputError
from arena_core.model.errors import bounded_repr

__all__ = ["DevAI", "HUMAN_RATER", "JUDGE"]

#: The folder of the human judges' verdicts, and the rater their labels name.
HUMAN, HUMAN_RATER = "human_as_a_judge", "human-as-a-judge"
#: The folder of the agent judges' verdicts (one folder per setting inside).
AGENT = "agent_as_a_judge"
#: The judge the derived tasks' criterion names.
JUDGE = "devai"
#: A DevAI judgment file is about 10 KB: a larger one is not read.
MAX_FILE_BYTES = 4 << 20


class DevAI:
    """Reads DevAI's judgment folders (see the module's note)."""

    name = "devai"
    description = "DevAI judgments (Agent-as-a-Judge): requirements judged by people and agent judges"
    unrecorded = ("total_tokens", "tool_calls", "iterations", "execution_time", "estimated_cost")

    def detect(self, path: Path) -> bool:
        return path.is_dir() and (_is_agent(path) or any(_is_agent(c) for c in _children(path)))

    def read(self, paths: Sequence[Path]) -> Iterator[ImportedRun | InputError]:
        for path in paths:
            agents = [path] if _is_agent(path) else [c for c in _children(path) if _is_agent(c)]
            if not agents:
                yield InputError(f"{path}: expected DevAI judgments (a folder with {HUMAN}/ or {AGENT}/)")
            for agent in agents:
                yield from _runs(agent)


def _children(path: Path) -> list[Path]:
    return sorted(c for c in path.iterdir() if c.is_dir() and not c.is_symlink()) if path.is_dir() else []


def _is_agent(path: Path) -> bool:
    return (path / HUMAN).is_dir() or (path / AGENT).is_dir()


def _runs(agent: Path) -> Iterator[ImportedRun | InputError]:
    """One run per task any of the agent's judgment files names."""
    sources: dict[str, list[tuple[str | None, Path]]] = {}  # task name: (judge, file); None for the humans
    for judge, folder in [(None, agent / HUMAN)] + [
        (f"agent-as-a-judge/{s.name}", s) for s in _children(agent / AGENT)
    ]:
        for file in sorted(folder.glob("*.json")) if folder.is_dir() else ():
            sources.setdefault(file.stem, []).append((judge, file))
    for name, files in sorted(sources.items()):
        try:
            yield _run(agent, name, files)
        except InputError as error:
            yield error


def _run(agent: Path, name: str, files: Sequence[tuple[str | None, Path]]) -> ImportedRun:
    run_id, root = f"{agent.name}/{name}", agent.parent
    verdicts: list[dict[str, Any]] = []
    labels: list[dict[str, Any]] = []
    task: dict[str, Any] | None = None
    first: Path | None = None
    for judge, file in files:
        # Its "name" is not read: DevAI's own files misspell some (the file's name is the task's).
        data = _load(file, root)
        requirements = _requirements(data, file)
        derived = _task(name, data, requirements)
        if task is None:
            task, first = derived, file
        else:
            task = _same_task(task, derived, file, first)
        for requirement in requirements:
            said = requirement.get("satisfied")
            if not isinstance(said, bool) and said is not None:
                raise InputError(f"{file}: requirements.{requirement['requirement_id']}.satisfied: expected true, false or null, got {bounded_repr(said)}")  # fmt: skip
            common = {"submission_id": run_id, "requirement": str(requirement["requirement_id"])}
            if judge is not None:
                verdicts.append({**common, "verdict": said, "judge": judge})
            elif said is not None:
                labels.append({**common, "label": said, "rater": HUMAN_RATER})
    assert task is not None
    tags = [t for t in task.pop("tags") if isinstance(t, str)]
    meta = {"devai_tags": tags} if tags else {}
    submission = {"id": run_id, "task_id": name, "tool": agent.name, **({"meta": meta} if meta else {})}
    return ImportedRun(str(files[0][1]), submission, task, tuple(verdicts), tuple(labels))


def _load(file: Path, root: Path) -> Mapping[str, Any]:
    if not unlinked_file(file, root):
        raise InputError(f"{file}: expected a regular file inside {root}, reached without a link; not read")
    if file.stat().st_size > MAX_FILE_BYTES:
        raise InputError(f"{file}: the file is larger than {MAX_FILE_BYTES:,} bytes; a DevAI judgment is about 10 KB")
    data = load_json(file)
    if not isinstance(data, dict):
        raise InputError(f"{file}: expected a DevAI task (a JSON object), got {bounded_repr(data)}")
    return data


def _same_task(known: dict[str, Any], other: dict[str, Any], file: Path, first: Path | None) -> dict[str, Any]:
    """The task two files describe, which must be the same requirements (ids, prerequisites).
    DevAI's own files differ in places, kept in the task: a requirement's category one file
    leaves out is taken from the other (the human judgment of task 38 leaves one out), and where
    a file words a requirement otherwise (task 13's human judgment of OpenHands' run), the first
    wording is the criterion's and the other is kept in the task's ``meta.rewordings``."""
    ours, theirs = (t["success_criteria"][0]["requirements"] for t in (known, other))
    shape = [[(r["id"], r["prerequisites"]) for r in rs] for rs in (ours, theirs)]
    clash = any(a.get("category", b.get("category")) != b.get("category", a.get("category")) for a, b in zip(ours, theirs, strict=False))  # fmt: skip
    if shape[0] != shape[1] or clash:
        raise InputError(f"{file}: requirements: expected the requirements {first} gives task {known['id']!r}")
    merged = [{**b, **a} for a, b in zip(ours, theirs, strict=True)]
    meta = dict(known["meta"])
    for a, b in zip(ours, theirs, strict=True):
        if a["criteria"] != b["criteria"]:
            meta.setdefault("rewordings", {}).setdefault(a["id"], []).append(
                {"file": file.name, "criteria": b["criteria"]}
            )
    return {**known, "meta": meta, "success_criteria": [{**known["success_criteria"][0], "requirements": merged}]}


def _requirements(data: Mapping[str, Any], file: Path) -> list[Mapping[str, Any]]:
    given = data.get("requirements")
    if not isinstance(given, list) or not given:
        raise InputError(f"{file}: requirements: expected a list of requirements, got {bounded_repr(given)}")
    for index, requirement in enumerate(given):
        at = f"{file}: requirements.{index}"
        if not isinstance(requirement, dict):
            raise InputError(f"{at}: expected a requirement (a JSON object), got {bounded_repr(requirement)}")
        ident = requirement.get("requirement_id")
        if isinstance(ident, bool) or not isinstance(ident, (int, str)):
            raise InputError(f"{at}.requirement_id: expected a number, got {bounded_repr(ident)}")
        if not isinstance(requirement.get("criteria"), str) or not requirement["criteria"].strip():
            raise InputError(f"{at}.criteria: expected what must hold, in words, got {bounded_repr(requirement.get('criteria'))}")  # fmt: skip
        needs = requirement.get("prerequisites", [])
        if not isinstance(needs, list) or any(isinstance(n, bool) or not isinstance(n, (int, str)) for n in needs):
            raise InputError(f"{at}.prerequisites: expected a list of requirement ids, got {bounded_repr(needs)}")
    return given


def _task(name: str, data: Mapping[str, Any], requirements: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The task a judgment file describes: its requirements as one ``judge`` criterion (the
    query, what the agent was asked, kept in its meta)."""
    criterion = {
        "type": "judge",
        "judge": JUDGE,
        "requirements": [
            {
                "id": str(r["requirement_id"]),
                "criteria": r["criteria"],
                "prerequisites": [str(n) for n in r.get("prerequisites", [])],
                **({"category": r["category"]} if isinstance(r.get("category"), str) else {}),
            }
            for r in requirements
        ],
    }
    meta = {"query": data["query"]} if isinstance(data.get("query"), str) else {}
    return {"id": name, "success_criteria": [criterion], "meta": meta, "tags": data.get("tags") or []}
