"""Permission families come from plugins: missing ones fail closed, registered ones take over,
broken ones never approve, and a call loads only the families it needs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from pegboard import ConfigLayer, Pegboard, hookimpl
from pegboard.permissions import FamilyCall, FamilyTool, Outcome, Reading, Rule

PEGBOARD = Path(sys.executable).with_name("pegboard")


def pegboard(*args: str, cwd: Path, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PEGBOARD), *args], capture_output=True, text=True, timeout=60, cwd=cwd,
                          env={**os.environ, **(env or {})})


WITHOUT_SHELL = {"PEGBOARD_DISABLE_PLUGINS": "pegboard-permissions-shell"}


@pytest.mark.parametrize(("mode", "answer"), [("default", "ask"), ("bypassPermissions", "deny"), ("dontAsk", "deny")])
def test_a_rule_of_a_family_nobody_provides_fails_closed(tmp_path: Path, mode: str, answer: str) -> None:
    config = tmp_path / "agent.json"
    config.write_text(json.dumps({"permissions": {"deny": ["Bash(rm *)"]}}))
    proc = pegboard("check", "Bash", "--input", '{"command": "ls"}', "--config", str(config), "--mode", mode,
                    "--json", cwd=tmp_path, env=WITHOUT_SHELL)
    decision = json.loads(proc.stdout)
    assert decision["decision"] == answer, decision
    assert "no installed plugin provides the Bash family" in decision["reason"] and decision["rule"] == "Bash(rm *)"


def test_config_validate_reports_the_missing_family(tmp_path: Path) -> None:
    config = tmp_path / "agent.json"
    config.write_text(json.dumps({"permissions": {"deny": ["Bash(rm *)"], "allow": ["Bash(ls *)"]}}))
    proc = pegboard("config", "validate", str(config), cwd=tmp_path, env=WITHOUT_SHELL)
    assert proc.returncode == 0
    asks = "'Bash(rm *)': no installed plugin provides the Bash family: the rule asks for every Bash call"
    assert asks in proc.stderr
    assert "'Bash(ls *)': no installed plugin provides the Bash family, so the rule is ignored" in proc.stderr


def test_a_tool_whose_family_is_missing_asks_even_without_rules(tmp_path: Path) -> None:
    proc = pegboard("check", "Bash", "--input", '{"command": "ls"}', "--mode", "acceptEdits", "--json",
                    cwd=tmp_path, env=WITHOUT_SHELL)
    assert json.loads(proc.stdout)["decision"] == "ask"


class UpperFamily:
    """``Shout(WORD)``: a test family matching the upper-cased ``text`` exactly."""

    name = "Shout"
    asks = True
    fields = ("text",)
    tools: Mapping[str, FamilyTool] = {}
    file_rules = None
    borrows: Mapping[str, tuple[str, ...]] = {}
    broken = False

    def parse(self, rule: Rule, fields: frozenset[str] | None, note: Callable[[str], None]) -> Sequence[Reading]:
        if self.broken:
            raise ValueError("cannot read it")
        return [("own", (rule.specifier or "").upper())]

    def compile(self, rule_list: str, own: Sequence[tuple[Rule, Any]]) -> Any:
        return dict((word, rule) for rule, word in own)

    def judge(self, call: FamilyCall) -> Outcome:
        out = Outcome()
        word = str(call.data.get("text", "")).upper()
        for lst in ("deny", "ask", "allow"):
            if (rule := call.rules[lst].get(word)) is not None:
                out.note(lst, rule, f"{rule.text} matches {word}")
        out.unapproved = f"Shout {word} needs permission"
        return out


class ShoutPlugin:
    def __init__(self, family: UpperFamily) -> None:
        self.family = family

    @hookimpl
    def register_permission_families(self, register: Callable[[Any], None]) -> None:
        register(self.family)


def board(tmp_path: Path, family: UpperFamily, rules: Mapping[str, list[str]]) -> Pegboard:
    return Pegboard(plugins=[ShoutPlugin(family)], load_entrypoints=False, cwd=tmp_path,
                    layers=[ConfigLayer("code", {"permissions": dict(rules)}, root=tmp_path)])


def test_a_registered_family_judges_its_rules(tmp_path: Path) -> None:
    pb = board(tmp_path, UpperFamily(), {"allow": ["Shout(hello)"], "deny": ["Shout(boom)"]})
    assert pb.check("Shout", {"text": "Hello"}).decision == "allow"
    assert pb.check("Shout", {"text": "boom"}).decision == "deny"
    assert pb.check("Shout", {"text": "other"}).decision == "ask"


def test_a_family_that_cannot_read_its_rules_never_approves(tmp_path: Path) -> None:
    family = UpperFamily()
    family.broken = True
    pb = board(tmp_path, family, {"allow": ["Shout(hello)"], "deny": ["Shout(boom)"]})
    assert pb.check("Shout", {"text": "hello"}).decision == "deny"  # the unreadable deny covers every call


def test_something_that_is_not_a_family_is_refused_with_what_it_lacks(tmp_path: Path) -> None:
    class Half:
        name = "Half"

    pb = Pegboard(plugins=[ShoutPlugin(Half())], load_entrypoints=False, cwd=tmp_path)  # type: ignore[arg-type]
    failed = [p for p in pb.plugins if p.status == "failed"]
    lacks = "Half lacks asks, fields, tools, file_rules, borrows, parse, compile, judge"
    assert failed and lacks in str(failed[0].error)


def test_a_read_check_loads_no_shell_analysis(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from pegboard import Pegboard\n"
        "pb = Pegboard()\n"
        "print(pb.check('Read', {'file_path': 'a.txt'}).decision)\n"
        "print(pb.check('Edit', {'file_path': 'a.txt'}).decision)\n"
        "print(sorted(m for m in sys.modules if m.startswith('pegboard_permissions')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["allow", "ask", "['pegboard_permissions_paths']"]


def test_pegboard_plugins_lists_the_families_and_where_each_comes_from(tmp_path: Path) -> None:
    listed = {f["name"]: f for f in json.loads(pegboard("plugins", "--families", "--json", cwd=tmp_path).stdout)}
    assert listed["Bash"]["distribution"] == "pegboard-permissions-shell"
    assert listed["Read"]["distribution"] == "pegboard-permissions-paths"
    assert listed["WebFetch"]["distribution"] == "pegboard-permissions-web"
    assert listed["Skill"]["distribution"] == "pegboard-skill"
    blocked = {f["name"]: f for f in json.loads(pegboard("plugins", "--families", "--json", cwd=tmp_path,
                                                          env=WITHOUT_SHELL).stdout)}
    assert blocked["Bash"]["status"] == "blocked" and "pegboard-permissions-shell" in str(blocked["Bash"]["error"])
    human = pegboard("plugins", cwd=tmp_path)
    assert "PERMISSION FAMILY" in human.stdout and "pegboard-permissions-web" in human.stdout


def test_a_family_the_config_disables_fails_closed_too(tmp_path: Path) -> None:
    config = tmp_path / "agent.json"
    config.write_text(json.dumps({"permissions": {"deny": ["Bash(rm *)"]},
                                  "plugins": {"disabled": ["pegboard-permissions-shell"]}}))
    proc = pegboard("check", "Bash", "--input", '{"command": "ls"}', "--config", str(config), "--mode",
                    "bypassPermissions", "--json", cwd=tmp_path)
    decision = json.loads(proc.stdout)
    assert decision["decision"] == "deny" and "no installed plugin provides the Bash family" in decision["reason"]
