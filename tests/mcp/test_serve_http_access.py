"""Who may talk to ``pegboard serve --http``: Host and Origin checks on every binding.

127.0.0.2 is a loopback address on Linux that is not ``127.0.0.1``/``localhost``: the binding
that used to have no DNS-rebinding protection at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client

from pegboard_mcp_server.guard import Access, parse_origin, split_authority

from .conftest import ACCEPT, INIT, free_port, http_serving


def post(url: str, headers: dict[str, str] | None = None, body: Any = None) -> httpx.Response:
    return httpx.post(url, json=INIT if body is None else body, headers={**ACCEPT, **(headers or {})}, timeout=20)


def refusal(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    error: dict[str, Any] = body["error"]
    return error


def test_non_localhost_loopback_binding_refuses_a_foreign_host(serve_args: list[str], workdir: Path) -> None:
    with http_serving(serve_args, workdir, host="127.0.0.2") as server:
        evil = post(server.url, {"Host": "evil.example.com"})
        assert evil.status_code == 421
        error = refusal(evil)
        assert error["data"] == {"refused": "host", "value": "evil.example.com"}
        assert "--allow-host evil.example.com" in error["message"]

        other_port = post(server.url, {"Host": f"127.0.0.2:{server.port + 1}"})
        assert other_port.status_code == 421
        localhost_other_port = post(server.url, {"Host": f"localhost:{server.port + 1}"})
        assert localhost_other_port.status_code == 421
        no_port_means_80 = post(server.url, {"Host": "127.0.0.2"})
        assert no_port_means_80.status_code == 421

        for host in (f"127.0.0.2:{server.port}", f"localhost:{server.port}", f"LOCALHOST:{server.port}"):
            ok = post(server.url, {"Host": host})
            assert ok.status_code == 200, (host, ok.text)

        elsewhere = httpx.get(f"http://127.0.0.2:{server.port}/other", headers={"Host": "evil.example.com"})
        assert elsewhere.status_code == 421  # every path, not just /mcp


def test_foreign_origins_are_refused_and_localhost_only_on_the_served_port(
    serve_args: list[str], workdir: Path
) -> None:
    with http_serving(serve_args, workdir, host="127.0.0.2") as server:
        port = server.port
        for origin in (f"http://127.0.0.2:{port}", f"http://localhost:{port}", f"https://localhost:{port}"):
            ok = post(server.url, {"Origin": origin})
            assert ok.status_code == 200, (origin, ok.text)
        for origin in (
            "https://evil.example.com",
            f"http://localhost:{port + 1}",
            "http://localhost",
            f"http://evil.example.com:{port}",
            "null",
            f"file://localhost:{port}",
        ):
            refused = post(server.url, {"Origin": origin})
            assert refused.status_code == 403, origin
            error = refusal(refused)
            assert error["data"]["refused"] == "origin" and "--allow-origin" in error["message"]


def test_allow_host_and_allow_origin(serve_args: list[str], workdir: Path) -> None:
    args = [*serve_args, "--allow-host", "mcp.example.com", "--allow-origin", "https://app.example.com"]
    with http_serving(args, workdir, host="127.0.0.2") as server:
        assert post(server.url, {"Host": "mcp.example.com"}).status_code == 200
        assert post(server.url, {"Host": "MCP.example.com:8443"}).status_code == 200
        assert post(server.url, {"Host": "other.example.com"}).status_code == 421
        assert post(server.url, {"Origin": "https://app.example.com"}).status_code == 200
        assert post(server.url, {"Origin": "https://app.example.com:443"}).status_code == 200
        assert post(server.url, {"Origin": "http://app.example.com"}).status_code == 403
        assert post(server.url, {"Origin": f"http://mcp.example.com:{server.port}"}).status_code == 200


def test_127_0_0_1_binding_is_checked_the_same_way(serve_args: list[str], workdir: Path) -> None:
    with http_serving(serve_args, workdir) as server:
        assert post(server.url, {"Host": "evil.example.com"}).status_code == 421
        assert post(server.url, {"Origin": f"http://localhost:{server.port + 1}"}).status_code == 403
        assert post(server.url, {"Host": f"[::1]:{server.port}"}).status_code == 200


async def test_official_client_on_127_0_0_2(serve_args: list[str], workdir: Path) -> None:
    with http_serving(serve_args, workdir, host="127.0.0.2") as server:
        async with Client(server.url, mode="legacy") as client:
            result = await client.call_tool("Echo", {"text": "rebinding-proof"})
    assert not result.is_error and result.structured_content == {"length": 15}


def test_bad_allow_values_are_usage_errors(serve_args: list[str], workdir: Path) -> None:
    import subprocess

    from .conftest import PEGBOARD, serve_env

    port = free_port("127.0.0.2")
    for option, value in (("--allow-host", "http://x/"), ("--allow-origin", "app.example.com")):
        done = subprocess.run(
            [PEGBOARD, *serve_args, "--http", f"127.0.0.2:{port}", option, value],
            capture_output=True,
            env=serve_env(),
            cwd=workdir,
            timeout=60,
        )
        assert done.returncode == 2 and option.encode() in done.stderr
    done = subprocess.run(
        [PEGBOARD, *serve_args, "--allow-host", "x.example"], capture_output=True, env=serve_env(), timeout=60
    )
    assert done.returncode == 2 and b"only to --http" in done.stderr


# -- the matching rules, for any input ------------------------------------------------------------

ACCESS = Access(bind="127.0.0.2", port=8123, allow_hosts=("mcp.example.com",), allow_origins=("https://app.example",))
names = st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z][a-z0-9-]{0,10}){0,3}", fullmatch=True)


@given(st.text(max_size=80))
def test_checks_never_raise(text: str) -> None:
    assert isinstance(ACCESS.host_allowed(text), bool)
    assert isinstance(ACCESS.origin_allowed(text), bool)
    if ACCESS.host_allowed(text):  # only the bound address or a listed name gets in
        assert any(name in text.lower() for name in ("127.0.0.2", "mcp.example.com", "localhost", "127.0.0.1"))
    refused = ACCESS.check_headers({"host": text, "origin": text})
    assert refused is None or refused.status in (421, 403)


@given(names, st.integers(1, 65535))
def test_unknown_names_are_refused_on_any_port(name: str, port: int) -> None:
    known = {"localhost", "mcp.example.com", "app.example"}
    if name in known:
        return
    assert not ACCESS.host_allowed(f"{name}:{port}")
    assert not ACCESS.origin_allowed(f"http://{name}:{port}")
    assert not ACCESS.origin_allowed(f"https://{name}")


@given(st.sampled_from(["127.0.0.2", "localhost", "127.0.0.1", "[::1]"]), st.integers(1, 65535))
def test_loopback_names_only_on_the_served_port(name: str, port: int) -> None:
    assert ACCESS.host_allowed(f"{name}:{port}") is (port == 8123)
    assert ACCESS.origin_allowed(f"http://{name}:{port}") is (port == 8123)


@given(names, st.one_of(st.none(), st.integers(1, 65535)))
def test_split_authority_round_trip(name: str, port: int | None) -> None:
    text = name if port is None else f"{name}:{port}"
    assert split_authority(text.upper()) == (name, port)
    scheme, host, parsed_port = parse_origin(f"https://{text}")
    assert (scheme, host, parsed_port) == ("https", name, 443 if port is None else port)


# -- bearer token -----------------------------------------------------------------------------------

TOKEN = "s3cret-token-for-tests-0123456789"


def test_non_loopback_binding_without_a_token_refuses_to_start(serve_args: list[str], workdir: Path) -> None:
    import subprocess

    from .conftest import PEGBOARD, serve_env

    for address in ("0.0.0.0:8765", "[::]:8765", "myhost.example:8765"):
        done = subprocess.run(
            [PEGBOARD, *serve_args, "--http", address], capture_output=True, env=serve_env(), cwd=workdir, timeout=60
        )
        stderr = done.stderr.decode()
        assert done.returncode == 2, stderr
        assert "non-loopback" in stderr and "--token-env NAME" in stderr and "Authorization: Bearer" in stderr
    unset = subprocess.run(
        [PEGBOARD, *serve_args, "--http", "0.0.0.0:8765", "--token-env", "PEGBOARD_TEST_NO_SUCH_VAR"],
        capture_output=True,
        env=serve_env(),
        cwd=workdir,
        timeout=60,
    )
    assert unset.returncode == 2 and b"PEGBOARD_TEST_NO_SUCH_VAR is not set or empty" in unset.stderr


def test_token_on_loopback_is_required_on_every_request(serve_args: list[str], workdir: Path) -> None:
    args = [*serve_args, "--token-env", "PB_SERVE_TOKEN"]
    with http_serving(args, workdir, host="127.0.0.2", env={"PB_SERVE_TOKEN": TOKEN}) as server:
        missing = post(server.url)
        assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
        error = refusal(missing)
        assert error["data"] == {"refused": "authorization"} and "--token-env" in error["message"]
        assert TOKEN not in missing.text

        wrong = post(server.url, {"Authorization": f"Bearer {TOKEN}x"})
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"].startswith("Bearer")
        assert post(server.url, {"Authorization": f"Basic {TOKEN}"}).status_code == 401
        assert post(server.url, {"Authorization": TOKEN}).status_code == 401
        assert httpx.get(f"http://127.0.0.2:{server.port}/other").status_code == 401

        assert post(server.url, {"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        assert post(server.url, {"Authorization": f"bearer {TOKEN}"}).status_code == 200
        host_first = post(server.url, {"Authorization": f"Bearer {TOKEN}", "Host": "evil.example.com"})
        assert host_first.status_code == 421


async def test_official_client_with_a_token(serve_args: list[str], workdir: Path) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    args = [*serve_args, "--token-env", "PB_SERVE_TOKEN"]
    with http_serving(args, workdir, host="127.0.0.2", env={"PB_SERVE_TOKEN": TOKEN}) as server:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
        async with http, Client(streamable_http_client(server.url, http_client=http), mode="legacy") as client:
            result = await client.call_tool("Echo", {"text": "with token"})
    assert not result.is_error and result.structured_content == {"length": 10}


@given(st.text(min_size=1, max_size=60).filter(lambda t: t.strip() != TOKEN))
def test_only_the_token_passes(candidate: str) -> None:
    access = Access(bind="127.0.0.2", port=8123, token=TOKEN)
    assert not access.token_ok(f"Bearer {candidate}")
    assert access.token_ok(f"Bearer {TOKEN}")
    assert Access(bind="127.0.0.2", port=8123).token_ok(None)
