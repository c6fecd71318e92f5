"""``pegboard tools``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from pegboard.core.cli.common import (
    EXIT_ERROR,
    config_options,
    emit_json,
    json_option,
    load_pegboard,
    print_table,
    selection_options,
    wait_mcp_option,
)

if TYPE_CHECKING:
    from pegboard.core.app import Pegboard
    from pegboard.core.session import Selection


@click.command("tools")
@config_options
@selection_options
@wait_mcp_option
@click.option("--explain", is_flag=True, help="Show the policy step that kept or removed each tool.")
@json_option
def command(
    config_files: tuple[Path, ...],
    cwd: Path | None,
    selection: Selection,
    wait_mcp: float | None,
    explain: bool,
    as_json: bool,
) -> None:
    """Which tools an agent sees on this provider and model, and why the others are not.

    Exits 1 when a setting failed closed (an unknown profile enables nothing).
    """
    pb = load_pegboard(config_files, cwd, wait_mcp=wait_mcp)
    result = pb.tools(**selection.as_kwargs())
    if as_json:
        data = result.to_json()
        data["warnings"] = list(dict.fromkeys([*pb.warnings, *data.get("warnings", [])]))  # all it printed
        if explain:
            data["decisions"] = [
                {"name": d.name, "enabled": d.enabled, "step": d.step, "reason": d.reason,
                 "engine": _engine(pb, d.name)} for d in result.decisions
            ]
            data["schema_notes"] = _schema_notes(pb, selection)
        if result.errors:
            data["errors"] = list(result.errors)
        emit_json(data)
    else:
        for warning in result.warnings:
            click.echo(f"warning: {warning}", err=True)
        headers = ["TOOL", "STATUS", "STEP", "REASON"] if explain else ["TOOL", "STATUS", "REASON"]
        rows = []
        for d in result.decisions:
            status = "enabled" if d.enabled else "disabled"
            reason = d.reason if (explain or not d.enabled) else ""
            if explain and (engine := _engine(pb, d.name)):
                reason += f"; engine: {engine}"
            rows.append([d.name, status, d.step, reason] if explain else [d.name, status, reason])
        print_table(headers, rows)
        if explain:
            for note in _schema_notes(pb, selection):
                click.echo(f"schema: {note}")
    for error in result.errors:
        click.echo(f"error: {error}", err=True)
    if result.errors:
        sys.exit(EXIT_ERROR)


def _engine(pb: Pegboard, name: str) -> str | None:
    tool = pb.tool(name)
    return tool.engine_report(pb) if tool is not None else None


def _schema_notes(pb: Pegboard, selection: Selection) -> list[str]:
    """What the provider's schema transform decides for this set (which tool turned strict off)."""
    from pegboard.core.render import schema_notes

    kwargs = selection.as_kwargs()
    return schema_notes(
        pb.visible_tools(**kwargs), pb.registry.provider_policies, provider=kwargs["provider"], model=kwargs["model"]
    )
