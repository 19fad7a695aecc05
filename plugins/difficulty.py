"""The spec's difficulty adjustments: a multiplier per difficulty, capped at 100."""

from __future__ import annotations

import numpy as np
from attrs import frozen

from arena_core import hookimpl


@frozen
class Multiplier:
    """``min(100, score * factor)``: the spec's adjustment."""

    name: str
    factor: float

    def adjust(self, score: float) -> float:
        return min(100.0, score * self.factor)

    def adjust_batch(self, scores: np.ndarray) -> np.ndarray:
        return np.minimum(100.0, scores * self.factor)


@hookimpl
def arena_register_difficulty_adjusters() -> list[Multiplier]:
    return [Multiplier("beginner", 1.0), Multiplier("intermediate", 1.1), Multiplier("advanced", 1.2)]
