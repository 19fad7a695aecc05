"""Judges' prompts: a template file, the requirement and the evidence put in it.

Templates are ``string.Template`` text (``$name``: no attribute lookups, nothing evaluated):

- ``$task_id``, ``$task_query`` (the task's ``meta.query``, when it has one),
- ``$requirement_id``, ``$requirement`` (its criteria),
- ``$evidence``, ``$evidence_chars`` (how many characters are shown), ``$evidence_note``
  (``", cut from N"`` when the evidence was cut to the judge's limit, else empty),
- ``$marker``: a mark derived from the evidence itself (the start of its SHA-256), which the
  lines around the evidence carry. Evidence cannot forge it: a text holding its own hash is
  not to be found. A template must show ``$evidence`` and ``$marker``.

The built-in template (``rubric.txt``) asks for ``{"verdict": "SATISFIED" | "UNSATISFIED",
"reason": ...}``.
"""

from __future__ import annotations

import hashlib
import string
from importlib import resources
from pathlib import Path

from arena_core.model.errors import ValidationError
from arena_core.model.judging import Requirement
from arena_core.model.records import Task
from arena_plugins.judges.evidence import Evidence

__all__ = ["DEFAULT_TEMPLATE", "VARIABLES", "load_template", "marker_of", "render"]

VARIABLES = frozenset(
    {"task_id", "task_query", "requirement_id", "requirement", "evidence", "evidence_chars", "evidence_note", "marker"}
)
DEFAULT_TEMPLATE = resources.files("arena_plugins.judges").joinpath("rubric.txt").read_text(encoding="utf-8")


def load_template(path: str, where: str) -> str:
    """A template file, checked: readable, only known variables, ``$evidence`` and ``$marker`` shown.

    :raises ValidationError: naming ``where`` (``judges.NAME.prompt``) and what is wrong.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError("configuration", where, "a readable UTF-8 template file", f"{path}: {exc}") from None
    template = string.Template(text)
    if not template.is_valid():
        raise ValidationError("configuration", where, "a valid template ($name, $$ for a dollar)", path)
    used = set(template.get_identifiers())
    unknown = sorted(used - VARIABLES)
    if unknown:
        raise ValidationError("configuration", where, f"variables among {', '.join(sorted(VARIABLES))}", unknown[0])
    if not {"evidence", "marker"} <= used:
        raise ValidationError(
            "configuration", where, "a template that shows $evidence between lines carrying $marker", path
        )
    return text


def marker_of(evidence: Evidence) -> str:
    return hashlib.sha256(evidence.text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def render(template: str, task: Task, requirement: Requirement, evidence: Evidence) -> str:
    """The prompt of one requirement of one run."""
    query = task.meta.get("query")
    return string.Template(template).substitute(
        task_id=task.id,
        task_query=f"What was asked: {query}" if isinstance(query, str) and query else "",
        requirement_id=requirement.id,
        requirement=requirement.criteria,
        evidence=evidence.text,
        evidence_chars=f"{evidence.shown:,}",
        evidence_note=f", cut from {evidence.total:,}" if evidence.cut else "",
        marker=marker_of(evidence),
    )
