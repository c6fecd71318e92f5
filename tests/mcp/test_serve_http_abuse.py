"""``pegboard serve --http`` under abuse: aborted uploads, stalled heads and bodies, piles of
connections, clients that leave mid-call. Every server here runs as a real subprocess whose
standard error is a pipe the test never reads, as under many supervisors."""

from __future__ import annotations

import json
import select
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import ACCEPT, INIT, PEGBOARD, HttpServer, RawHttpSession, http_serving, serve_env


def head(server: HttpServer, length: int, extra: str = "") -> bytes:
    return (
        f"POST /mcp HTTP/1.1\r\nHost: {server.host}:{server.port}\r\n"
        "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
        f"{extra}Content-Length: {length}\r\n\r\n"
    ).encode()


def answer_within(server: HttpServer, seconds: float) -> float:
    """POST initialize on a new connection; how long the answer took (asserting it came in time)."""
    started = time.monotonic()
    response = httpx.post(server.url, json=INIT, headers=ACCEPT, timeout=seconds + 5)
    took = time.monotonic() - started
    assert response.status_code == 200, response.text
    assert took < seconds, f"initialize took {took:.2f} s"
    return took


def read_all(sock: socket.socket, timeout: float) -> bytes:
    """Everything the server sends until it closes the connection (or ``timeout`` passes)."""
    sock.settimeout(timeout)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except TimeoutError:
        raise AssertionError(f"the server kept the connection open; it sent {data!r}") from None
    except ConnectionResetError:
        pass
    return data


def json_body(response: bytes) -> dict[str, Any]:
    return dict(json.loads(response.partition(b"\r\n\r\n")[2]))


@pytest.fixture
def loud_args(serve_args: list[str]) -> list[str]:
    """At INFO every dropped request writes a line, so the unread pipe fills for real."""
    return [*serve_args, "--log-level", "INFO"]


def test_thousands_of_aborted_uploads_leave_the_server_answering(loud_args: list[str], workdir: Path) -> None:
    body = json.dumps(INIT).encode()
    with http_serving(loud_args, workdir) as server:
        session = RawHttpSession(server.url)
        try:
            for _round in range(3):
                for _batch in range(5):
                    socks = [socket.create_connection((server.host, server.port), timeout=5) for _ in range(200)]
                    for sock in socks:
                        sock.sendall(head(server, len(body)) + body[: len(body) // 2])
                    for sock in socks:
                        sock.close()
                answer_within(server, 1.0)
                started = time.monotonic()
                session.http.timeout = httpx.Timeout(6.0)
                assert session.request("ping")["result"] == {}
                assert time.monotonic() - started < 1.0
        finally:
            session.close()
        assert server.proc.poll() is None


def test_an_aborted_upload_is_one_short_line(loud_args: list[str], workdir: Path) -> None:
    body = json.dumps(INIT).encode()
    with http_serving(loud_args, workdir) as server:
        for _ in range(3):
            with socket.create_connection((server.host, server.port), timeout=5) as sock:
                sock.sendall(head(server, len(body)) + body[:40])
        answer_within(server, 5.0)
    assert server.proc.stderr is not None
    text = server.proc.stderr.read().decode()
    dropped = [line for line in text.splitlines() if "dropped POST /mcp" in line]
    assert len(dropped) == 3, text
    assert dropped[0].endswith(f"the client closed the connection after 40 of {len(body)} body bytes")
    assert "Traceback" not in text and "ClientDisconnect" not in text


def test_a_head_that_does_not_arrive_in_time_gets_408(serve_args: list[str], workdir: Path) -> None:
    with http_serving([*serve_args, "--header-timeout", "0.3"], workdir) as server:
        with socket.create_connection((server.host, server.port), timeout=5) as sock:
            started = time.monotonic()
            sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: {server.host}:{server.port}\r\n".encode())
            response = read_all(sock, 10)
            took = time.monotonic() - started
        assert response.startswith(b"HTTP/1.1 408 "), response
        error = json_body(response)["error"]
        assert error["data"] == {"refused": "header"} and "--header-timeout" in error["message"]
        assert 0.25 < took < 5

        with socket.create_connection((server.host, server.port), timeout=5) as sock:  # a header line now and then
            sock.sendall(b"POST /mcp HTTP/1.1\r\n")
            started = time.monotonic()
            response = b""
            while not response and time.monotonic() - started < 5:
                time.sleep(0.05)
                if select.select([sock], [], [], 0)[0]:
                    response = read_all(sock, 5)
                else:
                    sock.sendall(b"X-Slow: 1\r\n")
            took = time.monotonic() - started
        assert response.startswith(b"HTTP/1.1 408 "), "the deadline was renewed by the trickle"
        assert took < 2.5

        with socket.create_connection((server.host, server.port), timeout=5) as silent:
            assert read_all(silent, 10) == b""  # nothing sent: closed without an answer
        answer_within(server, 5.0)


def read_response(sock: socket.socket) -> bytes:
    """One response with a Content-Length, leaving the connection open."""
    sock.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head_part, _, rest = data.partition(b"\r\n\r\n")
    length = next(
        int(v) for k, _, v in (h.partition(b":") for h in head_part.split(b"\r\n")) if k.lower() == b"content-length"
    )
    while len(rest) < length:
        rest += sock.recv(65536)
    return head_part + b"\r\n\r\n" + rest


def test_the_head_deadline_spares_a_kept_alive_connection_and_a_split_head(
    serve_args: list[str], workdir: Path
) -> None:
    with (
        http_serving([*serve_args, "--header-timeout", "0.3"], workdir) as server,
        socket.create_connection((server.host, server.port), timeout=5) as sock,
    ):
        for _ in range(2):  # a batch gets a short 400 and the connection stays open
            request = head(server, 2) + b"[]"
            sock.sendall(request[:30])
            time.sleep(0.1)
            sock.sendall(request[30:])
            assert read_response(sock).startswith(b"HTTP/1.1 400 ")
            time.sleep(0.6)  # idle between requests: keep-alive, not the head deadline


def test_a_stalled_body_gets_408_and_a_slow_one_goes_through(serve_args: list[str], workdir: Path) -> None:
    body = json.dumps(INIT).encode()
    with http_serving([*serve_args, "--body-timeout", "0.4", "--log-level", "INFO"], workdir) as server:
        with socket.create_connection((server.host, server.port), timeout=5) as sock:
            started = time.monotonic()
            sock.sendall(head(server, len(body)) + body[:10])
            response = read_all(sock, 10)
            took = time.monotonic() - started
        assert response.startswith(b"HTTP/1.1 408 "), response
        error = json_body(response)["error"]
        assert error["data"] == {"refused": "body"} and "--body-timeout" in error["message"]
        assert 0.35 < took < 5

        with socket.create_connection((server.host, server.port), timeout=10) as sock:
            sock.sendall(head(server, len(body)))
            for start in range(0, len(body), 20):  # every pause shorter than the timeout
                time.sleep(0.1)
                sock.sendall(body[start : start + 20])
            sock.settimeout(10)
            answered = sock.recv(65536)
        assert answered.startswith(b"HTTP/1.1 200 "), answered
    assert server.proc.stderr is not None
    lines = [line for line in server.proc.stderr.read().decode().splitlines() if "body" in line]
    assert lines == [
        "pegboard serve: INFO pegboard.mcp.serve: dropped POST /mcp: no body bytes for 0.4 s (--body-timeout) "
        f"after 10 of {len(body)} body bytes"
    ]


def test_connections_over_the_cap_get_503_and_the_others_carry_on(serve_args: list[str], workdir: Path) -> None:
    body = json.dumps(INIT).encode()
    with http_serving([*serve_args, "--max-connections", "3"], workdir) as server:
        held = [httpx.Client(headers=ACCEPT, timeout=10) for _ in range(3)]
        try:
            for client in held:  # each keeps its connection open (keep-alive)
                assert client.post(server.url, json=INIT).status_code == 200
            with socket.create_connection((server.host, server.port), timeout=5) as sock:
                sock.sendall(head(server, len(body)) + body)
                response = read_all(sock, 10)
            assert response.startswith(b"HTTP/1.1 503 "), response
            assert b"retry-after: 1" in response.lower()
            error = json_body(response)["error"]
            assert error["data"] == {"refused": "connections", "limit": 3}
            assert "--max-connections" in error["message"]
            for client in held:
                assert client.post(server.url, json=INIT).status_code == 200
            held.pop().close()
            deadline = time.monotonic() + 5
            while True:  # the closed connection's slot frees once the server has seen it go
                status = httpx.post(server.url, json=INIT, headers=ACCEPT, timeout=10).status_code
                if status == 200 or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            assert status == 200
        finally:
            for client in held:
                client.close()


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except OSError:
        return False
    return "\nState:\tZ" not in status


def wait_for(path: Path, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and (text := path.read_text(encoding="utf-8").strip()):
            return text
        time.sleep(0.02)
    raise AssertionError(f"{path} did not appear within {timeout} s")


@pytest.fixture
def bash_server(serve_args: list[str], workdir: Path, request: pytest.FixtureRequest) -> Iterator[HttpServer]:
    grace = request.param
    args = [*serve_args, "--mode", "bypassPermissions", "--disconnect-grace", grace]
    with http_serving(args, workdir) as server:
        yield server


def start_call_and_leave(server: HttpServer, command: str) -> tuple[RawHttpSession, float]:
    """Open a session, start ``Bash`` with ``command`` on a connection of its own, and close
    that connection once the answer's stream has begun; the session, and when it closed."""
    session = RawHttpSession(server.url)
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "Bash", "arguments": {"command": command}},
    }
    body = json.dumps(call).encode()
    extra = f"Mcp-Session-Id: {session.session_id}\r\nMcp-Protocol-Version: 2025-06-18\r\n"
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(head(server, len(body), extra) + body)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
    return session, time.monotonic()


@pytest.mark.parametrize("bash_server", ["1.5"], indirect=True)
def test_a_session_call_whose_client_left_is_ended_after_the_grace(bash_server: HttpServer, workdir: Path) -> None:
    pidfile = workdir / "sleep.pid"
    session, left = start_call_and_leave(bash_server, f"sleep 60 & echo $! > {pidfile}; wait")
    try:
        pid = int(wait_for(pidfile, 20))
        time.sleep(max(0.0, left + 0.5 - time.monotonic()))
        assert alive(pid), "the call was ended before the grace was over"
        deadline = time.monotonic() + 10
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid), "the command outlived its client by far more than the grace"
        assert session.request("ping")["result"] == {}  # the session itself goes on
    finally:
        session.close()


@pytest.mark.parametrize("bash_server", ["20"], indirect=True)
def test_a_call_that_finishes_within_the_grace_is_left_alone(bash_server: HttpServer, workdir: Path) -> None:
    started, finished = workdir / "started", workdir / "finished"
    session, _left = start_call_and_leave(bash_server, f"echo yes > {started}; sleep 0.5; echo done > {finished}")
    try:
        wait_for(started, 20)
        assert wait_for(finished, 20) == "done"
    finally:
        session.close()


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        ("--header-timeout", "0", b"more than 0 seconds"),
        ("--body-timeout", "nan", b"more than 0 seconds"),
        ("--body-timeout", "soon", b"expected a number of seconds"),
        ("--disconnect-grace", "-1", b"0 or more seconds"),
        ("--max-connections", "0", b"--max-connections"),
    ],
)
def test_bad_http_limits_are_usage_errors(
    serve_args: list[str], workdir: Path, option: str, value: str, expected: bytes
) -> None:
    done = subprocess.run(
        [PEGBOARD, *serve_args, "--http", "127.0.0.1:1", option, value],
        cwd=workdir,
        env=serve_env(),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2 and expected in done.stderr and option.encode() in done.stderr, done.stderr


def test_http_limits_without_http_are_usage_errors(serve_args: list[str], workdir: Path) -> None:
    done = subprocess.run(
        [PEGBOARD, *serve_args, "--disconnect-grace", "5"],
        cwd=workdir,
        env=serve_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2 and b"--disconnect-grace applies only to --http" in done.stderr, done.stderr


def test_defaults_are_what_the_docs_say() -> None:
    from pegboard_mcp_server.limits import HttpLimits

    assert HttpLimits() == HttpLimits(header_timeout=10, body_timeout=30, max_connections=256, disconnect_grace=30)
    docs = (Path(__file__).resolve().parents[2] / "docs" / "mcp.md").read_text(encoding="utf-8")
    for option, default in [
        ("--header-timeout", "10"),
        ("--body-timeout", "30"),
        ("--max-connections", "256"),
        ("--disconnect-grace", "30"),
    ]:
        assert f"`{option}" in docs and f"Default {default}" in docs.split(f"`{option}", 1)[1].split("\n", 1)[0]
