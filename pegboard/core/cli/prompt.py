"""``pegboard prompt``."""

from __future__ import annotations

from pathlib import Path

import click

from pegboard.core.cli.common import (
    config_options,
    emit_json,
    fail_on_policy_errors,
    json_option,
    load_pegboard,
    selection_options,
    wait_mcp_option,
)


@click.command("prompt")
@config_options
@selection_options
@wait_mcp_option
@json_option
def command(
    config_files: tuple[Path, ...],
    cwd: Path | None,
    provider: str | None,
    model: str | None,
    agent: str | None,
    profile: str | None,
    subagent: str | None,
    wait_mcp: float | None,
    as_json: bool,
) -> None:
    """Print the tool list for a system prompt: each enabled tool with its usage text.

    The same tools `pegboard schema` defines, in the human-readable form that goes into
    the agent's system prompt. --json gives {"prompt", "tools": [{"name", "usage"}], "warnings"}.
    """
    from pegboard.core.prompt import prompt_entries

    pb = load_pegboard(config_files, cwd, wait_mcp=wait_mcp)
    selection = {"agent": agent, "provider": provider, "model": model, "profile": profile, "subagent": subagent}
    fail_on_policy_errors(pb, **selection)
    warnings = pb.tools(**selection).warnings
    entries = prompt_entries(pb, None, agent=agent, provider=provider, model=model, profile=profile, subagent=subagent)
    text = pb.prompt(**selection)
    if as_json:
        emit_json(
            {"prompt": text, "tools": [{"name": e.name, "usage": e.usage} for e in entries], "warnings": warnings}
        )
        return
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(text, nl=False)
