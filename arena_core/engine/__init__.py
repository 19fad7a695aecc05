"""The scoring engine: one submission at a time (:class:`~arena_core.engine.scoring.Scorer`) or
many as columns (the batch path), baselines, composites, missing telemetry and exact rounding."""
