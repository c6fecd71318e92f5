"""``pegboard schema``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

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
from pegboard.core.render import FORMATTERS, schema_notes

if TYPE_CHECKING:
    from pegboard.core.session import Selection


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
    selection: Selection,
    wait_mcp: float | None,
) -> None:
    """Print the enabled tools' definitions as JSON in a provider's format.

    Notes on what the provider's transform decided for the set as a whole (which tool turned
    OpenAI's strict mode off) go to stderr, so stdout stays the JSON."""
    pb = load_pegboard(config_files, cwd, wait_mcp=wait_mcp)
    fail_on_policy_errors(pb, **selection.as_kwargs())
    kwargs = selection.as_kwargs()
    try:
        emit_json(pb.schema(fmt, **kwargs))
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    tools = pb.visible_tools(**kwargs)
    for note in schema_notes(
        tools, pb.registry.provider_policies, format=fmt, provider=kwargs.get("provider"), model=kwargs.get("model")
    ):
        click.echo(f"note: {note}", err=True)
