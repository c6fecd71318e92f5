"""``pegboard profiles``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from pegboard.core.cli.common import config_options, emit_json, json_option, load_pegboard, print_table


def profile_rows(pb: Any) -> list[dict[str, Any]]:
    """Every registered profile: name, allow entries (``None`` = no restriction), description, plugin."""
    rows = []
    for name in sorted(pb.registry.profiles, key=str.casefold):
        profile = pb.registry.profiles[name]
        rows.append(
            {
                "name": name,
                "allow": list(profile.allow) if profile.allow is not None else None,
                "description": profile.description,
                "plugin": pb.registry.profile_owner.get(name),
            }
        )
    if not any(r["name"].casefold() == "full" for r in rows):
        rows.append({"name": "full", "allow": None, "description": "No restriction (built in).", "plugin": None})
    return rows


@click.command("profiles")
@config_options
@json_option
def command(config_files: tuple[Path, ...], cwd: Path | None, as_json: bool) -> None:
    """List tool profiles (tools.profile, --profile) and the entries each allows."""
    pb = load_pegboard(config_files, cwd)
    rows = profile_rows(pb)
    if as_json:
        emit_json(rows)
        return
    print_table(
        ["PROFILE", "ALLOWS", "PLUGIN", "DESCRIPTION"],
        [
            [
                r["name"],
                "(no restriction)" if r["allow"] is None else ", ".join(r["allow"]) or "(nothing)",
                r["plugin"] or "-",
                r["description"],
            ]
            for r in rows
        ],
    )
