"""Configuration: :class:`~arena_core.config.settings.ScoringConfig` (which component fills which
slot, missing-telemetry policies, baselines) and the ``arena.toml`` files and profiles it is read from."""
