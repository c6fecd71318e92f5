"""docs/messaging.md's complete configuration, loaded from a user config file as written and used."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from pegboard import Pegboard

DOC = Path(__file__).resolve().parents[3] / "docs" / "messaging.md"


def doc_config() -> str:
    blocks = re.findall(r"```toml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    (block,) = [b for b in blocks if b.startswith("# ~/.config/pegboard/settings.toml")]
    return block


def test_the_documented_config_loads_and_works(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".config" / "pegboard").mkdir(parents=True)
    project.mkdir()
    (home / ".config" / "pegboard" / "settings.toml").write_text(doc_config(), encoding="utf-8")
    env = {"HOME": str(home), "PEGBOARD_SMTP_PASSWORD": "a-password-for-the-test",
           "PEGBOARD_MANAGED_CONFIG_DIR": str(tmp_path / "managed")}
    pb = Pegboard(cwd=project, env=env)
    assert not [w for w in pb.warnings if "messaging" in w or "unknown key" in w], pb.warnings
    listed = pb.tools()
    enabled = listed.enabled
    for name in ("message", "send_message", "notify_user", "messaging_status", "message_receipt",
                 "sessions_list", "sessions_history", "session_status"):
        assert name in enabled, (name, enabled)
    # in the profile; unavailable only because this host delivers no messages to sessions
    (send,) = [d for d in listed.disabled if d.name == "sessions_send"]
    assert send.step == "availability"
    assert "Read" not in enabled and "Bash" not in enabled

    assert pb.check("send_message", {"channel": "email", "to": "bob@example.org", "text": "x"}).decision == "allow"
    assert pb.check("send_message", {"channel": "email", "to": "eve@other.net", "text": "x"}).decision == "ask"
    assert pb.check("message", {"action": "send", "channel": "webhook", "target": "ops"}).decision == "deny"
    assert pb.check("notify_user", {"channel": "notify", "message": "x"}).decision == "allow"
    assert pb.check("message", {"action": "read", "channel": "email", "target": "inbox"}).decision == "allow"

    status = asyncio.run(pb.call("messaging_status", {}))
    assert status.structured is not None, status.text
    rows = {r["channel"]: r for r in status.structured["channels"]}
    assert rows["email"]["available"] and rows["webhook"]["available"] and rows["notify"]["available"]
    assert status.structured["defaultChannel"] == "email" and status.structured["notifyChannel"] == "notify"
    assert "change-me" not in status.text and "example-agent-topic" not in status.text
