"""The ``pegboard serve`` command."""

from __future__ import annotations

import importlib
import logging
import os
import sys
from pathlib import Path
from typing import Any

import click

from pegboard.core.cli.common import config_options, mode_option

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
    if not 0 <= number < 65536:
        raise click.BadParameter(f"port {number} is out of range", param_hint="--http")
    return host.strip("[]") or "127.0.0.1", number


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
    "--plugin",
    "plugin_modules",
    multiple=True,
    metavar="MODULE",
    help=f"Also load this importable module as a plugin; repeatable (also {PLUGINS_ENV}, comma-separated).",
)
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
    plugin_modules: tuple[str, ...],
    log_level: str,
) -> None:
    """Serve the effective tool set as an MCP server (stdio by default).

    Every call runs Pegboard's whole pipeline: tool policy, permission rules, hooks and
    result projection. A call that needs approval asks the client's user through MCP
    elicitation when the client supports it, and is refused otherwise.
    """
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, log_level),
        format="pegboard serve: %(levelname)s %(name)s: %(message)s",
    )
    if cwd is not None and not cwd.is_dir():
        raise click.BadParameter(f"{cwd}: no such directory", param_hint="--cwd")
    names = list(plugin_modules) + [n.strip() for n in os.environ.get(PLUGINS_ENV, "").split(",") if n.strip()]
    extra = _import_plugins(names)
    from pegboard import ConfigError, load_config

    try:  # a broken config is an error before serving, not a server that cannot answer
        load_config(cwd.resolve() if cwd else None, list(config_files))
    except ConfigError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    from pegboard_mcp_server.bridge import Selection

    selection = Selection(
        agent=agent, provider=provider, model=model, profile=profile, mode=mode, cwd=cwd.resolve() if cwd else None
    )

    def make_bridge() -> Any:
        from pegboard import Pegboard
        from pegboard_mcp_server.bridge import Bridge

        pb = Pegboard(config_files=list(config_files), cwd=selection.cwd, plugins=extra)
        for warning in pb.warnings:
            logging.getLogger("pegboard.mcp.serve").warning("%s", warning)
        return Bridge(pb, selection)

    from pegboard_mcp_server import __version__

    if http is not None:
        host, port = _parse_http(http)
        from pegboard_mcp_server.http import run_http

        sys.exit(run_http(make_bridge, host=host, port=port, version=__version__))
    from pegboard_mcp_server.stdio import run_stdio

    sys.exit(run_stdio(make_bridge, version=__version__))
