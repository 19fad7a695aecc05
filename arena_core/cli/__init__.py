"""The ``arena`` command: ``app`` defines the group and what every command shares; each other
module adds its commands to the group when imported."""

from arena_core.cli import (
    calibrating,
    comparing,
    configuration,
    contaminating,
    examples,
    fronts,
    importing,
    judging,
    leaderboards,
    plugins,
    predicting,
    pricing,
    reports,
    scoring,
    serving,
    storing,
    tasks,
    trending,
    verifying,
    voting,
    weighting,
)
from arena_core.cli.app import main

__all__ = ["main"]
# Imported for their commands, which they register on ``main``.
del (
    calibrating,
    comparing,
    configuration,
    contaminating,
    examples,
    fronts,
    importing,
    judging,
    leaderboards,
    plugins,
    predicting,
    pricing,
    reports,
    scoring,
    serving,
    storing,
    tasks,
    trending,
    verifying,
    voting,
    weighting,
)
