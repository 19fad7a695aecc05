"""arena-core: score and rank workflow submissions of AI coding tools.

>>> from arena_core import Arena, to_dict
>>> arena = Arena()
>>> ev = arena.evaluate(submission, task, baseline)      # doctest: +SKIP
"""

from arena_core.arena import Arena, PluginInfo
from arena_core.config.settings import ScoringConfig
from arena_core.hookspecs import hookimpl
from arena_core.model.errors import (
    ArenaError,
    DuplicateComponentError,
    PluginError,
    PluginLoadError,
    UnknownComponentError,
    ValidationError,
)
from arena_core.model.protocols import Score
from arena_core.model.records import (
    Baseline,
    CriterionResult,
    Evaluation,
    Submission,
    SuccessCriterion,
    Task,
    WeightProfile,
)
from arena_core.model.serde import structure, to_dict

__all__ = [
    "Arena",
    "ArenaError",
    "Baseline",
    "CriterionResult",
    "DuplicateComponentError",
    "Evaluation",
    "PluginError",
    "PluginInfo",
    "PluginLoadError",
    "Score",
    "ScoringConfig",
    "Submission",
    "SuccessCriterion",
    "Task",
    "UnknownComponentError",
    "ValidationError",
    "WeightProfile",
    "hookimpl",
    "structure",
    "to_dict",
]
