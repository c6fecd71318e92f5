"""MCP servers as Pegboard tool sources.

Servers configured under ``mcpServers`` (or in a project ``.mcp.json``) connect in the
background when a ``Pegboard`` is built; construction waits a bounded time
(``PEGBOARD_MCP_STARTUP_WAIT`` seconds, default 5) for them. Their tools register as
``mcp__<server>__<tool>``; tools of servers that connect later appear at the next
``tools()`` / ``schema()`` / ``call()``; until then a call to one is refused as
``unavailable`` ("still connecting"). Closing the Pegboard stops the servers. Importing
this module does not import the MCP SDK.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pegboard import Pegboard, hookimpl

__version__ = "0.1.0"
log = logging.getLogger("pegboard.mcp.client")


@hookimpl
def register_config_sections(register: Any) -> None:
    """``mcpServers``: validated here, so a typo in it is reported like one in any other key."""
    from pegboard_mcp_client.settings import SECTION

    register(SECTION)


@hookimpl
def pegboard_ready(pegboard: Pegboard) -> None:
    """Start the connections of this Pegboard's servers and keep its registry in step."""
    from pegboard_mcp_client.settings import (
        DEFAULT_DEFER_THRESHOLD,
        DEFAULT_STARTUP_WAIT,
        DEFER_THRESHOLD_ENV,
        STARTUP_WAIT_ENV,
        configured_servers,
        float_env,
    )

    configured = pegboard.settings("mcpServers").root
    servers = configured_servers(configured, pegboard.cwd, pegboard.env, pegboard.warnings)
    for name in sorted(_untrusted_servers(pegboard) & set(servers)):
        del servers[name]
        pegboard.warnings.append(f"MCP server {name!r} not started: {_untrusted_reason(pegboard)}")
    if not servers:
        return
    from pegboard_mcp_client.manager import CONNECTING, DEPTH_ENV, MAX_DEPTH, McpManager
    from pegboard_mcp_client.tools import MANAGER, REGISTRAR, Registrar

    depth = pegboard.env.get(DEPTH_ENV, "0")
    if depth.isdigit() and int(depth) >= MAX_DEPTH:
        pegboard.warnings.append(
            f"MCP servers not connected: this Pegboard runs {depth} levels deep inside MCP servers "
            f"started by other Pegboards ({DEPTH_ENV}); a config that serves itself would never end"
        )
        return
    from pegboard_mcp_client.tools import SHARED_TOOLS

    for shared in SHARED_TOOLS:  # the resource tools exist only where servers are configured
        pegboard.add_tool(shared, owner="mcp-client")
    manager = McpManager(servers, cwd=pegboard.cwd.resolve(), env=pegboard.env)
    manager.start()
    pegboard.stash[MANAGER] = manager
    threshold = int(float_env(pegboard.env, DEFER_THRESHOLD_ENV, DEFAULT_DEFER_THRESHOLD))
    registrar = Registrar(pegboard, manager, threshold)
    pegboard.stash[REGISTRAR] = registrar
    manager.wait(None, float_env(pegboard.env, STARTUP_WAIT_ENV, DEFAULT_STARTUP_WAIT))
    pegboard.add_tool_source(registrar.sync)
    pegboard.add_pending_tools(registrar.pending_reason)
    pegboard.refresh()
    for name, state in sorted(manager.states.items()):
        if state.status in CONNECTING:
            pegboard.warnings.append(
                f"MCP server {name!r} is still connecting; its tools appear once it answers "
                "(wait for it with --wait-mcp SECONDS or the WaitForMcpServers tool)"
            )


@hookimpl
def pegboard_close(pegboard: Pegboard) -> None:
    """Stop the servers this Pegboard started, so none outlives the process that started it.

    Synchronous (the manager runs its own loop in a thread), and a no-op that imports
    nothing when no server was started.
    """
    import sys

    if "pegboard_mcp_client.tools" not in sys.modules:
        return
    from pegboard_mcp_client.tools import MANAGER, REGISTRAR

    pegboard.stash.pop(REGISTRAR, None)
    manager = pegboard.stash.pop(MANAGER, None)
    if manager is not None:
        manager.close()


@hookimpl
def register_commands(cli: Any) -> None:
    from pegboard_mcp_client.cli import mcp

    cli.add_command(mcp)


def _project_root(pegboard: Pegboard) -> Path:
    from pegboard import find_project_root

    return find_project_root(pegboard.cwd.resolve())


def _untrusted_servers(pegboard: Pegboard) -> set[str]:
    """Servers named by config the user has not trusted: an untrusted project's settings, and
    its ``.mcp.json``. Their commands would run on this machine, so they are not started."""
    from pegboard.trust import is_trusted
    from pegboard_mcp_client.settings import read_mcp_json

    names = {n for ly in pegboard.layers if not ly.trusted for n in (ly.data.get("mcpServers") or {})}
    root = _project_root(pegboard)
    if (root / ".mcp.json").exists() and not is_trusted(root, pegboard.env):
        names |= set(read_mcp_json(root, []))
    return names


def _untrusted_reason(pegboard: Pegboard) -> str:
    from pegboard.trust import untrusted_message

    return untrusted_message(_project_root(pegboard))
