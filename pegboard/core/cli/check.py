"""``pegboard check``: may this call run — allow, ask or deny, the rule that decided, and why."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

import click

from pegboard.core.cli.common import (
    EXIT_USAGE,
    config_file_option,
    emit_json,
    fail,
    input_option,
    json_option,
    mode_option,
    parse_json_input,
)


def _near(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _fields(tool: Any, name: str) -> tuple[str, list[str]] | None:
    """``(display name, fields)`` of an installed tool or one the families table knows; ``None`` if unknown."""
    from pegboard.core.permissions.families import TABLE_ONLY

    if tool is not None:
        fields = [
            (info.alias or field) + ("" if info.is_required() else "?")
            for field, info in tool.input_model.model_fields.items()
        ]
        return tool.name, fields
    seed = TABLE_ONLY.canonical(name)
    return (seed, sorted(TABLE_ONLY.known_fields(seed) or ())) if seed is not None else None


#: ``mcp__<server>__<tool>``: a rule may name a tool of a server that is not connected now
_MCP_NAME = re.compile(r"mcp__[A-Za-z0-9_.-]+?__[A-Za-z0-9_.-]+")


def _check_input(pb: Any, tool_name: str, tool_input: dict[str, Any] | None) -> None:
    """Refuse, with what the tool takes, a check that could only give a misleading answer:
    no --input, a tool nobody knows, or a field the tool does not have."""
    tool = pb.tool(tool_name)
    known = _fields(tool, tool_name)
    if known is None and _MCP_NAME.fullmatch(tool_name):
        return  # an MCP tool whose server is not connected: judged by its name, whatever its input
    if known is None:
        from pegboard.core.permissions.families import TABLE_ONLY

        names = sorted(t.name for t in pb.registry.sorted_entries())
        near = _near(tool_name, sorted({*names, *TABLE_ONLY.known_names()}))
        fail(
            f"unknown tool {tool_name!r}{near}; it is neither installed nor a tool the "
            f"permission rules know. Installed tools: {', '.join(names) or '(none)'}.",
            EXIT_USAGE,
        )
        return
    name, fields = known
    note = " (? = optional)" if any(f.endswith("?") for f in fields) else ""
    takes = f"{name} takes: {', '.join(fields)}{note}" if fields else f"{name} takes no fields"
    if tool_input is None:
        example = json.dumps({fields[0].rstrip("?"): "..."}) if fields else "{}"
        fail(
            f"--input is required: the decision depends on the call's input. {takes}. Example: --input '{example}'",
            EXIT_USAGE,
        )
        return
    plain = [f.rstrip("?") for f in fields]
    open_model = tool is not None and tool.input_model.model_config.get("extra") == "allow"
    if fields and not open_model:
        extra = [f"{key!r}{_near(key, plain)}" for key in tool_input if key not in plain]
        if extra:
            fail(f"{name} has no field {', '.join(extra)}. {takes}.", EXIT_USAGE)


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
@input_option
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
    tool_input = parse_json_input(input_text) if input_text is not None else None
    if tool_input is not None and not isinstance(tool_input, dict):
        fail('--input must be a JSON object, for example \'{"command": "ls"}\'', EXIT_USAGE)
    pb = _load(config_files, cwd)
    _check_input(pb, tool, tool_input)
    tool_input = {} if tool_input is None else tool_input
    engine = pb._permission_engine(cwd=cwd, mode=mode, additional_dirs=list(add_dirs), home=home)
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
