"""A small MCP server built on the official SDK, for the client tests (run as a script).

Environment: ``SDK_SERVER_SLOW`` seconds to sleep before serving; ``SDK_SERVER_MARK`` a file
that records each start (one line per start); ``SDK_SERVER_PIDFILE`` a file that gets the
process id before the sleep.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

if pidfile := os.environ.get("SDK_SERVER_PIDFILE"):
    Path(pidfile).write_text(str(os.getpid()), encoding="utf-8")
if slow := float(os.environ.get("SDK_SERVER_SLOW", "0") or 0):
    time.sleep(slow)

from mcp.server.mcpserver import MCPServer

if mark := os.environ.get("SDK_SERVER_MARK"):
    with Path(mark).open("a", encoding="utf-8") as f:
        f.write(f"{os.getpid()}\n")

server = MCPServer("sdk-test")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(name="do.something/with spaces and a name that is far too long for any provider to accept")
def long_name(text: str = "") -> str:
    """A tool whose name needs sanitising and shortening."""
    return f"long:{text}"


@server.tool(name="Add")
def add_upper(a: int, b: int) -> int:
    """Collides with 'add' once names ignore case."""
    return a + b + 1000


@server.tool()
def nap(seconds: float) -> str:
    """Sleep, so a call outlasts the client's keep-alive interval."""
    time.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def big(mib: float) -> str:
    """A text result of ``mib`` MiB (lines of digits), to time the client's reading of it."""
    line = "0123456789" * 7 + "\n"
    return line * int(mib * (1 << 20) / len(line))


@server.tool()
def crash() -> str:
    """Exit the server process in the middle of the call."""
    os._exit(3)


@server.tool()
def fail() -> str:
    """Raise an error (an isError result)."""
    raise ValueError("this tool always fails")


@server.resource("memo://greeting", name="greeting", description="A friendly greeting", mime_type="text/plain")
def greeting() -> str:
    return "hello from a resource"


@server.resource("memo://notes/{topic}", name="note", description="A note on a topic")
def note(topic: str) -> str:
    return f"note about {topic}"


if __name__ == "__main__":
    server.run("stdio")
