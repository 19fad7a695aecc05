"""Bundled example data: a small, realistic arena.

12 tasks (all five categories, three difficulties) and 180 submissions from five tools (three
per tool and task), with
telemetry gaps and three planted outliers, made by
``arena_core.examples.synthetic.generate_arena(seed=7)``. ``arena leaderboard --example`` scores it.
"""

from pathlib import Path

HERE = Path(__file__).parent
SUBMISSIONS = HERE / "submissions.jsonl"
TASKS = HERE / "tasks.json"
