"""Building blocks for plugin commands: the options, loading and output of ``pegboard``'s own.

A plugin that adds a command (entry-point group ``pegboard.commands``) takes its options
from here, so ``--config``, ``--cwd``, ``--mode`` and ``--json`` read and behave the same
in every command::

    import click
    from pegboard.cli import config_options, emit_json, json_option, load_pegboard

    @click.command("count")
    @config_options
    @json_option
    def count(config_files, cwd, as_json):
        pb = load_pegboard(config_files, cwd)
        emit_json({"tools": len(pb.tools().enabled)})
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pegboard.core.cli.common import (
    EXIT_ERROR,
    EXIT_USAGE,
    WAIT_MCP_ENV,
    config_file_option,
    config_options,
    emit_json,
    emit_result,
    fail,
    json_option,
    load_pegboard,
    mode_option,
    parse_json_input,
    print_table,
    selection_options,
    wait_mcp_env,
    wait_mcp_option,
)


def make_approver(yes: bool, *, remember: bool = False, cwd: Path | None = None) -> Any:
    """The approver of ``pegboard call``: ``--yes`` approves every ask, a terminal asks the
    user, otherwise nobody answers (the call is refused). ``remember`` offers "always"."""
    from pegboard.core.cli.call import make_approver as build

    return build(yes, remember=remember, cwd=cwd)


__all__ = [
    "EXIT_ERROR",
    "EXIT_USAGE",
    "WAIT_MCP_ENV",
    "config_file_option",
    "config_options",
    "emit_json",
    "emit_result",
    "fail",
    "json_option",
    "load_pegboard",
    "make_approver",
    "mode_option",
    "parse_json_input",
    "print_table",
    "selection_options",
    "wait_mcp_env",
    "wait_mcp_option",
]
