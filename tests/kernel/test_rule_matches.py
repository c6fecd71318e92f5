"""``pegboard.rule_matches``: one rule, one call, the answer ``permissions.deny`` would give."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pegboard import ConfigLayer, Pegboard, rule_matches


@pytest.mark.parametrize(
    ("rule", "tool", "tool_input", "expected"),
    [
        ("Bash(git *)", "Bash", {"command": "git status"}, True),
        ("Bash(git *)", "Bash", {"command": "ls"}, False),
        ("Edit(src/**)", "Edit", {"file_path": "src/a.py"}, True),
        ("Edit(src/**)", "Edit", {"file_path": "docs/a.md"}, False),
        ("Read", "Read", {"file_path": "anything"}, True),
        ("Read", "Bash", {"command": "cat x"}, False),
        ("Bash((", "Bash", {"command": "ls"}, True),  # unreadable: fails closed for its tool
    ],
)
def test_rule_matches(tmp_path: Path, rule: str, tool: str, tool_input: dict[str, str], expected: bool) -> None:
    assert rule_matches(rule, tool, tool_input, tmp_path) is expected


@given(st.sampled_from(["git status", "git push", "ls -la", "rm -rf x", "npm test"]),
       st.sampled_from(["Bash(git *)", "Bash(npm *)", "Bash(rm:*)", "Bash"]))
def test_agrees_with_a_deny_rule_of_a_pegboard(command: str, rule: str) -> None:
    cwd = Path.cwd()
    pb = Pegboard(layers=[ConfigLayer("code", {"permissions": {"deny": [rule]}})], cwd=cwd, load_entrypoints=False)
    denied = pb.check("Bash", {"command": command}).decision == "deny"
    assert rule_matches(rule, "Bash", {"command": command}, cwd) is denied
