"""``pegboard plugins``."""

from __future__ import annotations

import click

from pegboard.core.cli.common import emit_json, json_option, load_pegboard, print_table


@click.command("plugins")
@json_option
def command(as_json: bool) -> None:
    """List installed plugins with distribution, version, hooks, status and error."""
    pb = load_pegboard()
    if as_json:
        emit_json([p.to_json() for p in pb.plugins])
        return
    print_table(
        ["NAME", "DISTRIBUTION", "VERSION", "STATUS", "ERROR"],
        [[p.name, p.distribution or "-", p.version or "-", p.status, p.error or ""] for p in pb.plugins],
    )
