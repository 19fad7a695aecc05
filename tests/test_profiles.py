"""Named scoring profiles: ``[profiles.NAME]`` tables and profile files, each the base
configuration with its own keys on top."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena_core.configfile import ConfigError, load_config

BASE = """
baseline_scope = "task"
confidence_interval = "spec"

[missing]
total_tokens = "reweight"

[profiles.robust]
confidence_interval = "bootstrap"
baseline_scope = "task_tool"

[profiles.robust.missing]
tool_calls = "neutral"

[profiles.robust.weights.default]
efficiency = 0.4
speed = 0.2
cost = 0.1
correctness = 0.3
"""


def test_a_profile_is_the_base_with_its_keys_on_top(tmp_path: Path) -> None:
    (tmp_path / "arena.toml").write_text(BASE)
    loaded = load_config(tmp_path / "arena.toml")
    name, robust = loaded.profile("robust")
    assert name == "robust"
    assert (robust.confidence_interval, robust.baseline_scope) == ("bootstrap", "task_tool")
    assert robust.missing["total_tokens"] == "reweight" and robust.missing["tool_calls"] == "neutral"  # tables merge
    assert robust.weights["default"]["efficiency"] == 0.4
    assert loaded.profile("default") == ("default", loaded.config)
    assert loaded.config.confidence_interval == "spec" and loaded.config.weights == {}


def test_a_profile_file_is_loaded_on_top_of_the_base(tmp_path: Path) -> None:
    (tmp_path / "arena.toml").write_text(BASE)
    (tmp_path / "student.toml").write_text('confidence_interval = "student_t"\n')
    name, config = load_config(tmp_path / "arena.toml").profile(str(tmp_path / "student.toml"))
    assert (name, config.confidence_interval, config.missing["total_tokens"]) == ("student", "student_t", "reweight")


def test_profile_errors_name_the_profile_and_the_key(tmp_path: Path) -> None:
    (tmp_path / "arena.toml").write_text(BASE + '\n[profiles.typo]\nbaseline_scop = "task"\n')
    with pytest.raises(ConfigError, match=r"arena.toml: profiles.typo.baseline_scop: unknown key; did you mean 'baseline_scope'"):
        load_config(tmp_path / "arena.toml")
    (tmp_path / "arena.toml").write_text(BASE)
    with pytest.raises(ConfigError, match=r"no profile or .toml file named 'robustt'.*robust"):
        load_config(tmp_path / "arena.toml").profile("robustt")
