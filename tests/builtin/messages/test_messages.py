"""sessions_list, sessions_history, sessions_send and SendMessage over a real store and the deliver hook."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pegboard_messages as messages
from pegboard import MessageDelivery, Pegboard, hookimpl
from pegboard.testing import check_tool, isolated_pegboard


class Inbox:
    def __init__(self, reply: Any = "got it") -> None:
        self.reply = reply
        self.received: list[MessageDelivery] = []

    @hookimpl
    def deliver_message(self, request: MessageDelivery) -> Any:
        self.received.append(request)
        return self.reply if request.wait else True


def board(tmp_path: Path, *plugins: object) -> Pegboard:
    return isolated_pegboard(messages, *plugins, cwd=tmp_path, env={"PEGBOARD_DATA_DIR": str(tmp_path / "d")})


def test_conforms() -> None:
    check_tool(messages.sessions_list, {"limit": 5})
    check_tool(messages.sessions_history, {"sessionKey": "main"})
    check_tool(messages.sessions_send, {"sessionKey": "main", "message": "hi", "timeoutSeconds": 0})
    check_tool(messages.send_message, {"to": "helper", "message": "hi"})


async def test_list_history_and_send(tmp_path: Path) -> None:
    inbox = Inbox()
    pb = board(tmp_path, inbox)
    async with pb.session(agent="helper") as other:
        other.record_message("user", "tidy the docs")
        other.record_message("tool", "Read docs/a.md")
        other.record_message("assistant", "done tidying")
        other_id = other.id
    async with pb.session(agent="main") as me:
        listed = await me.call("sessions_list", {"messageLimit": 1})
        rows = {r["sessionId"]: r for r in (listed.structured or {})["sessions"]}
        assert rows[other_id]["agent"] == "helper" and rows[me.id]["current"] is True
        assert [m["content"] for m in rows[other_id]["messages"]] == ["done tidying"]
        history = await me.call("sessions_history", {"sessionKey": "helper"})
        assert [m["content"] for m in (history.structured or {})["messages"]] == ["tidy the docs", "done tidying"]
        with_tools = await me.call("sessions_history", {"sessionId": other_id, "includeTools": True})
        assert len((with_tools.structured or {})["messages"]) == 3
        sent = await me.call("sessions_send", {"sessionKey": "helper", "message": "status?", "timeoutSeconds": 5})
        assert sent.structured == {"status": "ok", "sessionId": other_id, "reply": "got it"}
        assert "not the user's approval" in sent.text
        fire = await me.call("SendMessage", {"to": other_id, "message": "fyi"})
        assert not fire.is_error and inbox.received[-1].wait == 0
        assert inbox.received[0].sender == "main" and inbox.received[0].session_id == other_id
        missing = await me.call("sessions_history", {"sessionKey": "nobody"})
        assert missing.is_error and missing.metadata["error_kind"] == "not_found"


async def test_a_name_that_now_means_another_agent_is_refused(tmp_path: Path) -> None:
    inbox = Inbox()
    pb = board(tmp_path, inbox)
    async with pb.session(agent="helper") as first:
        first_id = first.id
    async with pb.session(agent="main") as me:
        ok = await me.call("SendMessage", {"to": "helper", "message": "one"})
        assert not ok.is_error and inbox.received[0].session_id == first_id
        async with pb.session(agent="helper") as second:
            second.record_message("user", "newer")
        refused = await me.call("SendMessage", {"to": "helper", "message": "two"})
        assert refused.is_error and refused.metadata["error_kind"] == "target_changed"
        assert len(inbox.received) == 1


async def test_without_a_host_sending_is_unavailable_and_undelivered_is_an_error(tmp_path: Path) -> None:
    pb = board(tmp_path)
    disabled = {d.name: d.reason for d in pb.tools().disabled}
    assert "deliver_message" in disabled["SendMessage"] and "sessions_list" in pb.tools().enabled
    pb = board(tmp_path, Inbox(reply=False))
    async with pb.session(agent="helper") as other:
        other_id = other.id
    async with pb.session() as me:
        result = await me.call("sessions_send", {"sessionId": other_id, "message": "x"})
    assert result.is_error and result.metadata["error_kind"] == "not_delivered"
