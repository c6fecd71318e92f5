"""``pegboard groups``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from pegboard.core.cli.common import config_options, emit_json, json_option, load_pegboard, print_table


def group_rows(pb: Any) -> list[dict[str, Any]]:
    """Every group: name, description, installed members (tool names), named-but-missing members, owners."""
    from pegboard.core.policy import iter_groups

    registered = pb.registry.groups
    rows = []
    for name, members in iter_groups(pb._catalog_now()):
        group = registered.get(name)
        missing = []
        if group is not None:
            missing = [m for m in group.members if not m.startswith("group:") and pb.registry.find(m) is None]
        rows.append(
            {
                "name": name,
                "entry": f"group:{name}",
                "description": group.description if group is not None else "",
                "members": members,
                "missing": missing,
                "plugins": list(group.owners) if group is not None else [],
            }
        )
    return rows


@click.command("groups")
@config_options
@json_option
def command(config_files: tuple[Path, ...], cwd: Path | None, as_json: bool) -> None:
    """List tool groups and their members (use them in config as group:<name>).

    Members are the installed tools in the group; --json also lists "missing": names a
    plugin put in the group whose tool is not installed.
    """
    pb = load_pegboard(config_files, cwd)
    rows = group_rows(pb)
    if as_json:
        emit_json(rows)
        return
    print_table(
        ["GROUP", "MEMBERS", "DESCRIPTION"],
        [[r["entry"], ", ".join(r["members"]) or "(none installed)", r["description"]] for r in rows],
    )
