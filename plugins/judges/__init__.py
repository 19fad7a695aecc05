"""Judges: the ``judge`` criterion, and the providers that build judges from ``[judges.NAME]``
tables: ``openai`` (any OpenAI-compatible chat-completions endpoint) and ``recorded`` (verdicts
made elsewhere, read from a file). See docs/judges.md.
"""

from __future__ import annotations

from arena_core import hookimpl
from arena_core.config.settings import ScoringConfig
from arena_plugins.judges.cache import VerdictCache
from arena_plugins.judges.criterion import JudgeCriterion
from arena_plugins.judges.openai import OpenAICompatible
from arena_plugins.judges.recorded import RecordedJudges


@hookimpl
def arena_register_judges() -> list[object]:
    return [OpenAICompatible(), RecordedJudges()]


@hookimpl
def arena_register_criterion_checkers(config: ScoringConfig) -> list[object]:
    return [JudgeCriterion(VerdictCache(config.judge_cache or None), config.allow_self_judging, config.label_policy)]
