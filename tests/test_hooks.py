"""One test per hook (test_hook_<name>), and meta-tests that keep hooks, tests and docs in step."""

from __future__ import annotations

import inspect
import statistics
import re
from pathlib import Path

import pytest

from arena_core import Arena, WeightProfile, hookimpl, hookspecs
from arena_core.registry.manager import get_plugin_manager

DOCS = Path(__file__).parent.parent / "docs"
HOOKS = sorted(name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("arena_"))
SUB = {"id": "s", "total_tokens": 3000, "tool_calls": 5}


def _arena_with(plugin: object, config: dict | None = None) -> Arena:
    pm = get_plugin_manager(autoload=False)
    pm.register(plugin, name="under-test")
    return Arena(config, plugin_manager=pm)


def test_hook_arena_register_metrics(baseline: dict) -> None:
    class HalfTokens:
        name = "half_tokens"
        requires = ("total_tokens",)

        def score(self, submission, task, baseline):
            return 50.0 if submission.total_tokens > baseline.median_tokens else 100.0

    class Plugin:
        @hookimpl
        def arena_register_metrics(self):
            return [HalfTokens()]

    arena = _arena_with(Plugin(), {"metrics": {"token_efficiency": "half_tokens"}})
    assert arena.components.metrics.owner("half_tokens") == "under-test"
    ev = arena.evaluate({**SUB, "total_tokens": 9000}, {"id": "t"}, baseline)
    assert ev.metric_scores["token_efficiency"] == 50.0  # the part was swapped inside the composite
    with pytest.raises(ValueError, match="total_tokens"):
        arena.evaluate({"id": "s", "tool_calls": 1}, {"id": "t"}, baseline)


def test_hook_arena_register_criterion_checkers(baseline: dict) -> None:
    class ReadmeWritten:
        type = "readme_written"

        def check(self, submission, criterion, task):
            return "README.md" in submission.files_created

    class Plugin:
        @hookimpl
        def arena_register_criterion_checkers(self):
            return [ReadmeWritten()]

    arena = _arena_with(Plugin())
    task = {"id": "t", "success_criteria": [{"type": "readme_written"}, {"type": "no_errors"}]}
    assert arena.evaluate({**SUB, "files_created": ["README.md"]}, task, baseline).correctness_score == 100.0
    assert arena.evaluate(SUB, task, baseline).correctness_score == 50.0


def test_hook_arena_register_weight_profiles(baseline: dict) -> None:
    class Plugin:
        @hookimpl
        def arena_register_weight_profiles(self):
            return [WeightProfile("security", {"correctness": 0.7, "efficiency": 0.3})]

    arena = _arena_with(Plugin())
    ev = arena.evaluate({**SUB, "success": False}, {"id": "t", "category": "security",
                                                    "success_criteria": [{"type": "no_errors"}]}, baseline)
    assert ev.weight_profile == "security"
    assert list(ev.scores) == ["correctness", "efficiency"]
    assert ev.overall_score == round(0.0 * 0.7 + ev.scores["efficiency"] * 0.3, 2)


def test_hook_arena_register_difficulty_adjusters(baseline: dict) -> None:
    class Expert:
        name = "expert"

        def adjust(self, score):
            return min(100.0, score + 10.0)

    class Plugin:
        @hookimpl
        def arena_register_difficulty_adjusters(self):
            return [Expert()]

    arena = _arena_with(Plugin())
    ev = arena.evaluate(SUB, {"id": "t", "difficulty": "expert"}, baseline)
    assert ev.difficulty == "expert"
    assert ev.overall_score == pytest.approx(ev.unadjusted_overall_score + 10.0, abs=0.0100001)


def test_hook_arena_register_interval_methods() -> None:
    class MinMax:
        name = "min_max"

        def interval(self, scores, confidence_level):
            return (min(scores), max(scores))

    class Plugin:
        @hookimpl
        def arena_register_interval_methods(self):
            return [MinMax()]

    arena = _arena_with(Plugin(), {"confidence_interval": "min_max"})
    assert arena.confidence_interval([40.0, 55.5, 70.0]) == (40.0, 70.0)
    assert arena.confidence_interval([40.0, 55.5, 70.0], method="spec") != (40.0, 70.0)


def test_hook_arena_register_aggregators() -> None:
    import numpy as np

    class BestTask:
        """A group's best per-task mean: what a vendor's marketing page would show."""

        name = "best_task"

        def aggregate(self, table, weights):
            best = np.where(table.present, table.means, -np.inf)
            drawn = weights[:, None, :] > 0  # (resamples, 1, tasks)
            return np.where(drawn, best[None], -np.inf).max(axis=2)

    class Plugin:
        @hookimpl
        def arena_register_aggregators(self):
            return [BestTask()]

    arena = _arena_with(Plugin(), {"leaderboard_method": "best_task"})
    runs = [{"id": f"{tool}-{t}", "task_id": t, "tool": tool, "total_tokens": tokens, "tool_calls": 10}
            for tool, spent in (("a", (9500, 1000, 9000)), ("b", (5000, 5000, 5000))) for t, tokens in zip("xyz", spent)]
    tasks = {t: {"id": t, "category": "debugging"} for t in "xyz"}
    evaluations = arena.evaluate_many(runs, tasks)
    board = arena.leaderboard(evaluations)
    best = {tool: max(e.overall_score for e in evaluations if e.tool == tool) for tool in "ab"}
    assert [(r.group, r.score) for r in board] == sorted(best.items(), key=lambda kv: -kv[1])
    assert all(r.ci_low <= r.score <= r.ci_high for r in board)  # no units: the bootstrap over tasks
    assert [r.group for r in arena.leaderboard(evaluations, method="task_mean")] == ["b", "a"]


def test_hook_arena_register_price_sources() -> None:
    import datetime
    from decimal import Decimal

    from arena_core.model.prices import Rate, Rates

    class Negotiated:
        """A vendor's contract: one flat price, which rose on 2025-07-01."""

        name = "contract"
        version = "contract 2025-07"

        def rates(self, model, provider, at):
            if model != "acme-1":
                return None
            price = Decimal(2) if at.date() < datetime.date(2025, 7, 1) else Decimal(3)
            return Rates("acme-1", Rate(price), Rate(price * 4))

        def known_models(self):
            return ["acme-1"]

    class Plugin:
        @hookimpl
        def arena_register_price_sources(self):
            return [Negotiated()]

    arena = _arena_with(Plugin(), {"cost_source": "priced", "price_source": "contract"})
    run = {"id": "r", "task_id": "t", "model": "acme-1", "input_tokens": 1_000_000, "output_tokens": 500_000}
    june, july = (arena.structure_submission({**run, "started_at": day}) for day in ("2025-06-30", "2025-07-01"))
    assert (june.estimated_cost, july.estimated_cost) == (2 + 4.0, 3 + 6.0)
    assert june.meta["pricing"]["table"] == arena.provenance.algorithms["price_table"] == "contract 2025-07"
    with pytest.raises(ValueError, match=r"model: expected a model the price tables \(contract 2025-07\) know \(nearest: acme-1\)"):
        arena.structure_submission({**run, "model": "acme-2", "started_at": "2025-06-30"})


def test_hook_arena_register_judges(tmp_path: Path) -> None:
    from arena_core.model.judging import JudgeReply

    asked = []

    class Keywords:
        """A local classifier: a requirement is met when the run's final answer holds its last word."""

        provider = "keywords"

        def __init__(self, name, settings):
            self.name, self.model, self.strict = name, None, settings.get("strict", False)

        @property
        def identity(self):
            return {"provider": self.provider, "strict": self.strict}

        def ask(self, request):
            asked.append(request.requirement.id)
            word = request.requirement.criteria.split()[-1]
            evidence = re.search(r"^<<<EVIDENCE (\w+)>>>$(.*)^<<<END OF EVIDENCE \1>>>$", request.prompt, re.S | re.M)
            return JudgeReply(word in evidence.group(2), f"looked for {word!r}")

    class Provider:
        name = "keywords"

        def build(self, name, settings):
            return Keywords(name, settings)

    class Plugin:
        @hookimpl
        def arena_register_judges(self):
            return [Provider()]

    config = {"judges": {"kw": {"provider": "keywords"}}, "judge_cache": str(tmp_path / "cache")}
    arena = _arena_with(Plugin(), config)
    task = {"id": "t", "success_criteria": [{"type": "judge", "judge": "kw", "evidence": ["final_answer"], "requirements": [
        {"id": "a", "criteria": "mentions pandas"}, {"id": "b", "criteria": "mentions numpy", "prerequisites": ["a"]}]}]}
    run = {"id": "r", "task_id": "t", "total_tokens": 10, "tool_calls": 1, "meta": {"final_answer": "used numpy only"}}
    [evaluation] = arena.evaluate_many([run], {"t": task})
    assert [d["verdict"] for d in evaluation.criteria[0].details] == ["unmet", "unmet"]  # b needs a
    assert evaluation.criteria[0].details[1]["judges"]["kw"]["verdict"] is True and asked == ["a", "b"]
    arena.evaluate_many([run], {"t": task})
    assert asked == ["a", "b"]  # the second time, from the cache
    assert list(arena.components.judge_providers) == ["openai", "recorded", "keywords"]
    assert arena.components.judge_providers.owner("keywords") == "under-test"


def test_hook_arena_register_check_executors(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    started = []

    class Counting:
        """Threads, counting the batches it was started for and the jobs it got."""

        name = "counting"
        local = True

        def start(self, workers):
            started.append(workers)
            return ThreadPoolExecutor(max_workers=workers)

    class Plugin:
        @hookimpl
        def arena_register_check_executors(self):
            return [Counting()]

    arena = _arena_with(Plugin(), {"check_executor": "counting", "check_concurrency": 3, "workspace_root": str(tmp_path)})
    task = {"id": "t", "success_criteria": [{"type": "file_exists", "file_path": "a.txt"}]}
    (tmp_path / "a.txt").write_text("")
    runs = [{**SUB, "id": f"s{i}", "task_id": "t", "workspace": str(tmp_path)} for i in range(4)]
    assert [e.criteria[0].status for e in arena.evaluate_many(runs, {"t": task})] == ["passed"] * 4
    assert started == [3]


def test_hook_arena_register_command_runners(tmp_path: Path) -> None:
    from arena_core.workspace.confined import CommandResult

    calls = []

    class Recording:
        """Runs nothing: records what it was asked to run, answers exit code 3."""

        name = "recording"

        def run(self, argv, *, cwd, env, timeout, output_limit):
            calls.append((argv, cwd, env, timeout, output_limit))
            return CommandResult(3, "refused by policy\n", 0.0)

    class Plugin:
        @hookimpl
        def arena_register_command_runners(self):
            return [Recording()]

    arena = _arena_with(Plugin(), {"command_runner": "recording", "command_timeout": 7, "command_output_limit": 100,
                                   "workspace_root": str(tmp_path)})
    task = {"id": "t", "success_criteria": [{"type": "command_succeeds", "command": ["make", "check"]}]}
    ev = arena.evaluate({**SUB, "workspace": str(tmp_path)}, task, arena.default_baseline)
    assert ev.criteria[0].status == "failed" and ev.criteria[0].reason == "exit code 3: refused by policy"
    [(argv, cwd, env, timeout, limit)] = calls
    assert (argv, cwd, timeout, limit) == (["make", "check"], tmp_path.resolve(), 7.0, 100)
    assert "HOME" in env and not set(env) & {"USER", "SSH_AUTH_SOCK", "AWS_SECRET_ACCESS_KEY"}
    with pytest.raises(Exception, match="command_runner: .*'recordin'.*recording"):
        _arena_with(Plugin(), {"command_runner": "recordin"})


def test_hook_arena_register_importers(tmp_path: Path) -> None:
    from arena_core.importing.collect import ImportSession, detect_format
    from arena_core.importing.runs import ImportedRun, verdict_task
    from arena_core.io.decoding import InputError
    from arena_core.model.errors import DuplicateComponentError

    class Lines:
        """One run per line: ``ID TASK TOKENS VERDICT``."""

        name = "lines"
        unrecorded = ("tool_calls",)

        def detect(self, path):
            return path.suffix == ".runs"

        def read(self, paths):
            for path in paths:
                for number, line in enumerate(path.read_text().splitlines(), start=1):
                    ident, task, tokens, verdict = line.split()
                    if not tokens.isdigit():
                        yield InputError(f"{path}:{number}: tokens: expected a whole number, got {tokens!r}")
                        continue
                    run = {"id": ident, "task_id": task, "total_tokens": int(tokens), "success": verdict == "pass"}
                    yield ImportedRun(f"{path}:{number}", run, verdict_task(task, "lines"))

    class Plugin:
        @hookimpl
        def arena_register_importers(self):
            return [Lines()]

    arena = _arena_with(Plugin(), {"missing": {"tool_calls": "reweight"}})
    runs = tmp_path / "a.runs"
    runs.write_text("r1 t 100 pass\nr2 t 300 fail\n")
    assert detect_format(arena.components.importers.values(), [runs]) == "lines"
    session = ImportSession(arena.components.importers["lines"], [runs])
    imported = [run.submission for run in session.runs()]
    assert [(r["id"], r["success"]) for r in imported] == [("r1", True), ("r2", False)]
    assert arena.components.importers.owner("lines") == "under-test"
    evaluations = arena.evaluate_many(imported, {"t": session.tasks["t"]}, evaluated_at="2026-01-01T00:00:00Z")
    assert [e.scores["correctness"] for e in evaluations] == [100.0, 0.0]
    bad = tmp_path / "b.runs"
    bad.write_text("r3 t many pass\n")
    with pytest.raises(InputError, match=r"b\.runs:1: tokens: expected a whole number, got 'many'"):
        list(ImportSession(arena.components.importers["lines"], [runs, bad]).runs())

    class Clash:
        @hookimpl
        def arena_register_importers(self):
            return [type("Same", (Lines,), {"name": "aider"})()]

    pm = get_plugin_manager(autoload=False)
    pm.register(Clash(), name="clash")
    with pytest.raises(DuplicateComponentError, match="importer 'aider' is registered by both"):
        Arena(plugin_manager=pm)


def _pipeline_run(listener: object, runs: list[dict]):
    import asyncio

    from arena_core.store import MemoryStore

    return asyncio.run(_arena_with(listener).process_batch(runs, store=MemoryStore(), tasks={"t": {"id": "t"}}))


RUNS = [{"id": f"r{i}", "task_id": "t", "total_tokens": 1000 * (i + 1), "tool_calls": i} for i in range(6)]


def test_hook_arena_evaluation_completed() -> None:
    heard: list = []

    class Listener:
        @hookimpl
        def arena_evaluation_completed(self, evaluation):
            heard.append((evaluation.submission_id, evaluation.overall_ranking))

    result = _pipeline_run(Listener(), RUNS)
    assert heard == [(e.submission_id, e.overall_ranking) for e in result.evaluations]
    assert [h[0] for h in heard] == [r["id"] for r in RUNS]


def test_hook_arena_batch_completed() -> None:
    heard: list = []

    class Listener:
        @hookimpl
        def arena_batch_completed(self, result):
            heard.append(result)

    result = _pipeline_run(Listener(), RUNS)
    assert heard == [result] and result.baselines["t"].submission_count == 6


def test_hook_arena_drift_detected() -> None:
    """Called after the commit with what moved; not called for a batch that moved nothing far."""
    import asyncio

    from arena_core.store import MemoryStore
    from arena_core.store.drift import BaselineDrift

    heard: list = []

    class Listener:
        @hookimpl
        def arena_batch_completed(self, result):
            heard.append("batch")

        @hookimpl
        def arena_drift_detected(self, alerts):
            heard.append(list(alerts))

    arena, store = _arena_with(Listener()), MemoryStore()
    asyncio.run(arena.process_batch(RUNS, store=store, tasks={"t": {"id": "t"}}))
    assert heard == ["batch"]  # the first baseline replaces none: nothing drifted
    same = [{**r, "id": f"again-{r['id']}"} for r in RUNS]
    asyncio.run(arena.process_batch(same, store=store))
    assert heard == ["batch", "batch"]  # same figures again: the medians stay
    tenfold = [{**r, "id": f"big-{r['id']}", "total_tokens": 10 * r["total_tokens"]} for r in RUNS * 3]
    tenfold = [{**r, "id": f"{r['id']}-{i}"} for i, r in enumerate(tenfold)]
    result = asyncio.run(arena.process_batch(tenfold, store=store))
    assert heard[:3] == ["batch", "batch", "batch"] and heard[3] == list(result.drift)
    [moved] = heard[3]
    assert isinstance(moved, BaselineDrift) and moved.figure == "median_tokens"
    everyone = [r["total_tokens"] for r in RUNS * 2 + tenfold]
    assert (moved.before, moved.after) == (3500.0, statistics.median(everyone)) == (3500.0, 15000.0)
    assert (moved.from_version, moved.to_version) == (2, 3)


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_has_a_test(hook: str) -> None:
    assert f"test_hook_{hook}" in globals(), f"no test_hook_{hook} in tests/test_hooks.py"


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_is_documented_where_declared(hook: str) -> None:
    doc = inspect.getdoc(getattr(hookspecs, hook)) or ""
    assert ":return:" in doc and "versionadded" in doc, f"{hook}'s docstring lacks :return: or versionadded"


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_has_a_docs_page_with_its_signature(hook: str) -> None:
    page = DOCS / "hooks" / f"{hook}.md"
    assert page.exists(), f"missing {page}"
    signature = f"{hook}({', '.join(inspect.signature(getattr(hookspecs, hook)).parameters)})"
    assert f"# {signature}" in page.read_text()


def _python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)


@pytest.mark.parametrize("page", sorted((DOCS / "hooks").glob("*.md")), ids=lambda p: p.stem)
def test_hook_page_examples_run(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = _python_blocks(page)
    assert blocks, f"{page.name} has no runnable example"
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    for block in blocks:
        exec(compile(block, str(page), "exec"), namespace)


def test_hook_arena_plugin_options(baseline: dict) -> None:
    import attrs

    @attrs.frozen
    class Options:
        bonus: float = 0.0

    class Generous:
        name = "generous_speed"
        requires = ()

        def __init__(self, bonus: float) -> None:
            self.bonus = bonus

        def score(self, submission, task, baseline):
            return min(100.0, 50.0 + self.bonus)

    class Plugin:
        @hookimpl
        def arena_plugin_options(self):
            return Options

        @hookimpl
        def arena_register_metrics(self, options):
            return [Generous(options.bonus)]

    config = {"metrics": {"speed": "generous_speed"}, "plugins": {"under-test": {"bonus": 20.0}}}
    assert _arena_with(Plugin(), config).evaluate(SUB, {"id": "t"}, baseline).scores["speed"] == 70.0
    assert _arena_with(Plugin(), {"metrics": {"speed": "generous_speed"}}).evaluate(
        SUB, {"id": "t"}, baseline
    ).scores["speed"] == 50.0
    with pytest.raises(ValueError, match=r"plugins\.under-test\.bonus: expected a number, got 'lots'"):
        _arena_with(Plugin(), {**config, "plugins": {"under-test": {"bonus": "lots"}}})


def test_the_architecture_page_counts_the_hooks() -> None:
    words = {9: "nine", 10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen", 14: "fourteen", 15: "fifteen",
             16: "sixteen", 17: "seventeen", 18: "eighteen"}  # fmt: skip
    assert f"arena-core has {words[len(HOOKS)]} hooks" in (DOCS / "architecture.md").read_text()
