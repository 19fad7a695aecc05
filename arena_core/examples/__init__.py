"""Bundled example data.

``synthetic``: a small, realistic arena of 12 tasks (all five categories, three difficulties) and
180 submissions from five tools (three per tool and task), with telemetry gaps and three
planted outliers, made by ``arena_core.examples.synthetic.generate_arena(seed=7)``, and 1,200
people's votes between its runs (``arena votes --example``).

``aider``: Aider's public leaderboard runs (181 real runs, real holes), read through the
``aider`` importer, with the tasks and the configuration they are scored with.

``arena leaderboard --example [NAME]`` scores one.
"""

from pathlib import Path

HERE = Path(__file__).parent
SUBMISSIONS = HERE / "submissions.jsonl"
TASKS = HERE / "tasks.json"
#: People's votes between the synthetic arena's runs, made by
#: ``arena_core.examples.votes.generate_votes(runs, seed=11)``.
VOTES = HERE / "votes.jsonl"

AIDER = HERE / "aider"
AIDER_RUNS = (AIDER / "polyglot_leaderboard.yml", AIDER / "edit_leaderboard.yml", AIDER / "refactor_leaderboard.yml")
AIDER_TASKS = AIDER / "tasks.json"
AIDER_CONFIG = AIDER / "arena.toml"

#: ``--example`` names.
NAMES = ("synthetic", "aider")
