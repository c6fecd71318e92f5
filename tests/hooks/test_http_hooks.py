"""``http`` hook handlers against a real loopback server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pegboard import Reason
from tests.hooks.support import Approver, board, hooks


class Recorder:
    """What the server received, and what it answers next."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = 200
        self.body: bytes = b""


@pytest.fixture
def server() -> Iterator[tuple[str, Recorder]]:
    recorder = Recorder()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            recorder.requests.append(
                {"path": self.path, "headers": dict(self.headers), "json": json.loads(self.rfile.read(length))}
            )
            self.send_response(recorder.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(recorder.body)))
            self.end_headers()
            self.wfile.write(recorder.body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", recorder
    finally:
        httpd.shutdown()
        httpd.server_close()


def http_hook(url: str, **fields: Any) -> dict[str, Any]:
    return {"type": "http", "url": url, "timeout": 5, **fields}


async def test_http_hook_denies_with_json(tmp_path: Path, server: tuple[str, Recorder]) -> None:
    base, recorder = server
    recorder.body = json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "policy server says no",
            }
        }
    ).encode()
    config = {**hooks("PreToolUse", http_hook(f"{base}/pre"), matcher="Bash"), "allowedHttpHookUrls": [f"{base}/*"]}
    result = await board(tmp_path, config).call("Bash", {"command": "make deploy"}, session_id="s1")
    assert result.reason == Reason.HOOK_BLOCKED and "policy server says no" in result.text
    [request] = recorder.requests
    assert request["path"] == "/pre"
    assert request["headers"]["Content-Type"] == "application/json"
    sent = request["json"]
    assert (sent["hook_event_name"], sent["tool_name"], sent["tool_input"], sent["session_id"]) == (
        "PreToolUse",
        "Bash",
        {"command": "make deploy"},
        "s1",
    )


async def test_http_headers_take_only_allowed_env_vars(
    tmp_path: Path, server: tuple[str, Recorder], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, recorder = server
    monkeypatch.setenv("HOOK_TOKEN", "t0k3n")
    monkeypatch.setenv("OTHER_SECRET", "leak")
    handler = http_hook(
        base,
        headers={"Authorization": "Bearer $HOOK_TOKEN", "X-Other": "${OTHER_SECRET}"},
        allowedEnvVars=["HOOK_TOKEN"],
    )
    config = {**hooks("PostToolUse", handler), "allowedHttpHookUrls": [base]}
    result = await board(tmp_path, config).call("Bash", {"command": "make"}, approver=Approver())
    assert not result.is_error
    headers = recorder.requests[0]["headers"]
    assert headers["Authorization"] == "Bearer t0k3n" and headers["X-Other"] == ""
    assert recorder.requests[0]["json"]["tool_response"]["stdout"] == "ran: make"


async def test_http_url_outside_the_allowlist_is_not_contacted(tmp_path: Path, server: tuple[str, Recorder]) -> None:
    base, recorder = server
    config = {**hooks("PreToolUse", http_hook(base)), "allowedHttpHookUrls": ["https://hooks.example.com/*"]}
    result = await board(tmp_path, config).call("Bash", {"command": "make"}, approver=Approver())
    assert not result.is_error and recorder.requests == []
    assert any("allowedHttpHookUrls" in n for n in result.metadata["hook_notices"])
    closed = {**hooks("PreToolUse", http_hook(base, failClosed=True))}  # no allowlist at all
    result = await board(tmp_path, closed).call("Bash", {"command": "make"}, approver=Approver())
    assert result.reason == Reason.HOOK_BLOCKED and recorder.requests == []


async def test_http_errors_do_not_block_unless_fail_closed(tmp_path: Path, server: tuple[str, Recorder]) -> None:
    base, recorder = server
    recorder.status, recorder.body = 500, b'{"decision": "block"}'
    config = {**hooks("PreToolUse", http_hook(base)), "allowedHttpHookUrls": [base]}
    result = await board(tmp_path, config).call("Bash", {"command": "make"}, approver=Approver())
    assert not result.is_error and any("HTTP 500" in n for n in result.metadata["hook_notices"])
    closed = {**hooks("PreToolUse", http_hook(base, failClosed=True)), "allowedHttpHookUrls": [base]}
    result = await board(tmp_path, closed).call("Bash", {"command": "make"}, approver=Approver())
    assert result.reason == Reason.HOOK_BLOCKED and "HTTP 500" in result.text


async def test_http_empty_2xx_is_no_opinion(tmp_path: Path, server: tuple[str, Recorder]) -> None:
    base, recorder = server
    recorder.status, recorder.body = 204, b""
    config = {**hooks("PreToolUse", http_hook(base)), "allowedHttpHookUrls": [base]}
    approver = Approver()
    result = await board(tmp_path, config).call("Bash", {"command": "make"}, approver=approver)
    assert not result.is_error and len(approver.asked) == 1 and "hook_notices" not in result.metadata


async def test_http_connection_refused_is_a_notice(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/hook"  # discard port: nothing listens
    config = {**hooks("PreToolUse", http_hook(url, timeout=2)), "allowedHttpHookUrls": [url]}
    result = await board(tmp_path, config).call("Bash", {"command": "make"}, approver=Approver())
    assert not result.is_error and any("request failed" in n for n in result.metadata["hook_notices"])
