"""The messaging tools over a real webhook channel: a JSON POST to an HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import pegboard_messaging_webhook
from pegboard import Pegboard
from pegboard_messaging import CLOCK, MESSAGE_ACTIONS, bind_chat
from tests.builtin.web.server import LocalServer
from tests.plugins.messaging.support import Recorder, board

TOKEN = "hook-token-5f1e9a0c7b2d4e68"


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as srv:
        srv.json_route("/ops", lambda seen: {"id": f"m{len(srv.seen)}"})
        srv.json_route("/team", lambda seen: {"ok": True})
        yield srv


def user_config(srv: LocalServer, **extra: Any) -> dict[str, Any]:
    webhook = {"endpoints": {"ops": srv.url("/ops"), "team": srv.url("/team")},
               "headers": {"Authorization": f"Bearer {TOKEN}"}, "allowPrivateHosts": ["127.0.0.1"]}
    return {"messaging": {"webhook": webhook, **extra}}


def run(pb: Pegboard, calls: list[tuple[str, dict[str, Any]]], recorder: Recorder | None = None,
        session: Any = None) -> list[Any]:
    async def go() -> list[Any]:
        s = session or pb.session(approver=recorder.approve if recorder else None)
        return [await s.call(name, data) for name, data in calls]
    return asyncio.run(go())


def test_send_message_posts_json_and_keeps_a_receipt(server: LocalServer) -> None:
    rec = Recorder()
    pb = board(pegboard_messaging_webhook, user=user_config(server), recorder=rec)
    pb.stash[CLOCK] = lambda: datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    sent, receipt = run(pb, [("send_message", {"channel": "webhook", "to": "ops", "text": "deploy done"}),
                             ("message_receipt", {})], rec)
    assert not sent.is_error, sent.text
    body = json.loads(server.seen[0].body)
    assert body == {"text": "deploy done", "target": "ops"}
    assert server.seen[0].headers["authorization"] == f"Bearer {TOKEN}"
    assert sent.structured["messageId"] == "m1" and sent.structured["receipt"].startswith("msg_")
    assert rec.asked and "webhook:ops" in rec.asked[0]
    row = receipt.structured["receipts"][0]
    assert row["status"] == "sent" and row["at"] == "2026-01-02T03:04:05+00:00" and row["channel_message_id"] == "m1"
    assert [k for k, _ in rec.events] == ["message_sent"]
    assert rec.events[0][1]["target"] == "ops"


def test_reading_asks_nothing_and_an_allow_rule_makes_a_recipient_known(server: LocalServer) -> None:
    rec = Recorder(answer=False)
    config = user_config(server)
    config["permissions"] = {"allow": ["Message(webhook:ops)"]}
    pb = board(pegboard_messaging_webhook, user=config, recorder=rec)
    ops, team, receipts = run(pb, [
        ("send_message", {"channel": "webhook", "to": "ops", "text": "a"}),
        ("send_message", {"channel": "webhook", "to": "team", "text": "b"}),
        ("message_receipt", {}),
    ], rec)
    assert not ops.is_error and not receipts.is_error
    assert team.is_error and team.reason in ("not_approved", "denied"), team.text
    assert len(rec.asked) == 1 and "webhook:team" in rec.asked[0]
    assert [s.path for s in server.seen] == ["/ops"]


def test_a_recipient_denied_by_a_rule_is_refused_before_anything_is_sent(server: LocalServer) -> None:
    config = user_config(server)
    config["permissions"] = {"deny": ["Message(webhook:team)"], "allow": ["Message(webhook)"]}
    pb = board(pegboard_messaging_webhook, user=config)
    team, ops = run(pb, [("send_message", {"channel": "webhook", "to": "team", "text": "x"}),
                         ("message", {"action": "send", "channel": "webhook", "target": "ops", "message": "y"})])
    assert team.is_error and team.reason == "denied" and "Message(webhook:team)" in team.text
    assert not ops.is_error
    assert [s.path for s in server.seen] == ["/ops"]


def test_a_call_naming_no_channel_is_held_to_deny_rules(server: LocalServer) -> None:
    config = user_config(server)
    config["permissions"] = {"deny": ["Message(webhook:team)"], "allow": ["Message(webhook)"]}
    rec = Recorder(answer=False)
    pb = board(pegboard_messaging_webhook, user=config, recorder=rec)
    (result,) = run(pb, [("send_message", {"to": "team", "text": "x"})], rec)
    assert result.is_error and not server.seen


def test_an_action_the_channel_does_not_declare_is_refused_naming_it(server: LocalServer) -> None:
    pb = board(pegboard_messaging_webhook, user=user_config(server))
    (pin,) = run(pb, [("message", {"action": "pin", "channel": "webhook", "messageId": "1"})], Recorder())
    assert pin.is_error and pin.metadata["error_kind"] == "unsupported_action"
    assert "channel 'webhook' cannot pin (it supports: notify, send, thread-reply)" in pin.text


def test_the_message_tool_lists_the_seed_actions_exactly() -> None:
    from pegboard_messaging import MessageInput

    schema = MessageInput.model_json_schema()
    assert tuple(schema["properties"]["action"]["enum"]) == MESSAGE_ACTIONS
    assert "thread-create" in MESSAGE_ACTIONS and "list-pins" in MESSAGE_ACTIONS and len(MESSAGE_ACTIONS) == 31


def test_a_session_bound_to_a_chat_sends_only_there(server: LocalServer) -> None:
    pb = board(pegboard_messaging_webhook, user=user_config(server))
    rec = Recorder()
    session = pb.session(approver=rec.approve)
    bind_chat(session, "webhook", "ops")
    other, default, same = run(pb, [
        ("message", {"action": "send", "channel": "webhook", "target": "team", "message": "leak"}),
        ("message", {"action": "send", "channel": "webhook", "message": "reply"}),
        ("send_message", {"channel": "webhook", "to": "ops", "text": "also"}),
    ], session=session)
    assert other.is_error and other.metadata["error_kind"] == "outside_chat_session"
    assert "webhook:ops" in other.text
    assert not default.is_error and default.structured["target"] == "ops"
    assert not same.is_error
    assert [s.path for s in server.seen] == ["/ops", "/ops"]
    # notify_user reaches the user, not another chat: the binding does not hold it (the webhook
    # channel then wants to know which of its two endpoints notifies)
    (notified,) = run(pb, [("notify_user", {"channel": "webhook", "message": "for the user"})], session=session)
    assert notified.metadata["error_kind"] == "invalid_target", notified.text


def test_a_channel_that_is_down_is_an_error_and_a_failed_receipt() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = {"messaging": {"webhook": {"endpoints": {"ops": f"http://127.0.0.1:{port}/x"},
                                        "allowPrivateHosts": ["127.0.0.1"]}}}
    rec = Recorder()
    pb = board(pegboard_messaging_webhook, user=config, recorder=rec)
    sent, receipts = run(pb, [("send_message", {"channel": "webhook", "to": "ops", "text": "hello"}),
                              ("message_receipt", {})], rec)
    assert sent.is_error and sent.metadata["error_kind"] == "channel_down"
    assert "cannot be reached" in sent.text and str(port) not in sent.text
    assert receipts.structured["receipts"][0]["status"] == "failed"
    assert [k for k, _ in rec.events] == ["message_failed"]


def test_private_hosts_need_the_documented_setting(server: LocalServer) -> None:
    config = user_config(server)
    config["messaging"]["webhook"]["allowPrivateHosts"] = []
    pb = board(pegboard_messaging_webhook, user=config)
    (sent,) = run(pb, [("send_message", {"channel": "webhook", "to": "ops", "text": "x"})], Recorder())
    assert sent.is_error and sent.metadata["error_kind"] == "blocked_address"
    assert "messaging.webhook.allowPrivateHosts" in sent.text and not server.seen


def test_secrets_are_redacted_in_what_is_sent_stored_and_shown(server: LocalServer) -> None:
    rec = Recorder()
    pb = board(pegboard_messaging_webhook, user=user_config(server), recorder=rec)
    text = f"the token is {TOKEN} and the hook is {server.url('/team')}"
    sent, receipt = run(pb, [("send_message", {"channel": "webhook", "to": "ops", "text": text}),
                             ("message_receipt", {})], rec)
    assert not sent.is_error
    posted = server.seen[0].body.decode()
    stored = json.dumps(receipt.structured) + json.dumps(rec.events)
    for where in (posted, stored, sent.text):
        assert TOKEN not in where and server.url("/team") not in where
    assert "[REDACTED]" in posted and "[REDACTED]" in stored


def test_credentials_in_a_project_file_are_ignored(server: LocalServer, tmp_path: Path) -> None:
    project = {"messaging": {"webhook": {"endpoints": {"ops": server.url("/ops")},
                                         "allowPrivateHosts": ["127.0.0.1"]}}}
    pb = board(pegboard_messaging_webhook, project=project, cwd=tmp_path)
    (status,) = run(pb, [("messaging_status", {})], Recorder())
    row = status.structured["channels"][0]
    assert row["available"] is False
    assert "messaging.webhook.endpoints in a project file is ignored" in row["reason"]


def test_messaging_status_lists_channels_and_what_they_can_do(server: LocalServer) -> None:
    pb = board(pegboard_messaging_webhook, user=user_config(server))
    (status,) = run(pb, [("messaging_status", {})], Recorder())
    assert status.structured["channels"] == [{"channel": "webhook", "available": True, "reason": None,
                                              "capabilities": ["notify", "send", "thread-reply"]}]
    assert TOKEN not in status.text


def test_without_a_channel_the_tools_are_unavailable_with_the_reason() -> None:
    pb = board()
    assert "send_message" not in pb.tools().enabled
    (sent,) = run(pb, [("send_message", {"to": "x", "text": "y"})], Recorder())
    assert sent.is_error and sent.reason == "unavailable"
    assert "no message channel is installed" in sent.text


def test_invalid_input_names_the_field() -> None:
    pb = board(pegboard_messaging_webhook)
    (bad,) = run(pb, [("message", {"action": "fly"})], Recorder())
    assert bad.is_error and bad.reason == "invalid_input" and "action" in bad.text
