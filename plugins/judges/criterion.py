"""The ``judge`` criterion: a run's work judged, requirement by requirement, by model judges.

::

    {"type": "judge", "judge": "sonnet",
     "requirements": [{"id": "r0", "criteria": "The dataset is loaded in src/data_loader.py", "prerequisites": []},
                      {"id": "r1", "criteria": "Training shows progress with tqdm", "prerequisites": ["r0"]}],
     "evidence": ["diff", "files:src/**/*.py", "trajectory", "final_answer"]}

- Each requirement is put to each judge named (``judge``: one name, or a list: a panel) with the
  evidence (:mod:`~arena_plugins.judges.evidence`) in the judge's prompt. A panel's verdict is
  its majority; a tie, or no judge answering, leaves the requirement **unscored**, never failed.
- A requirement counts as met only when its prerequisites are met (DevAI's rule): one whose
  prerequisite is not met is not met; one whose prerequisite is unscored is unscored.
- Credit is the share of the scored requirements met. A criterion with none scored is
  ``unscored``: left out of the correctness score, and a run with no verdict at all has none.
- A judge of the same model family as the run's model does not answer for it, unless
  ``allow_self_judging`` (then its answers are flagged ``self_judged``).
- Answers come from the verdict cache when the same judge was asked the same question
  (:mod:`~arena_plugins.judges.cache`); every request's usage is priced, apart from the run's cost.

The evaluation keeps, per requirement: its verdict and reason, each judge's answer (or why it
gave none), whether it came from the cache, the usage and cost of the requests, and, where
people labelled it (``--labels``), their count (``people``: met and unmet raters). Under
``label_policy = "override"`` the people's majority is the requirement's own verdict
(``scored_by: "people"``; a tie leaves it to the judges), before prerequisites count.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from attrs import evolve, field, frozen

from arena_core.model.errors import ValidationError
from arena_core.model.judging import Judge, JudgeReply, JudgeRequest, Requirement, Usage
from arena_core.model.protocols import Resolver
from arena_core.model.records import CriterionResult, Submission, SuccessCriterion, Task
from arena_core.pricing.pricer import Pricer
from arena_core.workspace.confined import Workspace
from arena_plugins.judges.cache import VerdictCache, cache_key
from arena_plugins.judges.evidence import KINDS, gather, invalid_kind
from arena_plugins.judges.families import family_of
from arena_plugins.judges.prompt import DEFAULT_TEMPLATE, render
from arena_plugins.judges.requirements import people_verdict, prerequisite_reason, requirements_of, with_prerequisites

__all__ = ["JudgeCriterion"]

#: What a judge is shown when its criterion names no evidence.
DEFAULT_EVIDENCE = ("diff", "final_answer")
#: Characters of evidence a judge that sets no ``evidence_limit`` is shown.
EVIDENCE_LIMIT = 60_000


@frozen
class JudgeCriterion:
    """The ``judge`` criterion checker (see the module's note)."""

    cache: VerdictCache = field(factory=lambda: VerdictCache(None))
    allow_self_judging: bool = False
    label_policy: str = "calibrate"
    """``override``: a requirement people labelled is scored by their majority (``label_policy``)."""
    judges: Mapping[str, Judge] = field(factory=dict)
    labels: Mapping[tuple[str, str | None], tuple[int, int]] = field(factory=dict)
    """People's ``(met, unmet)`` raters per ``(run, requirement)``: the scorer's, once bound."""
    pricer: Pricer | None = None
    type = "judge"
    parameters = ("judge", "requirements", "evidence")
    slow = True  # it asks a model: checked before a store's transaction, never inside it
    reads_meta = True  # its evidence: the run's final answer and trajectory

    def bind(self, resolver: Resolver) -> JudgeCriterion:
        return evolve(self, judges=dict(resolver.judges()), pricer=resolver.judge_pricer(), labels=resolver.labels())

    def validate(self, criterion: SuccessCriterion, task: Task) -> None:
        requirements_of(criterion, task)
        self._panel(criterion, task)
        kinds = criterion.params.get("evidence", DEFAULT_EVIDENCE)
        if not isinstance(kinds, (list, tuple)) or any(invalid_kind(k) for k in kinds):
            raise ValidationError(f"task {task.id!r}", "evidence", f"a list of {', '.join(KINDS)}", kinds)

    def check(self, submission: Submission, criterion: SuccessCriterion, task: Task) -> CriterionResult:
        return self._judged(submission, criterion, task, None)

    def check_workspace(
        self, workspace: Workspace, submission: Submission, criterion: SuccessCriterion, task: Task
    ) -> CriterionResult:
        return self._judged(submission, criterion, task, workspace)

    def answers(
        self,
        submission: Submission,
        criterion: SuccessCriterion,
        task: Task,
        workspace: Workspace | None,
        *,
        only: Sequence[str] = (),
        skip: Collection[tuple[str, str, str]] = (),
    ) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """``(requirement, judge, answer)`` of each judge of the panel (of ``only``, when given) for
        each requirement of the run, but those ``(run, requirement, judge)`` in ``skip``: what
        ``arena judge`` writes."""
        requirements = requirements_of(criterion, task)
        panel = [j for j in self._panel(criterion, task) if not only or j.name in only]
        if not panel:
            return
        limit = min(getattr(j, "evidence_limit", EVIDENCE_LIMIT) for j in panel)
        evidence = gather(list(criterion.params.get("evidence", DEFAULT_EVIDENCE)), submission, workspace, limit)
        for requirement in requirements:
            for judge in panel:
                if (submission.id, requirement.id, judge.name) not in skip:
                    yield requirement.id, judge.name, self._answer(judge, submission, task, requirement, evidence)

    def review_view(
        self, submission: Submission, criterion: SuccessCriterion, task: Task, requirement: str
    ) -> dict[str, Any] | None:
        """What a person labelling one requirement of the run is shown (the review queue): the
        requirement and the evidence a judge of the criterion is shown, without the workspace
        (never the run's tool, model or any judge's verdict); ``None`` when the criterion has no
        such requirement."""
        found = next((r for r in requirements_of(criterion, task) if r.id == requirement), None)
        if found is None:
            return None
        kinds = [k for k in criterion.params.get("evidence", DEFAULT_EVIDENCE) if k in ("final_answer", "trajectory")]
        evidence = gather(kinds, submission, None, EVIDENCE_LIMIT)
        return {
            "requirement": {"id": found.id, "criteria": found.criteria, "prerequisites": list(found.prerequisites)},
            "evidence": evidence.text,
        }

    def _panel(self, criterion: SuccessCriterion, task: Task) -> list[Judge]:
        names = criterion.params.get("judge")
        names = [names] if isinstance(names, str) else names
        if not isinstance(names, (list, tuple)) or not names or not all(isinstance(n, str) for n in names):
            raise ValidationError(f"task {task.id!r}", "judge", "a judge's name, or a list of them (a panel)", names)
        unknown = [n for n in names if n not in self.judges]
        if unknown:
            known = ", ".join(self.judges) or "none: add a [judges.NAME] table to the configuration"
            raise ValidationError(f"task {task.id!r}", "judge", f"a configured judge ({known})", unknown[0])
        return [self.judges[n] for n in names]

    def _judged(
        self, submission: Submission, criterion: SuccessCriterion, task: Task, workspace: Workspace | None
    ) -> CriterionResult:
        requirements = requirements_of(criterion, task)
        panel = self._panel(criterion, task)
        limit = min(getattr(j, "evidence_limit", EVIDENCE_LIMIT) for j in panel)
        evidence = gather(list(criterion.params.get("evidence", DEFAULT_EVIDENCE)), submission, workspace, limit)
        own: dict[str, str] = {}
        details: dict[str, dict[str, Any]] = {}
        for requirement in requirements:
            answers = {judge.name: self._answer(judge, submission, task, requirement, evidence) for judge in panel}
            own[requirement.id], reason = _majority(answers)
            costs = [a["cost"] for a in answers.values() if a.get("cost") is not None]
            details[requirement.id] = {
                "requirement": requirement.id,
                "reason": reason,
                "judges": answers,
                "cost": math.fsum(costs) if costs else None,
                "cached": all(a.get("cached", False) for a in answers.values()),
                "self_judged": any(a.get("self_judged", False) for a in answers.values()),
            }
            votes = self.labels.get((submission.id, requirement.id))
            if votes is not None:  # evidence about the judges, under either policy
                details[requirement.id]["people"] = {"met": votes[0], "unmet": votes[1]}
                majority = people_verdict(votes)
                if self.label_policy == "override" and majority is not None:
                    own[requirement.id] = majority
                    details[requirement.id]["scored_by"] = "people"
                    details[requirement.id]["reason"] = (
                        f"scored by people's labels (label_policy = override): {votes[0]} met, {votes[1]} not"
                    )
        final = with_prerequisites(requirements, own)
        for requirement in requirements:
            details[requirement.id]["verdict"] = final[requirement.id]
            if final[requirement.id] != own[requirement.id]:
                details[requirement.id]["reason"] = prerequisite_reason(requirement, final)
        met = sum(v == "met" for v in final.values())
        scored = sum(v != "unscored" for v in final.values())
        unscored = len(final) - scored
        by_people = sum(d.get("scored_by") == "people" for d in details.values())
        note = f" ({unscored} unscored)" if unscored else ""
        note += f" ({by_people} scored by people's labels)" if by_people else ""
        ordered = tuple(details[r.id] for r in requirements)
        if not scored:
            return CriterionResult(
                "judge", "unscored", 0.0, reason=f"no requirement could be judged{note}", details=ordered
            )
        credit = met / scored
        summary = f"{met} of {scored} judged requirements met{note}"
        first_unmet = next((details[r.id] for r in requirements if final[r.id] == "unmet"), None)
        if first_unmet is not None:
            summary += f"; {first_unmet['requirement']}: {first_unmet['reason']}"[:600]
        return CriterionResult("judge", "passed" if credit == 1 else "failed", credit, reason=summary, details=ordered)

    def _answer(
        self, judge: Judge, submission: Submission, task: Task, requirement: Requirement, evidence: Any
    ) -> dict[str, Any]:
        """One judge's answer to one requirement of the run: from the cache, or asked."""
        judge_family, run_family = family_of(judge.model), family_of(submission.model)
        self_judged = judge_family is not None and judge_family == run_family
        if self_judged and not self.allow_self_judging:
            return {"verdict": None, "error": f"self-judging refused: the judge's model and the run's are {judge_family} models "
                    "(allow_self_judging = true lets it answer, flagged)"}  # fmt: skip
        prompt = render(getattr(judge, "template", DEFAULT_TEMPLATE), task, requirement, evidence)
        cacheable = getattr(judge, "cacheable", True)
        key = cache_key(judge.identity, prompt) if cacheable else ""
        hit = self.cache.get(key) if cacheable else None
        if hit is not None:
            answer: dict[str, Any] = {k: hit[k] for k in ("verdict", "reason", "usage", "cost") if k in hit}
            answer["cached"] = True
        else:
            reply = judge.ask(JudgeRequest(submission.id, task.id, requirement, prompt, submission.model))
            answer = _answer_of(reply, self._cost(judge, reply.usage))
            if cacheable and reply.satisfied is not None:
                self.cache.put(key, answer)
            answer["cached"] = False
        if self_judged:
            answer["self_judged"] = True
        return answer

    def _cost(self, judge: Judge, usage: Usage | None) -> float | None:
        """The dollars a request cost, priced from its usage; ``None`` when it cannot be priced."""
        if usage is None or self.pricer is None or judge.model is None:
            return None
        model = getattr(judge, "price_model", judge.model)
        run = Submission(
            id=f"judge {judge.name}", model=model, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens, started_at=datetime.datetime.now(datetime.UTC).date().isoformat(),
        )  # fmt: skip
        try:
            quote = self.pricer.quote(run)
        except ValidationError:
            return None
        return None if quote is None else float(quote.total)


def _answer_of(reply: JudgeReply, cost: float | None) -> dict[str, Any]:
    answer: dict[str, Any] = {"verdict": reply.satisfied, "reason": reply.reason}
    if reply.error:
        answer["error"] = reply.error
    if reply.usage is not None:
        answer["usage"] = {"input_tokens": reply.usage.input_tokens, "output_tokens": reply.usage.output_tokens,
                           "cache_read_tokens": reply.usage.cache_read_tokens}  # fmt: skip
    if cost is not None:
        answer["cost"] = cost
    if reply.attempts > 1:
        answer["attempts"] = reply.attempts
    return answer


def _majority(answers: Mapping[str, Mapping[str, Any]]) -> tuple[str, str]:
    """A panel's verdict: met or unmet by the majority of the judges that answered; a tie, or no
    answer, unscored. The reason is the first agreeing judge's (or why none answered)."""
    yes = [a for a in answers.values() if a.get("verdict") is True]
    no = [a for a in answers.values() if a.get("verdict") is False]
    if len(yes) > len(no):
        return "met", str(yes[0].get("reason", ""))
    if len(no) > len(yes):
        return "unmet", str(no[0].get("reason", ""))
    if yes:
        return "unscored", f"the judges are split ({len(yes)} met, {len(no)} not)"
    errors = [f"{name}: {a.get('error', 'no verdict')}" for name, a in answers.items()]
    return "unscored", "; ".join(errors)[:600]
