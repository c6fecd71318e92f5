"""notify_user through Apprise's ``json://`` URL against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

import pegboard_messaging_notify
from pegboard import Pegboard
from tests.builtin.web.server import LocalServer, Reply
from tests.plugins.messaging.support import Recorder, board

PASSWORD = "apprise-pass-3e4f5a6b7c8d"


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as srv:
        srv.route("/notify", Reply(body=b"{}", content_type="application/json"))
        yield srv


def route_url(srv: LocalServer) -> str:
    return f"json://agent:{PASSWORD}@127.0.0.1:{srv.server_address[1]}/notify"


def call(pb: Pegboard, name: str, data: dict[str, Any], rec: Recorder | None = None) -> Any:
    async def go() -> Any:
        return await pb.session(approver=(rec or Recorder()).approve).call(name, data)
    return asyncio.run(go())


def test_notify_user_posts_the_body_and_redacts_the_url_secrets(server: LocalServer) -> None:
    rec = Recorder()
    pb = board(pegboard_messaging_notify, user={"messaging": {"notify": {"urls": {"phone": route_url(server)}}}},
               recorder=rec)
    result = call(pb, "notify_user", {"title": "Build", "message": f"done; password {PASSWORD}"}, rec)
    assert not result.is_error, result.text
    (seen,) = server.seen
    body = json.loads(seen.body)
    assert body["title"] == "Build" and body["message"].startswith("done; password ")
    assert PASSWORD not in seen.body.decode() and "[REDACTED]" in body["message"]
    assert rec.asked and "notify" in rec.asked[0]
    shown = result.text + json.dumps(result.structured) + json.dumps(rec.events)
    assert PASSWORD not in shown and route_url(server) not in shown
    assert result.structured["routes"] == ["phone"]


def test_a_route_that_is_down_is_an_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"json://127.0.0.1:{port}/notify"
    pb = board(pegboard_messaging_notify, user={"messaging": {"notify": {"urls": {"phone": url}}}})
    result = call(pb, "notify_user", {"message": "hello"})
    assert result.is_error and result.metadata["error_kind"] == "channel_down"
    assert "could not deliver to phone" in result.text


def test_urls_from_the_environment_and_not_from_a_project(server: LocalServer, tmp_path: Any) -> None:
    project = {"messaging": {"notify": {"urls": {"phone": route_url(server)}}}}
    pb = board(pegboard_messaging_notify, project=project, cwd=tmp_path)
    refused = call(pb, "notify_user", {"message": "x"})
    assert refused.is_error and "in a project file is ignored" in refused.text and not server.seen
    pb = board(pegboard_messaging_notify, env={"PEGBOARD_APPRISE_URLS": route_url(server)})
    sent = call(pb, "notify_user", {"message": "from env"})
    assert not sent.is_error, sent.text
    assert json.loads(server.seen[0].body)["message"] == "from env"
