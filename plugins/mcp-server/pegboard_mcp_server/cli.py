"""The ``pegboard serve`` command."""

from __future__ import annotations

import importlib
import logging
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from pegboard.cli import config_options, mode_option, wait_mcp_env, wait_mcp_option
from pegboard_mcp_server.limits import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_DISCONNECT_GRACE,
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_BODY,
    DEFAULT_MAX_CONNECTIONS,
    MIN_MAX_BODY,
    HttpLimits,
    parse_size,
)
from pegboard_mcp_server.paging import DEFAULT_PAGE_SIZE

if TYPE_CHECKING:  # the HTTP access rules load only for --http, off the stdio start-up path
    from pegboard_mcp_server.guard import Access

PLUGINS_ENV = "PEGBOARD_SERVE_PLUGINS"


def _import_plugins(names: list[str]) -> list[object]:
    """Import plugin modules named on the command line or in ``PEGBOARD_SERVE_PLUGINS``."""
    objects: list[object] = []
    for name in names:
        try:
            objects.append(importlib.import_module(name))
        except Exception as exc:
            raise click.UsageError(f"--plugin {name}: cannot import: {type(exc).__name__}: {exc}") from None
    return objects


def _parse_http(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", value
    try:
        number = int(port)
    except ValueError:
        raise click.BadParameter(f"expected HOST:PORT, got {value!r}", param_hint="--http") from None
    if not 0 < number < 65536:
        raise click.BadParameter(f"port {number} is out of range", param_hint="--http")
    return host.strip("[]") or "127.0.0.1", number


def _token(host: str, port: int, token_env: str | None) -> str | None:
    """The bearer token from ``--token-env``; a non-loopback binding without one cannot start."""
    from pegboard_mcp_server.guard import host_form, is_loopback

    if token_env is None:
        if not is_loopback(host):
            raise click.UsageError(
                f"--http {host_form(host)}:{port} would let other machines call your tools: a non-loopback address "
                "needs a bearer token. Put a long random token in an environment variable and name it with "
                "--token-env NAME (clients then send 'Authorization: Bearer <token>'), or bind 127.0.0.1."
            )
        return None
    token = os.environ.get(token_env, "").strip()
    if not token:
        raise click.BadParameter(
            f"the environment variable {token_env} is not set or empty; it must hold the bearer token",
            param_hint="--token-env",
        )
    if not (token.isascii() and token.isprintable()):
        raise click.BadParameter(
            f"the token in {token_env} must be printable ASCII (it travels in an HTTP header)", param_hint="--token-env"
        )
    return token


def _access(
    http: str | None,
    allow_hosts: tuple[str, ...],
    allow_origins: tuple[str, ...],
    token_env: str | None,
    max_body: int,
) -> Access | None:
    """The HTTP access rules from the options; None for stdio (where they make no sense)."""
    if http is None:
        given = (("--allow-host", allow_hosts), ("--allow-origin", allow_origins), ("--token-env", token_env))
        for hint, value in given:
            if value:
                raise click.UsageError(f"{hint} applies only to --http HOST:PORT")
        return None
    from pegboard_mcp_server.guard import Access, parse_origin, split_authority

    host, port = _parse_http(http)
    token = _token(host, port, token_env)
    for value in allow_hosts:
        try:
            split_authority(value)
        except ValueError as exc:
            raise click.BadParameter(f"{exc}; expected NAME or NAME:PORT", param_hint="--allow-host") from None
    for value in allow_origins:
        try:
            parse_origin(value)
        except ValueError as exc:
            raise click.BadParameter(f"{exc}; expected http(s)://HOST[:PORT]", param_hint="--allow-origin") from None
    return Access(
        bind=host, port=port, allow_hosts=allow_hosts, allow_origins=allow_origins, token=token, max_body=max_body
    )


class _Size(click.ParamType):
    name = "SIZE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            size = parse_size(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        if size < MIN_MAX_BODY:
            self.fail(f"{size} bytes is too small to carry an initialize request (at least {MIN_MAX_BODY})", param, ctx)
        return size


class _Seconds(click.ParamType):
    """A finite number of seconds, above zero (or from zero on, with ``zero=True``)."""

    name = "SECONDS"

    def __init__(self, zero: bool = False) -> None:
        self.zero = zero

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"expected a number of seconds such as 10 or 0.5, got {value!r}", param, ctx)
        if not math.isfinite(seconds) or seconds < 0 or (seconds == 0 and not self.zero):
            least = "0 or more" if self.zero else "more than 0"
            self.fail(f"expected {least} seconds, got {value!r}", param, ctx)
        return seconds


def _only_with_http(http: str | None, names: tuple[str, ...]) -> None:
    """Options of --http given without it are a usage error, not silently ignored."""
    if http is not None:
        return
    ctx = click.get_current_context()
    for name in names:
        if ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT):
            raise click.UsageError(f"--{name.replace('_', '-')} applies only to --http HOST:PORT")


@click.command("serve")
@config_options
@click.option("--agent", default=None, help="Agent id from agents.list whose tool set is served.")
@click.option("--profile", default=None, help="Tool profile to use instead of tools.profile.")
@click.option("--provider", default=None, help="Provider the tool set is resolved for.")
@click.option("--model", default=None, help="Model id; with --provider selects byProvider keys.")
@mode_option
@click.option(
    "--http",
    "http",
    default=None,
    metavar="HOST:PORT",
    help="Serve streamable HTTP on HOST:PORT (path /mcp) instead of stdio.",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME[:PORT]",
    help="With --http: also accept requests whose Host header is NAME (any port) or NAME:PORT; repeatable.",
)
@click.option(
    "--allow-origin",
    "allow_origins",
    multiple=True,
    metavar="ORIGIN",
    help="With --http: also accept browser requests from this origin (scheme://host[:port]); repeatable.",
)
@click.option(
    "--token-env",
    default=None,
    metavar="NAME",
    help="With --http: every request must carry 'Authorization: Bearer <token>', the token being the value of "
    "the environment variable NAME. Required for a non-loopback HOST.",
)
@click.option(
    "--max-body",
    type=_Size(),
    default=DEFAULT_MAX_BODY,
    show_default="64MiB",
    help="Largest message accepted, in bytes (K, M, G suffixes are powers of 1024); on stdio a line, over HTTP "
    "a request body.",
)
@click.option(
    "--header-timeout",
    type=_Seconds(),
    default=DEFAULT_HEADER_TIMEOUT,
    show_default=True,
    help="With --http: seconds a connection has to send a request's whole head (from its opening, or from "
    "the first byte of a later request); then it gets 408 and is closed.",
)
@click.option(
    "--body-timeout",
    type=_Seconds(),
    default=DEFAULT_BODY_TIMEOUT,
    show_default=True,
    help="With --http: longest pause, in seconds, inside a request body; then the request gets 408 and the "
    "connection is closed.",
)
@click.option(
    "--max-connections",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_CONNECTIONS,
    show_default=True,
    help="With --http: most connections open at once; a connection beyond them gets 503 and is closed.",
)
@click.option(
    "--disconnect-grace",
    type=_Seconds(zero=True),
    default=DEFAULT_DISCONNECT_GRACE,
    show_default=True,
    help="With --http: seconds a call of an MCP session goes on after its client closed the connection, "
    "before it is ended (0: at once).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1, max=256),
    default=1,
    show_default=True,
    help="With --http: server processes on the one port, sharing sessions through the session store "
    "(sessions.store; SQLite on one host, PostgreSQL across hosts); a client that names its session "
    "(stateless requests, _meta io.pegboard/session) is served by any of them.",
)
@click.option(
    "--page-size",
    type=click.IntRange(min=1),
    default=DEFAULT_PAGE_SIZE,
    show_default=True,
    help="Most tools in one tools/list answer; more come in further pages (nextCursor).",
)
@click.option(
    "--plugin",
    "plugin_modules",
    multiple=True,
    metavar="MODULE",
    help=f"Also load this importable module as a plugin; repeatable (also {PLUGINS_ENV}, comma-separated).",
)
@click.option(
    "--session",
    "session_id",
    default=None,
    metavar="ID",
    help="stdio: resume (or create) the stored session ID for the client; without it the client's session "
    "lives in memory until it disconnects.",
)
@wait_mcp_option
@click.option(
    "--log-level",
    default="WARNING",
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"]),
    help="Log level; logs go to stderr only.",
)
def serve(
    config_files: tuple[Path, ...],
    cwd: Path | None,
    agent: str | None,
    profile: str | None,
    provider: str | None,
    model: str | None,
    mode: str | None,
    http: str | None,
    allow_hosts: tuple[str, ...],
    allow_origins: tuple[str, ...],
    token_env: str | None,
    max_body: int,
    header_timeout: float,
    body_timeout: float,
    max_connections: int,
    disconnect_grace: float,
    workers: int,
    page_size: int,
    plugin_modules: tuple[str, ...],
    session_id: str | None,
    wait_mcp: float | None,
    log_level: str,
) -> None:
    """Serve the effective tool set as an MCP server (stdio by default).

    Every call runs Pegboard's whole pipeline: tool policy, permission rules, hooks and
    result projection. A call that needs approval asks the client's user through MCP
    elicitation when the client supports it, and is refused otherwise.
    """
    from pegboard_mcp_server.logs import install

    install(getattr(logging, log_level))  # never blocks: standard error may be a pipe nobody reads
    if log_level != "DEBUG":  # the SDK's per-session chatter only when debugging
        logging.getLogger("mcp").setLevel(max(logging.WARNING, getattr(logging, log_level)))
    if cwd is not None and not cwd.is_dir():
        raise click.BadParameter(f"{cwd}: no such directory", param_hint="--cwd")
    access = _access(http, allow_hosts, allow_origins, token_env, max_body)
    _only_with_http(http, ("header_timeout", "body_timeout", "max_connections", "disconnect_grace", "workers"))
    limits = HttpLimits(header_timeout, body_timeout, max_connections, disconnect_grace)
    names = list(plugin_modules) + [n.strip() for n in os.environ.get(PLUGINS_ENV, "").split(",") if n.strip()]
    extra = _import_plugins(names)
    from pegboard import config_problem

    # a broken config is an error before serving, not a server that cannot answer; a config
    # that loaded before is known to load without importing the config models
    problem = config_problem(cwd.resolve() if cwd else None, list(config_files))
    if problem is not None:
        click.echo(f"error: {problem}", err=True)
        sys.exit(2)

    def make_bridge() -> Any:  # runs beside the loop: the kernel loads while initialize is answered
        from pegboard import Pegboard
        from pegboard_mcp_server.bridge import Bridge, Selection
        from pegboard_mcp_server.host import ClientHost
        from pegboard_mcp_server.relay import EventRelay
        from pegboard_mcp_server.sampling import ClientSampling

        selection = Selection(
            agent=agent, provider=provider, model=model, profile=profile, mode=mode, cwd=cwd.resolve() if cwd else None
        )
        host = ClientHost()
        relay = EventRelay()
        pb = Pegboard(
            config_files=list(config_files),
            cwd=selection.cwd,
            plugins=[*extra, ClientSampling(), host, relay],
            env=wait_mcp_env(wait_mcp),
        )
        for warning in pb.warnings:
            logging.getLogger("pegboard.mcp.serve").warning("%s", warning)
        shared = workers > 1 or inherited_fd() is not None or pb.config.sessions.store not in (None, "sqlite")
        return Bridge(
            pb,
            selection,
            page_size=page_size,
            session_id=session_id,
            persist=session_id is not None,
            host=host,
            relay=relay,
            shared=shared,
        )

    from pegboard_mcp_server import __version__
    from pegboard_mcp_server.workers import inherited_fd

    if session_id is not None:
        from pegboard import SessionError, validate_session_id

        if access is not None:
            raise click.BadParameter(
                "--session resumes a session for one stdio client; over --http each MCP session gets its own",
                param_hint="--session",
            )
        try:
            validate_session_id(session_id)
        except SessionError as exc:
            raise click.BadParameter(str(exc), param_hint="--session") from None
    if access is not None and workers > 1 and inherited_fd() is None:
        from pegboard_mcp_server.workers import Supervisor, listen, worker_command

        try:
            sock = listen(access.bind, access.port)
        except OSError as exc:
            click.echo(f"error: cannot listen on {access.bind}:{access.port}: {exc.strerror or exc}", err=True)
            sys.exit(2)
        sys.exit(Supervisor(worker_command(), workers, sock).run())
    if access is not None:
        from pegboard_mcp_server.http import run_http

        sys.exit(run_http(make_bridge, access, version=__version__, limits=limits))
    from pegboard_mcp_server.stdio import run_stdio

    sys.exit(run_stdio(make_bridge, version=__version__, max_body=max_body))
