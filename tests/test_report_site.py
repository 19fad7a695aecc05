"""The static report site: built from the Python API, self-contained, every link resolving, and
rendered by a real browser (headless Chromium) into a page that is not blank."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import attrs
import pytest

from arena_core import Arena
from arena_core.examples import SUBMISSIONS, TASKS
from arena_core.io.readers import read_submissions, read_tasks
from arena_core.report.site import write_site


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("site")
    write_site(Arena(autoload=False), read_submissions(SUBMISSIONS), read_tasks(TASKS), folder)
    return folder


def test_the_index_has_a_row_and_a_point_per_group(site: Path) -> None:
    arena = Arena(autoload=False)
    groups = [g.group for g in arena.leaderboard(arena.evaluate_many(read_submissions(SUBMISSIONS), read_tasks(TASKS)))]
    index = (site / "index.html").read_text()
    leaderboard = index.split("</table>")[0]
    assert len(re.findall(r"<tr class=", leaderboard)) == len(groups) == 5
    assert index.count('class="point"') == 2 * len(groups)  # correctness against cost, and against time
    assert "mean cost per run ($)" in index and "mean time per run (s)" in index
    for group in groups:  # each row links to a score card that exists
        link = re.search(rf'<a href="(cards/[^"]+)">{re.escape(group)}</a>', leaderboard)
        assert link and (site / link[1]).is_file()


def test_the_task_health_page_is_arena_tasks(site: Path) -> None:
    """The page has the rows `arena tasks --format json` prints for the same runs, in order."""
    done = subprocess.run([sys.executable, "-m", "arena_core", "tasks", "--example", "--format", "json"],
                          capture_output=True, text=True, check=True)
    import json

    rows = json.loads(done.stdout)["rows"]
    page = (site / "task-health.html").read_text()
    cells = re.findall(r"<tr class=\"\">(.*?)</tr>", page)
    assert len(cells) == len(rows) == 12
    for row, html in zip(rows, cells, strict=True):
        assert f">{row['task']}</a>" in html and f">{row['runs']}<" in html
        assert f"{row['solve_rate'] * 100:.2f}" in html and ", ".join(row["flags"]) in html
        assert f"{row['difficulty']:.2f}" in html  # the fitted difficulty
    assert 'href="task-health.html"' in (site / "index.html").read_text()


def test_the_site_is_self_contained_and_its_links_resolve(site: Path) -> None:
    pages = list(site.rglob("*.html"))
    assert len(pages) == 1 + 1 + 12 + 180  # the index, task health, a page per task, a card per submission
    for page in pages:
        text = page.read_text()
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), page  # nothing fetched
        assert text.count("<script") == 1 and "<script>" in text and "src=" not in text  # one inline script
        for target in re.findall(r'href="([^"#]+)"', text):
            assert (page.parent / target).resolve().is_file(), (page, target)


def test_every_card_page_shows_a_score_its_numbers_recompute(site: Path) -> None:
    for page in (site / "cards").glob("*.html"):
        shown, recomputed = re.search(r"Overall score <strong>([\d.]+)</strong> \(recomputed from the numbers "
                                      r"below: ([\d.]+)\)", page.read_text()).groups()
        assert shown == recomputed, page
        assert '"config_digest"' in page.read_text() and '"algorithms"' in page.read_text(), page  # its provenance


def _distinct_pixels(png: bytes) -> int:
    """How many distinct byte values the image data holds (a blank page: one or two)."""
    data, offset = b"", 8
    while offset < len(png):
        length, kind = struct.unpack(">I4s", png[offset:offset + 8])
        if kind == b"IDAT":
            data += png[offset + 8:offset + 8 + length]
        offset += 12 + length
    return len(set(zlib.decompress(data)))


def test_a_browser_renders_the_site(site: Path, tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium)")
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"]
    dom = subprocess.run([*flags, "--dump-dom", (site / "index.html").as_uri()], capture_output=True, text=True,
                         timeout=120)
    assert dom.returncode == 0
    assert dom.stdout.count('class="point"') == 10 and "aider/diff" in dom.stdout
    assert "CONSOLE" not in dom.stderr and "Uncaught" not in dom.stderr  # no script error, nothing failed to load
    # The script sorts: opened as #sort=3, the leaderboard's rows are in order of their runs,
    # fewest first; as #sort=-5, best score first (the order it was written in).
    for fragment, column, descending in (("#sort=3", 3, False), ("#sort=-5", 5, True)):
        sorted_dom = subprocess.run([*flags, "--dump-dom", (site / "index.html").as_uri() + fragment],
                                    capture_output=True, text=True, timeout=120).stdout
        board = sorted_dom.split("</table>")[0]
        rows = re.findall(r"<tr class=[^>]*>(.*?)</tr>", board)
        values = [float(re.findall(r"<td[^>]*>(.*?)</td>", row)[column]) for row in rows]
        assert len(values) == 5 and values == sorted(values, reverse=descending), (fragment, values)
        assert re.search(rf'<th data-order="{"desc" if descending else "asc"}">', board)
    shot = tmp_path / "index.png"
    done = subprocess.run([*flags, f"--screenshot={shot}", "--window-size=1200,900", (site / "index.html").as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and shot.is_file()
    assert _distinct_pixels(shot.read_bytes()) > 20  # text, whiskers and points: not a blank page
    phone = tmp_path / "phone.png"
    subprocess.run([*flags, f"--screenshot={phone}", "--window-size=390,844", (site / "cards" / "frontend-001_2F000.html").as_uri()],
                   capture_output=True, timeout=120, check=True)
    assert _distinct_pixels(phone.read_bytes()) > 20


def test_the_report_of_a_store_has_its_history(tmp_path: Path) -> None:
    from arena_core.store import SQLiteStore

    arena, store = Arena(autoload=False), SQLiteStore(tmp_path / "arena.db")
    runs, tasks = read_submissions(SUBMISSIONS), read_tasks(TASKS)
    arena.process(runs[::2], store=store, tasks=tasks)
    arena.process(runs[1::2], store=store)
    pages = write_site(arena, runs, tasks, tmp_path / "site", store=store)
    history = (tmp_path / "site" / "history.html").read_text()
    assert tmp_path / "site" / "history.html" in pages and 'href="history.html"' in (tmp_path / "site" / "index.html").read_text()
    standings = re.findall(r"<tr class=\"\"><td class=\"n\">(\d)</td><td>[^<]*</td><td class=\"n\">(\d+)</td>", history)
    assert standings == [("1", "90"), ("2", "180")]  # two batches: 90 runs stored, then 180
    assert history.count("<td>backend-002</td>") == 2  # its baseline: version 1, then version 2
    done = subprocess.run([sys.executable, "-m", "arena_core", "report", "--store", "arena.db", "-o", "again"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0 and (tmp_path / "again" / "history.html").is_file(), done.stderr
    both = subprocess.run([sys.executable, "-m", "arena_core", "report", "--example", "--store", "arena.db", "-o", "x"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert both.returncode == 2 and "give SUBMISSIONS (or --example) or --store, not both" in both.stderr


def test_the_report_command(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "arena_core", "report", "--example", "-o", "site"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Wrote 194 pages to site/" in done.stderr and (tmp_path / "site" / "index.html").is_file()


def _crowd(groups: int, seed: int = 5) -> list:
    """``groups`` groups crowded into a narrow band, as a real board of similar models is."""
    import random

    from arena_core.stats.pareto import ParetoPoint

    rng = random.Random(seed)
    points = [ParetoPoint(f"model-{k:03d}-2025{k % 12 + 1:02d}01", 500, rng.uniform(0.2, 3.0), None, None,
                          rng.uniform(55, 75), None, None, False, []) for k in range(groups)]  # fmt: skip
    return [p if k % 9 else attrs.evolve(p, on_front=True) for k, p in enumerate(points)]


def test_chart_labels_never_overlap_and_every_group_is_labelled_or_listed() -> None:
    from arena_core.report.charts import pareto_svg

    for groups in (25, 200):
        svg = pareto_svg(_crowd(groups), "mean cost per run", "$")
        labels = re.findall(r'<text class="label" x="([\d.]+)" y="([\d.]+)">([^<]+)</text>', svg)
        listed = re.search(r'Not labelled \(no room\): ([^<]*)\.</p>', svg)
        rest = listed[1].split(", ") if listed else []
        assert sorted([name for _, _, name in labels] + rest) == sorted(p.group for p in _crowd(groups))
        boxes = [(float(x), float(y) - 10, float(x) + 7.0 * len(n), float(y) + 2) for x, y, n in labels]
        for i, a in enumerate(boxes):
            assert not any(a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3] for b in boxes[i + 1:])
        assert svg.count('class="tick"') >= 8 and "(%)" in svg and "mean cost per run ($)" in svg


def test_the_pairs_matrix_reads_each_difference_from_its_row_and_prints_small_p_as_such() -> None:
    from arena_core.report.charts import MATRIX_GROUPS, p_text, pairs_matrix
    from arena_core.stats.pairwise import PairRow

    assert (p_text(0.0004), p_text(0.0123), p_text(float("nan"))) == ("<0.001", "0.012", "-")
    pair = PairRow("a", "b", 40, 3.25, 1.0, 5.5, 0.0001, 0.0002, True, 2.0)
    html = pairs_matrix(["a", "b"], [pair])
    cells = re.findall(r'<td class="n (up|down|same)" title="([^"]+)">([^<]+)</td>', html)
    assert [(c[0], c[2]) for c in cells] == [("up", "+3.2"), ("down", "-3.2")]  # a minus b, then b minus a
    assert "[+1.00, +5.50]" in cells[0][1] and "[-5.50, -1.00]" in cells[1][1] and "p adjusted &lt;0.001" in cells[0][1]
    many = [f"g{k}" for k in range(MATRIX_GROUPS + 1)]
    listed = pairs_matrix(many, [PairRow("g0", "g1", 40, 3.0, 1.0, 5.0, 0.01, 0.04, True, 2.0),
                                 PairRow("g1", "g2", 40, 1.0, -1.0, 3.0, 0.3, 0.9, False, 2.0)])  # fmt: skip
    assert "<table" not in listed and "g0 above g1: +3.00 on 40 tasks (p adjusted 0.040)" in listed
    assert "g1 above g2" not in listed


def test_a_task_page_shows_each_runs_verdict_and_no_baseline_for_a_figure_no_run_has(tmp_path: Path) -> None:
    runs = [{"id": f"r{k}", "task_id": "t", "tool": f"tool{k % 2}", "total_tokens": 1000 + k, "tool_calls": 3 + k,
             "execution_time": 10.0 + k, "success": k % 2 == 0} for k in range(4)]  # fmt: skip
    tasks = {"t": {"id": "t", "success_criteria": [{"type": "no_errors"}]}}
    arena = Arena({"missing": {"estimated_cost": "reweight"}}, autoload=False)
    from arena_core.model.records import Task
    from arena_core.model.serde import structure

    subs = [arena.structure_submission(r) for r in runs]
    write_site(arena, subs, {"t": structure(tasks["t"], Task)}, tmp_path / "site")
    page = (tmp_path / "site" / "tasks" / "t.html").read_text()
    verdicts = re.findall(r"<td>(passed|failed \(\d/\d\))</td>", page)
    assert "<th>Verdict</th>" in page and sorted(verdicts) == ["failed (0/1)", "failed (0/1)", "passed", "passed"]
    assert "<td>total_tokens" in page and "<td>estimated_cost" not in page  # no run reported a cost


def test_report_pages_fit_a_phone_and_labels_do_not_collide_in_a_browser(site: Path, tmp_path: Path) -> None:
    """Measured by Chromium, not estimated: in a frame 390 and 1,366 px wide the pages of 25- and
    200-group reports do not scroll sideways (tables and charts scroll inside their boxes), and
    no two drawn labels of their charts overlap. (Headless Chromium's window is at least 500 px
    wide: each page is measured in a frame of the width, and posts what it measured to the page
    around it.)"""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium)")
    measure = (
        "<script>var b=[].map.call(document.querySelectorAll('svg text.label'),function(t){"
        "var r=t.getBoundingClientRect();return [r.left,r.top,r.right,r.bottom];});var o=0;"
        "for(var i=0;i<b.length;i++)for(var j=i+1;j<b.length;j++)if(b[i][0]<b[j][2]&&b[j][0]<b[i][2]&&"
        "b[i][1]<b[j][3]&&b[j][1]<b[i][3])o++;parent.postMessage(JSON.stringify({page:location.pathname,"
        "labels:b.length,overlaps:o,scroll:document.documentElement.scrollWidth,inner:window.innerWidth}),'*');"
        "</script>"
    )
    rng = __import__("random").Random(4)
    arena = Arena(autoload=False)
    from arena_core.model.records import Task
    from arena_core.model.serde import structure

    from arena_core.model.releases import ModelDates

    tasks = {f"t{t}": structure({"id": f"t{t}", "success_criteria": [{"type": "no_errors"}],
                                 "created_at": f"{2023 + t}-06-01"}, Task) for t in range(3)}  # fmt: skip
    for groups in (25, 200):  # a real board's sizes: the matrix, then the list of significant pairs
        runs = [{"id": f"claude-sonnet-4-5-20250929-variant-{g:03d}/{t}", "task_id": f"t{t}", "tool": "agent",
                 "model": f"claude-sonnet-4-5-20250929-variant-{g:03d}", "total_tokens": rng.randint(1000, 9000),
                 "tool_calls": rng.randint(1, 30), "execution_time": rng.uniform(10, 600),
                 "estimated_cost": rng.uniform(0.1, 2), "success": rng.random() < 0.5}
                for g in range(groups) for t in range(3)]  # fmt: skip
        models = {f"claude-sonnet-4-5-20250929-variant-{g:03d}": ModelDates(f"{2022 + g % 3}-{g % 12 + 1:02d}-{g % 28 + 1:02d}")
                  for g in range(groups)}  # fmt: skip: release dates over three years, the time page drawn
        write_site(arena, [arena.structure_submission(r) for r in runs], tasks, tmp_path / f"wide{groups}", by="model",
                   models=models)  # fmt: skip
    pages = [tmp_path / "wide25" / "index.html", tmp_path / "wide200" / "index.html",
             tmp_path / "wide25" / "time.html", tmp_path / "wide200" / "time.html",
             site / "tasks" / "frontend-001.html", site / "cards" / "frontend-001_2F000.html"]  # fmt: skip
    probes = []
    for page in pages:
        probe = page.parent / f".probe-{page.name}"  # beside the page: its links resolve
        probe.write_text(page.read_text().replace("</body>", measure + "</body>"))
        probes.append(probe)
    for width in (390, 1366):  # every page in one browser: a frame of the width each
        frames = "".join(f"<iframe src='{p.as_uri()}' width='{width}' height='900'></iframe>" for p in probes)
        outer = tmp_path / f"outer-{width}.html"
        outer.write_text("<!DOCTYPE html><html><body><script>addEventListener('message',function(e){"
                         "document.body.insertAdjacentHTML('beforeend','<pre class=m>'+e.data+'</pre>');});</script>"
                         f"{frames}</body></html>")  # fmt: skip
        dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
                              "--virtual-time-budget=5000", "--dump-dom", outer.as_uri()], capture_output=True, text=True,
                             timeout=120).stdout  # fmt: skip
        found = [json.loads(m) for m in re.findall(r'<pre class="m">([^<]*)</pre>', dom)]
        assert len(found) == len(probes), dom[-2000:]
        for measured in found:
            assert measured["inner"] == width and measured["overlaps"] == 0, measured
            assert measured["scroll"] <= measured["inner"], measured
            if "wide200" in measured["page"] or "time" in measured["page"]:
                assert measured["labels"] >= 1  # crowded: the front and the room left labelled, the rest listed
    for probe in probes:
        probe.unlink()


def test_report_takes_the_boards_options(tmp_path: Path) -> None:
    """--where, --method, --cluster and --pass-k on the site's leaderboard, as arena leaderboard
    takes them: each checked against the Python API's board of the same selection."""
    from click.testing import CliRunner

    from arena_core.cli import main

    runs = [json.loads(line) for line in SUBMISSIONS.read_text().splitlines() if line.strip()]
    for k, run in enumerate(runs):
        run["meta"] = {**(run.get("meta") or {}), "half": "a" if k % 2 else "b", "family": run["task_id"][:3]}
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    done = CliRunner().invoke(main, ["report", str(tmp_path / "runs.jsonl"), "--tasks", str(TASKS), "--where",
                                     "meta.half=a", "--cluster", "meta.family", "--pass-k", "1", "--method", "pooled",
                                     "-o", str(tmp_path / "site")])  # fmt: skip
    assert done.exit_code == 0, done.output
    index = (tmp_path / "site" / "index.html").read_text()
    arena = Arena(autoload=False)
    kept = [r for r in runs if r["meta"]["half"] == "a"]
    evaluations = arena.evaluate_many(kept, read_tasks(TASKS))
    meta = {r["id"]: r["meta"] for r in kept}
    expected = arena.leaderboard(evaluations, method="pooled", cluster="meta.family", meta=meta)
    board = index.split("</table>")[0]
    rows = re.findall(r'<tr class="[^"]*">(.*?)</tr>', board)
    assert len(rows) == len(expected) and "<th>pass@1</th>" in board
    for row, group in zip(rows, expected, strict=True):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        assert group.group in cells[2] and int(cells[3]) == group.n_runs and float(cells[5]) == round(group.score, 2)
        assert re.search(rf'aria-label="{group.ci_low:.1f} to {group.ci_high:.1f}"', cells[6])
    assert sum(int(re.findall(r"<td[^>]*>(.*?)</td>", r)[3]) for r in rows) == len(kept)
    refused = CliRunner().invoke(main, ["report", "--example", "--method", "no-such", "-o", str(tmp_path / "x")])
    assert refused.exit_code == 2 and "no aggregator named 'no-such' is registered (registered: " in refused.output


def test_a_large_site_writes_the_boards_cards_only_and_links_nothing_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above CARD_PAGES runs a card page per run made 99 MB of a 12,500-run site: only each
    group's best run (the one the board links) gets one, and no page links a card not written."""
    import arena_core.report.site as site_module

    monkeypatch.setattr(site_module, "CARD_PAGES", 10)
    pages = write_site(Arena(autoload=False), read_submissions(SUBMISSIONS), read_tasks(TASKS), tmp_path / "s")
    cards = [p for p in pages if p.parent.name == "cards"]
    assert len(cards) == 5  # the five groups' best runs, of 180
    for page in pages:
        for link in re.findall(r'href="([^"#]+)"', page.read_text()):
            assert (page.parent / link).resolve().is_file(), (page, link)
    task_page = (tmp_path / "s" / "tasks" / "frontend-001.html").read_text()
    assert "<code>arena card ID</code>" in task_page
