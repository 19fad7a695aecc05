"""Which components score what: the engine's configuration.

With no configuration the engine reproduces the spec: each dimension is scored by the
metric of the same name, a task's category names its weight profile and its difficulty its
adjuster.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import field, frozen

from arena_core.model.checks import TIMESTAMP_EXPECTED, moment
from arena_core.model.errors import ValidationError
from arena_core.model.releases import model_dates
from arena_core.model.scalars import SIZE_EXPECTED, ByteSize, parse_size

__all__ = [
    "BASELINE_SCOPES",
    "COST_SOURCES",
    "MISSING_POLICIES",
    "DEFAULT_MISSING",
    "WORKSPACE_OWNERS",
    "ScoringConfig",
    "owner_rule",
]

#: Plugin names never to load, comma-separated (as ``disabled_plugins`` in the configuration).
DISABLED_PLUGINS_ENV = "ARENA_DISABLED_PLUGINS"
#: Set to skip entry-point plugins altogether (built-ins still load).
DISABLE_AUTOLOAD_ENV = "ARENA_DISABLE_PLUGIN_AUTOLOAD"

#: How submissions are grouped for dynamic baselines: per task (the spec), or per task and
#: tool, model, or tool and model (the spec's "comparable baselines").
BASELINE_SCOPES = ("task", "task_tool", "task_model", "task_tool_model")

#: How a leaderboard's rank ranges and tiers are made (see :mod:`arena_core.stats.rankranges`):
#: a paired bootstrap over tasks (default), or the overlap of the groups' intervals (the rule before).
RANK_RULES = ("paired_bootstrap", "overlap")

#: What runs an importer flagged as harness errors do: count as failures (``fail``, what
#: Terminal-Bench and SWE-bench publish) or leave every denominator (``exclude``).
INFRA_FAILURES = ("fail", "exclude")

#: Where a run's cost comes from: what its harness reported (the spec), its usage priced from a
#: price table, or the table's price where the harness reported none (see docs/cost.md).
COST_SOURCES = ("reported", "priced", "priced_when_missing")

#: Where a task's difficulty factor comes from: its label (the spec) or a fit of the runs'
#: verdicts (item response theory, arena_core/stats/irtdifficulty.py).
DIFFICULTY_SOURCES = ("label", "irt")


#: What a missing figure does to the metric that needs it: ``error`` (refuse the submission),
#: ``neutral`` (the metric scores 50, the spec's rule for time and cost) or ``reweight``
#: (leave the metric out and renormalise the remaining weights), ``comparable`` (leave it out
#: for every submission of a task in which any submission lacks the figure, so the task's
#: submissions are compared on the same figures); for iterations alone, ``count_as_one``
#: (the spec's rule: an absent count is 1 round).
MISSING_POLICIES = ("error", "neutral", "reweight", "comparable", "count_as_one")

#: What ``workspace_owner`` accepts.
WORKSPACE_OWNERS = ("auto", "id", "any")
#: How a board orders its groups (:mod:`arena_core.stats.outcomefirst`).
LEADERBOARD_ORDERS = ("score", "outcome-first")
#: What people's labels do to a judged requirement (docs/judges.md).
LABEL_POLICIES = ("calibrate", "override")
#: Where a leaderboard's correctness comes from when people's labels are given (docs/leaderboards.md).
CORRECTNESS_SOURCES = ("judge", "corrected")

#: The spec's behaviour: tokens and tool calls are required; missing time and cost score 50;
#: missing iterations count as 1.
DEFAULT_MISSING: Mapping[str, str] = {
    "total_tokens": "error",
    "tool_calls": "error",
    "iterations": "count_as_one",
    "execution_time": "neutral",
    "estimated_cost": "neutral",
}


def _policies(value: Mapping[str, str] | None) -> Mapping[str, str]:
    return {**DEFAULT_MISSING, **(value or {})}


def _check_policies(instance: Any, attribute: Any, value: Mapping[str, str]) -> None:
    for name, policy in value.items():
        allowed = MISSING_POLICIES if name == "iterations" else MISSING_POLICIES[:4]
        if policy not in allowed:
            raise ValidationError("configuration", f"missing.{name}", f"one of {', '.join(allowed)}", policy)


def _weight_tables(value: Mapping[str, Mapping[str, float]] | None) -> Mapping[str, Mapping[str, float]]:
    return {name: dict(weights) for name, weights in (value or {}).items()}


def _one_of(choices: tuple[str, ...]) -> Any:
    def check(instance: Any, attribute: Any, value: str) -> None:
        if value not in choices:
            raise ValidationError("configuration", attribute.name, f"one of {', '.join(choices)}", value)

    return check


def _scope(instance: Any, attribute: Any, value: str) -> None:
    if value not in BASELINE_SCOPES:
        raise ValidationError("configuration", attribute.name, f"one of {', '.join(BASELINE_SCOPES)}", value)


def _at_least_one(instance: Any, attribute: Any, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError("configuration", attribute.name, "a whole number >= 1", value)


def _at_least_zero(instance: Any, attribute: Any, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValidationError("configuration", attribute.name, "a whole number >= 0 (0: off)", value)


def _share(instance: Any, attribute: Any, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValidationError("configuration", attribute.name, "a relative change >= 0, such as 0.25 (0: off)", value)


def _mapping(value: Mapping[str, str] | None) -> Mapping[str, str]:
    return {} if value is None else dict(value)


def _check_aliases(instance: Any, attribute: Any, value: Mapping[str, Any]) -> None:
    for spelling, name in value.items():
        if not isinstance(name, str) or not name:
            raise ValidationError("configuration", f"model_aliases.{spelling}", "a model name", name)
        if name in value:
            raise ValidationError(
                "configuration", f"model_aliases.{spelling}", "a name that is not itself an alias", name
            )


def _price_date(instance: Any, attribute: Any, value: str) -> None:
    if value and moment(value) is None:
        raise ValidationError(
            "configuration", attribute.name, f"{TIMESTAMP_EXPECTED}; empty: each run's own date", value
        )


def _names(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _name_list(instance: Any, attribute: Any, value: Any) -> None:
    if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
        raise ValidationError("configuration", attribute.name, "a list of names", value)


def _plugin_tables(value: Mapping[str, Mapping[str, Any]] | None) -> Mapping[str, Mapping[str, Any]]:
    return {name: dict(table) for name, table in (value or {}).items()}


def _check_plugin_tables(instance: Any, attribute: Any, value: Mapping[str, Any]) -> None:
    for name, table in value.items():
        if not isinstance(table, Mapping):
            raise ValidationError("configuration", f"plugins.{name}", "a table of the plugin's options", table)


def _size(value: Any, name: str) -> ByteSize:
    size = parse_size(value)
    if size is None:
        raise ValidationError("configuration", name, SIZE_EXPECTED, value)
    return ByteSize(size)


def _memory_size(value: Any) -> ByteSize:
    return _size(value, "command_memory_limit")


def _file_size(value: Any) -> ByteSize:
    return _size(value, "command_max_file_size")


def _workspace_size(value: Any) -> ByteSize:
    return _size(value, "workspace_max_bytes")


@frozen
class ScoringConfig:
    """Selections by registered name; every name is checked when an Arena is built."""

    metrics: Mapping[str, str] = field(factory=dict, converter=_mapping)
    """Slot to metric name, e.g. ``{"token_efficiency": "token_efficiency_log"}``. A slot is a
    dimension (``efficiency``) or a part of a composite; unlisted slots use the metric of their name."""
    category_profiles: Mapping[str, str] = field(factory=dict, converter=_mapping)
    """Task category to weight profile name, e.g. ``{"code_editing": "default"}``."""
    difficulty_adjusters: Mapping[str, str] = field(factory=dict, converter=_mapping)
    """Task difficulty to difficulty adjuster name."""
    disabled_plugins: tuple[str, ...] = field(default=(), converter=_names, validator=_name_list)
    """Plugins never to load, by registered name (built-in or entry point)."""
    disabled_components: tuple[str, ...] = field(default=(), converter=_names, validator=_name_list)
    """Single components to leave out, by name (a metric, weight profile, adjuster, interval
    method or runner) or criterion type, while the rest of their plugin stays loaded."""
    plugins: Mapping[str, Mapping[str, Any]] = field(
        factory=dict, converter=_plugin_tables, validator=_check_plugin_tables
    )
    """Plugin name to its options (``[plugins.NAME]``), handed to that plugin's registration
    hooks and checked against the options it declares (see ``arena_plugin_options``)."""
    confidence_interval: str = "spec"
    """Name of the registered interval method: ``spec`` (default), ``student_t`` or ``bootstrap``."""
    leaderboard_method: str = "task_mean"
    """Name of the registered aggregator that scores leaderboard groups: ``task_mean`` (default:
    each task counts once), ``pooled``, ``win_rate``, ``bradley_terry`` or a plugin's."""
    leaderboard_interval: str = "student_t"
    """Interval method applied to the aggregator's units (a group's per-task means): ``student_t``
    (default), ``bootstrap`` (resampling the tasks), ``spec`` or a plugin's."""
    leaderboard_ranks: str = field(default="paired_bootstrap", validator=_one_of(RANK_RULES))
    """How rank ranges and tiers are made: ``paired_bootstrap`` (default: the tasks resampled,
    the same draws for every group) or ``overlap`` (of the groups' intervals, the rule before)."""
    leaderboard_order: str = field(default="score", validator=lambda i, a, v: _choice(a, v, LEADERBOARD_ORDERS))
    """How a board orders its ranked groups: ``score`` (the default, the spec's) or
    ``outcome-first`` (the ``gated`` profile's: a group whose correctness is significantly higher
    ranks above, whatever the resources; the score orders the rest; docs/leaderboards.md)."""
    model_aliases: Mapping[str, str] = field(factory=dict, converter=_mapping, validator=_check_aliases)
    """Model spelling to the name runs are grouped under (``"anthropic/claude-sonnet-4-0" =
    "claude-sonnet-4"``): merges spellings of one model on leaderboards on purpose; the runs keep
    the name their harness recorded."""
    models: Mapping[str, Any] = field(factory=dict, converter=model_dates)  # Any: read raw, checked here
    """Models' dates by the name runs are grouped under (``[models."NAME"]`` with
    ``release_date`` and ``knowledge_cutoff``): the windows per model (``--window``) and
    ``arena contamination`` read them (docs/time.md)."""
    infra_failures: str = field(default="fail", validator=_one_of(INFRA_FAILURES))
    """Runs an importer flagged as harness errors count as failures (``fail``, default) or are
    left out of every leaderboard, pass@k and task table (``exclude``), and counted as left out."""
    difficulty_source: str = field(default="label", validator=_one_of(DIFFICULTY_SOURCES))
    """Where a task's difficulty factor comes from: ``label`` (default, the spec: the adjuster
    its difficulty label names) or ``irt`` (1 + 0.2 x the share of tools a Rasch fit of the runs'
    correctness expects to fail it; fitted on the scored batch, or on the store and the batch)."""
    cost_source: str = field(default="reported", validator=_one_of(COST_SOURCES))
    """Where runs' costs come from: ``reported`` (default, the spec: what each harness wrote),
    ``priced`` (every run's usage priced from the price table, whatever it reported) or
    ``priced_when_missing`` (the table's price where the harness reported none)."""
    price_source: str = "genai-prices"
    """Name of the registered price source consulted after ``price_tables`` (``genai-prices``,
    the default, needs the ``prices`` extra); empty: the tables alone."""
    price_tables: tuple[str, ...] = field(default=(), converter=_names, validator=_name_list)
    """Files of your own prices (TOML, JSON, or an Inspect model-cost YAML), consulted first."""
    price_date: str = field(default="", validator=_price_date)
    """Price every run at this date (ISO-8601), so that runs of different months are priced
    alike; empty (default): each run at its own date (``started_at``, else ``finished_at``)."""
    cost_tolerance: float = field(default=0.05, validator=_share)
    """Reported and priced costs that differ by more than this share of the priced one are
    counted and shown on leaderboards (0.05: 5 %)."""
    min_tasks_per_group: int = field(default=3, validator=_at_least_one)
    """A leaderboard group that ran fewer tasks than this is provisional: listed, not ranked."""
    drift_threshold: float = field(default=0.25, validator=_share)
    """A stored batch that moves a median of a task's baseline by more than this share of its
    old value (0.25: 25 %) raises a drift alert (``arena_drift_detected``); 0 turns it off."""
    drift_top_k: int = field(default=3, validator=_at_least_zero)
    """A stored batch after which the leaderboard's top this-many tools differ, or differ in
    order, raises a drift alert; 0 turns it off."""
    baseline_scope: str = field(default="task", validator=_scope)
    """Group submissions for dynamic baselines by task (default) or also by tool and/or model."""
    min_submissions_per_tool: int = field(default=3, validator=_at_least_one)
    """A tool with fewer submissions than this on a task is ranked there but marked ``provisional``."""
    missing: Mapping[str, str] = field(factory=dict, converter=_policies, validator=_check_policies)
    """Submission field to missing-telemetry policy (see :data:`MISSING_POLICIES`); fields not
    listed keep :data:`DEFAULT_MISSING`, and any other required field is an ``error``."""
    weights: Mapping[str, Mapping[str, float]] = field(factory=dict, converter=_weight_tables)
    """Weight profile name to its weights; replaces a registered profile or adds a new one."""
    default_baseline: Mapping[str, float] = field(factory=dict, converter=_mapping)
    """Fields of the framework's default baseline to change (e.g. ``median_tokens``)."""
    strict: bool = False
    """Refuse records with keys that are not fields, instead of keeping them under ``meta``."""
    command_runner: str = "local"
    """Name of the registered command runner that executes criterion commands (the built-in
    ``local`` runs subprocesses and is not a sandbox; see docs/writing-a-checker.md)."""
    command_timeout: float = field(default=60.0, validator=lambda i, a, v: _positive(a, v))
    """Seconds a criterion command may run before it is killed (a criterion's ``timeout`` overrides)."""
    command_output_limit: int = field(default=65_536, validator=_at_least_one)
    """Bytes of a command's output kept for the evaluation's reason; the rest is discarded."""
    command_memory_limit: ByteSize = field(default=ByteSize(1 << 30), converter=_memory_size)
    """Bytes of memory a command (and ``code_compiles``' compiler) may use: a number or a size
    such as ``"512M"`` (default 1 GiB). The ``sandbox`` runner enforces it."""
    command_max_file_size: ByteSize = field(default=ByteSize(256 << 20), converter=_file_size)
    """The largest file a sandboxed command may write, in bytes or as a size (default 256 MiB)."""
    command_max_processes: int = field(default=128, validator=_at_least_one)
    """Processes and threads a sandboxed command may run at once (default 128)."""
    check_concurrency: int = field(default=4, validator=_at_least_one)
    """Submissions whose workspaces are checked at the same time (threads, or local Dask workers)."""
    check_executor: str = "threads"
    """Name of the registered check executor: ``threads`` (default), ``processes`` or ``dask``."""
    dask_scheduler: str = ""
    """The Dask scheduler's address for ``check_executor = "dask"`` (``tls://host:8786``, with
    the certificates of Dask's own configuration); empty: a local cluster of ``check_concurrency``
    worker processes, its connections authenticated by a certificate made for the batch."""
    dask_allow_unauthenticated: bool = False
    """Connect to a ``tcp://`` scheduler, which anyone who reaches its port can run code through
    as the scorer's user: only on a network where every host is trusted (docs/security.md)."""
    partition_rows: int = field(default=500_000, validator=_at_least_one)
    """The most runs ``arena score`` and ``arena leaderboard`` hold at once per worker: a Parquet
    input with more is streamed, a partition of whole tasks at a time (docs/scaling.md)."""
    gate: str = field(default="", validator=lambda i, a, v: _gate(a, v))
    """A dimension whose score gates the others (the ``gated`` profile sets ``"correctness"``):
    every other dimension of a profile that has it is credited in proportion to it (its score
    times the gate's score, as shown to 2 places, / 100), and their baselines come from the runs
    of the task that the gate scores above 0. Empty (the default, the spec): no gate."""
    workspace_max_files: int = field(default=50_000, validator=_at_least_one)
    """Files and directories a workspace may hold: a checked-out ``workspace_ref``, the copy a
    sandboxed command gets, and what the command may create there (a quota where the scorer
    may mount a tmpfs; see docs/security.md)."""
    workspace_max_bytes: ByteSize = field(default=ByteSize(1 << 30), converter=_workspace_size)
    """Bytes a workspace's files may add up to, their apparent size (a sparse file counts whole);
    likewise, default 1 GiB."""
    workspace_owner: str = field(default="auto", validator=lambda i, a, v: _choice(a, v, WORKSPACE_OWNERS))
    """Which workspace a record may name: ``id`` (the directory named by its id under the root,
    so no record takes another's workspace and verdict), ``any`` (any directory under the root),
    ``auto`` (the default: ``id`` under the ``sandbox`` runner, where strangers' runs are scored,
    ``any`` otherwise)."""
    judges: Mapping[str, Mapping[str, Any]] = field(
        factory=dict, converter=_plugin_tables, validator=lambda i, a, v: _judge_tables(v)
    )
    """Judge name to its table (``[judges.NAME]``): ``provider`` names the registered judge
    provider that builds it, the other keys are that provider's settings (docs/judges.md)."""
    allow_self_judging: bool = False
    """Let a judge answer for a run whose model is of its own family (each such verdict is then
    flagged ``self_judged``); by default such a requirement is left to the other judges, or unscored."""
    label_policy: str = field(default="calibrate", validator=lambda i, a, v: _choice(a, v, LABEL_POLICIES))
    """What people's labels (``--labels``) do: ``calibrate`` (the default) keeps them as evidence
    about the judges (``arena calibrate``, corrected leaderboards), the judges still score;
    ``override`` scores a labelled requirement by the people's majority (a tie leaves it to the
    judges), and the evaluation says so."""
    correctness_source: str = field(default="judge", validator=lambda i, a, v: _choice(a, v, CORRECTNESS_SOURCES))
    """A leaderboard's correctness column: ``judge`` (the default: the runs' scores) or
    ``corrected`` (with labels: each group's mean correctness corrected by its labelled runs,
    prediction-powered, with its interval; docs/leaderboards.md)."""
    judge_cache: str = ".arena/judge-cache"
    """The folder of the judges' verdict cache (content-addressed; ``arena judge cache stats``);
    empty: no cache."""
    workspace_root: str | None = None
    """Every submission's workspace must lie inside this directory (relative workspace paths
    are taken from it); a workspace elsewhere is refused. Unset, it is the working directory
    the Arena was built in: never the whole filesystem."""


def _judge_tables(value: Mapping[str, Any]) -> None:
    for name, table in value.items():
        if not isinstance(table, Mapping):
            raise ValidationError("configuration", f"judges.{name}", "a table of the judge's settings", table)
        if not isinstance(table.get("provider"), str) or not table["provider"]:
            raise ValidationError(
                "configuration", f"judges.{name}.provider", 'the judge provider that builds it, e.g. "openai"',
                table.get("provider"),
            )  # fmt: skip


def _choice(attribute: Any, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValidationError("configuration", attribute.name, f"one of {', '.join(choices)}", value)


def _gate(attribute: Any, value: str) -> None:
    if not isinstance(value, str):
        raise ValidationError(
            "configuration", attribute.name, 'a dimension\'s name, such as "correctness" ("": no gate)', value
        )


def _positive(attribute: Any, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValidationError("configuration", attribute.name, "a number of seconds > 0", value)


def owner_rule(config: ScoringConfig) -> str:
    """``workspace_owner`` as it applies: ``auto`` is ``id`` under the ``sandbox`` runner."""
    if config.workspace_owner == "auto":
        return "id" if config.command_runner == "sandbox" else "any"
    return config.workspace_owner
