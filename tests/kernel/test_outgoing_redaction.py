"""What leaves the kernel is redacted: refusal texts that quote a command, the rule they
suggest, and every string in a result's metadata (a fetched URL with a password)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

import pegboard_bash
import pegboard_web_fetch
from pegboard import Pegboard, ToolContext, ToolResult, hookimpl, tool
from pegboard.testing import isolated_pegboard
from tests.builtin.web.server import LocalServer, Reply

BEARER = "sk-proj-" + "Q7w8E9r0T1y2U3i4O5p6A7s8D9f0"
GITHUB = "ghp_" + "Zr4Lm9Qx2Vb7Nc1Kd8Jh3Gf6Sa5Pw0Ty"


def leaked(result: ToolResult) -> list[str]:
    """The secrets found anywhere in what a host gets: text, structured value, metadata."""
    shown = json.dumps(result.to_json(), ensure_ascii=False)
    return [secret for secret in (BEARER, GITHUB, "hunter2-pass") if secret in shown]


def bash_board(tmp_path: Path, permissions: dict[str, Any]) -> Pegboard:
    return isolated_pegboard(pegboard_bash, cwd=tmp_path, env={"HOME": str(tmp_path)},
                             config={"permissions": permissions})


async def test_a_refused_command_is_quoted_redacted(tmp_path: Path) -> None:
    pb = bash_board(tmp_path, {})
    command = f"curl -H 'Authorization: Bearer {BEARER}' https://api.example.com/v1/models"
    refused = await pb.call("Bash", {"command": command})
    assert refused.reason == "not_approved", refused.text
    assert leaked(refused) == [], refused.to_json()
    clone = await pb.call("Bash", {"command": f"git clone https://{GITHUB}@github.com/acme/tools.git"})
    assert clone.reason == "not_approved" and "needs approval" in clone.text
    assert leaked(clone) == [], clone.to_json()


async def test_a_denied_command_and_the_rule_in_its_metadata_are_redacted(tmp_path: Path) -> None:
    rule = f"Bash(curl -H Authorization: Bearer {BEARER} *)"
    pb = bash_board(tmp_path, {"deny": [rule]})
    denied = await pb.call("Bash", {"command": f"curl -H 'Authorization: Bearer {BEARER}' https://x.example"})
    assert denied.reason == "denied", denied.text
    assert "rule" in denied.metadata and "[REDACTED]" in denied.metadata["rule"]
    assert leaked(denied) == [], denied.to_json()


async def test_the_suggested_rule_is_redacted(tmp_path: Path) -> None:
    pb = bash_board(tmp_path, {})
    refused = await pb.call("Bash", {"command": f"'Authorization: Bearer {BEARER}'"})
    assert refused.reason == "not_approved" and "to permissions.allow" in refused.text, refused.text
    assert "[REDACTED]" in refused.text and leaked(refused) == []


def test_webfetch_metadata_url_loses_its_password(tmp_path: Path) -> None:
    with LocalServer() as server:
        server.route("/page", Reply(body=b"<html><body><p>hello from the page</p></body></html>"))
        port = server.server_address[1]
        fetch = {"allowPrivateHosts": ["127.0.0.1"], "allowHttpForPrivateHosts": True}
        pb = isolated_pegboard(pegboard_web_fetch, cwd=tmp_path, env={"HOME": str(tmp_path)},
                               config={"permissions": {"defaultMode": "bypassPermissions"},
                                       "tools": {"web": {"fetch": fetch}}})
        result = pb.call_sync("WebFetch", {"url": f"http://reader:hunter2-pass@127.0.0.1:{port}/page"})
        assert pb.call_sync("WebFetch", {"url": server.url("/page")}).metadata["url"] == server.url("/page")
    assert result.metadata["error_kind"] == "credentials_in_url", result.text
    assert result.metadata["url"] == f"http://reader:[REDACTED]@127.0.0.1:{port}/page"
    assert leaked(result) == [], result.to_json()
    assert server.hits("/page") == 1  # the URL with a password was refused before any request


class Note(BaseModel):
    note: str


@tool(name="Report")
async def report(input: Note, ctx: ToolContext) -> ToolResult:
    """Report a note with its sources."""
    return ToolResult.from_text("done", metadata={"sources": [{"url": f"https://{GITHUB}@github.com/a"}],
                                                  "note": input.note})


@tool(name="Explode")
async def explode(input: Note, ctx: ToolContext) -> str:
    """Fail, quoting the note."""
    raise RuntimeError(f"could not use {input.note}")


class Reporter:
    """A tool that puts credentials in nested metadata, and one that fails quoting its input."""

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(report)
        register(explode)


async def test_every_string_in_metadata_and_in_a_failure_is_redacted(tmp_path: Path) -> None:
    pb = isolated_pegboard(Reporter(), cwd=tmp_path, env={"HOME": str(tmp_path), "MY_TOKEN": "hunter2-pass-long"},
                           config={"permissions": {"defaultMode": "bypassPermissions"}})
    done = await pb.call("Report", {"note": f"Authorization: Bearer {BEARER}"})
    assert done.text == "done" and done.metadata["sources"] == [{"url": "https://[REDACTED]@github.com/a"}]
    assert done.metadata["note"] == "Authorization: Bearer [REDACTED]"
    failed = await pb.call("Explode", {"note": "token hunter2-pass-long"})
    assert failed.is_error and "[REDACTED]" in failed.text and leaked(failed) == []
    clean = await pb.call("Report", {"note": "nothing secret"})
    assert clean.metadata["note"] == "nothing secret"


def test_the_cli_prints_a_refusal_redacted(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "HOME": str(tmp_path), "PEGBOARD_DATA_DIR": str(tmp_path / "data")}
    env.pop("PEGBOARD_TRUST_PROJECT", None)
    command = json.dumps({"command": f"curl -H 'Authorization: Bearer {BEARER}' https://{GITHUB}@x.example/"})
    for extra in ([], ["--json"]):
        proc = subprocess.run([sys.executable, "-m", "pegboard", "call", "Bash", "--input", command, *extra],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 1 and "needs approval" in proc.stdout + proc.stderr, proc.stderr
        assert BEARER not in proc.stdout + proc.stderr and GITHUB not in proc.stdout + proc.stderr


def test_a_permission_check_reason_is_redacted(tmp_path: Path) -> None:
    from pegboard.core.config import ConfigLayer

    layer = ConfigLayer("project", {"permissions": {"deny": ["Bash(curl *)"]}}, path=tmp_path / "s.json",
                        root=tmp_path)
    pb = Pegboard(layers=[layer], cwd=tmp_path)
    try:
        token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
        decision = pb.check("Bash", {"command": f"curl -H 'Authorization: Bearer {token}' https://x.example"})
    finally:
        pb.close()
    assert decision.decision == "deny"
    assert token not in decision.reason and "curl" in decision.reason
