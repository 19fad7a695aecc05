"""Files: reading submissions and tasks (JSONL, JSON, CSV), writing evaluations, JUnit reports,
and plain-text tables."""
