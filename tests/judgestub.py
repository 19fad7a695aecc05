"""An OpenAI-compatible chat-completions server on 127.0.0.1 for the judge tests: scripted replies,
every request counted. No test reaches a hosted model.

``with JudgeStub(reply) as stub:`` serves ``POST /v1/chat/completions`` at ``stub.url``; ``reply(body,
attempt)`` gives ``(status, json, delay)`` for each request (``attempt``: how many times this same
prompt was asked before). ``stub.requests`` holds every request body received.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

Reply = Callable[[dict[str, Any], int], tuple[int, dict[str, Any], float]]


def completion(content: str, *, prompt_tokens: int = 1200, completion_tokens: int = 40, refusal: str | None = None) -> dict[str, Any]:
    """A chat completion as OpenAI's endpoint answers it."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if refusal is not None:
        message = {"role": "assistant", "content": None, "refusal": refusal}
    return {
        "id": "chatcmpl-stub", "object": "chat.completion", "model": "stub",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens, "prompt_tokens_details": {"cached_tokens": 0}},
    }  # fmt: skip


def verdict(satisfied: bool, reason: str = "because") -> dict[str, Any]:
    return completion('{"verdict": "%s", "reason": "%s"}' % ("SATISFIED" if satisfied else "UNSATISFIED", reason))


class JudgeStub:
    def __init__(self, reply: Reply, *, max_concurrency: int | None = None) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._asked: Counter[str] = Counter()
        self._lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0
        self.max_concurrency = max_concurrency
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> JSONResponse:
            body = await request.json()
            prompt = body["messages"][-1]["content"]
            with self._lock:
                self.requests.append(body)
                self.headers.append(dict(request.headers))
                attempt = self._asked[prompt]
                self._asked[prompt] += 1
                self.in_flight += 1
                self.most_in_flight = max(self.most_in_flight, self.in_flight)
                refused = self.max_concurrency is not None and self.in_flight > self.max_concurrency
            try:
                if refused:
                    return JSONResponse({"error": "too many requests"}, status_code=429)
                status, payload, delay = self.reply(body, attempt)
                if delay:
                    import asyncio

                    await asyncio.sleep(delay)
                return JSONResponse(payload, status_code=status)
            finally:
                with self._lock:
                    self.in_flight -= 1

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="error"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> JudgeStub:
        self.thread.start()
        for _ in range(200):
            if self.server.started:
                break
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
