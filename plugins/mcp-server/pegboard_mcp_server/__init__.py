"""``pegboard serve``: the effective tool set of a Pegboard as an MCP server.

Importing this module is cheap: it only adds the command. The server code (and, for
``--http``, the MCP SDK) loads when the command runs.
"""

from __future__ import annotations

from typing import Any

from pegboard import hookimpl

__version__ = "0.1.0"


@hookimpl
def register_commands(cli: Any) -> None:
    from pegboard_mcp_server.cli import serve

    cli.add_command(serve)
