"""Unit tests of the rule engine: rule syntax, families, modes, paths, Bash, WebFetch, scopes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from pegboard.core.config import ConfigLayer
from pegboard.core.permissions import PermissionEngine
from pegboard.core.tools import Tool
from tests.permissions.support import HOME, bash, decide, engine


async def _run(_input: Any, _ctx: Any) -> str:
    return ""


class _Any(BaseModel):
    target: str = ""
    level: int = 0


def make_tool(name: str, **kw: Any) -> Tool:
    return Tool(name=name, description="t", input_model=_Any, run=_run, **kw)


# -- rule syntax and diagnostics ------------------------------------------------------------

def test_malformed_rules_are_reported_with_file_and_position() -> None:
    e = engine(allow=["Bash(ls", 42, "", "*"], deny=["Read(", "WebSearch(foo)"])  # type: ignore[list-item]
    text = "\n".join(e.diagnostics)
    assert "/proj/.pegboard/settings.json: permissions.allow[0]" in text
    assert "permissions.allow[1]" in text and "permissions.allow[2]" in text
    assert "permissions.allow[3]" in text and "mcp__<server>__" in text
    assert "permissions.deny[0]" in text
    assert "permissions.deny[1]" in text and "takes no specifier" in text


def test_malformed_deny_fails_closed() -> None:
    e = engine(deny=["Bash(rm -rf"])
    assert bash(e, "ls") == "deny"


def test_bare_name_and_star_alias() -> None:
    assert bash(engine(allow=["Bash(*)"]), "curl x | sh") == "allow"
    assert bash(engine(allow=["Bash"]), "npm publish") == "allow"


def test_order_deny_then_ask_then_allow() -> None:
    e = engine(allow=["Bash(aws s3 ls)"], deny=["Bash(aws *)"])
    assert bash(e, "aws s3 ls") == "deny"
    e = engine(allow=["Bash(git push origin main)"], ask=["Bash(git push *)"])
    assert bash(e, "git push origin main") == "ask"


def test_tool_name_globs() -> None:
    e = engine(deny=["mcp__*"])
    assert decide(e, "mcp__github__get_issue") == "deny"
    assert decide(engine(deny=["*"]), "Read", file_path="/proj/x") == "deny"
    e = engine(allow=["mcp__github__*", "B*"])
    assert decide(e, "mcp__github__x") == "allow"
    assert any("B*" in d for d in e.diagnostics)
    assert bash(e, "npm publish") == "ask"


@pytest.mark.parametrize(("rules", "tool", "expect"), [
    ({"allow": ["mcp__foo"]}, "mcp__foo__anything", "allow"),
    ({"allow": ["mcp__foo"]}, "mcp__foo_bar__x", "ask"),
    ({"allow": ["mcp__foo"]}, "mcp__foo.bar__x", "ask"),
    ({"deny": ["mcp__foo"]}, "mcp__foo__x", "deny"),
])
def test_mcp_server_level_rules_compare_server_names_exactly(rules: dict[str, Any], tool: str, expect: str) -> None:
    assert decide(engine(**rules), tool) == expect


def test_parameter_rules_deny_and_ask_only() -> None:
    e = engine(deny=["Agent(model:opus)"], ask=["WebSearch(query:*secret*)"], allow=["Agent(model:haiku)"])
    assert decide(e, "Agent", subagent_type="x", model="opus") == "deny"
    assert decide(e, "Agent", subagent_type="x") == "allow"
    assert decide(e, "WebSearch", query="the secret plan") == "ask"
    assert any("permissions.allow[0]" in d and "deny and ask" in d for d in e.diagnostics)


def test_parameter_rule_on_primary_field_warns_but_applies() -> None:
    e = engine(deny=["WebFetch(url:https://evil.example/*)"])
    assert any("primary content" in d for d in e.diagnostics)
    assert decide(e, "WebFetch", url="https://evil.example/x", prompt="p") == "deny"


def test_agent_and_skill_names() -> None:
    e = engine(deny=["Agent(Explore)"], allow=["Skill(lint)"])
    assert decide(e, "Agent", subagent_type="Explore", prompt="p") == "deny"
    assert decide(e, "Agent", subagent_type="explore", prompt="p") == "deny"
    assert decide(e, "Agent", subagent_type="Plan", prompt="p") == "allow"
    assert decide(e, "Skill", skill="lint") == "allow"
    assert decide(e, "Skill", skill="deploy", args="prod") == "ask"
    assert decide(engine(deny=["Skill"]), "Skill", skill="lint") == "deny"


# -- families -------------------------------------------------------------------------------

def test_seed_families_judge_uninstalled_tools() -> None:
    e = engine(deny=["Read(secrets/**)", "Bash(rm *)", "Edit(*.lock)"])
    assert decide(e, "Grep", pattern="x", path="/proj/secrets") == "deny"
    assert decide(e, "Glob", pattern="secrets/**/*.pem") == "deny"
    assert decide(e, "LSP", operation="hover", file_path="/proj/secrets/a.py") == "deny"
    assert decide(e, "Monitor", command="rm -rf x") == "deny"
    assert decide(e, "Write", file_path="/proj/yarn.lock", content="") == "deny"
    assert decide(e, "NotebookEdit", notebook_path="/proj/secrets/n.ipynb", new_source="") == "deny"
    assert decide(e, "ApplyPatch", patch="*** Begin Patch\n*** Update File: secrets/a\n") == "deny"
    assert decide(e, "Grep", pattern="x", path="/proj/src") == "allow"
    assert decide(e, "grep", pattern="x", path="/proj/secrets") == "deny"


def test_write_path_rule_is_applied_as_edit() -> None:
    e = engine(deny=["Write(.env*)"])
    assert any("applied as Edit" in d for d in e.diagnostics)
    assert decide(e, "Edit", file_path="/proj/.env.local", old_string="a", new_string="b") == "deny"


def test_read_deny_blocks_writes_edit_allow_grants_read() -> None:
    e = engine(deny=["Read(.env)"], allow=["Edit(docs/**)"])
    assert decide(e, "Write", file_path="/proj/.env", content="") == "deny"
    e = engine(allow=["Edit(//srv/shared/**)"])
    assert decide(e, "Read", file_path="/srv/shared/a.txt") == "allow"
    assert decide(e, "Read", file_path="/srv/other/a.txt") == "ask"


def test_installed_tool_declaration_and_custom_matcher() -> None:
    def matcher(spec: str, data: Any) -> bool:
        return str(data.get("target", "")).startswith(spec)

    tool = make_tool("Deploy", requires_permission=True, specifier_matcher=matcher)
    e = engine(deny=["Deploy(prod)"], allow=["Deploy(staging)"])
    assert e.check("Deploy", {"target": "prod-eu"}, tool).decision == "deny"
    assert e.check("Deploy", {"target": "staging-1"}, tool).decision == "allow"
    assert e.check("Deploy", {"target": "dev"}, tool).decision == "ask"
    assert e.check("Deploy", {"target": "dev", "level": 3}, tool).decision == "ask"

    def broken(spec: str, data: Any) -> bool:
        raise RuntimeError("boom")

    bad = make_tool("Deploy", requires_permission=True, specifier_matcher=broken)
    assert e.check("Deploy", {"target": "staging"}, bad).decision == "deny"

    reader = make_tool("FancyRead", permission_family="Read")
    e = engine(deny=["Read(secret/**)"])
    assert e.check("FancyRead", {"file_path": "/proj/secret/x"}, reader).decision == "deny"
    assert e.check("FancyRead", {"file_path": "/proj/a"}, reader).decision == "allow"
    free = make_tool("Ping")
    assert e.check("Ping", {}, free).decision == "allow"
    assert e.check("Ping", {}, make_tool("Ping", requires_permission=True)).decision == "ask"


# -- modes ----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("mode", "read_in", "read_out", "edit_in", "edit_protected", "bash_ro", "bash_other"),
    [
        ("default", "allow", "ask", "ask", "ask", "allow", "ask"),
        ("acceptEdits", "allow", "ask", "allow", "ask", "allow", "ask"),
        ("plan", "allow", "ask", "ask", "ask", "allow", "ask"),
        ("dontAsk", "allow", "deny", "deny", "deny", "allow", "deny"),
        ("bypassPermissions", "allow", "allow", "allow", "allow", "allow", "allow"),
    ],
)
def test_mode_table(mode: str, read_in: str, read_out: str, edit_in: str, edit_protected: str, bash_ro: str,
                    bash_other: str) -> None:
    e = engine(mode=mode)
    assert decide(e, "Read", file_path="/proj/a.py") == read_in
    assert decide(e, "Read", file_path="/etc/hosts") == read_out
    assert decide(e, "Edit", file_path="/proj/a.py", old_string="a", new_string="b") == edit_in
    assert decide(e, "Write", file_path="/proj/.git/config", content="") == edit_protected
    assert bash(e, "git status && ls") == bash_ro
    assert bash(e, "npm publish") == bash_other


def test_bypass_still_holds_deny_ask_and_critical_rm() -> None:
    e = engine(deny=["Bash(curl *)"], ask=["Bash(git push *)"], allow=["Bash(rm *)"], mode="bypassPermissions")
    assert bash(e, "curl x") == "deny"
    assert bash(e, "git push") == "ask"
    assert bash(e, "rm -rf /") == "ask"
    assert bash(e, "rm -rf build") == "allow"


def test_default_mode_from_config_and_bypass_disable() -> None:
    e = engine(extra={"defaultMode": "acceptEdits"}, mode=None)  # type: ignore[arg-type]
    assert e.mode == "acceptEdits"
    e = engine(extra={"disableBypassPermissionsMode": "disable"}, mode="bypassPermissions")
    assert e.mode == "default"
    assert engine(mode="manual").mode == "default"
    assert engine(mode="nonsense").mode == "default"


# -- working directories and paths ----------------------------------------------------------

@pytest.mark.parametrize(("file_path", "expect"), [
    ("/data/x", "allow"), ("/shared/x", "allow"), ("/home/u/notes/a", "allow"), ("/proj-evil/x", "ask"),
    ("/data2/x", "ask"), ("/proj/../etc/passwd", "ask"),
])
def test_additional_dirs_and_prefix_siblings(file_path: str, expect: str) -> None:
    e = engine(add=["/data"], extra={"additionalDirectories": ["../shared", "~/notes"]})
    assert decide(e, "Read", file_path=file_path) == expect


def test_path_anchors() -> None:
    rules = {"deny": ["Read(/config/*.yml)", "Read(//etc/shadow)", "Read(~/.aws/**)", "Read(./local.txt)",
                      "Read(*.pem)", "Read(build/**)"]}
    layer = ConfigLayer("project", {"permissions": rules}, path=Path("/proj/.pegboard/settings.json"),
                        root=Path("/proj"))
    e = PermissionEngine([layer], cwd=Path("/proj/sub"), home=HOME)
    assert decide(e, "Read", file_path="/proj/config/a.yml") == "deny"  # project root anchor
    assert decide(e, "Read", file_path="/proj/sub/config/a.yml") == "allow"
    assert decide(e, "Read", file_path="/etc/shadow") == "deny"
    assert decide(e, "Read", file_path="~/.aws/credentials") == "deny"
    assert decide(e, "Read", file_path="$HOME/.aws/credentials") == "deny"
    assert decide(e, "Read", file_path="local.txt") == "deny"
    assert decide(e, "Read", file_path="/proj/sub/deep/x.pem") == "deny"
    assert decide(e, "Read", file_path="/proj/x.pem") == "ask"  # above the cwd anchor, outside
    assert decide(e, "Read", file_path="/proj/sub/a/build/x") == "deny"  # deny: single segment any depth


@pytest.mark.parametrize(("file_path", "expect"), [
    ("/proj/src/a.py", "allow"), ("/proj/lib/src/a.py", "ask"), ("/proj/SRC/a.py", "ask"),
])
def test_allow_single_segment_is_anchored_and_strict_case(file_path: str, expect: str) -> None:
    e = engine(allow=["Edit(src/**)"])
    assert decide(e, "Edit", file_path=file_path, old_string="a", new_string="b") == expect


@pytest.mark.parametrize(("tool", "file_path", "expect"), [
    ("Read", "C:\\proj\\secrets\\a.txt", "deny"),
    ("Read", "c:/PROJ/Secrets/a.txt", "deny"),
    ("Write", "C:\\proj\\build\\out.js", "deny"),
    ("Read", "C:\\proj\\src\\a.txt", "allow"),
])
def test_windows_paths_are_normalised(tool: str, file_path: str, expect: str) -> None:
    e = engine(deny=["Read(secrets/**)", "Edit(C:\\proj\\build\\**)"], cwd="C:\\proj")
    extra = {"content": ""} if tool == "Write" else {}
    assert decide(e, tool, file_path=file_path, **extra) == expect


@pytest.mark.parametrize(("pattern", "expect"), [
    ("../../etc/*", "ask"), ("/etc/**", "ask"), ("src/**/*.py", "allow"),
])
def test_glob_tool_pattern_cannot_escape(pattern: str, expect: str) -> None:
    assert decide(engine(), "Glob", pattern=pattern) == expect


# -- scopes ---------------------------------------------------------------------------------

def test_scopes_merge_and_report_the_highest_source() -> None:
    user = ConfigLayer("user", {"permissions": {"deny": ["Bash(curl *)"]}}, path=Path("/home/u/.pegboard/s.json"),
                       root=Path("/home/u/.pegboard"))
    project = ConfigLayer("project", {"permissions": {"allow": ["Bash(curl *)", "Bash(rm *)"]}},
                          path=Path("/proj/.pegboard/settings.json"), root=Path("/proj"))
    managed = ConfigLayer("managed", {"permissions": {"deny": ["Bash(rm *)"]}}, path=Path("/etc/pegboard/s.json"),
                          root=Path("/etc/pegboard"))
    local = ConfigLayer("project-local", {"permissions": {"deny": ["Bash(rm *)"]}},
                        path=Path("/proj/.pegboard/settings.local.json"), root=Path("/proj"))
    e = PermissionEngine([user, project, local, managed], cwd=Path("/proj"), home=HOME)
    d = e.check("Bash", {"command": "curl x"})
    assert (d.decision, d.source) == ("deny", "/home/u/.pegboard/s.json")
    d = e.check("Bash", {"command": "rm x"})
    assert (d.decision, d.source) == ("deny", "/etc/pegboard/s.json")


def test_managed_only_rules() -> None:
    managed = ConfigLayer("managed", {"permissions": {"allowManagedPermissionRulesOnly": True}})
    project = ConfigLayer("project", {"permissions": {"allow": ["Bash(npm *)"]}}, path=Path("/p/s.json"))
    e = PermissionEngine([managed, project], cwd=Path("/proj"), home=HOME)
    assert bash(e, "npm test") == "ask"
    assert any("allowManagedPermissionRulesOnly" in d for d in e.diagnostics)


def test_source_is_scope_without_path() -> None:
    layer = ConfigLayer("cli", {"permissions": {"deny": ["WebSearch"]}})
    d = PermissionEngine([layer], cwd=Path("/proj"), home=HOME).check("WebSearch", {"query": "x"})
    assert (d.decision, d.rule, d.source) == ("deny", "WebSearch", "cli")


# -- WebFetch -------------------------------------------------------------------------------

@pytest.mark.parametrize(("url", "expect"), [
    ("https://EXAMPLE.com./x", "allow"),
    ("https://a.example.com/", "ask"),
    ("https://corp.example/", "ask"),
    ("https://x.y.corp.example/", "allow"),
    ("https://docs.python.org/3/", "deny"),
    ("https://developer.mozilla.org/", "allow"),
    ("https://example.com\\@evil.net/", "ask"),
    ("https://evil.net\\@example.com/", "ask"),
    ("not a url", "ask"),
])
def test_webfetch_domains(url: str, expect: str) -> None:
    e = engine(allow=["WebFetch(domain:Example.COM.)", "WebFetch(domain:*.corp.example)"],
               deny=["WebFetch(domain:docs.python.org)"])
    assert decide(e, "WebFetch", url=url, prompt="p") == expect


def test_webfetch_ask_rule_by_domain() -> None:
    assert decide(engine(ask=["WebFetch(domain:react.dev)"]), "WebFetch", url="https://react.dev/", prompt="") == "ask"


# -- Bash -----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("command", "expect"),
    [
        ("ls *.py", "allow"),
        ("sed -n '1,5p' a.txt", "allow"),
        ("sed 's/a/b/w out' a.txt", "ask"),
        ("sed 'e id' a.txt", "ask"),
        ("sed -i 's/a/b/' a.txt", "ask"),
        ("rg --pre=sh x", "ask"),
        ("rg x", "allow"),
        ("find . -name '*.py'", "allow"),
        ("find . -delete", "ask"),
        ("find . -exec id \\;", "ask"),
        ("find *", "ask"),
        ("git -c core.pager=sh log", "ask"),
        ("git log --oneline", "allow"),
        ("git diff --output=x", "ask"),
        ("cd src && git log", "ask"),
        ("git branch", "allow"),
        ("git branch evil", "ask"),
        ("cat$IFS/etc/passwd", "ask"),
        ("ls $HOME", "ask"),
        ("echo hi > out.txt", "ask"),
        ("echo hi > /dev/null", "allow"),
        ("ls 2>&1", "allow"),
        ("cat /etc/passwd", "ask"),
        ("cd /tmp", "ask"),
        ("cd src; ls", "allow"),
        ("FOO=1 ls", "ask"),
        ("LANG=C ls", "allow"),
        ("bash -c 'ls'", "ask"),
        ("ls | xargs cat", "allow"),
        ("echo /etc/passwd | xargs cat", "ask"),
        ("x" * 10_001, "ask"),
        ("ls\x07", "deny"),
        ("echo 'unterminated", "ask"),
        ("", "ask"),
        ("sort -o out in", "ask"),
        ("date -s 2020-01-01", "ask"),
        ("tree -o out", "ask"),
        ("uniq a b", "ask"),
        ("[ -f a ] && cat a", "allow"),
        ("[[ $x =~ y ]]", "ask"),
    ],
)
def test_read_only_set_and_traps(command: str, expect: str) -> None:
    assert bash(engine(), command) == expect, engine().check("Bash", {"command": command}).reason


@pytest.mark.parametrize(
    ("command", "expect"),
    [
        ("cat .env", "deny"),
        ("head -5 sub/.env", "deny"),
        ("tail -f .ENV", "deny"),
        ("grep key .env", "deny"),
        ("sed -n 1p .env", "deny"),
        ("cd sub && cat ../.env", "deny"),
        ("cat < .env", "deny"),
        ("echo x > .env", "deny"),
        ("cp .env /tmp/x", "deny"),
        ("grep -r key .", "ask"),
        ("cat *.env", "ask"),
        ("cat ~/.ssh/id_rsa", "deny"),
        ("cat $HOME/.ssh/id_rsa", "deny"),
        ("python3 -c 'open(\".env\")'", "ask"),
        ("mytool .env", "ask"),
        ("echo .env", "allow"),
    ],
)
def test_read_and_edit_denies_apply_to_file_commands(command: str, expect: str) -> None:
    e = engine(deny=["Read(.env)", "Read(~/.ssh/**)"])
    assert bash(e, command) == expect, e.check("Bash", {"command": command}).reason


@pytest.mark.parametrize(
    ("command", "expect"),
    [
        ("rm -rf build", "allow"),
        ("rm -rf /", "ask"),
        ("rm -rf /usr", "ask"),
        ("rm -rf ~", "ask"),
        ("rm -rf $HOME", "ask"),
        ("rm -rf .", "ask"),
        ("rm -rf ..", "ask"),
        ("rm -rf *", "ask"),
        ("rm -rf /srv/data/*", "ask"),
        ("rm -rf /srv/data", "allow"),
        ("rm -rf /data", "ask"),
        ("rm -rf \"$DIR\"/*", "ask"),
        ("rm -rf ${DIR}/", "ask"),
        ("echo $(rm -rf /)", "ask"),
    ],
)
def test_critical_rm(command: str, expect: str) -> None:
    e = engine(allow=["Bash(rm *)", "Bash(echo *)"], add=["/srv/data"])
    assert bash(e, command) == expect, e.check("Bash", {"command": command}).reason


def test_wildcards_and_word_boundaries() -> None:
    e = engine(allow=["Bash(ls *)", "Bash(npm run test:*)", "Bash(git * main)"])
    assert bash(e, "ls -la /etc") == "allow"
    assert bash(e, "lsof -i") == "allow"  # lsof is read-only anyway
    e = engine(allow=["Bash(make *)"])
    assert bash(e, "make") == "allow"
    assert bash(e, "makes") == "ask"
    e = engine(allow=["Bash(make*)"])
    assert bash(e, "makes") == "allow"
    e = engine(allow=["Bash(npm run test:*)"])
    assert bash(e, "npm run test  --watch") == "allow"
    assert bash(e, "npm run testx") == "ask"
    e = engine(allow=["Bash(git * main)"])
    assert bash(e, "git push origin main") == "allow"
    assert bash(e, "git push origin main; rm -rf x") == "ask"


@pytest.mark.parametrize(("command", "expect"), [
    ("mkdir -p build && touch build/x && cp a b && mv b c", "allow"),
    ("mkdir /tmp/x", "ask"),
    ("touch .git/hooks/pre-commit", "ask"),
    ("cp a /data/b", "allow"),
    ("rm -rf /data/*", "ask"),
])
def test_acceptedits_filesystem_commands(command: str, expect: str) -> None:
    assert bash(engine(mode="acceptEdits", add=["/data"]), command) == expect


@pytest.mark.parametrize(("command", "expect"), [
    ("echo hi > logs/a.txt", "allow"),
    ("echo hi > out.txt", "ask"),
    ("echo hi > secrets/a", "deny"),
    ("echo hi > ~/x", "ask"),
    ("echo hi > $OUT", "ask"),
])
def test_redirect_targets_use_edit_rules(command: str, expect: str) -> None:
    e = engine(allow=["Bash(echo *)", "Edit(logs/**)"], deny=["Edit(secrets/**)"])
    assert bash(e, command) == expect


def test_checker_never_raises_on_odd_inputs() -> None:
    e = engine(deny=["Bash(rm *)"])
    for tool, data in [("Bash", {"command": None}), ("Bash", {}), ("Read", {"file_path": 3}),
                       ("WebFetch", {"url": ["x"]}), ("Read", {"file_path": "/etc/\x00"}),
                       ("Monitor", {"ws": {"url": "wss://x"}}), ("PowerShell", {"command": "((("}),
                       ("Bash", "not a mapping")]:
        d = e.check(tool, data)  # type: ignore[arg-type]
        assert d.decision in ("ask", "deny"), (tool, data)


@pytest.mark.parametrize(("command", "expect"), [
    ("gci -Recurse", "allow"),
    ("GCI; del x", "deny"),
    ("Get-ChildItem | ForEach-Object { Remove-Item $_ }", "deny"),
    ("echo $(ri x)", "deny"),
    ("gci; iex 'x'", "ask"),
    ("gci 'unterminated", "ask"),
])
def test_powershell(command: str, expect: str) -> None:
    e = engine(deny=["PowerShell(Remove-Item *)"], allow=["PowerShell(Get-ChildItem *)"], cwd="C:\\proj")
    assert decide(e, "PowerShell", command=command) == expect


@pytest.mark.parametrize("command", ["rm -fr x", "rm -r -f x", "rm --recursive --force x", "rm -R -f x",
                                     "rm -rfv x", "sudo rm -f -r x"])
def test_deny_flags_in_any_order(command: str) -> None:
    e = engine(deny=["Bash(rm -rf *)"], allow=["Bash(rm *)"])
    assert bash(e, command) == "deny"


def test_flag_order_does_not_widen_allow_rules() -> None:
    e = engine(allow=["Bash(rm -rf build)"])
    assert bash(e, "rm -fr build") == "ask"
    assert bash(engine(deny=["Bash(rm -rf *)"], allow=["Bash(rm *)"]), "rm -r x") == "allow"


def test_tool_denied_for_tool_lists() -> None:
    e = engine(deny=["WebSearch", "mcp__evil", "Bash(rm *)"])
    assert e.tool_denied("WebSearch") is not None
    assert e.tool_denied("mcp__evil__x") is not None
    assert e.tool_denied("Bash") is None
    assert e.is_read_denied("/proj/x") is False
    assert engine(deny=["Read(.env)"]).is_read_denied("/proj/sub/.env") is True


@pytest.mark.parametrize(("command", "expect"), [
    ("gc .env", "deny"),
    ("Get-Content -Path:.env", "deny"),
    ("echo hi > secrets\\x", "deny"),
    ("echo hi > out.txt", "ask"),
    ("gc README.md", "allow"),
    ("Set-Content .git\\config x", "ask"),
    ("mytool .env", "ask"),
])
def test_powershell_file_arguments(command: str, expect: str) -> None:
    e = engine(deny=["Read(.env)", "Edit(secrets/**)"], allow=["PowerShell(Get-Content *)",
                                                               "PowerShell(Write-Output *)"], cwd="C:\\proj")
    assert decide(e, "PowerShell", command=command) == expect


@pytest.mark.parametrize(("command", "expect"), [
    ("git show HEAD:.env", "deny"), ("git log -p .env", "deny"), ("git grep secret -- .env", "deny"),
    ("git grep secret", "ask"), ("git log --oneline", "allow"), ("git show main:src/a.py", "allow"),
])
def test_git_operands_and_read_denies(command: str, expect: str) -> None:
    assert bash(engine(deny=["Read(.env)"]), command) == expect


@pytest.mark.parametrize("command", ["rm${IFS}-rf x", "{rm,-rf,x}", "x=rm; $x -rf build", "X=/bin/rm; ${X} x"])
def test_deny_sees_through_simple_expansions(command: str) -> None:
    assert bash(engine(deny=["Bash(rm *)"]), command) == "deny"


# -- the validated models -------------------------------------------------------------------

def test_the_engine_reads_the_layers_validated_model() -> None:
    from pegboard.core.config import load_layers

    layer = ConfigLayer("cli", {"permissions": {"deny": ["Bash(curl *)"], "defaultMode": "acceptEdits",
                                                "additionalDirectories": ["../shared"]}}, root=Path("/proj"))
    loaded = load_layers([layer])
    model = layer.model
    assert loaded.layers[0] is layer and model is layer.model  # validated once, shared
    e = PermissionEngine([layer], cwd=Path("/proj"), home=HOME)
    assert layer.model is model
    assert (e.mode, bash(e, "curl x")) == ("acceptEdits", "deny")
    assert "/shared" in e.workdirs


def test_a_layer_that_does_not_validate_keeps_every_rule_it_can_read() -> None:
    data = {"hooks": "not an object", "permissions": {"deny": ["Bash(curl *)", 7], "defaultMode": "yolo",
                                                      "ask": "Bash(npm *)", "allow": ["Bash(ls *)"]}}
    e = PermissionEngine([ConfigLayer("code", data)], cwd=Path("/proj"), home=HOME)
    assert (e.mode, bash(e, "curl x"), bash(e, "ls -la")) == ("default", "deny", "allow")
    text = "\n".join(e.diagnostics)
    assert "permissions.deny[1]" in text and "permissions.ask: expected a list" in text and "'yolo'" in text


def test_of_two_layers_of_one_scope_the_later_mode_wins_as_in_merging() -> None:
    first = ConfigLayer("cli", {"permissions": {"defaultMode": "plan"}})
    second = ConfigLayer("cli", {"permissions": {"defaultMode": "acceptEdits"}})
    assert PermissionEngine([first, second], cwd=Path("/proj"), home=HOME).mode == "acceptEdits"
    managed = ConfigLayer("managed", {"permissions": {"defaultMode": "plan"}})
    assert PermissionEngine([managed, first, second], cwd=Path("/proj"), home=HOME).mode == "plan"
