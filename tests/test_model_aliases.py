"""[model_aliases] merges spellings of one model on purpose: leaderboards, comparisons and
stored boards group them under one name, while each run keeps the name its harness recorded."""

from __future__ import annotations

import pytest

from arena_core import Arena
from arena_core.compare import group_labels
from arena_core.model.errors import ValidationError
from arena_core.store import SQLiteStore

SPELLINGS = (
    "anthropic/claude-sonnet-4-20250514",
    "openai/neulab/claude-sonnet-4-20250514",
    "anthropic/claude-sonnet-4-0",
)
ALIASES = dict.fromkeys(SPELLINGS, "claude-sonnet-4")


def _runs() -> tuple[list[dict], dict]:
    runs = [
        {
            "id": f"{m}-{t}",
            "task_id": f"t{t}",
            "tool": "agent",
            "model": model,
            "total_tokens": 1000 + t,
            "tool_calls": 5,
            "correctness": 1.0,
        }
        for m, model in enumerate((*SPELLINGS, "gpt-5"))
        for t in range(3)
    ]
    return runs, {f"t{t}": {"id": f"t{t}"} for t in range(3)}


def test_spellings_are_one_group_only_when_the_table_says_so(tmp_path) -> None:
    runs, tasks = _runs()
    plain = Arena(autoload=False)
    assert len(plain.leaderboard(plain.evaluate_many(runs, tasks), by="model")) == 4  # three spellings, three groups
    merged = Arena({"model_aliases": ALIASES}, autoload=False)
    evaluations = merged.evaluate_many(runs, tasks)
    board = {row.group: row.n_runs for row in merged.leaderboard(evaluations, by="model")}
    assert board == {"claude-sonnet-4": 9, "gpt-5": 3}
    assert {e.model for e in evaluations} == {*SPELLINGS, "gpt-5"}  # the runs keep what was recorded
    assert set(group_labels(runs, "tool,model", ALIASES)) == {"agent / claude-sonnet-4", "agent / gpt-5"}
    store = SQLiteStore(tmp_path / "arena.db")
    merged.process(runs, store=store, tasks=tasks)
    assert {row.group for row in merged.leaderboard(store=store, by="model")} == {"claude-sonnet-4", "gpt-5"}


def test_an_alias_of_an_alias_or_an_empty_name_is_refused() -> None:
    with pytest.raises(ValidationError, match="model_aliases.a: expected a name that is not itself an alias"):
        Arena({"model_aliases": {"a": "b", "b": "c"}}, autoload=False)
    with pytest.raises(ValidationError, match="model_aliases.a: expected a model name"):
        Arena({"model_aliases": {"a": ""}}, autoload=False)


def test_a_board_names_spellings_that_look_like_one_model_and_the_aliases_that_merge_them(tmp_path) -> None:
    import json

    from click.testing import CliRunner, Result

    from arena_core.cli import main

    spellings = ["anthropic/claude-sonnet-4-20250514", "openai/neulab/claude-sonnet-4-20250514",
                 "anthropic/claude-sonnet-4-0", "gpt-4.1", "gpt-4.1-mini"]  # fmt: skip
    runs = [{"id": f"{m}/{t}/{k}", "task_id": f"t{t}", "tool": "agent", "model": m, "total_tokens": 1000 + 37 * k + t,
             "tool_calls": 3 + k, "success": (k + t) % 3 != 0} for m in spellings for t in range(4)
            for k in range(1 + (m == spellings[0]))]  # fmt: skip
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    (tmp_path / "tasks.json").write_text(json.dumps([{"id": f"t{t}"} for t in range(4)]))

    def board() -> Result:
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(tmp_path)  # arena.toml is read from here
            return CliRunner().invoke(main, ["leaderboard", "runs.jsonl", "--tasks", "tasks.json", "--by", "model"])

    first = board()
    assert first.exit_code == 0, first.stderr
    note = first.stderr[first.stderr.index("note: these spellings look like one model") :]
    assert "gpt-4.1" not in note  # gpt-4.1 and gpt-4.1-mini are two models
    suggested = note[note.index("[model_aliases]") :]
    assert suggested.splitlines()[1:] == [
        '"anthropic/claude-sonnet-4-0" = "anthropic/claude-sonnet-4-20250514"',  # to the spelling most runs use
        '"openai/neulab/claude-sonnet-4-20250514" = "anthropic/claude-sonnet-4-20250514"',
    ]
    (tmp_path / "arena.toml").write_text(suggested)  # as the note says: the three rank as one
    merged = board()
    assert merged.exit_code == 0 and "look like one model" not in merged.stderr, merged.stderr
    groups = [line.split()[2] for line in merged.stdout.splitlines()[2:] if line[:4].strip().isdigit()]
    assert sorted(groups) == ["anthropic/claude-sonnet-4-20250514", "gpt-4.1", "gpt-4.1-mini"]
