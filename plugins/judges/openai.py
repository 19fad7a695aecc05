"""``openai``: a judge served by any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM,
Ollama, a LiteLLM proxy, OpenRouter), over HTTP with ``httpx`` (the ``judges`` extra).

httpx rather than the ``openai`` SDK: the request is one POST, and what matters here is control
the SDK keeps to itself or shapes its own way: every endpoint's reply read alike (a vLLM or
Ollama server answers a subset of OpenAI's fields), one bounded retry policy with the verdict
parsing inside it (an unparseable reply is retried like a 500), timeouts per request, and no
client-side state between threads beyond a connection pool.

Settings (``[judges.NAME]``, ``provider = "openai"``):

==================  ===============================================================================
``model``           the model the endpoint serves (required)
``base_url``        the endpoint, ``https://api.openai.com/v1`` by default
``api_key_env``     the environment variable holding the API key (none: no ``Authorization``)
``temperature``     0 by default
``max_tokens``      the reply's bound, 400 by default
``structured``      ask for a JSON reply by schema (``response_format``), true by default; the
                    reply is parsed either way
``timeout``         seconds a request may take, 60 by default
``retries``         attempts after the first, with backoff (1, 2, 4 s...), 3 by default
``concurrency``     requests in flight at once, 4 by default
``rate``            requests a second at most (0: no limit), 0 by default
``prompt``          a template file (see :mod:`arena_plugins.judges.prompt`); the built-in rubric
                    by default
``evidence_limit``  characters of evidence a prompt may show, 60,000 by default
``price_model``     the name prices are looked up by, when it is not ``model``
==================  ===============================================================================

The API key is read from the environment when a request is made, never stored, never printed:
it is in no error, no reason and no cache entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Mapping
from typing import Any

from arena_core.model.errors import ArenaError, ValidationError
from arena_core.model.judging import JudgeReply, JudgeRequest, Usage
from arena_plugins.judges.prompt import DEFAULT_TEMPLATE, load_template

__all__ = ["OpenAICompatible", "OpenAIJudge", "parse_reply"]

_SETTINGS: dict[str, type | tuple[type, ...]] = {
    "model": str,
    "base_url": str,
    "api_key_env": str,
    "temperature": (int, float),
    "max_tokens": int,
    "structured": bool,
    "timeout": (int, float),
    "retries": int,
    "concurrency": int,
    "rate": (int, float),
    "prompt": str,
    "evidence_limit": int,
    "price_model": str,
}
_VERDICT = re.compile(r"\b(UNSATISFIED|SATISFIED|NOT SATISFIED)\b")
_SCHEMA = {
    "type": "json_schema",
    "json_schema": {
        "name": "verdict",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {
                "verdict": {"type": "string", "enum": ["SATISFIED", "UNSATISFIED"]},
                "reason": {"type": "string"},
            },
            "required": ["verdict", "reason"],
            "additionalProperties": False,
        },
    },
}


def parse_reply(text: str) -> tuple[bool | None, str]:
    """A reply's verdict and reason: its JSON (``{"verdict", "reason"}``) when it is JSON, else
    its first SATISFIED or UNSATISFIED and the text; ``None`` when it says neither."""
    stripped = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        found = json.loads(stripped)
    except ValueError:
        found = None
    if isinstance(found, dict) and isinstance(found.get("verdict"), str):
        word = found["verdict"].strip().upper()
        reason = str(found.get("reason", "")).strip()
        if word in ("SATISFIED", "UNSATISFIED"):
            return word == "SATISFIED", reason
    match = _VERDICT.search(text.upper())
    if match is None:
        return None, ""
    return match.group(1) == "SATISFIED", text.strip()


class OpenAICompatible:
    """Builds ``openai`` judges (see the module's note)."""

    name = "openai"

    def build(self, name: str, settings: Mapping[str, Any]) -> OpenAIJudge:
        for key, value in settings.items():
            kind = _SETTINGS.get(key)
            where = f"judges.{name}.{key}"
            if kind is None:
                raise ValidationError(
                    "configuration", where, f"a setting of the openai provider ({', '.join(_SETTINGS)})", key
                )
            if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
                raise ValidationError("configuration", where, f"a {getattr(kind, '__name__', 'number')}", value)
        if "model" not in settings:
            raise ValidationError("configuration", f"judges.{name}.model", "the model the endpoint serves")
        for key in ("retries", "concurrency", "max_tokens", "evidence_limit"):
            if key in settings and settings[key] < (0 if key == "retries" else 1):
                raise ValidationError(
                    "configuration", f"judges.{name}.{key}", "a whole number >= 1 (retries: >= 0)", settings[key]
                )
        template = (
            load_template(settings["prompt"], f"judges.{name}.prompt") if "prompt" in settings else DEFAULT_TEMPLATE
        )
        return OpenAIJudge(name, dict(settings), template)


class OpenAIJudge:
    """One configured ``openai`` judge: a connection pool, at most ``concurrency`` requests at once."""

    provider = "openai"

    def __init__(self, name: str, settings: dict[str, Any], template: str) -> None:
        self.name = name
        self.model: str = settings["model"]
        self.price_model: str = settings.get("price_model", self.model)
        self.base_url = str(settings.get("base_url", "https://api.openai.com/v1")).rstrip("/")
        self.api_key_env: str | None = settings.get("api_key_env")
        self.temperature = float(settings.get("temperature", 0))
        self.max_tokens = int(settings.get("max_tokens", 400))
        self.structured = bool(settings.get("structured", True))
        self.timeout = float(settings.get("timeout", 60))
        self.retries = int(settings.get("retries", 3))
        self.rate = float(settings.get("rate", 0))
        self.template = template
        self.evidence_limit = int(settings.get("evidence_limit", 60_000))
        self._schema_taken = True  # until the endpoint refuses response_format (some vLLM or Ollama builds)
        self._slots = threading.BoundedSemaphore(int(settings.get("concurrency", 4)))
        self._next_start = 0.0
        self._pace = threading.Lock()
        self._client: Any = None
        self._client_lock = threading.Lock()

    @property
    def identity(self) -> Mapping[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "base_url": self.base_url,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "structured": self.structured,
            "template": hashlib.sha256(self.template.encode()).hexdigest(),
        }

    def ask(self, request: JudgeRequest) -> JudgeReply:
        """Post the prompt; a reply without a verdict (unparseable, a refusal), an HTTP error or a
        time-out is retried ``retries`` times with backoff, then answered as no verdict, with why."""
        problem = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(8.0, 2.0 ** (attempt - 1)))
            with self._slots:
                self._wait_turn()
                reply, problem, retry_after = self._once(request.prompt)
            if reply is not None:
                return JudgeReply(reply[0], reply[1], reply[2], attempts=attempt + 1)
            if retry_after is None:  # a client error a retry would not mend
                break
            if retry_after > 0:
                time.sleep(min(retry_after, 30.0))
        return JudgeReply(None, "", None, error=problem, attempts=attempt + 1)

    def _wait_turn(self) -> None:
        """At most ``rate`` requests a second: each takes the next start time."""
        if self.rate <= 0:
            return
        with self._pace:
            now = time.monotonic()
            start = max(now, self._next_start)
            self._next_start = start + 1.0 / self.rate
        if start > now:
            time.sleep(start - now)

    def _http(self) -> Any:
        with self._client_lock:
            if self._client is None:
                try:
                    import httpx  # the judges extra
                except ImportError:
                    raise ArenaError(
                        f"judge {self.name!r}: the openai provider needs httpx: pip install 'arena-core[judges]'"
                    ) from None
                self._client = httpx.Client(timeout=self.timeout, follow_redirects=False)
            return self._client

    def _once(self, prompt: str) -> tuple[tuple[bool, str, Usage | None] | None, str, float | None]:
        """(verdict, reason, usage) or ``None``; why not; and ``None`` when not to retry, else
        the seconds the server asked to wait (0: none said)."""
        import httpx

        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.structured and self._schema_taken:
            body["response_format"] = _SCHEMA
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        try:
            answer = self._http().post(f"{self.base_url}/chat/completions", json=body, headers=headers)
        except httpx.TimeoutException:
            return None, f"no reply within {self.timeout:g} s", 0.0
        except httpx.HTTPError as exc:
            return None, f"the endpoint could not be reached ({type(exc).__name__})", 0.0
        if (
            answer.status_code == 400 and "response_format" in body
        ):  # asked again without it: the reply is parsed either way
            self._schema_taken = False
            return None, "HTTP 400 from the endpoint (with response_format)", 0.0
        if answer.status_code >= 400:
            retry = answer.status_code in (408, 409, 425, 429) or answer.status_code >= 500
            wait = _retry_after(answer.headers.get("retry-after"))
            return None, f"HTTP {answer.status_code} from the endpoint", (wait if retry else None)
        try:
            data = answer.json()
            choice = data["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            return None, "a reply that is not a chat completion", 0.0
        usage = _usage(data.get("usage"))
        if choice.get("refusal"):
            return None, f"the judge refused: {str(choice['refusal'])[:200]}", 0.0
        verdict, reason = parse_reply(str(choice.get("content") or ""))
        if verdict is None:
            return None, "a reply that says neither SATISFIED nor UNSATISFIED", 0.0
        return (verdict, reason[:1000], usage), "", 0.0


def _retry_after(value: str | None) -> float:
    try:
        return max(0.0, float(value)) if value else 0.0
    except ValueError:
        return 0.0


def _usage(found: Any) -> Usage | None:
    if not isinstance(found, dict):
        return None
    prompt, completion = found.get("prompt_tokens"), found.get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None
    details = found.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(prompt, completion, cached if isinstance(cached, int) and 0 <= cached <= prompt else 0)
