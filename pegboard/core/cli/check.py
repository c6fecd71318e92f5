"""``pegboard check``: may this call run — allow, ask or deny, the rule that decided, and why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from pegboard.core.cli.common import (
    EXIT_USAGE,
    config_file_option,
    emit_json,
    fail,
    json_option,
    mode_option,
    parse_json_input,
)


def _load(config_files: tuple[Path, ...], cwd: Path | None) -> Any:
    """A ``Pegboard`` for the check. The cwd need not exist: rules match lexical paths."""
    from pegboard.core.app import Pegboard
    from pegboard.core.config import ConfigError

    try:
        pb = Pegboard(config_files=list(config_files), cwd=cwd)
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    for warning in pb.warnings:
        click.echo(f"warning: {warning}", err=True)
    return pb


@click.command("check")
@click.argument("tool")
@click.option(
    "--input",
    "input_text",
    default=None,
    metavar="JSON",
    help="Tool input as JSON, @FILE to read it from a file, or - for standard input.",
)
@config_file_option
@click.option(
    "--cwd",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Working directory of the call (default: the current directory; need not exist).",
)
@mode_option
@click.option(
    "--add-dir", "add_dirs", multiple=True, type=click.Path(path_type=Path), help="Extra working directory; repeatable."
)
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Home directory for '~' in rules and paths (default: $HOME).",
)
@json_option
def check(
    tool: str,
    input_text: str | None,
    config_files: tuple[Path, ...],
    cwd: Path | None,
    mode: str | None,
    add_dirs: tuple[Path, ...],
    home: Path | None,
    as_json: bool,
) -> None:
    """Decide whether TOOL may run with --input: allow, ask or deny, and the rule that decided.

    Nothing runs. The answer is the permission rules' (and check_permission hooks') with no
    human in the loop: 'ask' means a person would be asked. Exits 0 whatever the decision;
    read the decision from the output.

    \b
    Examples:
      pegboard check Bash --input '{"command": "git log -1; rm -rf build"}'
      pegboard check Read --input '{"file_path": "/etc/hosts"}' --json
    """
    tool_input = parse_json_input(input_text)
    if not isinstance(tool_input, dict):
        fail('--input must be a JSON object, for example \'{"command": "ls"}\'', EXIT_USAGE)
    pb = _load(config_files, cwd)
    engine = pb.permission_engine(cwd=cwd, mode=mode, additional_dirs=list(add_dirs), home=home)
    for diag in engine.diagnostics:
        click.echo(f"warning: {diag}", err=True)
    decision = pb.check(tool, tool_input, cwd=cwd, mode=mode, additional_dirs=list(add_dirs), home=home)
    if as_json:
        emit_json(decision.to_json())
        return
    where = ""
    if decision.rule:
        where = f" [{decision.rule}" + (f" in {decision.source}" if decision.source else "") + "]"
    click.echo(f"{decision.decision}: {decision.reason}{where}")


#: The lazily loading CLI group looks for ``command`` in each command module.
command = check
