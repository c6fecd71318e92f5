"""``pegboard call``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from pegboard.core.cli.common import (
    config_options,
    emit_result,
    json_option,
    load_pegboard,
    mode_option,
    parse_json_input,
    selection_options,
)


def make_approver(yes: bool) -> Any:
    """``--yes`` approves every ask; on a TTY the user is asked; otherwise nobody answers."""

    def approve(call: Any, decision: Any) -> bool | None:
        if yes:
            return True
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            return None
        why = f" ({decision.reason})" if decision.reason else ""
        return click.confirm(f"Allow {call.name} {call.input}{why}?", default=False, err=True)

    return approve


@click.command("call")
@click.argument("tool")
@click.option(
    "--input",
    "input_text",
    default=None,
    metavar="JSON",
    help="Tool input as JSON, @FILE to read it from a file, or - for standard input.",
)
@config_options
@selection_options
@mode_option
@click.option(
    "--add-dir", "add_dirs", multiple=True, type=click.Path(path_type=Path), help="Extra working directory; repeatable."
)
@click.option("--yes", "-y", is_flag=True, help="Approve the call if a rule or hook asks.")
@json_option
def command(
    tool: str,
    input_text: str | None,
    config_files: tuple[Path, ...],
    cwd: Path | None,
    provider: str | None,
    model: str | None,
    agent: str | None,
    profile: str | None,
    subagent: str | None,
    mode: str | None,
    add_dirs: tuple[Path, ...],
    yes: bool,
    as_json: bool,
) -> None:
    """Run TOOL with --input through policy, permission rules, hooks and the tool itself.

    Exits 0 on success and 1 when the result is an error or a refusal.
    """
    tool_input = parse_json_input(input_text)
    pb = load_pegboard(config_files, cwd)
    result = pb.call_sync(
        tool,
        tool_input,
        agent=agent,
        subagent=subagent,
        provider=provider,
        model=model,
        profile=profile,
        cwd=cwd,
        mode=mode,
        additional_dirs=list(add_dirs),
        approver=make_approver(yes),
    )
    for diag in pb.permission_engine(cwd=cwd, mode=mode, additional_dirs=list(add_dirs)).diagnostics:
        click.echo(f"warning: {diag}", err=True)
    emit_result(result, as_json)
