"""Regenerate this folder's persisted conversation with the OpenHands Software Agent SDK itself
(run in a throwaway virtual environment of Python 3.12 or later, never in arena-core's):

    python3.12 -m venv /tmp/ohsdk && /tmp/ohsdk/bin/pip install openhands-sdk==1.58.2
    /tmp/ohsdk/bin/python tests/data/formats/openhands-sdk-current/make.py

The SDK's own ``Agent`` runs a ``Conversation`` persisted under ``conversations/`` (its
``base_state.json`` and ``events/``), with the SDK's own ``LLM``: only litellm's completion call
is replaced by replies a provider would give (``litellm.ModelResponse`` objects with usage), so
the SDK records usage, cost (litellm's bundled prices) and latency as it does for a real model.
The agent thinks twice (the built-in ``think`` tool) and finishes (``finish``).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from unittest import mock

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm's bundled prices, no download

import litellm
import openhands.sdk.llm.llm as llm_module
from openhands.sdk import LLM, Agent, Conversation
from pydantic import SecretStr

HERE = Path(__file__).parent
MODEL = "anthropic/claude-sonnet-4-5-20250929"


def reply(turn: int, tool: str, arguments: dict, prompt: int, cached: int, written: int, completion: int):
    """A provider's reply through litellm: one tool call, and the usage of the call."""
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
             "prompt_tokens_details": {"cached_tokens": cached}, "cache_creation_input_tokens": written}
    call = {"id": f"toolu_{turn}", "type": "function", "function": {"name": tool, "arguments": json.dumps(arguments)}}
    return litellm.ModelResponse(id=f"chatcmpl-{turn}", model=MODEL.split("/")[1], usage=usage,
                                 choices=[{"index": 0, "finish_reason": "tool_calls",
                                           "message": {"role": "assistant", "content": None, "tool_calls": [call]}}])


def main() -> None:
    replies = iter([reply(1, "think", {"thought": "Read the failing test first."}, 3000, 0, 2500, 120),
                    reply(2, "think", {"thought": "The fix is a one-line change."}, 3400, 2500, 400, 80),
                    reply(3, "finish", {"message": "Fixed the bug."}, 3700, 2900, 0, 40)])

    def provider(*_args, **_kwargs):
        time.sleep(0.05)  # the provider's latency, so the SDK's timings are not all equal
        return next(replies)

    out = HERE / "conversations"
    shutil.rmtree(out, ignore_errors=True)
    with mock.patch.object(llm_module, "litellm_completion", provider), tempfile.TemporaryDirectory() as work:
        llm = LLM(model=MODEL, usage_id="agent", api_key=SecretStr("sk-offline"))
        conversation = Conversation(agent=Agent(llm=llm, tools=[]), workspace=work, persistence_dir=str(out))
        conversation.send_message("Fix the bug in the scratch repository.")
        conversation.run()
    for lock in out.rglob(".eventlog*"):  # the writer's lock and length marker, not part of the record
        lock.unlink()


if __name__ == "__main__":
    main()
