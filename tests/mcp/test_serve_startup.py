"""``pegboard serve`` answers ``initialize`` before it loads the kernel and the plugins.

The loading thread holds the GIL most of the time, so the bridge (the whole Pegboard) is built
only once the answer to ``initialize`` is written, on the first request that needs it, or when
no client spoke for a moment. These tests run the real stdio loop on real pipes.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import threading
from typing import Any

from pegboard_mcp_server.stdio import StdioServer

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}


class Pipes:
    def __init__(self) -> None:
        self.in_read, self.in_write = os.pipe()
        self.out_read, self.out_write = os.pipe()

    def send(self, message: dict[str, Any]) -> None:
        os.write(self.in_write, json.dumps(message).encode() + b"\n")

    def close_input(self) -> None:
        os.close(self.in_write)

    def answer_waiting(self) -> bool:
        return bool(select.select([self.out_read], [], [], 0)[0])

    def read_line(self) -> dict[str, Any]:
        data = b""
        while not data.endswith(b"\n"):
            data += os.read(self.out_read, 1 << 16)
        return json.loads(data.splitlines()[0])

    def close(self) -> None:
        for fd in (self.in_read, self.out_read, self.out_write):
            os.close(fd)


def serve_in_thread(server: StdioServer) -> tuple[threading.Thread, list[int]]:
    code: list[int] = []
    thread = threading.Thread(target=lambda: code.append(asyncio.run(server.serve())), daemon=True)
    thread.start()
    return thread, code


def test_the_answer_to_initialize_is_out_before_the_bridge_starts_loading() -> None:
    pipes = Pipes()
    seen: list[bool] = []
    built = threading.Event()

    def make_bridge() -> Any:
        seen.append(pipes.answer_waiting())
        built.set()
        raise RuntimeError("this test needs no Pegboard")

    server = StdioServer(make_bridge, input_fd=pipes.in_read, output_fd=pipes.out_write)
    thread, code = serve_in_thread(server)
    pipes.send(INIT)
    assert built.wait(30), "the bridge was never built"
    assert seen == [True], "the bridge started loading before initialize was answered"
    assert pipes.read_line()["result"]["serverInfo"]["name"] == "pegboard"
    thread.join(30)
    assert code == [1], "a bridge that cannot be built still ends the server with an error"
    pipes.close_input()
    pipes.close()


def test_a_client_that_leaves_at_once_loads_nothing() -> None:
    pipes = Pipes()
    calls: list[str] = []

    def make_bridge() -> Any:
        calls.append("built")

    server = StdioServer(make_bridge, input_fd=pipes.in_read, output_fd=pipes.out_write)
    pipes.close_input()
    thread, code = serve_in_thread(server)
    thread.join(30)
    assert code == [0] and calls == []
    pipes.close()


def test_a_silent_client_still_gets_the_tool_set_loaded() -> None:
    pipes = Pipes()
    built = threading.Event()

    def make_bridge() -> Any:
        built.set()
        raise RuntimeError("this test needs no Pegboard")

    server = StdioServer(make_bridge, input_fd=pipes.in_read, output_fd=pipes.out_write)
    thread, code = serve_in_thread(server)
    assert built.wait(30), "a server whose client says nothing never loaded its plugins"
    thread.join(30)
    assert code == [1]
    pipes.close_input()
    pipes.close()
