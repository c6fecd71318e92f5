"""What a refused call tells the model (its text) and the developer (metadata, stderr)."""

from __future__ import annotations

import json
from pathlib import Path

from pegboard import Pegboard, PermissionUpdate

from .test_first_hour import pegboard

LOOP = "for i in 1 2 3; do echo t$i; done"


def test_a_refused_loop_on_the_command_line(tmp_path: Path) -> None:
    proc = pegboard("call", "Bash", "--input", json.dumps({"command": LOOP}), cwd=tmp_path)
    assert proc.returncode == 1
    assert '"Bash(echo *)"' in proc.stdout and 'add "Bash"' not in proc.stdout and "--yes" not in proc.stdout
    assert "note: to approve such a call, pass --yes" in proc.stderr
    as_json = pegboard("call", "Bash", "--input", json.dumps({"command": LOOP}), "--json", cwd=tmp_path)
    shown = json.loads(as_json.stdout)
    assert shown["metadata"]["suggested_rules"] == ["Bash(echo *)"] and "--yes" in shown["metadata"]["how_to_approve"]


async def test_a_compound_command_gets_one_rule_per_simple_command(tmp_path: Path) -> None:
    pb = Pegboard(cwd=tmp_path, env={"PEGBOARD_CONFIG_DIR": str(tmp_path)})
    refused = await pb.call("Bash", {"command": "touch a.txt && ls a.txt | sort"})
    assert 'add "Bash(touch a.txt *)", "Bash(ls a.txt *)", "Bash(sort *)" to permissions.allow' in refused.text
    assert "approver=" not in refused.text and "approver=" in refused.metadata["how_to_approve"]
    rules = refused.metadata["suggested_rules"]
    always = lambda call, decision: PermissionUpdate(rules=rules)  # noqa: E731
    async with pb.session(persist=False, approver=always) as session:  # the same rules, remembered, let it run
        ran = await session.call("Bash", {"command": "touch a.txt && ls a.txt | sort"})
        session.approver = None
        again = await session.call("Bash", {"command": "touch a.txt && ls a.txt | sort"})
    assert not ran.is_error and not again.is_error, again.text


async def test_a_refused_ask_says_so_without_pushing_a_rule(tmp_path: Path) -> None:
    pb = Pegboard(cwd=tmp_path, env={"PEGBOARD_CONFIG_DIR": str(tmp_path)})
    refused = await pb.call("Read", {"file_path": "/etc/hosts"}, approver=lambda call, decision: False)
    assert refused.reason == "not_approved" and "the approver refused" in refused.text
    assert "permissions.allow" not in refused.text


async def test_a_failed_command_has_a_reason(tmp_path: Path) -> None:
    pb = Pegboard(cwd=tmp_path, env={"PEGBOARD_CONFIG_DIR": str(tmp_path)})
    failed = await pb.call("Bash", {"command": "ls no-such-file"})
    assert failed.is_error and failed.reason == "tool_error" and failed.metadata.get("error_kind") == "exit_code"
