"""People voting through the service: ``GET /battles/next``, ``POST /votes``,
``GET /votes/leaderboard``, and the operator's ``POST /weights/fit`` (docs/community.md).

A battle is two runs of one task from different groups (the service's ``review_by``), shown blind: the task, and
for each run what it produced (its files, its test counts, the evidence its task's judge
criteria name), never its id, tool, model or cost. Battles are chosen to be informative: a pair
of groups is drawn with weight ``exp(-|rating gap| / 200) / (1 + votes between them)``, so close
groups with few votes come first; then a task both ran, a run of each, and an order, at random.
A battle's one-time token is spent on one vote; a voter may vote ``vote_rate`` times a second on
average (``vote_burst`` at once), beyond the service's own rate limit. The ratings that steer the
draw are refitted once the votes grew by 2%, and the vote board once per vote.

``POST /weights/fit`` learns weights from the stored votes as ``arena weights fit`` does (the voters
vote hygiene flags left out) and keeps them as a numbered profile version (``GET /weights``, ``GET /weights/{version}``): stored
evaluations are never rescored by it; a service scores with a version only when started with
it (``arena -p learned-v3.toml serve``), and every board says the profile it was scored with
(the ``Arena-Profile`` header).
"""

from __future__ import annotations

import math
import random
import threading
from collections import Counter
from typing import Any, Literal

import numpy as np
from fastapi import APIRouter, Request, Response

from arena_core.compare import group_labels
from arena_core.model.errors import ArenaError, ValidationError
from arena_core.model.records import Submission, Task
from arena_core.model.serde import to_dict
from arena_core.model.votes import WINNERS, Vote, last_votes, points
from arena_core.service.guards import RateLimiter, parse_body
from arena_core.service.problems import Problem
from arena_core.service.state import Service
from arena_core.stats.battles import ELO_SCALE, Battles, fit
from arena_core.stats.learnedweights import fit_from_votes, learned_profile
from arena_core.stats.voteboard import figure_reader, flagged_voters, vote_board
from arena_core.store.current import stored_tasks
from arena_core.store.votes import VoteStore

__all__ = ["BattleDesk", "routes"]


class BattleDesk:
    """The service's votes: the vote store, how runs are grouped, and each voter's vote rate."""

    def __init__(self, votes: VoteStore, by: str, vote_rate: float, vote_burst: int) -> None:
        self.votes, self.by = votes, by
        self.limiter = RateLimiter(vote_rate, vote_burst)
        self._random = random.SystemRandom()
        self._runs: tuple[int, dict[str, list[tuple[Submission, str]]], dict[str, Task], dict[str, str]] | None = None
        self._standing: tuple[int, dict[str, str], dict[str, float], Counter[tuple[str, str]]] | None = None
        #: The vote boards served, by (style, both_bad): with the vote count and the runs' state they read.
        self.boards: dict[tuple[str, str], tuple[int, int, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def groups(self, service: Service) -> dict[str, str]:
        """Each stored run's group, one mapping per state of the runs (a fit is kept for it)."""
        self.runs(service)
        assert self._runs is not None
        return self._runs[3]

    def runs(self, service: Service) -> tuple[dict[str, list[tuple[Submission, str]]], dict[str, Task]]:
        """Per task, its stored runs with their groups, and the tasks; read again after a write."""
        with self._lock:
            generation = service.boards.generation
            if self._runs is None or self._runs[0] != generation:
                with service.store.transaction(write=False) as tx:
                    tasks = stored_tasks(tx)
                    runs = [s for t in tasks for s in tx.submissions(t)]
                names = group_labels(runs, self.by, service.arena.config.model_aliases) if runs else []
                by_task: dict[str, list[tuple[Submission, str]]] = {}
                for run, name in zip(runs, names, strict=True):
                    by_task.setdefault(str(run.task_id), []).append((run, name))
                group_of = {run.id: name for pairs in by_task.values() for run, name in pairs}
                self._runs = (generation, by_task, tasks, group_of)
            return self._runs[1], self._runs[2]

    def choose(self, service: Service, task_id: str | None) -> tuple[str, Submission, Submission] | None:
        """An informative battle (see the module's note), ``None`` when no task has runs of two groups."""
        by_task, _ = self.runs(service)
        ratings, played = self.standing(self.groups(service))
        shared: dict[tuple[str, str], list[str]] = {}
        for task in [task_id] if task_id is not None else sorted(by_task):
            groups = sorted({name for _, name in by_task.get(task, [])})
            for i, g in enumerate(groups):
                for h in groups[i + 1 :]:
                    shared.setdefault((g, h), []).append(task)
        if not shared:
            return None
        pairs = list(shared)
        weights = [
            math.exp(-abs(ratings.get(g, 1000.0) - ratings.get(h, 1000.0)) / 200.0) / (1 + played[(g, h)])
            for g, h in pairs
        ]
        g, h = self._random.choices(pairs, weights=weights)[0]
        task = self._random.choice(shared[(g, h)])
        first = self._random.choice([run for run, name in by_task[task] if name == g])
        second = self._random.choice([run for run, name in by_task[task] if name == h])
        return (task, first, second) if self._random.random() < 0.5 else (task, second, first)

    def standing(self, group_of: dict[str, str]) -> tuple[dict[str, float], Counter[tuple[str, str]]]:
        """:func:`_standing` of the stored votes, fitted again once the votes grew by 2% (or
        one, below fifty) since the last fit, or the runs changed: a battle does not refit the
        board."""
        count = self.votes.count()
        with self._lock:
            kept = self._standing
            if kept is not None and kept[1] is group_of and count - kept[0] < max(1, kept[0] // 50):
                return kept[2], kept[3]
        ratings, played = _standing(self.votes.votes(), group_of)
        with self._lock:
            self._standing = (count, group_of, ratings, played)
        return ratings, played


def _standing(votes: list[Vote], group_of: dict[str, str]) -> tuple[dict[str, float], Counter[tuple[str, str]]]:
    """The groups' current ratings (a plain fit, no bootstrap) and the votes between each two."""
    played: Counter[tuple[str, str]] = Counter()
    kept = [v for v in last_votes(votes) if v.a in group_of and v.b in group_of and group_of[v.a] != group_of[v.b]]
    for v in kept:
        played[tuple(sorted((group_of[v.a], group_of[v.b])))] += 1  # type: ignore[index]
    groups = sorted({group_of[r] for v in kept for r in (v.a, v.b)})
    if len(groups) < 2:
        return {}, played
    index = {g: i for i, g in enumerate(groups)}
    first = np.array([index[group_of[v.a]] for v in kept], dtype=np.int64)
    second = np.array([index[group_of[v.b]] for v in kept], dtype=np.int64)
    outcome = np.array([points(v) for v in kept])
    found = fit(Battles(tuple(groups), first, second, outcome, np.zeros((len(kept), 0))))
    return {g: 1000.0 + ELO_SCALE * found.theta[i] for g, i in index.items()}, played


def _view(run: Submission, task: Task | None) -> dict[str, Any]:
    """What a voter sees of a run: what it produced, never who made it or what it cost."""
    keys = [str(k) for c in (task.success_criteria if task else ()) for k in (c.params.get("evidence") or ())]
    shown: dict[str, Any] = {"files_created": list(run.files_created)}
    if run.tests_total is not None:
        shown["tests"] = {"passed": run.tests_passed, "total": run.tests_total}
    evidence = {k: run.meta[k] for k in keys if k in run.meta}
    if evidence:
        shown["evidence"] = evidence
    return shown


def routes(service: Service, desk: BattleDesk) -> APIRouter:
    router = APIRouter()

    @router.get("/battles/next", response_model=None)
    def next_battle(request: Request, task: str | None = None) -> dict[str, Any] | Response:
        who = service.gate.voter(request)
        chosen = desk.choose(service, task)
        if chosen is None:
            return Response(status_code=204)
        task_id, a, b = chosen
        token = desk.votes.hand(who.token_id, task_id, a.id, b.id)
        _, tasks = desk.runs(service)
        found = tasks.get(task_id)
        about = {"id": task_id, **({"category": found.category} if found and found.category else {})}
        return {"battle": token, "task": about, "a": _view(a, found), "b": _view(b, found)}

    @router.post("/votes", status_code=201)
    async def vote(request: Request) -> dict[str, Any]:
        who = service.gate.voter(request)
        desk.limiter.take(f"votes {who.token_id}")
        body = parse_body(await request.body())
        if not isinstance(body, dict) or not isinstance(body.get("battle"), str):
            raise Problem(422, "battle: expected the token GET /battles/next gave")
        if body.get("winner") not in WINNERS:
            raise Problem(422, f"winner: expected one of {', '.join(WINNERS)}")
        try:
            cast = await service.write(lambda: desk.votes.cast(body["battle"], who.token_id, body["winner"]))
        except LookupError:
            raise Problem(404, "no such battle") from None
        except PermissionError:
            raise Problem(403, "this battle was handed to another token") from None
        except FileExistsError:
            raise Problem(409, "this battle was voted on already") from None
        return {"winner": cast.winner, "at": cast.at}

    @router.get("/votes/leaderboard")
    def vote_leaderboard(
        request: Request, response: Response, style: str = "", both_bad: Literal["tie", "drop"] = "tie"
    ) -> dict[str, Any]:
        service.gate.principal(request, reading=True)
        provenance = service.arena.provenance
        response.headers["Arena-Profile"] = f"{provenance.profile} {provenance.config_digest}"
        key, count, generation = (style, both_bad), desk.votes.count(), service.boards.generation
        kept = desk.boards.get(key)
        if kept is None or kept[:2] != (count, generation):  # a vote, or a run, since: computed again
            desk.boards[key] = kept = (count, generation, _vote_board(style, both_bad))
        return kept[2]

    def _vote_board(style: str, both_bad: str) -> dict[str, Any]:
        by_task, _ = desk.runs(service)
        runs = [run for pairs in by_task.values() for run, _ in pairs]
        group_of = {run.id: name for pairs in by_task.values() for run, name in pairs}
        votes = [v for v in desk.votes.votes() if v.a in group_of and v.b in group_of]
        if not votes:
            raise Problem(404, "no votes are stored yet")
        figures = tuple(f.strip() for f in style.split(",") if f.strip())
        try:
            board = vote_board(votes, group_of, figure_reader(runs, figures), style=figures, both_bad=both_bad)
        except ValidationError as error:
            raise Problem(422, str(error)) from None
        data: dict[str, Any] = to_dict(board)
        return data

    @router.post("/weights/fit", status_code=201)
    async def fit_weights(request: Request) -> dict[str, Any]:
        service.gate.operator(request)
        body = parse_body(await request.body()) if await request.body() else {}
        resamples = body.get("resamples", 200) if isinstance(body, dict) else None
        if not isinstance(resamples, int) or isinstance(resamples, bool) or not 10 <= resamples <= 10_000:
            raise Problem(422, "resamples: expected a whole number from 10 to 10000")
        with service.store.transaction(write=False) as tx:
            evaluations = [e for t in tx.task_ids() for e in tx.evaluations(t)]
        profiles = {n: p.weights for n, p in service.arena.scorer.profiles.items()}
        by_task, _ = desk.runs(service)
        runs = [run for pairs in by_task.values() for run, _ in pairs]
        group_of = {run.id: name for pairs in by_task.values() for run, name in pairs}
        votes = [v for v in desk.votes.votes() if v.a in group_of and v.b in group_of]
        try:
            flagged = flagged_voters(votes, group_of, figure_reader(runs, ()))
            votes = [v for v in votes if v.voter not in flagged]  # the hygiene of the vote board first
            found = fit_from_votes(votes, evaluations, profiles, "tie", resamples=resamples, seed=20240601)
        except (ArenaError, ValidationError) as error:
            raise Problem(422, str(error)) from None
        used = sorted({e.weight_profile for e in evaluations})
        text = learned_profile(found, used, service.arena.provenance.profile)
        version = await service.write(lambda: desk.votes.keep_profile(text, found.votes))
        return {
            "version": version,
            "weights": dict(zip(found.dimensions, found.weights.tolist(), strict=True)),
            "intervals": {
                d: [lo, hi] for d, lo, hi in zip(found.dimensions, found.low.tolist(), found.high.tolist(), strict=True)
            },
            "votes": found.votes,
            "voters": found.voters,
            "accuracy": found.fitted.accuracy,
            "base_accuracy": found.base.accuracy,
        }

    @router.get("/weights")
    def weight_versions(request: Request) -> list[dict[str, Any]]:
        service.gate.principal(request, reading=True)
        return [{"version": v, "created": c, "votes": n} for v, c, n in desk.votes.profiles()]

    @router.get("/weights/{version}", response_model=None)
    def weight_version(version: int, request: Request) -> Response:
        service.gate.principal(request, reading=True)
        text = desk.votes.profile(version)
        if text is None:
            raise Problem(404, f"no learned profile version {version}")
        return Response(text, media_type="application/toml")

    return router


def _profile(service: Service) -> str:
    """The profile the service scores with, as boards name it: its name and configuration digest."""
    provenance = service.arena.provenance
    return f"{provenance.profile} {provenance.config_digest}"
