"""A Harbor trial's verdict from its verifier's reward table (``verifier_result.rewards``): the
configured key, the ``reward`` key, the only key, or the keys combined; and each step's own
verdict for a multi-step trial. Kept apart from the trial reader (:mod:`.harbor`), which maps
the rest of a trial's result."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from arena_core.importing.runs import value
from arena_core.io.decoding import InputError

__all__ = ["AGGREGATES", "reward_of", "step_rewards"]


#: How the keys of a reward table combine when none is chosen: ``mean`` (default), ``min``
#: (every check must pass) or ``max``.
AGGREGATES: dict[str, Callable[[list[float]], float]] = {
    "mean": lambda v: math.fsum(v) / len(v),
    "min": min,
    "max": max,
}


def reward_of(
    data: Mapping[str, Any],
    steps: list[Mapping[str, Any]],
    where: str,
    flags: list[str],
    key: str | None = None,
    aggregate: str = "mean",
) -> tuple[float | None, dict[str, Any] | None]:
    """The trial's reward (the last step's, for a multi-step trial without one of its own): the
    configured ``key``, else its ``reward`` key, else its only key, else the keys combined by
    ``aggregate`` (flagged ``reward_aggregated``); ``None``, flagged ``verdict_missing``, when
    there is none (or the configured key is not there)."""
    rewards = value(data, "verifier_result.rewards", where, dict)
    for step in reversed(steps):
        if rewards:
            break
        rewards = value(step, "verifier_result.rewards", where, dict)
    if not rewards:
        flags.append("verdict_missing")
        return None, None
    numbers = {}
    for name, given in rewards.items():
        found = value(rewards, name, f"{where}: verifier_result.rewards", (int, float), required=True)
        if not 0 <= found <= 1:
            raise InputError(f"{where}: verifier_result.rewards.{name}: expected a reward from 0 to 1, got {given!r}")
        numbers[name] = float(found)
    chosen = key or ("reward" if "reward" in numbers else None)
    if chosen is not None:
        if chosen not in numbers:
            flags.append("verdict_missing")
            return None, dict(rewards)
        return numbers[chosen], dict(rewards)
    if len(numbers) > 1:
        flags.append("reward_aggregated")
    return float(AGGREGATES[aggregate](list(numbers.values()))), dict(rewards)


def step_rewards(
    steps: list[Mapping[str, Any]], where: str, key: str | None, aggregate: str
) -> dict[str, float | None] | None:
    """Each step's own verdict, by step name, read as a trial's is (``None``: not verified)."""
    found: dict[str, float | None] = {}
    for index, st in enumerate(steps):
        at = f"{where}: step_results.{index}"
        name = value(st, "step_name", at, str, required=True)
        found[name] = reward_of(st, [], at, [], key, aggregate)[0] if st.get("verifier_result") else None
    return found or None
