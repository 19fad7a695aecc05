"""``arena serve``: the arena as an HTTP service, and ``arena serve token`` to manage its API tokens.

The service needs the ``service`` extra (FastAPI, uvicorn): it is loaded inside these commands,
so that every other command runs without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import click

from arena_core.arena import Arena
from arena_core.cli.app import State, Stopped, command, main
from arena_core.cli.stores import STORE_ENV, no_password_in_arguments, open_store
from arena_core.io.table import render
from arena_core.model.errors import ArenaError
from arena_core.model.scalars import parse_size
from arena_core.store.labels import LabelStore
from arena_core.store.postgres import is_postgres_url
from arena_core.store.trust import redact

STORE_HELP = (
    "The arena's store: sqlite:///PATH (a SQLite file, created if missing) or postgresql://URL (several "
    "instances may serve one database; its password in PGPASSWORD, ~/.pgpass or ARENA_STORE, never here)."
)


def store_path(url: str) -> Path | str:
    """The SQLite file a store URL names, or the PostgreSQL URL itself.

    :raises ArenaError: another kind of URL.
    """
    if url.startswith("sqlite:///") and len(url) > len("sqlite:///"):
        return Path(url.removeprefix("sqlite:///"))
    if is_postgres_url(url):
        return url
    raise ArenaError(f"--store: expected sqlite:///PATH or postgresql://URL, got {redact(url)!r}")


def _store_url(ctx: click.Context, param: click.Parameter, value: str) -> str:
    no_password_in_arguments(value, param, ctx)
    return value


#: ``--store`` of ``arena serve`` and its token commands: a URL, also read from :data:`STORE_ENV`.
store_option = click.option(
    "--store",
    "store_url",
    default="sqlite:///arena.db",
    show_default=True,
    envvar=STORE_ENV,
    callback=_store_url,
    help=STORE_HELP,
)


def _service() -> Any:
    try:
        from arena_core.service import app, tokens
    except ImportError:
        raise ArenaError("arena serve needs the service extra: pip install 'arena-core[service]'") from None
    return app, tokens


def _connections() -> Any:
    from arena_core.service import connections  # the service extra's uvicorn

    return connections


@main.group(invoke_without_command=True)
@store_option
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--public-read", is_flag=True, help="Serve the read endpoints (leaderboard, rankings) without a token.")
@click.option(
    "--allow-local-runner",
    is_flag=True,
    help='Serve although command_runner = "local" runs task commands unconfined (trusted task authors only).',
)
@click.option("--body-limit", default="1M", show_default=True, help="The largest request body (413 above).")
@click.option(
    "--rate", type=click.FloatRange(min=0.1), default=50.0, show_default=True, help="Requests a second per token."
)
@click.option(
    "--checks-per-token",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Posts of one token whose workspaces may be checked at once (429 above).",
)
@click.option(
    "--token-quota", default="1G", show_default=True, help="Bytes of runs one token may have stored (0: none)."
)
@click.option(
    "--header-timeout",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    help="Seconds a connection has to send a request's head (and idles between requests) before it is closed.",
)
@click.option("--reviews-per-item", type=click.IntRange(min=1), default=2, show_default=True,
              help="Reviewers the review queue hands each item to (one more when they disagree).")  # fmt: skip
@click.option("--review-by", type=click.Choice(["tool", "model"]), default="tool", show_default=True,
              help="The groups the review queue draws items uniformly at random within.")  # fmt: skip
@click.option("--review-disagreement-share", type=click.FloatRange(0.0, 1.0), default=0.0, show_default=True,
              help="The share of items drawn from those a panel of judges split on (kept apart in the statistics).")  # fmt: skip
@click.option("--vote-rate", type=click.FloatRange(min=0.01), default=1.0, show_default=True,
              help="Votes a second one voter may cast on average (ten at once).")  # fmt: skip
@click.pass_context
def serve(
    ctx: click.Context,
    store_url: str,
    host: str,
    port: int,
    public_read: bool,
    allow_local_runner: bool,
    body_limit: str,
    rate: float,
    checks_per_token: int,
    token_quota: str,
    header_timeout: float,
    reviews_per_item: int,
    review_by: str,
    review_disagreement_share: float,
    vote_rate: float,
) -> None:
    """Serve the arena over HTTP: an authenticated API (docs/serve.md) over a store.

    Operators' tokens define tasks; submitters' tokens post runs for their own tools; reviewers'
    tokens label runs the review queue hands them, blind; voters' tokens compare the two runs of
    a battle, as blind (docs/community.md). Create one first: arena serve token
    create --role operator. The configuration (arena.toml) is the
    CLI's; the service refuses command_runner = "local" unless --allow-local-runner.

    \b
    Examples:
      arena serve --store sqlite:///arena.db
      arena serve --store postgresql://arena@db.internal/arena --host 0.0.0.0
      arena serve token create --role submitter --tool aider/diff --model gpt-5 --store sqlite:///arena.db
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(_run, store_url=store_url, host=host, port=port, public_read=public_read,
                   allow_local_runner=allow_local_runner, body_limit=body_limit, rate=rate,
                   checks_per_token=checks_per_token, token_quota=token_quota,
                   header_timeout=header_timeout, reviews_per_item=reviews_per_item, review_by=review_by,
                   review_disagreement_share=review_disagreement_share, vote_rate=vote_rate)  # fmt: skip


@command
def _run(
    state: State,
    store_url: str,
    host: str,
    port: int,
    public_read: bool,
    allow_local_runner: bool,
    body_limit: str,
    rate: float,
    checks_per_token: int,
    token_quota: str,
    header_timeout: float,
    reviews_per_item: int,
    review_by: str,
    review_disagreement_share: float,
    vote_rate: float,
) -> None:
    app, tokens = _service()
    limit, quota = parse_size(body_limit), parse_size(token_quota)
    if limit is None:
        raise ArenaError(f"--body-limit: expected a size such as 1M, got {body_limit!r}")
    if quota is None:
        raise ArenaError(f"--token-quota: expected a size such as 1G (0: none), got {token_quota!r}")
    path = store_path(store_url)
    arena = state.arena
    if arena.config.workspace_owner == "auto":  # a service always ties a workspace to its run's id
        arena = Arena(attrs.evolve(arena.config, workspace_owner="id"), profile=state.profile or "default")
    service = app.create_app(
        arena,
        open_store(path),
        tokens.TokenStore(path),
        public_read=public_read,
        body_limit=limit,
        rate=rate,
        burst=max(1, int(rate * 2)),
        allow_local_runner=allow_local_runner,
        checks_per_token=checks_per_token,
        token_quota=quota,
        labels=LabelStore(path, reviews_per_item=reviews_per_item),
        review_by=review_by,
        disagreement_share=review_disagreement_share,
        vote_rate=vote_rate,
    )
    import uvicorn  # the service extra

    try:
        uvicorn.run(service, host=host, port=port, log_level="info", **_connections().connection_limits(header_timeout))
    except (Stopped, KeyboardInterrupt) as stop:  # uvicorn shut down gracefully, then passed the signal on
        signal_name = stop.signal_name if isinstance(stop, Stopped) else "SIGINT"
        click.echo(f"arena serve stopped cleanly ({signal_name}): requests in flight were answered first", err=True)


@serve.group()
def token() -> None:
    """Create, list and revoke the service's API tokens (kept, hashed, in the store's file)."""


@token.command("create")
@store_option
@click.option("--role", type=click.Choice(["operator", "submitter", "reviewer", "voter"]), required=True)
@click.option("--tool", "tools", multiple=True, help="A tool a submitter may post runs for (repeat for more).")
@click.option(
    "--model",
    "models",
    multiple=True,
    help="A model a submitter may post runs of (repeat for more; '*': any, which lets it post under any vendor's model).",
)
@click.option("--note", default="", help="Who the token is for.")
@command
def create(state: State, store_url: str, role: str, tools: tuple[str, ...], models: tuple[str, ...], note: str) -> None:
    """Create a token and print it: it is shown once, and only its hash is kept."""
    _, tokens = _service()
    token_id, secret = tokens.TokenStore(store_path(store_url)).create(role, tools, note, models)
    bound = "; ".join(part for part in (", ".join(tools), ", ".join(models)) if part)
    click.echo(f"token {token_id} ({role}{': ' + bound if bound else ''}):")
    click.echo(secret)


@token.command("list")
@store_option
@command
def list_tokens(state: State, store_url: str) -> None:
    """List the tokens (never their secrets)."""
    _, tokens = _service()
    rows = [[t.id, t.role, ", ".join(t.tools), ", ".join(t.models), t.note, t.created[:19],
             (t.revoked or "")[:19] or "-"] for t in tokens.TokenStore(store_path(store_url)).tokens()]  # fmt: skip
    click.echo(render(["Id", "Role", "Tools", "Models", "Note", "Created", "Revoked"], rows))


@token.command("revoke")
@click.argument("token_id")
@store_option
@command
def revoke(state: State, token_id: str, store_url: str) -> None:
    """Revoke a token by its id: it is refused from the next request on."""
    _, tokens = _service()
    if not tokens.TokenStore(store_path(store_url)).revoke(token_id):
        raise ArenaError(f"no active token {token_id!r}")
    click.echo(f"token {token_id} revoked")
