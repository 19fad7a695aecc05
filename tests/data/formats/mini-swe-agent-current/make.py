"""Regenerate this folder's trajectories with mini-swe-agent itself (run in a throwaway virtual
environment with ``mini-swe-agent`` installed, never in arena-core's):

    python -m venv /tmp/mini && /tmp/mini/bin/pip install mini-swe-agent==2.4.6
    /tmp/mini/bin/python tests/data/formats/mini-swe-agent-current/make.py

Each run is mini-swe-agent's own agent loop (``DefaultAgent`` on a ``LocalEnvironment`` in a
scratch directory, the commands really run) driven by its deterministic test models, which
return the messages given here in the shapes its real model classes write: chat completions
with native tool calls (``LitellmModel``: the provider's response, usage included, under
``extra.response``), the Responses API (``LitellmResponseModel``: the response itself, with no
``role`` and its usage at the top), and text-based turns. The format-error run goes through
``LitellmModel`` itself, with only ``litellm.completion`` replaced by replies a provider would
give, so the refused reply is kept exactly as the real model class keeps it. The trajectory is written by
``DefaultAgent.save``, with the ``instance_id`` the SWE-bench runner adds.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from unittest import mock

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm's bundled prices, no download

import litellm
import yaml
from minisweagent.agents.default import DefaultAgent
from minisweagent.config import builtin_config_dir
from minisweagent.environments.local import LocalEnvironment
from minisweagent.models.litellm_model import LitellmModel
from minisweagent.models.test_models import (
    DeterministicModel,
    DeterministicResponseAPIToolcallModel,
    DeterministicToolcallModel,
    make_output,
    make_response_api_output,
    make_toolcall_output,
)

HERE = Path(__file__).parent
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def _call(ident: str, command: str) -> dict:
    return {"id": ident, "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": command})}}


def _chat_usage(prompt: int, cached: int, completion: int) -> dict:
    """A chat completion's usage as litellm's ``ModelResponse.model_dump()`` has it."""
    return {"usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                      "prompt_tokens_details": {"cached_tokens": cached}}}


def toolcall_outputs() -> list[dict]:
    """Two turns, three tool calls: two in the first turn, the submission in the second."""
    first = make_toolcall_output(
        "Look around first.",
        [_call("call_1", "ls"), _call("call_2", "cat README.md")],
        [{"command": "ls", "tool_call_id": "call_1"}, {"command": "cat README.md", "tool_call_id": "call_2"}],
    )
    first["extra"].update(cost=0.012, response=_chat_usage(1500, 1200, 60))
    second = make_toolcall_output(None, [_call("call_3", SUBMIT)], [{"command": SUBMIT, "tool_call_id": "call_3"}])
    second["extra"].update(cost=0.008, response=_chat_usage(1800, 1500, 20))
    return [first, second]


def response_api_outputs() -> list[dict]:
    """The same work through the Responses API: no role, usage at the top of the response."""
    first = make_response_api_output("Look around first.", [{"command": "ls", "tool_call_id": "fc_1"},
                                                             {"command": "cat README.md", "tool_call_id": "fc_2"}])
    first.update(usage={"input_tokens": 1500, "output_tokens": 60, "total_tokens": 1560,
                        "input_tokens_details": {"cached_tokens": 1200}})
    first["extra"]["cost"] = 0.012
    second = make_response_api_output(None, [{"command": SUBMIT, "tool_call_id": "fc_3"}])
    second.update(usage={"input_tokens": 1800, "output_tokens": 20, "total_tokens": 1820,
                         "input_tokens_details": {"cached_tokens": 1500}})
    second["extra"]["cost"] = 0.008
    return [first, second]


def text_outputs(turns: int) -> list[dict]:
    """Text-based turns, one bash block each, that never submit (for the step limit)."""
    return [make_output(f"Step {k}.\n\n```mswea_bash_command\necho step {k}\n```", [{"command": f"echo step {k}"}],
                        cost=0.004) for k in range(turns)]


def provider_response(turn: int, commands: list[str], prompt: int, cached: int, completion: int,
                      content: str | None = None) -> litellm.ModelResponse:
    """What a provider returns through litellm: a ``ModelResponse`` with its usage."""
    calls = [{"id": f"call_{turn}_{k}", "type": "function",
              "function": {"name": "bash", "arguments": json.dumps({"command": command})}}
             for k, command in enumerate(commands)]
    return litellm.ModelResponse(
        id=f"chatcmpl-{turn}", model="claude-sonnet-4-5",
        choices=[{"index": 0, "finish_reason": "tool_calls" if calls else "stop",
                  "message": {"role": "assistant", "content": content, "tool_calls": calls or None}}],
        usage={"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
               "prompt_tokens_details": {"cached_tokens": cached}})


def format_error_responses() -> list[litellm.ModelResponse]:
    """Six calls: the second reply has no tool call, so ``LitellmModel`` raises ``FormatError``
    and the agent keeps it as a ``user`` message with the billed response; five turns remain."""
    return [provider_response(1, ["ls"], 2000, 0, 80, "Look around first."),
            provider_response(2, [], 2300, 2000, 50, "The fix is obvious."),
            provider_response(3, ["cat README.md"], 2600, 2300, 40),
            provider_response(4, ["echo fixed > fix.txt"], 2900, 2600, 40),
            provider_response(5, ["ls"], 3100, 2900, 30),
            provider_response(6, [SUBMIT], 3300, 3100, 20)]


def run(name: str, model, config: str, instance: str, **agent_options) -> None:
    agent_config = yaml.safe_load((builtin_config_dir / config).read_text())["agent"]
    with tempfile.TemporaryDirectory() as scratch:
        (Path(scratch) / "README.md").write_text("A scratch repository.\n")
        agent = DefaultAgent(model, LocalEnvironment(cwd=scratch), **{**agent_config, **agent_options})
        agent.run("Fix the bug in the scratch repository.")
        agent.save(HERE / f"{name}.traj.json", {"instance_id": instance})


def main() -> None:
    run("toolcall", DeterministicToolcallModel(outputs=toolcall_outputs(), model_name="anthropic/claude-sonnet-4-5"),
        "mini.yaml", "django__django-11099", step_limit=250)
    run("responses", DeterministicResponseAPIToolcallModel(outputs=response_api_outputs(), model_name="openai/gpt-5"),
        "mini.yaml", "django__django-11133", step_limit=250)
    run("step-limit", DeterministicModel(outputs=text_outputs(4), model_name="openai/gpt-5-mini"),
        "mini_textbased.yaml", "sympy__sympy-20590", step_limit=3)
    replies = iter(format_error_responses())
    with mock.patch("litellm.completion", lambda **_: next(replies)):  # the provider, offline
        run("format-error", LitellmModel(model_name="anthropic/claude-sonnet-4-5"), "mini.yaml",
            "astropy__astropy-12907", step_limit=250)


if __name__ == "__main__":
    main()
