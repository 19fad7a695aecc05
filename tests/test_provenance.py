"""Every evaluation records the profile, the algorithms and the plugin versions that made it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import arena_core.examples
from arena_core import Arena, hookimpl
from arena_core.model.provenance import arena_core_version
from arena_core.model.records import Evaluation
from arena_core.model.serde import structure, to_dict
from arena_core.registry.manager import get_plugin_manager
from arena_core.store import SQLiteStore

EXAMPLES = Path(arena_core.examples.__file__).parent
SUBMISSIONS = [json.loads(line) for line in (EXAMPLES / "submissions.jsonl").read_text().splitlines() if line.strip()]
TASKS = {t["id"]: t for t in json.loads((EXAMPLES / "tasks.json").read_text())}


class _HostPlugin:
    """A plugin registered in code by a host application (no distribution)."""

    @hookimpl
    def arena_register_weight_profiles(self):
        from arena_core.model.records import WeightProfile

        return [WeightProfile("host_profile", {"correctness": 1.0})]


def test_evaluations_record_profile_algorithms_and_versions() -> None:
    arena = Arena({"metrics": {"token_efficiency": "token_efficiency_log"}, "confidence_interval": "bootstrap"},
                  autoload=False, profile="log-tokens")
    evaluations = arena.evaluate_many(SUBMISSIONS, TASKS)
    provenance = evaluations[0].provenance
    assert provenance is not None and provenance.profile == "log-tokens"
    assert provenance.algorithms["token_efficiency"] == "token_efficiency_log"
    assert provenance.algorithms["speed"] == "speed" and provenance.algorithms["confidence_interval"] == "bootstrap"
    assert provenance.plugins["metrics"] == f"arena-core {arena_core_version()}"
    assert all(e.provenance is provenance for e in evaluations)  # one shared object, nothing per record
    single = arena.evaluate(SUBMISSIONS[0], TASKS[SUBMISSIONS[0]["task_id"]], to_dict(arena.compute_baseline("t", [])))
    assert single.provenance is provenance


def test_the_digest_tells_configurations_apart_and_ignores_key_order() -> None:
    a = Arena({"missing": {"tool_calls": "reweight", "total_tokens": "neutral"}}, autoload=False)
    b = Arena({"missing": {"total_tokens": "neutral", "tool_calls": "reweight"}}, autoload=False)
    c = Arena({"missing": {"total_tokens": "neutral", "tool_calls": "neutral"}}, autoload=False)
    assert a.provenance.config_digest == b.provenance.config_digest != c.provenance.config_digest


def test_plugins_registered_in_code_are_marked_unpackaged() -> None:
    pm = get_plugin_manager(autoload=False)
    pm.register(_HostPlugin(), name="host")
    arena = Arena(plugin_manager=pm)
    assert arena.provenance.plugins["host"] == "unpackaged"
    assert "runners" in arena.provenance.plugins
    assert "runners" not in Arena(autoload=False, blocked=("runners",)).provenance.plugins  # not loaded, not listed


def test_provenance_survives_json_and_the_store(tmp_path: Path) -> None:
    arena = Arena(autoload=False, profile="stored")
    evaluation = arena.evaluate_many(SUBMISSIONS[:3], TASKS)[0]
    data = json.loads(json.dumps(to_dict(evaluation)))
    assert data["provenance"]["profile"] == "stored"
    assert structure(data, Evaluation).provenance == arena.provenance
    store = SQLiteStore(tmp_path / "arena.db")
    asyncio.run(arena.process_batch(SUBMISSIONS[:6], store=store, tasks=TASKS))
    with store.transaction(write=False) as tx:
        stored = tx.evaluations(SUBMISSIONS[0]["task_id"])
    assert stored and all(e.provenance == arena.provenance for e in stored)


def test_plugin_options_and_disabled_components_enter_the_digest_only_when_set() -> None:
    from arena_core.config.settings import ScoringConfig
    from arena_core.model.provenance import config_digest

    plain = config_digest(ScoringConfig())
    assert config_digest(ScoringConfig(plugins={}, disabled_components=[])) == plain
    with_options = config_digest(ScoringConfig(plugins={"license": {"header_lines": 10}}))
    other_options = config_digest(ScoringConfig(plugins={"license": {"header_lines": 11}}))
    disabled = config_digest(ScoringConfig(disabled_components=["file_contains"]))
    assert len({plain, with_options, other_options, disabled}) == 4
