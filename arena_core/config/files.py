"""The configuration file: ``arena.toml``, or ``[tool.arena]`` in ``pyproject.toml``.

Found by searching the current directory and its parents (as pytest and ruff do), read with
:mod:`tomllib`, validated key by key: an error names the file, the key and the allowed values,
and suggests the closest valid key for a typo. ``arena config init`` writes a complete starter
file with tomli-w; ``arena config show`` prints the effective configuration and where each
value came from.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
import tomli_w
from attrs import frozen

from arena_core.config.settings import (
    BASELINE_SCOPES,
    DEFAULT_MISSING,
    DISABLED_PLUGINS_ENV,
    MISSING_POLICIES,
    ScoringConfig,
)
from arena_core.model.errors import ArenaError, ValidationError, closest
from arena_core.model.records import DEFAULT_BASELINE, Baseline, Submission
from arena_core.model.serde import structure, to_dict

__all__ = [
    "ConfigError",
    "LoadedConfig",
    "config_error",
    "find_config",
    "load_config",
    "starter_toml",
    "effective_lines",
]

FILE_NAMES = ("arena.toml", "pyproject.toml")

#: One line of help per key, written above it by ``arena config init``.
HELP: dict[str, str] = {
    "confidence_interval": "Confidence-interval method: spec (default), student_t, bootstrap, or a plugin's.",
    "leaderboard_method": "How leaderboard groups are scored: task_mean (default), pooled, win_rate, bradley_terry.",
    "leaderboard_interval": "Interval of a group's score over its tasks: student_t (default), bootstrap, spec.",
    "leaderboard_ranks": "Rank ranges and tiers: paired_bootstrap (default, over tasks) or overlap (of the intervals).",
    "model_aliases": "Model spelling to the name leaderboards group it under, in a [model_aliases] table.",
    "models": "Models' release_date and knowledge_cutoff, for --window and arena contamination (docs/time.md).",
    "infra_failures": "Runs flagged as harness errors: fail (default, count as failures) or exclude (leave them out).",
    "difficulty_source": "Where a task's difficulty factor comes from: label (default, the spec) or irt (fitted to the runs).",
    "cost_source": "Where costs come from: reported (default, the harness's), priced (from usage), priced_when_missing.",
    "price_source": 'Price table consulted after price_tables: genai-prices (default, the prices extra); "": none.',
    "price_tables": "Files of your own prices (TOML, JSON or Inspect model-cost YAML), consulted first.",
    "price_date": 'Price every run at this date (ISO-8601); "" (default): each run at its own start.',
    "cost_tolerance": "Reported and priced costs further apart than this share of the priced one are counted.",
    "min_tasks_per_group": "A leaderboard group with fewer tasks is provisional: listed after the ranked ones.",
    "drift_threshold": "Alert when a stored batch moves a task's baseline median by more than this share (0: off).",
    "drift_top_k": "Alert when a stored batch changes the leaderboard's top this-many tools or their order (0: off).",
    "baseline_scope": f"Group submissions for dynamic baselines: {', '.join(BASELINE_SCOPES)}.",
    "min_submissions_per_tool": "A tool with fewer submissions on a task is ranked there but marked provisional.",
    "strict": "Refuse records with unknown keys instead of keeping them under 'meta'.",
    "disabled_plugins": "Plugins never to load, by name (see `arena plugins --all`).",
    "disabled_components": "Single components to leave out, by name or criterion type (see `arena plugins --all`).",
    "plugins": "Each plugin's options, in a [plugins.NAME] table (see the plugin's docs).",
    "metrics": "Which registered metric fills each slot (a dimension, or a part of a composite metric).",
    "category_profiles": 'Map task categories onto weight profiles (e.g. code_editing = "default").',
    "difficulty_adjusters": "Map task difficulties onto difficulty adjusters.",
    "weights": "Replace a weight profile's weights or add a profile; weights add up to 1.",
    "missing": f"What a missing figure does: {', '.join(MISSING_POLICIES)}.",
    "default_baseline": "The baseline used below 5 submissions, for tasks without their own default.",
    "command_runner": "Runner for criterion commands: local (a subprocess, not a sandbox), sandbox (bubblewrap), or a plugin's.",
    "command_timeout": "Seconds a criterion command may run before it is killed.",
    "command_output_limit": "Bytes of a command's output kept for the evaluation.",
    "command_memory_limit": 'Memory a command may use, in bytes or as a size ("512M", "2G"); the sandbox enforces it.',
    "command_max_file_size": 'Largest file a sandboxed command may write (bytes or a size such as "256M").',
    "command_max_processes": "Processes a sandboxed command may run at once.",
    "check_concurrency": "Submissions whose workspaces are checked at the same time.",
    "check_executor": "Where workspace checks run: threads (default), processes or dask.",
    "dask_scheduler": 'Dask scheduler address for check_executor = "dask": tls://HOST:PORT (empty: a local cluster).',
    "dask_allow_unauthenticated": "Connect to a tcp:// Dask scheduler, which anyone reaching it can run code through.",
    "partition_rows": "Most runs held at once per process scoring: larger Parquet inputs are streamed by task partitions.",
    "gate": 'A dimension that gates the others ("correctness": resources credited only on solved work; "": off).',
    "workspace_max_files": "Files a workspace (a checked-out ref, a sandboxed command's copy) may hold.",
    "workspace_max_bytes": 'Bytes a workspace may hold (apparent size: sparse files count whole), e.g. "1G".',
    "workspace_owner": "Which workspace a record may name: id (its own, by id), any, auto (id under the sandbox).",
    "workspace_root": "Every submission's workspace must lie inside this directory (unset: the working directory).",
    "judges": "Judges by name, each a [judges.NAME] table: provider, and the provider's settings (docs/judges.md).",
    "allow_self_judging": "Let a judge answer for runs of its own model family (flagged self_judged).",
    "leaderboard_order": "How boards order groups: score, or outcome-first (significantly more correct ranks above).",
    "label_policy": "People's labels (--labels): calibrate (evidence about the judges) or override (score what they label).",
    "correctness_source": "A leaderboard's correctness with labels: judge, or corrected (prediction-powered, with its interval).",
    "judge_cache": "The judges' verdict cache folder (empty: no cache).",
}
_TABLES = {
    "metrics",
    "category_profiles",
    "model_aliases",
    "models",
    "difficulty_adjusters",
    "weights",
    "missing",
    "default_baseline",
    "plugins",
    "judges",
}


#: Profiles every configuration has (a ``[profiles.NAME]`` of the same name in the file replaces
#: one): the named alternatives of ``docs/algorithms.md``, ready for ``arena -p NAME`` and
#: ``arena compare --b NAME``. Each is the base configuration with these keys on top.
BUILTIN_PROFILES: Mapping[str, Mapping[str, Any]] = {
    "log-tokens": {"metrics": {"token_efficiency": "token_efficiency_log"}},
    "robust-tokens": {"metrics": {"token_efficiency": "token_efficiency_robust"}},
    "percentile": {
        "metrics": {
            "token_efficiency": "token_efficiency_percentile",
            "tool_call_efficiency": "tool_call_efficiency_percentile",
            "speed": "speed_percentile",
            "cost": "cost_percentile",
        }
    },
    # The harness's own verdict and nothing else: with imported runs, the mean correctness is
    # the harness's accuracy. Every spec profile weighs correctness alone, and figures that are
    # missing leave their (weightless) metric out instead of refusing the run.
    "correctness-only": {
        "weights": {
            name: {"efficiency": 0.0, "speed": 0.0, "cost": 0.0, "correctness": 1.0}
            for name in (
                "default",
                "frontend_development",
                "backend_development",
                "data_analysis",
                "debugging",
                "refactoring",
            )
        },
        "missing": dict.fromkeys(
            ("total_tokens", "tool_calls", "iterations", "execution_time", "estimated_cost"), "reweight"
        ),
    },
    # For real leaderboard data (see docs/leaderboards.md): percentile ranks within the task,
    # which one runaway run cannot squeeze; a figure that some runs of a task lack left out for
    # all of them, never filled in or assumed, so a task's runs are compared on the same figures;
    # difficulty multipliers rescaled by the largest, so no two runs tie at a cap.
    "robust": {
        "metrics": {
            "token_efficiency": "token_efficiency_percentile",
            "tool_call_efficiency": "tool_call_efficiency_percentile",
            "speed": "speed_percentile",
            "cost": "cost_percentile",
        },
        "missing": dict.fromkeys(
            ("total_tokens", "tool_calls", "iterations", "execution_time", "estimated_cost"), "comparable"
        ),
        "difficulty_adjusters": {name: f"{name}_rescaled" for name in ("beginner", "intermediate", "advanced")},
    },
    # Outcome first, for real leaderboards (see docs/leaderboards.md): the spec's formulas and
    # weights, with efficiency, speed and cost credited in proportion to correctness (a failed
    # run earns nothing for being cheap) against baselines of the runs that solved the task; a
    # figure some runs of a task lack left out for all of them, so reporting is never punished;
    # difficulty multipliers rescaled, so no two runs tie at a cap.
    "gated": {
        "gate": "correctness",
        "leaderboard_order": "outcome-first",
        "missing": dict.fromkeys(
            ("total_tokens", "tool_calls", "iterations", "execution_time", "estimated_cost"), "comparable"
        ),
        "difficulty_adjusters": {name: f"{name}_rescaled" for name in ("beginner", "intermediate", "advanced")},
    },
}


class ConfigError(ArenaError):
    """The configuration file cannot be read or is not valid; the message starts with the file."""


@frozen
class LoadedConfig:
    """The effective configuration and where it came from."""

    config: ScoringConfig
    path: Path | None
    """The file read, ``None`` when none was found."""
    file_keys: frozenset[str]
    """Dotted keys the file set (``missing.total_tokens``); every other value is a default."""
    profiles: Mapping[str, ScoringConfig] = attrs.field(factory=dict)
    """Named scoring profiles (``[profiles.NAME]``), each the base configuration with the
    profile's keys on top."""

    def profile(self, name_or_file: str) -> tuple[str, ScoringConfig]:
        """``(name, configuration)`` of a named profile, of ``default`` (the base configuration),
        or of a profile file (a ``.toml`` path, its keys on top of the base configuration).

        :raises ConfigError: neither a profile nor a readable, valid file; names the choices.
        """
        if name_or_file in self.profiles:
            return name_or_file, self.profiles[name_or_file]
        if name_or_file == "default":
            return "default", self.config
        if name_or_file in BUILTIN_PROFILES:
            where = Path(f"built-in profile {name_or_file}")
            return name_or_file, _overlay(where, self._base_data(), BUILTIN_PROFILES[name_or_file], "")
        path = Path(name_or_file)
        if path.suffix == ".toml" and path.is_file():
            data = _read(path)
            return path.stem, _overlay(path, self._base_data(), data, "")
        known = ["default", *self.profiles, *(n for n in BUILTIN_PROFILES if n not in self.profiles)]
        raise ConfigError(
            f"{self.path or 'configuration'}: profiles: no profile or .toml file named {name_or_file!r}"
            f"{closest(name_or_file, known)} (profiles: {', '.join(known)})"
        )

    def _base_data(self) -> dict[str, Any]:
        data: dict[str, Any] = to_dict(self.config)
        return data


def find_config(start: Path | None = None) -> Path | None:
    """The nearest ``arena.toml``, or ``pyproject.toml`` with a ``[tool.arena]`` table."""
    directory = (start or Path.cwd()).resolve()
    for folder in (directory, *directory.parents):
        candidate = folder / "arena.toml"
        if candidate.is_file():
            return candidate
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and "tool" in (data := _read(pyproject)) and "arena" in data["tool"]:
            return pyproject
    return None


def _read(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        bad_line = path.read_bytes().count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{path}:{bad_line}: not UTF-8 text; save the file as UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"at line (\d+)", str(exc))
        where = f"{path}:{line.group(1)}" if line else str(path)
        raise ConfigError(f"{where}: invalid TOML: {exc}") from None


#: ``[missing]`` keys that are not a submission's figures: ``votes``, for runs nobody voted on
#: (the ``community`` metric).
NON_FIGURES = ("votes",)


def _check_keys(path: Path, data: Mapping[str, Any]) -> None:
    fields = [a.name for a in attrs.fields(ScoringConfig)]
    for key, value in data.items():
        if key not in fields:
            raise ConfigError(f"{path}: {key}: unknown key{closest(key, fields)} (known: {', '.join(fields)})")
        if key in _TABLES and not isinstance(value, Mapping):
            raise ConfigError(f"{path}: {key}: expected a table ([{key}]), got {value!r}")
    submission_fields = [a.name for a in attrs.fields(Submission)]
    for field in data.get("missing", {}):
        if field not in submission_fields and field not in NON_FIGURES:
            raise ConfigError(f"{path}: missing.{field}: not a submission field{closest(field, submission_fields)}")
    baseline_fields = [a.name for a in attrs.fields(Baseline)]
    for field in data.get("default_baseline", {}):
        if field not in baseline_fields:
            raise ConfigError(
                f"{path}: default_baseline.{field}: not a baseline field{closest(field, baseline_fields)}"
            )
    for name, weights in data.get("weights", {}).items():
        if not isinstance(weights, Mapping):
            raise ConfigError(f"{path}: weights.{name}: expected a table of dimension = weight, got {weights!r}")
    for name, options in data.get("plugins", {}).items():
        if not isinstance(options, Mapping):
            raise ConfigError(f"{path}: plugins.{name}: expected a table of the plugin's options, got {options!r}")


def load_config(path: Path | None = None) -> LoadedConfig:
    """Read and validate ``path`` (default: :func:`find_config`); defaults when there is none.

    :raises ConfigError: naming the file and the key.
    """
    path = path or find_config()
    if path is None:
        return LoadedConfig(ScoringConfig(), None, frozenset())
    data = _read(path)
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("arena", {})
    data = dict(data)
    profile_tables = data.pop("profiles", {})
    if not isinstance(profile_tables, Mapping):
        raise ConfigError(f"{path}: profiles: expected tables [profiles.NAME], got {profile_tables!r}")
    _check_keys(path, data)
    try:
        config = structure(data, ScoringConfig)
    except ValidationError as exc:
        raise config_error(path, exc) from None
    keys = frozenset(
        f"{k}.{sub}" if isinstance(v, Mapping) else k
        for k, v in data.items()
        for sub in (v if isinstance(v, Mapping) else [None])
    )
    profiles = {}
    for name, table in profile_tables.items():
        if not isinstance(table, Mapping):
            raise ConfigError(f"{path}: profiles.{name}: expected a table of configuration keys, got {table!r}")
        profiles[name] = _overlay(path, data, table, f"profiles.{name}.")
    return LoadedConfig(config, path, keys, profiles)


def _overlay(path: Path, base: Mapping[str, Any], top: Mapping[str, Any], prefix: str) -> ScoringConfig:
    """``base`` with ``top``'s keys on top (tables merged entry by entry), validated."""
    top = {k: v for k, v in top.items() if k != "profiles"}
    try:
        _check_keys(path, top)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace(f"{path}: ", f"{path}: {prefix}", 1)) from None
    merged = dict(base)
    for key, value in top.items():
        merged[key] = {**merged.get(key, {}), **value} if key in _TABLES and isinstance(value, Mapping) else value
    try:
        return structure(merged, ScoringConfig)
    except ValidationError as exc:
        raise config_error(path, exc, prefix) from None


def config_error(path: Path, exc: ValidationError, prefix: str = "") -> ConfigError:
    """A configuration ``ValidationError`` as the file's error: ``FILE: KEY: expected ..., got ...``
    (``prefix`` names the table the key sits in, e.g. ``profiles.NAME.``)."""
    got = "" if exc.missing else f", got {exc.got!r}"
    return ConfigError(f"{path}: {prefix}{exc.field}: expected {exc.expected}{got}")


def starter_toml(slots: Iterable[str] = ()) -> str:
    """A complete ``arena.toml`` with every key at its default and a comment above each.

    :param slots: the metric slots to list under ``[metrics]`` (each filled by its own name).
    """
    defaults = to_dict(ScoringConfig())
    defaults["missing"] = dict(DEFAULT_MISSING)
    defaults["metrics"] = {slot: slot for slot in slots}
    defaults["default_baseline"] = {k: v for k, v in to_dict(DEFAULT_BASELINE).items() if k != "submission_count"}
    lines = ["# arena-core configuration. Every key is optional; these are the defaults.", ""]
    for key in (k for k in defaults if k not in _TABLES):
        value = tomli_w.dumps({key: defaults[key]}).strip() if defaults[key] is not None else f'# {key} = "..."'
        lines += [f"# {HELP[key]}", value, ""]
    for key in (
        "metrics",
        "category_profiles",
        "model_aliases",
        "models",
        "difficulty_adjusters",
        "missing",
        "default_baseline",
        "weights",
        "plugins",
    ):
        lines += [f"# {HELP[key]}", f"[{key}]"]
        body = tomli_w.dumps(defaults.get(key) or {}).strip()
        if body:
            lines.append(body)
        lines.append("")
    lines.insert(lines.index("[category_profiles]") + 1, '# code_editing = "default"')
    lines.insert(lines.index("[model_aliases]") + 1, '# "anthropic/claude-sonnet-4-0" = "claude-sonnet-4"')
    lines.insert(
        lines.index("[models]") + 1,
        '# [models."claude-sonnet-4"]\n# release_date = 2025-05-22\n# knowledge_cutoff = 2025-03-01',
    )
    lines.insert(
        lines.index("[weights]") + 1,
        "# [weights.debugging]\n# efficiency = 0.25\n# speed = 0.35\n# cost = 0.15\n# correctness = 0.25",
    )
    lines.insert(lines.index("[plugins]") + 1, '# [plugins.license]\n# allowed = ["MIT", "Apache-2.0"]')
    lines += [
        "# Named scoring profiles: this configuration with some keys on top, for `arena -p NAME`",
        "# and `arena compare --a NAME --b NAME` (algorithms: docs/algorithms.md).",
        "# [profiles.log-tokens.metrics]",
        '# token_efficiency = "token_efficiency_log"',
    ]
    return "\n".join(lines).rstrip() + "\n"


def effective_lines(loaded: LoadedConfig) -> list[tuple[str, Any, str]]:
    """``(dotted key, value, source)`` for every effective setting."""
    source_file = str(loaded.path) if loaded.path else "default"
    out: list[tuple[str, Any, str]] = []
    for key, value in to_dict(loaded.config).items():
        if isinstance(value, Mapping) and key in _TABLES:
            for sub, inner in value.items():
                dotted = f"{key}.{sub}"
                out.append((dotted, inner, source_file if dotted in loaded.file_keys else "default"))
            continue
        out.append((key, value, source_file if key in loaded.file_keys else "default"))
    env = [n.strip() for n in os.environ.get(DISABLED_PLUGINS_ENV, "").split(",") if n.strip()]
    if env:
        out.append(("disabled_plugins (environment)", env, DISABLED_PLUGINS_ENV))
    return out
