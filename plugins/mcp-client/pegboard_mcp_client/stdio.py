"""The stdio transport to an MCP server, reading its messages in linear time.

The SDK's stdio client joins its whole line buffer to every chunk it reads, so one large
message (a 50 MiB tool result) costs time quadratic in its size. Here a message's chunks
are kept as they arrive and joined once, when its newline comes, and the bytes go to the
JSON parser without an intermediate ``str``: the held copies stay within about twice the
message's size. Process handling follows the protocol's shutdown order: close stdin, wait,
then terminate and kill the server's process group.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TextIO

#: Seconds a server gets to exit after its stdin closed, and after SIGTERM.
EXIT_GRACE = 2.0
_POLL = 0.05


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def _exited(process: Any, timeout: float) -> bool:
    import anyio

    with anyio.move_on_after(timeout):
        while process.returncode is None:
            await anyio.sleep(_POLL)
    return process.returncode is not None


@asynccontextmanager
async def stdio_transport(
    command: str, args: list[str], *, env: dict[str, str], cwd: str, errlog: TextIO = sys.stderr
) -> AsyncIterator[tuple[Any, Any]]:
    """Start the server and yield the SDK's ``(read_stream, write_stream)`` pair."""
    import anyio
    from mcp import types
    from mcp.shared.message import SessionMessage

    process = await anyio.open_process([command, *args], env=env, stderr=errlog, cwd=cwd, start_new_session=True)
    reader_send, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, writer_receive = anyio.create_memory_object_stream[Any](0)

    def parse(line: bytes) -> Any:
        try:
            return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        except ValueError as exc:
            return exc

    async def read() -> None:
        assert process.stdout is not None
        parts: list[bytes] = []
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
            async with reader_send:
                async for chunk in process.stdout:
                    start = 0
                    while (end := chunk.find(b"\n", start)) >= 0:
                        parts.append(chunk[start:end])
                        line = b"".join(parts) if len(parts) > 1 else parts[0]
                        parts.clear()
                        if line.strip():
                            message = parse(line)
                            del line
                            await reader_send.send(message)
                        start = end + 1
                    if start < len(chunk):
                        parts.append(chunk[start:] if start else chunk)

    async def write() -> None:
        assert process.stdin is not None
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async with writer_receive:
                async for message in writer_receive:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(data.encode("utf-8") + b"\n")
        with contextlib.suppress(Exception):
            await reader_send.aclose()

    async def close(*streams: Any) -> None:
        for stream in streams:
            if stream is not None:
                with contextlib.suppress(Exception):
                    await stream.aclose()

    async def stop() -> None:
        await close(process.stdin, write_stream)
        if not await _exited(process, EXIT_GRACE):
            _signal_group(process.pid, signal.SIGTERM)
            if not await _exited(process, EXIT_GRACE):
                _signal_group(process.pid, signal.SIGKILL)
                await _exited(process, EXIT_GRACE)
        await close(process.stdout, read_stream)

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        tg.start_soon(write)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await stop()
            tg.cancel_scope.cancel()


__all__ = ["EXIT_GRACE", "stdio_transport"]
