"""Options, loading and output helpers that the built-in commands share."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar, cast

import click

F = TypeVar("F", bound=Callable[..., Any])

EXIT_ERROR = 1
EXIT_USAGE = 2


def config_file_option(fn: F) -> F:
    """``--config FILE``, repeatable."""
    return click.option(
        "--config",
        "config_files",
        multiple=True,
        type=click.Path(dir_okay=False, path_type=Path),
        help="Extra config file (TOML, JSON or JSON5); repeatable, later files win.",
    )(fn)


def config_options(fn: F) -> F:
    """``--config FILE`` (repeatable) and ``--cwd DIR``."""
    fn = click.option(
        "--cwd",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Working directory of the call (default: the current directory).",
    )(fn)
    return config_file_option(fn)


def input_option(fn: F) -> F:
    """``--input JSON``: a tool input (read with :func:`parse_json_input`)."""
    return click.option(
        "--input",
        "input_text",
        default=None,
        metavar="JSON",
        help="Tool input as JSON, @FILE to read it from a file, or - for standard input.",
    )(fn)


def mode_option(fn: F) -> F:
    """``--mode``: the permission mode (default: ``permissions.defaultMode``, else ``default``)."""
    from pegboard.core.modes import PERMISSION_MODES

    return click.option(
        "--mode",
        default=None,
        type=click.Choice(PERMISSION_MODES),
        help="Permission mode (default: permissions.defaultMode, else 'default').",
    )(fn)


SELECTION_OPTIONS: tuple[tuple[str, str], ...] = (
    ("provider", "Provider the tools are for (openai, anthropic, google, ...)."),
    ("model", "Model id; with --provider selects byProvider 'provider/model' keys."),
    ("agent", "Agent id from agents.list."),
    ("profile", "Tool profile to use instead of tools.profile."),
    ("subagent", "Subagent name from the subagents config."),
)


def selection_options(fn: F) -> F:
    """``--provider``, ``--model``, ``--agent``, ``--profile``, ``--subagent``: whose tool set.

    The command receives them as one ``selection`` argument (a ``Selection``), so a choice
    added here reaches every command without each one listing it again.
    """

    @functools.wraps(fn)
    def with_selection(*args: Any, **kwargs: Any) -> Any:
        from pegboard.core.session import Selection

        chosen = {name: kwargs.pop(name) for name, _ in SELECTION_OPTIONS}
        return fn(*args, selection=Selection(**chosen), **kwargs)

    command: Callable[..., Any] = with_selection
    for name, text in reversed(SELECTION_OPTIONS):
        command = click.option(f"--{name}", name, default=None, help=text)(command)
    return cast(F, command)


WAIT_MCP_ENV = "PEGBOARD_MCP_STARTUP_WAIT"  # read by the MCP client plugin


def wait_mcp_option(fn: F) -> F:
    """``--wait-mcp SECONDS``: how long to wait for MCP servers still connecting."""
    return click.option(
        "--wait-mcp",
        "wait_mcp",
        type=click.FloatRange(min=0),
        default=None,
        metavar="SECONDS",
        help=f"Wait up to SECONDS for MCP servers that are still connecting (default: {WAIT_MCP_ENV}, else 5).",
    )(fn)


def wait_mcp_env(wait_mcp: float | None) -> dict[str, str] | None:
    """The environment for a Pegboard that waits ``wait_mcp`` seconds for MCP servers (``None``: as is)."""
    import os

    return None if wait_mcp is None else {**os.environ, WAIT_MCP_ENV: str(wait_mcp)}


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON (a stable, scriptable shape).")(fn)


def json_error(message: str, code: int) -> None:
    """The ``--json`` shape of an error that ends a command: a script reading stdout gets an
    object naming what was wrong instead of nothing (the human message still goes to stderr)."""
    click.echo(json.dumps({"error": message, "exit_code": code}, ensure_ascii=False))


def wants_json(ctx: click.Context | None = None) -> bool:
    """Whether the command running now was given ``--json``."""
    ctx = ctx if ctx is not None else click.get_current_context(silent=True)
    return ctx is not None and bool(ctx.params.get("as_json"))


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    """End the command: ``error: MESSAGE`` on stderr, with ``--json`` also :func:`json_error`'s
    object on stdout, and exit ``code``."""
    if wants_json():
        json_error(message, code)
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def load_pegboard(
    config_files: Sequence[Path] = (), cwd: Path | None = None, *, wait_mcp: float | None = None, **options: Any
) -> Any:
    """A ``Pegboard`` for a command; a broken config is an error message, not a traceback.

    It is closed when the command ends (however it exits), so plugins stop what they started.
    """
    from pegboard.core.app import Pegboard
    from pegboard.core.config import ConfigError

    if cwd is not None and not cwd.is_dir():
        fail(f"--cwd {cwd}: no such directory", EXIT_USAGE)
    if (env := wait_mcp_env(wait_mcp)) is not None:
        options["env"] = env
    try:
        pb = Pegboard(config_files=list(config_files), cwd=cwd, **options)
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    ctx = click.get_current_context(silent=True)
    if ctx is not None:  # stops what plugins started (MCP servers) when the command ends
        ctx.call_on_close(pb.close)
    for warning in pb.warnings:
        click.echo(f"warning: {warning}", err=True)
    return pb


def fail_on_policy_errors(pb: Any, **selection: Any) -> None:
    """Exit 1 naming each setting that failed closed (an unknown profile) for this selection."""
    errors = pb.tools(**selection).errors
    for error in errors:
        click.echo(f"error: {error}", err=True)
    if errors:
        sys.exit(EXIT_ERROR)


def parse_json_input(text: str | None, what: str = "--input") -> Any:
    """Parse ``--input``: JSON text, ``@file`` or ``-`` for standard input."""
    if text is None:
        return {}
    if text == "-":
        text = sys.stdin.read()
    elif text.startswith("@"):
        try:
            text = Path(text[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            fail(f"{what}: cannot read {text[1:]}: {exc.strerror or exc}", EXIT_USAGE)
    try:
        return json.loads(text)
    except ValueError as exc:
        fail(f'{what} is not valid JSON: {exc}. Example: --input \'{{"file_path": "/tmp/x"}}\'', EXIT_USAGE)


def emit_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Aligned columns; the last column is not padded."""
    cells = [[str(h) for h in headers], *[["" if c is None else str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        line = "  ".join(c.ljust(widths[i]) if i < len(row) - 1 else c for i, c in enumerate(row))
        click.echo(line.rstrip())
        if n == 0:
            click.echo("  ".join("-" * w for w in widths))


def emit_result(result: Any, as_json: bool, *, session: str | None = None) -> None:
    """Print a ``ToolResult`` (the ``--json`` shape, or its text and a note per image) and exit:
    0 on success, 1 when the result is an error or a refusal. ``session`` is the stored
    session the call ran in (``"session"`` in the JSON)."""
    if as_json:
        emit_json({**result.to_json(), "session": session})
    else:
        for block in result.content:
            if block.type == "text":
                click.echo(block.text)
            else:
                click.echo(f"[image {block.mime_type}, {len(block.data)} base64 characters]")
        for notice in result.metadata.get("hook_notices", []):
            click.echo(f"note: {notice}", err=True)
        for error in result.metadata.get("hook_errors", []):
            click.echo(f"note: hook {error['hook']} of {error['plugin']} failed: {error['error']}", err=True)
        if result.is_error and isinstance(how := result.metadata.get("how_to_approve"), str):
            click.echo(f"note: to approve such a call, {how}", err=True)
        if result.is_error:
            click.echo(f"({result.reason or 'error'})", err=True)
    sys.exit(1 if result.is_error else 0)
