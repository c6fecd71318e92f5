"""``pegboard trust``."""

from __future__ import annotations

from pathlib import Path

import click

from pegboard.core.cli.common import emit_json, json_option


@click.command("trust")
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--revoke", is_flag=True, help="Stop trusting the project.")
@click.option("--list", "show", is_flag=True, help="List the trusted projects.")
@json_option
def command(directory: Path | None, revoke: bool, show: bool, as_json: bool) -> None:
    """Let a project's config run commands (hook handlers, MCP servers from .mcp.json).

    DIRECTORY defaults to the project around the current directory (the nearest one holding
    .pegboard/ or .git). Untrusted projects' other settings still apply.
    """
    from pegboard.core.config import find_project_root
    from pegboard.core.projecttrust import is_trusted, set_trusted, trust_file, trusted_projects

    if show:
        projects = trusted_projects()
        if as_json:
            emit_json({"file": str(trust_file()), "projects": projects})
        else:
            click.echo("\n".join(projects) if projects else "No project is trusted.")
        return
    root = find_project_root((directory or Path.cwd()).resolve())
    path = set_trusted(root, not revoke)
    if as_json:
        emit_json({"project": str(root), "trusted": is_trusted(root), "file": str(path)})
    else:
        click.echo(f"{'No longer trusting' if revoke else 'Trusting'} {root} ({path})")
