"""Importers for the files other harnesses write, registered like any third-party importer.

One module per harness; each reads its format's files into submissions and the tasks they
name, keeping what the source says and leaving absent what it does not record.
"""

from __future__ import annotations

from typing import Any

import attrs
from attrs import field, frozen

from arena_core.config.settings import ScoringConfig
from arena_core.hookspecs import hookimpl
from arena_core.model.protocols import Importer
from arena_plugins.importers.aider import Aider
from arena_plugins.importers.devai import DevAI
from arena_plugins.importers.harbor import Harbor
from arena_plugins.importers.harbor_rewards import AGGREGATES
from arena_plugins.importers.inspect_logs import InspectLogs
from arena_plugins.importers.mini_swe_agent import MiniSweAgent
from arena_plugins.importers.openhands import OpenHands
from arena_plugins.importers.openhands_index import OpenHandsIndex
from arena_plugins.importers.swebench import SweBench
from arena_plugins.importers.terminal_bench import TerminalBench

__all__ = ["ImporterOptions", "arena_plugin_options", "arena_register_importers"]


@frozen
class ImporterOptions:
    """The built-in importers' options, in ``[plugins.importers]``."""

    harbor_reward_key: str | None = None
    """The key of a Harbor reward table that is a run's correctness (``"tests_passed"``); by
    default its ``reward`` key, else its only key, else the keys combined."""
    harbor_reward_aggregate: str = field(default="mean", validator=attrs.validators.in_(tuple(AGGREGATES)))
    """How the keys of a Harbor reward table combine without a chosen key: ``mean``, ``min``
    (every check must pass) or ``max``."""


@hookimpl
def arena_plugin_options() -> type:
    return ImporterOptions


@hookimpl
def arena_register_importers(config: ScoringConfig, options: Any) -> list[Importer]:
    chosen = options if isinstance(options, ImporterOptions) else ImporterOptions()
    harbor = Harbor(chosen.harbor_reward_key, chosen.harbor_reward_aggregate)
    return [
        InspectLogs(),
        harbor,
        TerminalBench(),
        SweBench(),
        OpenHands(),
        OpenHandsIndex(),
        MiniSweAgent(),
        Aider(),
        DevAI(),
    ]
