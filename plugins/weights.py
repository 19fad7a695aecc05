"""The spec's weight profiles: ``default`` and its five task categories."""

from __future__ import annotations

from arena_core import hookimpl
from arena_core.model.records import WeightProfile


def _profile(name: str, efficiency: float, speed: float, cost: float, correctness: float) -> WeightProfile:
    return WeightProfile(name, {"efficiency": efficiency, "speed": speed, "cost": cost, "correctness": correctness})


PROFILES = (
    _profile("default", 0.35, 0.25, 0.20, 0.20),
    _profile("frontend_development", 0.30, 0.25, 0.15, 0.30),
    _profile("backend_development", 0.35, 0.30, 0.20, 0.15),
    _profile("data_analysis", 0.40, 0.20, 0.25, 0.15),
    _profile("debugging", 0.25, 0.35, 0.15, 0.25),
    _profile("refactoring", 0.45, 0.20, 0.20, 0.15),
)


@hookimpl
def arena_register_weight_profiles() -> tuple[WeightProfile, ...]:
    return PROFILES
