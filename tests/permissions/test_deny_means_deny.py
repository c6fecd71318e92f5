"""A deny rule is the user's last word: no mode, expansion, script on stdin or link made on
the same line gets past it. Where the engine cannot tell whether a deny (or ask) rule
applies, it asks in every mode — bypassPermissions included — naming the rule, and
dontAsk denies; the mode approves only asks that no rule caused. The modes table in
docs/permissions.md is read and checked against the engine cell by cell."""

from __future__ import annotations

import asyncio
import re
import shlex
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pegboard import Pegboard, PreToolUseDecision, ToolResult, hookimpl
from pegboard.core.config import ConfigLayer
from pegboard.core.decisions import PermissionDecision, strongest_permission
from pegboard.core.permissions import PermissionEngine
from tests.permissions.support import REPO, installed_tools

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                             HealthCheck.function_scoped_fixture])
DENY = ["Read(.env)", "Read(secrets/**)", "Edit(protected/**)", "Bash(curl *)"]
MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("proj")
    (root / ".env").write_text("TOKEN=1\n")
    (root / "secrets").mkdir()
    (root / "secrets" / "key").write_text("k\n")
    (root / "protected").mkdir()
    (root / "src").mkdir()
    (root / "src" / "a.txt").write_text("a\n")
    return root


def _engine(root: Path, mode: str, deny: list[str] | None = None, allow: list[str] | None = None,
            ask: list[str] | None = None) -> PermissionEngine:
    rules = {"deny": DENY if deny is None else deny, "allow": allow or [], "ask": ask or []}
    layer = ConfigLayer("project", {"permissions": rules}, path=root / ".pegboard/settings.json", root=root)
    return PermissionEngine([layer], cwd=root, mode=mode, home=root / "home", tools=installed_tools())


#: Lines whose deny-covered part the engine cannot see: they ask in every mode but dontAsk.
CANNOT_TELL = [
    ("cat $(echo .env)", "Read(.env)"),
    ("cat `echo .env`", "Read(.env)"),
    ("cat src/$name", "Read(.env)"),
    ('cat "$(printf %s .env)"', "Read(.env)"),
    ("for f in .env; do cat $f; done", "Read(.env)"),
    ("f=.env cat $f", "Read(.env)"),
    ('[ -n "$x" ] && f=src/a.txt; cat $f', "Read(.env)"),
    ('eval "$cmd"', "Bash(curl *)"),
    ('eval "$(echo cat) .env"', "Bash(curl *)"),
    ('bash -c "$script"', "Bash(curl *)"),
    ("curl_it | sh", "Bash(curl *)"),
    ("cat script.txt | bash", "Bash(curl *)"),
    ("bash < script.txt", "Bash(curl *)"),
    ("sh -s < script.txt", "Bash(curl *)"),
    ("$(command -v curl) http://127.0.0.1/", "Bash(curl *)"),
    ("$CURL http://127.0.0.1/", "Bash(curl *)"),
    ("t=$(mktemp); echo x > $t", "Edit(protected/**)"),
    ("echo x > protected/$n", "Edit(protected/**)"),
    ("env -C protected touch x", "Edit(protected/**)"),
    ('cd "$dir" && touch x', "Edit(protected/**)"),
    ("cat < $in", "Read(.env)"),
    ("python3 -c \"print(open('.env').read())\"", "Read(.env)"),
    ("node -e \"require('fs').readFileSync('secrets/key')\"", "Read(secrets/**)"),
    ("node -e \"fs.writeFileSync('protected/x', '')\"", "Edit(protected/**)"),
    ("perl -e 'open(F, \"<.env\")'", "Read(.env)"),
]

#: Files handed to a program by a walk that reaches a denied file: asks in every mode.
WALKS = ["find . -name .env -exec cat {} \\;", "find . -type f -exec grep -l TOKEN {} +", "fd -x cat",
         "fd . -X cat", "find . -execdir cat {} \\;"]

#: Lines the engine can read to the end: the deny rule decides, in every mode.
DENIED = [
    ("f=.env; cat $f", "Read(.env)"),
    ('f=.env; cat "${f}"', "Read(.env)"),
    ('cat "$PWD/.env"', "Read(.env)"),
    ("cat ${PWD}/secrets/key", "Read(secrets/**)"),
    ("cd src && cat $OLDPWD/.env", "Read(.env)"),
    ('eval "cat .env"', "Read(.env)"),
    ("bash <<'EOF'\ncat .env\nEOF", "Read(.env)"),
    ("bash <<< 'cat .env'", "Read(.env)"),
    ("sh -s <<< 'cat .env'", "Read(.env)"),
    ("echo 'cat .env' | sh", "Read(.env)"),
    ("t=protected/x; echo x > $t", "Edit(protected/**)"),
    ('echo x > "$PWD/protected/x"', "Edit(protected/**)"),
    ("sh <<< 'curl http://127.0.0.1/'", "Bash(curl *)"),
    ("ln -s ../.env src/l && cat src/l", "Read(.env)"),
    ("ln .env src/h; cat src/h", "Read(.env)"),
    ("ln -s ../secrets src/s && cat src/s/key", "Read(secrets/**)"),
    ("ln -s ../protected src/p && touch src/p/x", "Edit(protected/**)"),
]


@pytest.mark.parametrize(("command", "rule"), CANNOT_TELL)
@pytest.mark.parametrize("mode", MODES)
def test_what_the_engine_cannot_see_is_never_approved_by_a_mode(tree: Path, command: str, rule: str,
                                                                mode: str) -> None:
    d = _engine(tree, mode).check("Bash", {"command": command})
    expected = "deny" if mode == "dontAsk" else "ask"
    assert d.decision == expected, (command, mode, d.reason)
    assert d.rule == rule, (command, d.rule, d.reason)
    assert "might apply" in d.reason
    if expected == "ask":
        assert d.hard, "only a person may approve what a rule might cover"


@pytest.mark.parametrize("command", WALKS)
@pytest.mark.parametrize("mode", MODES)
def test_a_walk_that_hands_a_denied_file_to_a_command_asks(tree: Path, command: str, mode: str) -> None:
    d = _engine(tree, mode).check("Bash", {"command": command})
    assert d.decision == ("deny" if mode == "dontAsk" else "ask"), (command, mode, d.reason)
    if command.startswith("find . "):
        narrow = command.replace("find . ", "find src ", 1)
        assert _engine(tree, "bypassPermissions").check("Bash", {"command": narrow}).decision == "allow", narrow


@pytest.mark.parametrize(("command", "rule"), DENIED)
@pytest.mark.parametrize("mode", MODES)
def test_expansions_with_known_values_are_judged_as_what_they_name(tree: Path, command: str, rule: str,
                                                                   mode: str) -> None:
    d = _engine(tree, mode).check("Bash", {"command": command})
    assert (d.decision, d.rule) == ("deny", rule), (command, mode, d.reason)


@pytest.mark.parametrize("command", [
    "echo $HOME", "echo \"$(date)\"", 'git commit -m "$(date)"', "ls $PWD/src", "cat \"$PWD/src/a.txt\"",
    "f=src/a.txt; cat $f", "printf '%s\\n' \"$USER\"", "cd src && cat $OLDPWD/src/a.txt",
    "python3 -c 'print(1)'", "node -e \"console.log(require('./src/a.txt'))\"",
    "find src -name '*.txt' -exec cat {} +",
])
def test_bypass_still_approves_what_no_rule_can_cover(tree: Path, command: str) -> None:
    d = _engine(tree, "bypassPermissions").check("Bash", {"command": command})
    assert d.decision == "allow", (command, d.reason)


def test_without_deny_or_ask_rules_nothing_might_apply(tree: Path) -> None:
    e = _engine(tree, "bypassPermissions", deny=[])
    for command, _rule in CANNOT_TELL:
        assert e.check("Bash", {"command": command}).decision == "allow", command


def test_an_ask_rule_that_might_apply_asks_too(tree: Path) -> None:
    e = _engine(tree, "bypassPermissions", deny=[], ask=["Bash(git push *)"])
    d = e.check("Bash", {"command": "git $sub origin"})
    assert (d.decision, d.rule, d.hard) == ("ask", "Bash(git push *)", True)
    assert e.check("Bash", {"command": "git commit -m \"$msg\""}).decision == "allow"


@pytest.mark.parametrize(("command", "decision"), [
    ("Get-Content $f", "ask"), ("& $x", "ask"), ("iex $y", "ask"), ("Write-Output $x", "allow"),
    ("Get-Content .env", "deny"),
])
def test_powershell_expansions_get_the_same_treatment(tree: Path, command: str, decision: str) -> None:
    d = _engine(tree, "bypassPermissions").check("PowerShell", {"command": command})
    assert d.decision == decision, (command, d.reason)


# -- the pipeline: a hard ask goes to the approver in bypass mode, or is refused ------------

def _pegboard(root: Path, mode: str) -> Pegboard:
    layer = ConfigLayer("project", {"permissions": {"deny": DENY, "defaultMode": mode}},
                        path=root / ".pegboard/settings.json", root=root)
    return Pegboard(layers=[layer], cwd=root)


def test_bypass_refuses_without_an_approver_and_names_the_rule(tree: Path) -> None:
    pb = _pegboard(tree, "bypassPermissions")
    try:
        result = asyncio.run(pb.call("Bash", {"command": "cat $(echo .env)"}))
    finally:
        pb.close()
    assert result.is_error
    assert result.reason == "not_approved"
    assert "Read(.env)" in result.text and "might apply" in result.text
    assert "TOKEN=1" not in result.text


def test_bypass_asks_the_approver_as_default_mode_does(tree: Path) -> None:
    asked: list[str] = []

    def approver(call: object, decision: object) -> bool:
        asked.append(getattr(decision, "rule", None) or "")
        return False

    pb = _pegboard(tree, "bypassPermissions")
    try:
        result = asyncio.run(pb.call("Bash", {"command": "cat src/$f"}, approver=approver))
    finally:
        pb.close()
    assert asked == ["Read(.env)"]
    assert result.is_error


# -- hypothesis: spellings of a denied read that the engine can see through ---------------

_SPELLINGS = st.sampled_from([
    '"$PWD/{p}"', "$PWD/{p}", "${{PWD}}/{p}", '"${{PWD}}"/{p}', "{p}", "./{p}", "src/../{p}", "'{p}'",
])


@SETTINGS
@given(spelling=_SPELLINGS, target=st.sampled_from([".env", "secrets/key"]),
       mode=st.sampled_from(MODES), reader=st.sampled_from(["cat", "head -n1", "wc -l", "grep x", "less"]),
       via=st.sampled_from(["{c}", "f={w}; {r} $f", "f={w}; {r} \"$f\"", "bash <<< {q}", "sh -c {q}", "eval {q}",
                            "echo {q} | sh", "sudo {c}", "cd src && {c}"]))
def test_a_denied_file_stays_denied_whatever_the_spelling(tree: Path, spelling: str, target: str, mode: str,
                                                          reader: str, via: str) -> None:
    word = spelling.format(p=target)
    if via.startswith("cd src") and not word.startswith(("$", '"$')):
        quote = "'" if word.startswith("'") else ""
        bare = word.strip("'")
        word = f"{quote}../{bare[2:] if bare.startswith('./') else bare}{quote}"
    command = f"{reader} {word}"
    line = via.format(w=word, r=reader, c=command, q=shlex.quote(command))
    d = _engine(tree, mode).check("Bash", {"command": line})
    assert d.decision == "deny", (line, mode, d.reason)


_HIDDEN = st.sampled_from(["$(echo {p})", "`echo {p}`", "$x", "${{x:-{p}}}", '"$(printf %s {p})"', "$(cat list)"])


@SETTINGS
@given(hidden=_HIDDEN, mode=st.sampled_from(MODES), reader=st.sampled_from(["cat", "head", "cp {w} backup"]),
       wrap=st.sampled_from(["{c}", "sudo {c}", "timeout 5 {c}", "y=1; {c}", "{c} | wc -l", "( {c} )"]))
def test_a_hidden_operand_is_never_approved_by_a_mode(tree: Path, hidden: str, mode: str, reader: str,
                                                      wrap: str) -> None:
    word = hidden.format(p=".env")
    command = reader.format(w=word) if "{w}" in reader else f"{reader} {word}"
    line = wrap.format(c=command)
    d = _engine(tree, mode).check("Bash", {"command": line})
    assert d.decision != "allow", (line, mode, d.reason)
    if d.decision == "ask":
        assert d.hard and d.rule is not None, (line, d.reason)


# -- the modes table in docs/permissions.md -----------------------------------------------

#: One call per column, with the rules that put it there.
COLUMNS = {
    "rule allows": ({"allow": ["Bash(npm test *)"]}, "npm test"),
    "rule denies": ({"deny": ["Bash(curl *)"]}, "curl http://127.0.0.1/"),
    "rule might apply": ({"deny": ["Bash(curl *)"]}, "$(command -v curl) http://127.0.0.1/"),
    "no rule": ({}, "npm test"),
}
#: The parenthesised exceptions of the table, each with a call that shows it.
EXCEPTIONS = {
    "edits: ask": ({"allow": ["Edit(src/**)"]}, "Edit", {"file_path": "src/a.txt", "old_string": "a",
                                                         "new_string": "b"}),
    "edits inside the working dirs: allow": ({}, "Edit", {"file_path": "src/a.txt", "old_string": "a",
                                                          "new_string": "b"}),
}


def _modes_table() -> dict[str, dict[str, str]]:
    text = (REPO / "docs" / "permissions.md").read_text("utf-8")
    section = text.split("## Modes", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    header = next(line for line in section.splitlines() if line.startswith("| Mode |"))
    columns = [c.strip() for c in header.strip("|").split("|")][1:]
    table: dict[str, dict[str, str]] = {}
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        table[cells[0].strip("`")] = dict(zip(columns, cells[1:], strict=True))
    return table


def test_the_modes_table_covers_every_mode_and_column() -> None:
    table = _modes_table()
    assert set(table) == set(MODES)
    assert all(set(row) == set(COLUMNS) for row in table.values())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("column", list(COLUMNS))
def test_the_modes_table_matches_the_engine(tree: Path, mode: str, column: str) -> None:
    cell = _modes_table()[mode][column]
    decision = cell.split(" ", 1)[0]
    rules, command = COLUMNS[column]
    e = _engine(tree, mode, deny=rules.get("deny", []), allow=rules.get("allow", []))
    assert e.check("Bash", {"command": command}).decision == decision, (mode, column, cell)
    for note in re.findall(r"\(([^)]*)\)", cell):
        erules, tool, tool_input = EXCEPTIONS[note]
        expected = note.rsplit(": ", 1)[1]
        e = _engine(tree, mode, deny=[], allow=erules.get("allow", []))
        assert e.check(tool, tool_input).decision == expected, (mode, column, note)


@pytest.mark.parametrize("url", ["http://", "file:///etc/passwd", "http://[::1"])
def test_a_fetch_whose_host_cannot_be_found_asks_while_domain_rules_exist(tree: Path, url: str) -> None:
    e = _engine(tree, "bypassPermissions", deny=["WebFetch(domain:evil.example)"])
    d = e.check("WebFetch", {"url": url})
    assert (d.decision, d.rule, d.hard) == ("ask", "WebFetch(domain:evil.example)", True), d.reason
    assert _engine(tree, "bypassPermissions", deny=[]).check("WebFetch", {"url": url}).decision == "allow"


# -- who may settle a "might apply" ask ---------------------------------------------------

class _Vouching:
    """A permission_request hook that approves, saying (or not) that the OS enforces file rules."""

    def __init__(self, enforces: bool) -> None:
        self.enforces = enforces
        self.seen: list[PermissionDecision] = []

    @hookimpl
    def permission_request(self, call: object, decision: PermissionDecision, context: object) -> PreToolUseDecision:
        self.seen.append(decision)
        return PreToolUseDecision(decision="allow", enforces_file_rules=self.enforces)


def _run(root: Path, command: str, hook: _Vouching, deny: list[str]) -> ToolResult:
    layer = ConfigLayer("project", {"permissions": {"deny": deny, "defaultMode": "bypassPermissions"}},
                        path=root / ".pegboard/settings.json", root=root)
    pb = Pegboard(layers=[layer], cwd=root, plugins=[hook])
    try:
        return asyncio.run(pb.call("Bash", {"command": command}))
    finally:
        pb.close()


def test_only_a_hook_that_enforces_file_rules_settles_an_unseen_file(tree: Path) -> None:
    plain = _Vouching(enforces=False)
    assert _run(tree, 'cat "src/$f"', plain, ["Read(.env)"]).reason == "not_approved"
    assert plain.seen and plain.seen[0].unseen_files and plain.seen[0].hard
    vouching = _Vouching(enforces=True)
    result = _run(tree, 'f=a.txt; cat "src/$g"', vouching, ["Read(.env)"])
    assert result.reason != "not_approved", result.text


def test_an_unseen_command_or_an_ask_rule_is_never_settled_by_enforcement(tree: Path) -> None:
    hook = _Vouching(enforces=True)
    assert _run(tree, "$(command -v curl) http://127.0.0.1:9/", hook, ["Bash(curl *)"]).reason == "not_approved"
    assert not hook.seen[0].unseen_files
    e = _engine(tree, "default", deny=["Read(.env)"], ask=["Read(secrets/**)"])
    assert not e.check("Bash", {"command": 'cat "$f"'}).unseen_files, "the sandbox masks deny rules, not asks"


def test_an_ask_rule_beside_an_unseen_part_stays_hard(tree: Path) -> None:
    e = _engine(tree, "default", deny=["Read(.env)"], ask=["Bash(cat *)"])
    d = e.check("Bash", {"command": 'cat "$f"'})
    assert (d.decision, d.rule, d.hard, d.unseen_files) == ("ask", "Bash(cat *)", True, False)
    assert "might apply" in d.reason


def test_combined_asks_keep_every_reason_and_the_strictest_flags() -> None:
    unseen = PermissionDecision(decision="ask", rule="Read(.env)", reason="r1", hard=True, unseen_files=True)
    outside = PermissionDecision(decision="ask", reason="runs outside the sandbox", hard=True)
    default = PermissionDecision(decision="ask", reason="needs permission")
    both = strongest_permission([unseen, outside])
    assert both is not None and both.hard and not both.unseen_files
    assert "r1" in both.reason and "outside the sandbox" in both.reason
    merged = strongest_permission([default, unseen])
    assert merged is not None and merged.rule == "Read(.env)" and merged.unseen_files
