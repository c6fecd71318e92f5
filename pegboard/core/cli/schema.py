"""``pegboard schema``."""

from __future__ import annotations

from pathlib import Path

import click

from pegboard.core.cli.common import (
    EXIT_USAGE,
    config_options,
    emit_json,
    fail,
    fail_on_policy_errors,
    load_pegboard,
    selection_options,
    wait_mcp_option,
)
from pegboard.core.render import FORMATTERS


@click.command("schema")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(sorted(FORMATTERS)),
    default="anthropic",
    show_default=True,
    help="Provider format of the definitions.",
)
@config_options
@selection_options
@wait_mcp_option
def command(
    fmt: str,
    config_files: tuple[Path, ...],
    cwd: Path | None,
    provider: str | None,
    model: str | None,
    agent: str | None,
    profile: str | None,
    subagent: str | None,
    wait_mcp: float | None,
) -> None:
    """Print the enabled tools' definitions as JSON in a provider's format."""
    pb = load_pegboard(config_files, cwd, wait_mcp=wait_mcp)
    fail_on_policy_errors(pb, provider=provider, model=model, agent=agent, profile=profile, subagent=subagent)
    try:
        emit_json(pb.schema(fmt, provider=provider, model=model, agent=agent, profile=profile, subagent=subagent))
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
