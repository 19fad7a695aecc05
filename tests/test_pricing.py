"""Costs priced from usage (cost_source): equal to the price table's own calculation, the same
for every harness that reports the same usage, and refused by name when a model is unknown."""

from __future__ import annotations

import datetime
import json
from decimal import Decimal
from pathlib import Path

import pytest
from clirun import run_arena

from arena_core import Arena
from arena_core.model.errors import ArenaError, UnknownComponentError, ValidationError
from arena_core.pricing import PriceTable

genai_prices = pytest.importorskip("genai_prices")

UTC = datetime.UTC


def table_price(model: str, when: str, **usage: int) -> Decimal:
    """genai-prices' own calculation, for one call (its usage is one request)."""
    at = datetime.datetime.fromisoformat(when).replace(tzinfo=UTC)
    return genai_prices.calc_price(genai_prices.Usage(**usage), model, genai_request_timestamp=at).total_price


def priced(config: dict, **record: object) -> object:
    arena = Arena({"cost_source": "priced", **config}, autoload=False)
    return arena.structure_submission({"id": "run-1", "task_id": "t", **record})


def test_a_long_prompt_bills_the_whole_call_at_its_band_as_the_table_computes_it() -> None:
    # gemini-2.5-pro bills every token of a call at the higher band once its prompt passes 200k.
    calls = [
        {"input_tokens": 150_000, "output_tokens": 2_000, "cache_read_tokens": 100_000},
        {"input_tokens": 250_000, "output_tokens": 3_000, "cache_read_tokens": 200_000},
    ]
    sub = priced(
        {},
        model="gemini-2.5-pro",
        started_at="2025-09-01",
        input_tokens=400_000,
        output_tokens=5_000,
        cache_read_tokens=300_000,
        meta={"usage_per_call": calls},
    )
    expected = sum(table_price("gemini-2.5-pro", "2025-09-01", **call) for call in calls)
    long_call_at_base = (Decimal("1.25") * 50_000 + Decimal("0.125") * 200_000 + Decimal(10) * 3_000) / 1_000_000
    assert sub.estimated_cost == float(expected)
    assert table_price("gemini-2.5-pro", "2025-09-01", **calls[1]) > long_call_at_base  # the band did apply
    # The same usage as one total, with the calls unknown, is priced at the base band and says so.
    total = priced(
        {},
        model="gemini-2.5-pro",
        started_at="2025-09-01",
        input_tokens=400_000,
        output_tokens=5_000,
        cache_read_tokens=300_000,
    )
    assert total.meta["pricing"]["band_unknown"] == 200_000
    at_base = Decimal("1.25") * 100_000 + Decimal("0.125") * 300_000 + Decimal(10) * 5_000
    assert total.estimated_cost == float(at_base / 1_000_000) < sub.estimated_cost


def test_cache_reads_are_billed_at_the_cache_rate_as_the_table_computes_it() -> None:
    usage = {"input_tokens": 190_000, "output_tokens": 2_000, "cache_read_tokens": 170_000, "cache_write_tokens": 15_000}
    sub = priced({}, model="claude-sonnet-4-5", started_at="2025-10-01", **usage)
    assert sub.estimated_cost == float(table_price("claude-sonnet-4-5", "2025-10-01", **usage))
    # At the fresh-input price (one harness's mistake) the same run would cost over 3 times as much.
    fresh = table_price("claude-sonnet-4-5", "2025-10-01", input_tokens=190_000, output_tokens=2_000)
    assert fresh > 3 * Decimal(str(sub.estimated_cost))
    # A model without a cache price bills cached tokens as input, as the table does.
    plain = {"input_tokens": 10_000, "output_tokens": 1_000, "cache_read_tokens": 4_000}
    sub = priced({}, model="codestral-latest", provider="mistral", started_at="2025-06-01", **plain)
    at = datetime.datetime(2025, 6, 1, tzinfo=UTC)
    table = genai_prices.calc_price(genai_prices.Usage(**plain), "codestral-latest", provider_id="mistral", genai_request_timestamp=at)
    assert table.model_price.cache_read_mtok is None and sub.estimated_cost == float(table.total_price)


def test_a_price_change_between_two_dates_follows_the_table() -> None:
    # claude-sonnet-4-6 dropped its long-prompt band on 2026-03-13 in genai-prices' table.
    usage = {"input_tokens": 300_000, "output_tokens": 4_000}
    one_call = {"usage_per_call": [usage]}
    before = priced({}, model="claude-sonnet-4-6", started_at="2026-01-15T10:00:00Z", meta=one_call, **usage)
    after = priced({}, model="claude-sonnet-4-6", started_at="2026-04-01", meta=one_call, **usage)
    assert before.estimated_cost == float(table_price("claude-sonnet-4-6", "2026-01-15T10:00:00", **usage))
    assert after.estimated_cost == float(table_price("claude-sonnet-4-6", "2026-04-01", **usage))
    assert before.estimated_cost > after.estimated_cost
    # A fixed price_date prices every run alike, whatever its own date.
    fixed = priced({"price_date": "2026-04-01"}, model="claude-sonnet-4-6", started_at="2026-01-15", meta=one_call, **usage)
    assert fixed.estimated_cost == after.estimated_cost and fixed.meta["pricing"]["date"] == "2026-04-01"


def test_two_harnesses_reporting_the_same_usage_get_the_same_cost_and_cost_score() -> None:
    usage = {"model": "gpt-5", "started_at": "2025-09-01", "input_tokens": 80_000, "output_tokens": 6_000}
    runs = [
        {"id": "harbor-run", "tool": "harbor/claude-code", "estimated_cost": 0.5, "cache_read_tokens": 0, **usage},
        {"id": "inspect-run", "tool": "inspect/react", "estimated_cost": 4.0, **usage},  # cache reads at full price
        *({"id": f"other-{i}", "tool": "aider/diff", "estimated_cost": 1.0 + i, **{**usage, "output_tokens": 3_000 * i}}
          for i in range(4)),
    ]  # fmt: skip
    runs = [{**r, "task_id": "t", "total_tokens": 90_000, "tool_calls": 5} for r in runs]
    tasks = {"t": {"id": "t"}}
    reported = {e.submission_id: e for e in Arena(autoload=False).evaluate_many(runs, tasks)}
    assert reported["harbor-run"].scores["cost"] != reported["inspect-run"].scores["cost"]
    arena = Arena({"cost_source": "priced"}, autoload=False)
    evaluations = {e.submission_id: e for e in arena.evaluate_many(runs, tasks)}
    assert evaluations["harbor-run"].scores["cost"] == evaluations["inspect-run"].scores["cost"]
    assert evaluations["harbor-run"].scores["cost"] != evaluations["other-0"].scores["cost"]
    subs = {r["id"]: arena.structure_submission(r) for r in runs}
    expected = float(table_price("gpt-5", "2025-09-01", input_tokens=80_000, output_tokens=6_000))
    assert subs["harbor-run"].estimated_cost == subs["inspect-run"].estimated_cost == expected
    assert [subs[i].meta["pricing"]["reported"] for i in ("harbor-run", "inspect-run")] == [0.5, 4.0]
    provenance = evaluations["other-0"].provenance
    assert provenance.algorithms["cost_source"] == "priced"
    assert provenance.algorithms["price_table"] == f"genai-prices {genai_prices.__version__}"
    assert reported["other-0"].provenance.algorithms["cost_source"] == "reported"


def test_an_unknown_model_is_an_error_naming_the_run_and_the_nearest_names() -> None:
    with pytest.raises(ValidationError) as caught:
        priced({}, model="claude-sonet-4-5", started_at="2025-10-01", input_tokens=10, output_tokens=1)
    error = caught.value
    assert (error.record, error.field, error.got) == ("submission 'run-1'", "model", "claude-sonet-4-5")
    assert "nearest: claude-sonnet-4-5" in str(error)
    # Through an alias it is known: the run keeps its name, the table's name is recorded.
    sub = priced(
        {"model_aliases": {"sonnet (no thinking)": "claude-sonnet-4-5"}},
        model="sonnet (no thinking)",
        started_at="2025-10-01",
        input_tokens=10,
        output_tokens=1,
    )
    assert sub.model == "sonnet (no thinking)" and sub.meta["pricing"]["model"] == "claude-sonnet-4-5"
    with pytest.raises(ValidationError, match="alias of 'mine'"):
        priced({"model_aliases": {"mine": "no-such-model-x"}}, model="mine", started_at="2025-10-01", input_tokens=1, output_tokens=1)


def test_one_pricer_asks_each_model_once_and_still_prices_each_run_at_its_date(monkeypatch) -> None:
    """A store's million runs name a few models: the table's search by name and the nearest
    names of an unknown model are found once per model, the prices still per run's date."""
    arena = Arena({"cost_source": "priced"}, autoload=False)
    source = arena.pricer.sources[-1]
    searches, listings = [], []
    find, known = source._find, source.known_models
    monkeypatch.setattr(source, "_find", lambda *asked: searches.append(asked) or find(*asked))
    monkeypatch.setattr(source, "known_models", lambda: listings.append(1) or known())
    usage = {"input_tokens": 300_000, "output_tokens": 4_000}
    dates = ["2026-01-15", "2026-04-01", "2026-01-16"]  # claude-sonnet-4-6's long-prompt band ended between them
    runs = [
        arena.structure_submission({"id": f"r{i}", "task_id": "t", "model": "claude-sonnet-4-6", "started_at": when,
                                    "meta": {"usage_per_call": [usage]}, **usage})
        for i, when in enumerate(dates)
    ]  # fmt: skip
    assert [r.estimated_cost for r in runs] == [float(table_price("claude-sonnet-4-6", when, **usage)) for when in dates]
    assert runs[0].estimated_cost != runs[1].estimated_cost and searches == [("claude-sonnet-4-6", None)]
    refusals = []
    for i in range(3):
        with pytest.raises(ValidationError) as caught:
            arena.structure_submission({"id": f"x{i}", "task_id": "t", "model": "claude-sonet-4-5", "started_at": "2025-10-01", **usage})
        refusals.append(caught.value)
    assert [e.record for e in refusals] == ["submission 'x0'", "submission 'x1'", "submission 'x2'"]
    assert len({e.expected for e in refusals}) == 1 and "nearest: claude-sonnet-4-5" in refusals[2].expected
    assert len(listings) == 1 and len(searches) == 2  # the unknown name searched and listed once


def test_a_run_without_a_date_is_refused_unless_price_date_is_set() -> None:
    with pytest.raises(ValidationError, match=r"run-1'.*started_at: expected the run's date"):
        priced({}, model="gpt-5", input_tokens=10, output_tokens=1)
    sub = priced({}, model="gpt-5", finished_at="2025-09-02T00:00:00+00:00", input_tokens=10, output_tokens=1)
    assert sub.meta["pricing"]["date"] == "2025-09-02"


def test_runs_without_usage_have_no_cost_and_the_missing_policy_applies() -> None:
    runs = [
        {"id": f"r{i}", "task_id": "t", "model": "gpt-5", "started_at": "2025-09-01", "total_tokens": 1000 * (i + 1),
         "tool_calls": 3, "input_tokens": 900 * (i + 1), "output_tokens": 100 * (i + 1), "estimated_cost": 9.0}
        for i in range(5)
    ]  # fmt: skip
    runs.append({"id": "no-usage", "task_id": "t", "model": "gpt-5", "total_tokens": 5000, "tool_calls": 3, "estimated_cost": 0.01})
    arena = Arena({"cost_source": "priced"}, autoload=False)
    by_id = {e.submission_id: e for e in arena.evaluate_many(runs, {"t": {"id": "t"}})}
    assert by_id["no-usage"].scores["cost"] == 50.0 and by_id["no-usage"].filled["cost"] == "neutral"
    sub = arena.structure_submission(runs[-1])
    assert sub.estimated_cost is None
    assert sub.meta["pricing"] == {"source": "unpriced", "reported": 0.01, "reason": "no input_tokens and output_tokens"}


def test_priced_when_missing_keeps_reported_costs_and_prices_the_rest() -> None:
    config = {"cost_source": "priced_when_missing"}
    usage = {"model": "gpt-5", "started_at": "2025-09-01", "input_tokens": 1000, "output_tokens": 100}
    kept = priced(config, estimated_cost=0.5, **usage)
    assert kept.estimated_cost == 0.5 and kept.meta["pricing"] == {"source": "reported", "reported": 0.5}
    filled = priced(config, estimated_cost=0, **usage)  # 0 is "not recorded", as the spec reads it
    assert filled.estimated_cost == float(table_price("gpt-5", "2025-09-01", input_tokens=1000, output_tokens=100))
    assert filled.meta["pricing"]["source"] == "priced"


def test_pricing_again_starts_from_the_reported_cost() -> None:
    arena = Arena({"cost_source": "priced", "price_date": "2025-09-01"}, autoload=False)
    first = arena.structure_submission(
        {"id": "r", "model": "gpt-5", "input_tokens": 1000, "output_tokens": 100, "estimated_cost": 0.7}
    )
    again = Arena({"cost_source": "priced_when_missing"}, autoload=False).structure_submission(first)
    assert again.meta["pricing"]["reported"] == 0.7 and again.estimated_cost == 0.7


def test_per_call_usage_must_add_up_to_the_runs_totals() -> None:
    calls = [{"input_tokens": 10, "output_tokens": 1}, {"input_tokens": 5, "output_tokens": "many"}]
    with pytest.raises(ValidationError, match=r"meta\.usage_per_call\.1\.output_tokens: expected a whole number"):
        priced({}, model="gpt-5", started_at="2025-09-01", meta={"usage_per_call": calls})
    calls[1]["output_tokens"] = 2
    with pytest.raises(ValidationError, match=r"input_tokens: expected the sum of meta\.usage_per_call's input_tokens \(15\)"):
        priced({}, model="gpt-5", started_at="2025-09-01", input_tokens=16, output_tokens=3, meta={"usage_per_call": calls})


# ---------------------------------------------------------------------------
# Your own prices
# ---------------------------------------------------------------------------

TOML = """
[acme-coder-1]
input = 2.0
output = 8.0
input_cache_read = 0.5
tiers = [{ above = 100000, input = 4.0, output = 12.0, input_cache_read = 1.0 }]

[[acme-coder-2]]
input = 1.0
output = 4.0

[[acme-coder-2]]
from = 2025-07-01
input = 0.5
output = 2.0
"""


def test_a_toml_table_prices_with_tiers_and_dates(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(TOML)
    config = {"price_tables": [str(path)], "price_source": ""}
    calls = [{"input_tokens": 120_000, "output_tokens": 1_000, "cache_read_tokens": 100_000},
             {"input_tokens": 50_000, "output_tokens": 1_000}]  # fmt: skip
    sub = priced(config, model="acme-coder-1", started_at="2025-05-01", input_tokens=170_000, output_tokens=2_000,
                 cache_read_tokens=100_000, meta={"usage_per_call": calls})  # fmt: skip
    band = Decimal(4) * 20_000 + Decimal(1) * 100_000 + Decimal(12) * 1_000
    base = Decimal(2) * 50_000 + Decimal(8) * 1_000
    assert sub.estimated_cost == float((band + base) / 1_000_000)
    assert sub.meta["pricing"]["table"].startswith("prices.toml sha256:")
    june = priced(config, model="acme-coder-2", started_at="2025-06-30", input_tokens=1_000_000, output_tokens=0)
    july = priced(config, model="acme-coder-2", started_at="2025-07-01", input_tokens=1_000_000, output_tokens=0)
    assert (june.estimated_cost, july.estimated_cost) == (1.0, 0.5)


def test_an_inspect_model_cost_file_is_a_price_table(tmp_path: Path) -> None:
    # The shape of Inspect AI's --model-cost-config (its ModelCost: $ per million tokens).
    path = tmp_path / "costs.yml"
    path.write_text("my-finetune:\n  input: 3.0\n  output: 6.0\n  input_cache_write: 3.75\n  input_cache_read: 0.3\n")
    as_json = tmp_path / "costs.json"
    as_json.write_text(json.dumps({"my-finetune": {"input": 3.0, "output": 6.0, "input_cache_write": 3.75, "input_cache_read": 0.3}}))
    usage = {"model": "my-finetune", "started_at": "2025-05-01", "input_tokens": 10_000, "output_tokens": 1_000,
             "cache_read_tokens": 6_000, "cache_write_tokens": 2_000}  # fmt: skip
    expected = (Decimal(3) * 2_000 + Decimal("0.3") * 6_000 + Decimal("3.75") * 2_000 + Decimal(6) * 1_000) / 1_000_000
    for table in (path, as_json):
        # The tables come first; genai-prices still prices what they do not know.
        sub = priced({"price_tables": [str(table)]}, **usage)
        assert sub.estimated_cost == float(expected) and sub.meta["pricing"]["table"].startswith(f"{table.name} sha256:")
    other = priced({"price_tables": [str(path)]}, **{**usage, "model": "gpt-5"})  # the table that knew it is named
    assert other.meta["pricing"]["table"] == f"genai-prices {genai_prices.__version__}"
    assert other.meta["pricing"]["model"] == "gpt-5"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[m]\ninput = 1\n", r"price table .*prices\.toml: m\.output: expected a price"),
        ("[m]\ninput = -1\noutput = 1\n", r"m\.input: expected a price in dollars per million tokens"),
        ("[m]\ninput = 1\noutput = 1\ncached = 2\n", r"m\.cached: expected one of"),
        ("[m]\ninput = 1\noutput = 1\ntiers = [{ input = 2 }]\n", r"m\.tiers\.0\.above: expected the prompt size"),
        ("[[m]]\ninput = 1\noutput = 1\n[[m]]\ninput = 1\noutput = 1\n", r"m: expected every price list entry after the first"),
        ("not toml [", r"not valid TOML"),
    ],
)
def test_a_bad_price_table_is_refused_by_name(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(text)
    with pytest.raises(ArenaError, match=message):
        Arena({"cost_source": "priced", "price_tables": [str(path)]}, autoload=False)
    with pytest.raises(ArenaError, match="cannot be read"):
        PriceTable(tmp_path / "absent.toml")


def test_a_price_source_nobody_registered_or_nothing_to_price_with_is_refused() -> None:
    with pytest.raises(UnknownComponentError, match="no price source named 'litellm'.*genai-prices"):
        Arena({"cost_source": "priced", "price_source": "litellm"}, autoload=False)
    with pytest.raises(ValidationError, match="price_tables: expected a price table"):
        Arena({"cost_source": "priced", "price_source": ""}, autoload=False)
    # Under the default, nothing is priced and no table is needed.
    assert Arena({"price_source": "litellm"}, autoload=False).pricer is None


def test_runs_on_columns_are_priced_too() -> None:
    columns = {"id": list("abcdef"), "task_id": ["t"] * 6, "model": ["gpt-5"] * 6, "total_tokens": [1100] * 6,
               "tool_calls": [1] * 6, "input_tokens": [1000 * k for k in range(1, 7)], "output_tokens": [100] * 6}  # fmt: skip
    arena = Arena({"cost_source": "priced", "price_date": "2025-09-01"}, autoload=False)
    evaluations = arena.evaluate_many(columns, {"t": {"id": "t"}})
    assert evaluations[0].filled.get("cost") is None  # priced, so measured
    assert evaluations[0].scores["cost"] != evaluations[1].scores["cost"]


# ---------------------------------------------------------------------------
# Re-pricing a store
# ---------------------------------------------------------------------------


def _stored_runs() -> list[dict]:
    """Six runs of one task: a cheap-looking tool whose harness under-reports (cache reads left
    out) and an honest one; by usage the first is the dearer."""
    runs = []
    for i in range(6):
        under = i % 2 == 0
        prompt = (170_000 if under else 150_000) + 1_000 * i
        runs.append({
            "id": f"run-{i}", "task_id": "t", "tool": "under" if under else "honest", "model": "claude-sonnet-4-6",
            "started_at": "2026-01-10", "total_tokens": 100_000, "tool_calls": 5,
            "input_tokens": prompt, "output_tokens": 5_000 + 100 * i,
            "meta": {"usage_per_call": [{"input_tokens": prompt, "output_tokens": 5_000 + 100 * i}]},
            "estimated_cost": 0.05 if under else 0.60 + 0.01 * i,
        })  # fmt: skip
    return runs


def test_reprice_moves_the_stored_scores_and_keeps_the_old_ones(tmp_path: Path) -> None:
    from arena_core.store import SQLiteStore
    from arena_core.store.repricing import reprice

    store = SQLiteStore(tmp_path / "arena.db")
    Arena(autoload=False).process(_stored_runs(), store=store, tasks={"t": {"id": "t"}})
    with store.transaction(write=False) as tx:
        before = {e.submission_id: e for e in tx.evaluations("t")}
        first_version = tx.get_baseline("t").version
    assert before["run-0"].scores["cost"] > before["run-1"].scores["cost"]  # the under-reporter looks cheaper
    arena = Arena({"cost_source": "priced"}, autoload=False)
    done = reprice(arena, store, reason="reprice at each run's date")
    assert done.sources == {"priced": 6}
    with store.transaction(write=False) as tx:
        after = {e.submission_id: e for e in tx.evaluations("t")}
        kept = tx.evaluation_versions("run-0")
        baseline = tx.get_baseline("t")
        stored = {s.id: s for s in tx.submissions("t")}
    assert after["run-0"].scores["cost"] < after["run-1"].scores["cost"]  # priced: it is the dearer
    assert [(reason, e.scores) for _, reason, e in kept] == [("reprice at each run's date", before["run-0"].scores)]
    assert baseline.version == first_version + 1 and after["run-0"].baseline_version == baseline.version
    assert stored["run-0"].meta["pricing"]["reported"] == 0.05
    expected = table_price("claude-sonnet-4-6", "2026-01-10", input_tokens=170_000, output_tokens=5_000)
    assert stored["run-0"].estimated_cost == float(expected)
    assert list(done.before.ids) == list(done.after.ids) == [e.submission_id for e in after.values()]
    assert done.before.overall.tolist() == [before[i].overall_score for i in done.before.ids]
    assert done.after.metrics["cost"].tolist() == [after[i].scores["cost"] for i in done.after.ids]
    assert done.models == tuple(stored[i].model for i in done.after.ids)


def test_arena_reprice_at_a_date_and_again_keeps_every_version(tmp_path: Path) -> None:
    import subprocess

    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _stored_runs()))
    (tmp_path / "tasks.json").write_text(json.dumps([{"id": "t"}]))

    def arena(*args: str) -> subprocess.CompletedProcess:
        return run_arena(*args, cwd=tmp_path)

    assert arena("ingest", "runs.jsonl", "--tasks", "tasks.json", "--store", "arena.db").returncode == 0
    preview = arena("reprice", "--store", "arena.db", "--date", "2026-01-15", "--dry-run", "--format", "json")
    assert preview.returncode == 0, preview.stderr
    planned = json.loads(preview.stdout)
    assert (planned["dry_run"], planned["repriced"], planned["sources"]) == (True, 6, {"priced": 6})
    assert planned["superseded_at"] is None and planned["comparison"]["by"] == "tool"
    told = arena("reprice", "--store", "arena.db", "--dry-run")
    assert told.stdout.startswith("Would reprice 6 stored runs") and "Dry run: nothing was written" in told.stdout
    first = arena("reprice", "--store", "arena.db", "--date", "2026-01-15")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("Repriced 6 stored runs at 2026-01-15 (6 priced); prices: genai-prices")
    assert "The 6 scores replaced are kept as evaluation versions" in first.stdout
    assert "Kendall" in first.stdout  # the comparison of the stored scores (A) with the repriced (B)
    second = arena("reprice", "--store", "arena.db", "--date", "2026-04-01")
    assert second.returncode == 0, second.stderr
    from arena_core.store import SQLiteStore

    with SQLiteStore(tmp_path / "arena.db").transaction(write=False) as tx:
        versions = tx.evaluation_versions("run-0")
        run = next(s for s in tx.submissions("t") if s.id == "run-0")
    # the two real runs only: the dry runs before them left no version behind
    assert [reason.split(" (")[0] for _, reason, _ in versions] == ["reprice at 2026-01-15", "reprice at 2026-04-01"]
    # The table's band for long prompts ended on 2026-03-13: this run's one 170k call was under it
    # either way, so the dates price it alike; the reported figure is kept throughout.
    assert run.meta["pricing"]["date"] == "2026-04-01" and run.meta["pricing"]["reported"] == 0.05
    bad = arena("reprice", "--store", "arena.db", "--date", "yesterday")
    assert bad.returncode == 2 and "--date" in bad.stderr


def test_a_run_that_cannot_be_priced_fails_alone(tmp_path: Path) -> None:
    from arena_core.store import SQLiteStore
    from arena_core.store.repricing import reprice

    runs = _stored_runs()
    runs[3]["model"] = "no-such-model-anywhere"
    store = SQLiteStore(tmp_path / "arena.db")
    Arena(autoload=False).process(runs, store=store, tasks={"t": {"id": "t"}})
    done = reprice(Arena({"cost_source": "priced"}, autoload=False), store, reason="x")
    assert done.sources == {"priced": 5, "refused": 1}
    [refused] = done.refused
    assert refused.startswith("submission 'run-3': model:") and "no-such-model-anywhere" in refused
    with store.transaction(write=False) as tx:
        stored = {s.id: s for s in tx.submissions("t")}
        assert tx.get_baseline("t").version == 2 and len(tx.evaluation_versions("run-3")) == 1
    assert stored["run-3"].estimated_cost == runs[3]["estimated_cost"] and "pricing" not in stored["run-3"].meta
    assert all("pricing" in stored[f"run-{i}"].meta for i in (0, 1, 2, 4, 5))
    with pytest.raises(ArenaError, match="re-pricing needs cost_source"):
        reprice(Arena(autoload=False), store, reason="x")


def test_imported_runs_are_priced_at_the_dates_their_harness_recorded(tmp_path: Path) -> None:
    (tmp_path / "arena.toml").write_text('cost_source = "priced"\n[missing]\ntotal_tokens = "comparable"\ntool_calls = "comparable"\n')
    samples = Path(__file__).parent / "data" / "formats" / "harbor-current"
    board = run_arena("leaderboard", "--from", "harbor", str(samples), cwd=tmp_path)
    assert board.returncode == 0, board.stderr
    assert "costs: 4 priced, 1 unpriced (prices: genai-prices" in board.stdout
    # Harbor's 50k+1k and 60k+2k steps at $0.10 and $0.12: priced from the tokens, not the dollars.
    assert "multi-step__a1 reported $0.2200, priced $0.1185" in board.stdout
    imported = run_arena("import", "harbor", str(samples), cwd=tmp_path)
    run = next(json.loads(line) for line in imported.stdout.splitlines() if '"multi-step__a1"' in line)
    usage = {k: run[k] for k in ("input_tokens", "output_tokens", "cache_read_tokens") if k in run}
    assert usage["input_tokens"] < 200_000  # under every band of the model: the totals price as one call would
    day = run["started_at"][:10]
    assert f"{float(table_price('claude-sonnet-4-5', day, **usage)):.4f}" == "0.1185"


def test_run_times_in_a_table_are_checked_as_records_check_them() -> None:
    pyarrow = pytest.importorskip("pyarrow")
    from arena_core.engine.tables import columns_from_table

    good = pyarrow.table({"id": ["a", "b"], "task_id": ["t", "t"], "started_at": ["2025-09-01", None],
                          "provider": ["openai", "openai"]})  # fmt: skip
    assert columns_from_table(good) is not None  # valid: the columns' path, which does not score them
    bad = pyarrow.table({"id": ["a", "b"], "task_id": ["t", "t"], "started_at": ["2025-09-01", "last tuesday"]})
    assert columns_from_table(bad) is None  # read as records instead, where the bad row is refused by name
    with pytest.raises(ValidationError, match=r"submission 'b'.*started_at: expected an ISO-8601 date"):
        Arena(autoload=False).evaluate_many(bad, {"t": {"id": "t"}})


def test_the_price_tables_version_is_read_once_however_many_runs_are_priced(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every priced run records the table's version; reading the package metadata for each one
    was most of repricing's time on a million runs: it is read once."""
    import importlib.metadata

    reads = []
    real = importlib.metadata.version

    def counted(name: str) -> str:
        reads.append(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", counted)
    arena = Arena({"cost_source": "priced"}, autoload=False)
    runs = [{"id": f"r{i}", "task_id": "t", "tool": "x", "model": "claude-sonnet-4-5", "input_tokens": 1000 + i,
             "output_tokens": 100, "total_tokens": 1100 + i, "tool_calls": 2, "started_at": "2025-10-01"}
            for i in range(50)]  # fmt: skip
    evaluations = arena.evaluate_many(runs, {"t": {"id": "t", "success_criteria": []}})
    assert len(evaluations) == 50 and reads.count("genai-prices") == 1
