"""Difficulty adjustments: the spec's multiplier per difficulty, capped at 100, and the same
multipliers rescaled so that they need no cap (the ``robust`` profile's)."""

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


@frozen
class Rescaled:
    """``score * factor / top``: the multiplied score divided by the largest multiplier, so the
    best possible score is 100 and nothing is capped. Multiply-and-cap ties every run above
    100 / factor at 100, whatever their scores (on Aider's polyglot board, 24 of 69 runs); the
    rescaled adjustment keeps their order and the ratio between difficulties."""

    name: str
    factor: float
    top: float

    def adjust(self, score: float) -> float:
        return score * self.factor / self.top

    def adjust_batch(self, scores: np.ndarray) -> np.ndarray:
        adjusted: np.ndarray = scores * self.factor / self.top
        return adjusted


SPEC_FACTORS = {"beginner": 1.0, "intermediate": 1.1, "advanced": 1.2}


@hookimpl
def arena_register_difficulty_adjusters() -> list[Multiplier | Rescaled]:
    top = max(SPEC_FACTORS.values())
    return [
        *(Multiplier(name, factor) for name, factor in SPEC_FACTORS.items()),
        *(Rescaled(f"{name}_rescaled", factor, top) for name, factor in SPEC_FACTORS.items()),
    ]
