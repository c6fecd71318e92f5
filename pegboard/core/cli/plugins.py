"""``pegboard plugins``."""

from __future__ import annotations

import click

from pegboard.core.cli.common import emit_json, json_option, load_pegboard, print_table


@click.command("plugins")
@click.option("--families", is_flag=True, help="List the permission rule families instead (Bash, Read, ...).")
@json_option
def command(families: bool, as_json: bool) -> None:
    """List installed plugins with distribution, version, hooks, status and error; then the
    permission rule families and the distribution each comes from."""
    from pegboard.core.permissions.families import family_listing

    pb = load_pegboard()
    rules = family_listing(pb.registry.permission_families)
    if as_json:
        emit_json(rules if families else [p.to_json() for p in pb.plugins])
        return
    if not families:
        print_table(
            ["NAME", "DISTRIBUTION", "VERSION", "STATUS", "ERROR"],
            [[p.name, p.distribution or "-", p.version or "-", p.status, p.error or ""] for p in pb.plugins],
        )
        click.echo()
    print_table(
        ["PERMISSION FAMILY", "DISTRIBUTION", "STATUS", "ERROR"],
        [[f["name"] or "", f["distribution"] or "-", f["status"] or "", f["error"] or ""] for f in rules],
    )
