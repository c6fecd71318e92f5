"""``pegboard prompt``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from pegboard.core.session import Selection


@click.command("prompt")
@config_options
@selection_options
@wait_mcp_option
@json_option
def command(
    config_files: tuple[Path, ...],
    cwd: Path | None,
    selection: Selection,
    wait_mcp: float | None,
    as_json: bool,
) -> None:
    """Print the tool list for a system prompt: each enabled tool with its usage text.

    The same tools `pegboard schema` defines, in the human-readable form that goes into
    the agent's system prompt. --json gives {"prompt", "tools": [{"name", "usage"}], "warnings"}.
    """
    from pegboard.core.prompt import prompt_entries

    pb = load_pegboard(config_files, cwd, wait_mcp=wait_mcp)
    chosen: dict[str, Any] = selection.as_kwargs()
    fail_on_policy_errors(pb, **chosen)
    warnings = pb.tools(**chosen).warnings
    entries = prompt_entries(pb, None, **chosen)
    text = pb.prompt(**chosen)
    if as_json:
        emit_json(
            {"prompt": text, "tools": [{"name": e.name, "usage": e.usage} for e in entries], "warnings": warnings}
        )
        return
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(text, nl=False)
