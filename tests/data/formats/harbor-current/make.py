"""Regenerate this folder's Harbor 0.25 trials with Harbor's own models (run in a throwaway virtual
environment of Python 3.12 or later, never in arena-core's):

    python3.12 -m venv /tmp/harbor && /tmp/harbor/bin/pip install harbor==0.25.0
    /tmp/harbor/bin/python tests/data/formats/harbor-current/make.py

Every ``result.json`` is a ``TrialResult`` and every trajectory an ATIF ``Trajectory``, built and
validated by Harbor's pydantic models and written as Harbor writes them
(``model_dump_json(indent=4)``). No container runs: the figures are given here.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from uuid import NAMESPACE_URL, UUID, uuid5

from harbor.analyze.models import AnalyzeReport, AnalyzeReportResult
from harbor.cli.quality_checker.models import CheckOutcome, QualityCheckModel
from harbor.models.agent.context import AgentContext
from harbor.models.job.result import JobResult, JobStats
from harbor.models.task.id import LocalTaskId
from harbor.models.trajectories.agent import Agent
from harbor.models.trajectories.final_metrics import FinalMetrics
from harbor.models.trajectories.metrics import Metrics
from harbor.models.trajectories.step import Step
from harbor.models.trajectories.tool_call import ToolCall
from harbor.models.trajectories.trajectory import Trajectory
from harbor.models.trial.config import TaskConfig, TrialConfig
from harbor.models.trial.result import AgentInfo, ExceptionInfo, ModelInfo, StepResult, TimingInfo, TrialResult
from harbor.models.verifier.result import VerifierResult
from harbor.trial.trial import Trial

HERE = Path(__file__).parent
START = datetime(2026, 10, 20, 12, 0, 0, tzinfo=timezone.utc)
AGENT = AgentInfo(name="terminus-2", version="2.0.0", model_info=ModelInfo(name="claude-sonnet-4-5", provider="anthropic"))


def _at(seconds: float) -> datetime:
    return START + timedelta(seconds=seconds)


def trial(name: str, task: str, **fields) -> TrialResult:
    config = TrialConfig(task=TaskConfig(path=Path(f"tasks/{task}")), trial_name=name)
    return TrialResult(id=uuid5(NAMESPACE_URL, name), task_name=task, trial_name=name, trial_uri=f"file:///jobs/demo/{name}",
                       task_id=LocalTaskId(path=Path(f"tasks/{task}")), task_checksum="0" * 64, config=config,
                       agent_info=AGENT, started_at=_at(0), finished_at=_at(120), **fields)


WRITTEN: list[TrialResult] = []


def write(result: TrialResult, trajectory: Trajectory | None = None, extra: dict[str, Trajectory] | None = None) -> None:
    WRITTEN.append(result)
    folder = HERE / result.trial_name
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "agent").mkdir(parents=True)
    (folder / "result.json").write_text(result.model_dump_json(indent=4))
    if trajectory is not None:
        (folder / "agent" / "trajectory.json").write_text(trajectory.model_dump_json(indent=2, exclude_none=True))
    for file_name, segment in (extra or {}).items():
        (folder / "agent" / file_name).write_text(segment.model_dump_json(indent=2, exclude_none=True))


def step(index: int, calls: int, seconds: float, **fields) -> Step:
    tool_calls = [ToolCall(tool_call_id=f"c{index}_{k}", function_name="bash_command", arguments={"keystrokes": "ls\n"})
                  for k in range(calls)]
    return Step(step_id=index, timestamp=_at(seconds).isoformat(), source="agent", message="Working.",
                tool_calls=tool_calls or None, **fields)


def step_trajectory(steps: list[Step], usage: AgentContext) -> Trajectory:
    """One step's ATIF trajectory, its totals those the step's ``agent_result`` recorded."""
    return Trajectory(schema_version="ATIF-v1.8", agent=Agent(name="terminus-2", version="2.0.0",
                                                              model_name="claude-sonnet-4-5"),
                      steps=steps, final_metrics=FinalMetrics(total_prompt_tokens=usage.n_input_tokens,
                                                              total_completion_tokens=usage.n_output_tokens,
                                                              total_cached_tokens=usage.n_cache_tokens,
                                                              total_cost_usd=usage.cost_usd))


def main() -> None:
    # Two steps of one task (a multi-step trial): usage on each step, none at the trial level; each
    # step's agent logs moved to steps/<name>/agent/ and verified on its own; the trial's reward is
    # Harbor's own aggregate of the steps' (the mean, its default strategy).
    steps = [
        StepResult(step_name="setup", agent_result=AgentContext(n_input_tokens=50_000, n_cache_tokens=40_000,
                                                                n_output_tokens=1_000, cost_usd=0.10),
                   verifier_result=VerifierResult(rewards={"reward": 1.0}),
                   agent_execution=TimingInfo(started_at=_at(5), finished_at=_at(50))),
        StepResult(step_name="fix", agent_result=AgentContext(n_input_tokens=60_000, n_cache_tokens=55_000,
                                                              n_output_tokens=2_000, cost_usd=0.12),
                   verifier_result=VerifierResult(rewards={"reward": 0.5}),
                   agent_execution=TimingInfo(started_at=_at(50), finished_at=_at(110))),
    ]
    multi = trial("multi-step__a1", "build-cache", step_results=steps)
    multi.verifier_result = Trial._aggregate_step_rewards(SimpleNamespace(result=multi))
    write(multi)
    step_trajectories = {
        "setup": step_trajectory([step(1, 1, 5, llm_call_count=2)], steps[0].agent_result),
        "fix": step_trajectory([step(1, 0, 50, llm_call_count=1), step(2, 2, 80, llm_call_count=2)],
                               steps[1].agent_result),
    }
    for name, steps_trajectory in step_trajectories.items():
        folder = HERE / "multi-step__a1" / "steps" / name / "agent"
        folder.mkdir(parents=True)
        (folder / "trajectory.json").write_text(steps_trajectory.model_dump_json(indent=2, exclude_none=True))
    # A reward of several keys: no "reward" key.
    write(trial("multi-key__b1", "lint-and-test",
                agent_result=AgentContext(n_input_tokens=97_938, n_cache_tokens=97_845, n_output_tokens=1_200,
                                          cost_usd=0.05),
                verifier_result=VerifierResult(rewards={"tests_passed": 0.75, "lint": 1}),
                agent_execution=TimingInfo(started_at=_at(2), finished_at=_at(62))))
    # The sandbox never started: Harbor retries it and its reward is not valid.
    write(trial("sandbox-timeout__c1", "build-cache",
                exception_info=ExceptionInfo(exception_type="EnvironmentStartTimeoutError",
                                             exception_message="environment did not start in 600 s",
                                             exception_traceback="Traceback (most recent call last): ...",
                                             occurred_at=_at(600))))
    # The agent ran out of time: its own failure, graded.
    write(trial("agent-timeout__d1", "lint-and-test",
                agent_result=AgentContext(n_input_tokens=20_000, n_cache_tokens=0, n_output_tokens=500, cost_usd=0.02),
                verifier_result=VerifierResult(rewards={"reward": 0.0}),
                exception_info=ExceptionInfo(exception_type="AgentTimeoutError", exception_message="agent timed out",
                                             exception_traceback="Traceback (most recent call last): ...",
                                             occurred_at=_at(900))))
    # An ATIF 1.8 trajectory without session_id, continued in a second file, with a step copied
    # into the continuation for context, an embedded subagent, and a deterministic dispatch step.
    sub = Trajectory(schema_version="ATIF-v1.8", trajectory_id="sub-1", agent=Agent(name="searcher", version="1"),
                     steps=[step(1, 2, 10, llm_call_count=1, metrics=Metrics(prompt_tokens=1_000, completion_tokens=50))],
                     final_metrics=FinalMetrics(total_prompt_tokens=1_000, total_completion_tokens=50,
                                                total_cost_usd=0.001))
    first = Trajectory(schema_version="ATIF-v1.8", agent=Agent(name="terminus-2", version="2.0.0",
                                                               model_name="claude-sonnet-4-5"),
                       steps=[step(1, 1, 0, llm_call_count=1), step(2, 0, 5, llm_call_count=0)],
                       subagent_trajectories=[sub], continued_trajectory_ref="trajectory.cont-1.json",
                       # The root's totals include its subagent's, as Harbor's converters fold them
                       # (ATIF: total_cost_usd "including cost for subagents"): 10,000 + 1,000 prompt.
                       final_metrics=FinalMetrics(total_prompt_tokens=11_000, total_completion_tokens=350,
                                                  total_cached_tokens=8_000, total_cost_usd=0.031))
    second = Trajectory(schema_version="ATIF-v1.8", agent=Agent(name="terminus-2", version="2.0.0",
                                                                model_name="claude-sonnet-4-5"),
                        steps=[step(1, 1, 0, is_copied_context=True, llm_call_count=1),
                               step(2, 2, 30, llm_call_count=2)],
                        final_metrics=FinalMetrics(total_prompt_tokens=12_000, total_completion_tokens=400,
                                                   total_cached_tokens=9_000, total_cost_usd=0.04))
    write(trial("continued__e1", "build-cache",
                agent_result=AgentContext(n_input_tokens=23_000, n_cache_tokens=17_000, n_output_tokens=750,
                                          cost_usd=0.071),
                verifier_result=VerifierResult(rewards={"reward": 1.0})),
          first, {"trajectory.cont-1.json": second})
    # The job's own result.json: Harbor's JobStats accumulated trial by trial, as a job does.
    stats = JobStats()
    for result in WRITTEN:
        stats.increment(result)
    job = JobResult(id=UUID(int=1), started_at=START, finished_at=_at(1_000), n_total_trials=len(WRITTEN), stats=stats)
    (HERE / "result.json").write_text(job.model_dump_json(indent=4))
    # `harbor analyze`'s job-level analysis.json: its rubric's checks per trial.
    checks = {"reward_hacking": CheckOutcome.PASS, "task_specification": CheckOutcome.PASS}
    report = AnalyzeReport(results=[
        AnalyzeReportResult(trial_name=r.trial_name, summary="Solved it.", cost_usd=0.01, checks={
            name: QualityCheckModel(explanation="Looked at the diff.",
                                    outcome=CheckOutcome.FAIL if name == "reward_hacking" and r.trial_name == "continued__e1"
                                    else outcome)
            for name, outcome in checks.items()})
        for r in WRITTEN if r.verifier_result is not None or r.step_results
    ])
    (HERE / "analysis.json").write_text(report.model_dump_json(indent=2))


if __name__ == "__main__":
    main()
