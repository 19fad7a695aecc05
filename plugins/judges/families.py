"""Model families, for refusing to let a judge grade its own family's work.

A judge of the same family as the model that did the work rates it higher than other judges
do (self-preference); a ``judge`` criterion therefore leaves such a verdict out unless
``allow_self_judging = true`` (then it is flagged ``self_judged``). Families are read from a
model's name, a provider prefix included (``anthropic/claude-sonnet-4-5``,
``openrouter/openai/gpt-5``): the first rule that matches names the family.
"""

from __future__ import annotations

import re

__all__ = ["FAMILIES", "family_of"]

#: (family, pattern) in the order they are tried.
FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        ("anthropic", r"claude|anthropic"),
        ("openai", r"\bgpt|(^|[/_-])o[1-9](\b|-)|openai|chatgpt|codex|davinci"),
        ("google", r"gemini|gemma|palm|bison|google"),
        ("meta", r"llama|meta-llama"),
        ("mistral", r"mistral|mixtral|codestral|devstral|magistral|ministral"),
        ("deepseek", r"deepseek"),
        ("alibaba", r"qwen|qwq"),
        ("xai", r"grok|x-ai|xai"),
        ("moonshot", r"kimi|moonshot"),
        ("zhipu", r"glm|zhipu"),
        ("minimax", r"minimax"),
        ("amazon", r"amazon|\bnova\b|titan"),
    )
)


def family_of(model: str | None) -> str | None:
    """The family of a model's name, or ``None`` when no rule knows it."""
    if not model:
        return None
    for name, pattern in FAMILIES:
        if pattern.search(model):
            return name
    return None
