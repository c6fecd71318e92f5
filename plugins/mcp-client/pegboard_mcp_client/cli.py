"""``pegboard mcp list`` and ``pegboard mcp call SERVER.TOOL``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from pegboard.cli import (
    config_options,
    emit_json,
    emit_result,
    fail,
    json_option,
    load_pegboard,
    parse_json_input,
    print_table,
)


@click.group("mcp")
def mcp() -> None:
    """MCP servers as tool sources: their state and tools, and calling one directly."""


def _manager(pb: Any) -> Any:
    from pegboard_mcp_client.tools import manager_for

    manager = manager_for(pb)
    if manager is None:
        fail("no MCP servers are configured (mcpServers in the config, or a project .mcp.json)")
    return manager


@mcp.command("list")
@config_options
@click.option(
    "--wait", "wait", type=float, default=10.0, show_default=True, help="Seconds to wait for servers still connecting."
)
@json_option
def list_servers(config_files: tuple[Path, ...], cwd: Path | None, wait: float, as_json: bool) -> None:
    """Configured MCP servers: transport, state, error and the names their tools have here."""
    from pegboard_mcp_client.tools import REGISTRAR, manager_for

    pb = load_pegboard(config_files, cwd)
    manager = manager_for(pb)
    if manager is None:  # nothing configured is an answer, not an error
        if as_json:
            emit_json({"servers": []})
        else:
            click.echo("No MCP servers are configured (mcpServers in the config, or a project .mcp.json).")
        return
    manager.wait(None, wait)
    pb.tools()  # brings the registry up to date
    registrar = pb.stash.get(REGISTRAR)
    rows = []
    for name, state in sorted(manager.states.items()):
        entry = state.to_json()
        names = registrar.names.get(name, {}) if registrar is not None else {}
        entry["tools"] = [
            {
                "name": names.get(t["name"]),
                "original": t["name"],
                "deferred": bool((tool := pb.tool(names.get(t["name"], ""))) and tool.deferred),
            }
            for t in state.tools
        ]
        rows.append(entry)
    if as_json:
        emit_json({"servers": rows})
        return
    print_table(
        ["SERVER", "TRANSPORT", "STATE", "TOOLS"],
        [
            [
                r["name"],
                r["transport"],
                r["status"] + (f" ({r['error']})" if r["error"] else ""),
                ", ".join(t["name"] or t["original"] for t in r["tools"]) or "-",
            ]
            for r in rows
        ],
    )


@mcp.command("call")
@click.argument("target", metavar="SERVER.TOOL")
@click.option(
    "--input", "input_text", default=None, metavar="JSON", help="Tool input as JSON, @FILE or - for standard input."
)
@config_options
@click.option("--yes", "-y", is_flag=True, help="Approve the call if a rule asks (MCP tools ask by default).")
@json_option
def call(
    target: str, input_text: str | None, config_files: tuple[Path, ...], cwd: Path | None, yes: bool, as_json: bool
) -> None:
    """Call TOOL of MCP server SERVER by their original names, through the whole pipeline."""
    from pegboard.cli import make_approver
    from pegboard_mcp_client.tools import exposed_name

    server, sep, original = target.partition(".")
    if not sep or not server or not original:
        fail(f"expected SERVER.TOOL, got {target!r}", 2)
    tool_input = parse_json_input(input_text)
    pb = load_pegboard(config_files, cwd)
    manager = _manager(pb)
    if server not in manager.states:
        fail(f"no MCP server named {server!r}; configured: {', '.join(sorted(manager.states)) or '(none)'}", 2)
    manager.wait([server], 30.0)
    pb.tools()
    name = exposed_name(pb, server, original)
    if name is None:
        state = manager.states[server]
        known = ", ".join(t["name"] for t in state.tools) or "(none)"
        fail(f"server {server!r} ({state.status}) has no tool {original!r}; its tools: {known}")
    result = pb.call_sync(name, tool_input, cwd=cwd, approver=make_approver(yes))
    emit_result(result, as_json)
