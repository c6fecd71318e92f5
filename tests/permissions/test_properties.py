"""Property tests: compound commands never smuggle a denied part; no input breaks the checker."""

from __future__ import annotations

import posixpath

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pegboard.core.permissions.paths import collapse, inside, normalize
from pegboard_permissions_shell.bashparse import parse
from tests.permissions.support import bash, engine

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ENGINE = engine(
    allow=["Bash(echo *)", "Bash(git log *)", "Bash(npm test *)", "Bash(cat *)", "Bash(ls *)"],
    deny=["Bash(rm *)", "Bash(curl *)", "Read(.env)"],
)
ALLOWED = ["ls", "echo hi", "git log -1", "npm test", "cat README.md", "ls -la", "true", "pwd"]
DENIED = [
    "rm -rf build", "curl https://evil.example", "rm x", "RM -rf x", "r''m -rf x", "\\rm -rf x", "/bin/rm x",
    "'rm' -rf x", "sudo rm x", "timeout 5 rm x", "FOO=1 rm x", "env rm x", "nohup rm x", "bash -c 'rm x'",
    "eval 'rm x'", "xargs -n1 rm", "command rm x", "$'\\x72m' x", "CURL http://x", "cat .env",
]
OPERATORS = ["&&", "||", ";", "|", "|&", "&", "\n", " ; ", " && "]
WRAPS = [
    "{}", "$({})", "`{}`", "({})", "{{ {}; }}", "echo $({})", "echo \"$({})\"", "cat <({})",
    "if true; then {}; fi", "for i in 1; do {}; done", "f() {{ {}; }}; f", "! {}",
]


@SETTINGS
@given(st.sampled_from(ALLOWED), st.sampled_from(DENIED), st.sampled_from(OPERATORS),
       st.sampled_from(WRAPS), st.booleans())
def test_allowed_joined_with_denied_is_never_allowed(allowed: str, denied: str, op: str, wrap: str,
                                                     denied_first: bool) -> None:
    part = wrap.format(denied)
    command = f"{part}{op}{allowed}" if denied_first else f"{allowed}{op}{part}"
    d = ENGINE.check("Bash", {"command": command})
    assert d.decision != "allow", (command, d.reason)


@SETTINGS
@given(st.sampled_from(ALLOWED), st.sampled_from(DENIED[:8]), st.sampled_from(OPERATORS))
def test_plain_denied_part_denies_the_whole_line(allowed: str, denied: str, op: str) -> None:
    assert bash(ENGINE, f"{allowed}{op}{denied}") == "deny"
    assert bash(ENGINE, f"{denied}{op}{allowed}") == "deny"


@SETTINGS
@given(st.lists(st.sampled_from(ALLOWED), min_size=1, max_size=5), st.sampled_from(["&&", ";", "|", "\n"]))
def test_allowed_parts_joined_stay_allowed(parts: list[str], op: str) -> None:
    assert bash(ENGINE, op.join(parts)) == "allow"


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)
SHELLISH = st.text(alphabet=st.sampled_from(list("ab rm-$()`'\"\\|&;<>{}[]*?~/.\n\t=!#%0")), max_size=60)


MODE_ENGINES = {
    "default": ENGINE,
    "acceptEdits": engine(deny=["Bash(rm *)", "Read(.env)"], mode="acceptEdits"),
    "bypassPermissions": engine(deny=["Bash(rm *)", "Read(.env)"], mode="bypassPermissions"),
}


def _no_internal_error(tool: str, tool_input: dict[str, object]) -> None:
    for e in MODE_ENGINES.values():
        d = e.check(tool, tool_input)
        assert d.decision in ("allow", "ask", "deny")
        assert "permission check failed" not in d.reason, (tool, tool_input, d.reason)


@SETTINGS
@given(st.one_of(st.text(max_size=200), SHELLISH))
@example(")*0=")  # the parser calls it an assignment to ")*0", which is no variable name
def test_no_command_string_breaks_the_checker(command: str) -> None:
    _no_internal_error("Bash", {"command": command})
    _no_internal_error("PowerShell", {"command": command})
    parse(command)


@SETTINGS
@given(st.text(max_size=80), st.sampled_from(["Read", "Edit", "Write", "Grep", "Glob", "NotebookEdit",
                                             "WebFetch", "Skill", "Agent", "mcp__s__t", "Unknown"]),
       st.sampled_from(["file_path", "path", "url", "pattern", "notebook_path", "skill", "subagent_type"]))
def test_no_string_input_breaks_the_checker(value: str, tool: str, key: str) -> None:
    _no_internal_error(tool, {key: value})


@SETTINGS
@given(st.dictionaries(st.text(max_size=12), JSONISH, max_size=4),
       st.sampled_from(["Bash", "Read", "Edit", "WebFetch", "Skill", "Agent", "PowerShell", "X"]))
def test_no_input_shape_breaks_the_checker(tool_input: dict[str, object], tool: str) -> None:
    _no_internal_error(tool, tool_input)


SEGMENTS = st.lists(st.sampled_from(["a", "b", "..", ".", "", "proj", "etc", "..."]), max_size=10)


@SETTINGS
@given(SEGMENTS, st.booleans())
def test_normalising_never_escapes_via_dotdot(segments: list[str], absolute: bool) -> None:
    raw = ("/" if absolute else "") + "/".join(segments)
    result = normalize(raw, "/proj", "/home/u")
    assert result.startswith("/")
    assert ".." not in result.split("/") and "." not in result.split("/")
    # Agrees with a component-wise walk that clamps at the root.
    is_abs = raw.startswith("/")
    expected = posixpath.normpath(raw if is_abs else "/proj/" + raw)
    assert result == collapse(expected)
    # Names alone (no '..') never leave the base directory.
    if not is_abs and ".." not in segments:
        assert inside(result, "/proj")


@SETTINGS
@given(st.text(alphabet=st.sampled_from(list("ab-_.")), min_size=1, max_size=6))
def test_prefix_sibling_is_not_inside(suffix: str) -> None:
    assert not inside(f"/proj{suffix}/x", "/proj") or suffix.startswith("/")
    e = engine()
    if not suffix.startswith("/"):
        assert e.check("Read", {"file_path": f"/proj{suffix}/x"}).decision == "ask"


@SETTINGS
@given(st.lists(st.sampled_from(["a", "..", "b"]), min_size=1, max_size=8))
def test_dotdot_out_of_the_working_dir_is_not_auto_read(segments: list[str]) -> None:
    path = "/proj/" + "/".join(segments) + "/secret"
    e = engine()
    d = e.check("Read", {"file_path": path})
    if inside(collapse(path), "/proj"):
        assert d.decision == "allow"
    else:
        assert d.decision == "ask"


SIMPLE_WORDS = ["ls", "-la", "a=b", "X=1", "git", "log", "*.py", "echo", "x,y", "@a", "%b", "+c", ":d", "1",
                "if", "then", "fi", "done", "time", "in", "{", "}", "--x"]
SIMPLE_OPS = [" ", "  ", "&&", "||", ";", "|", "|&", "&", "\n", " && ", " ; ", "\t"]


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(SIMPLE_WORDS), st.sampled_from(SIMPLE_OPS)), min_size=1, max_size=8),
       st.booleans())
def test_fast_split_agrees_with_the_grammar(pairs: list[tuple[str, str]], trailing_op: bool) -> None:
    from pegboard_permissions_shell import bashparse as bp

    text = "".join(w + o for w, o in pairs)
    if not trailing_op:
        text = text[: len(text) - len(pairs[-1][1])]
    fast = bp._fast_parse(text)
    if fast is None:
        return
    tree = bp._parser().parse(text.encode())
    assert not tree.root_node.has_error, text
    slow = bp.ParsedScript()
    bp._walk(text.encode(), tree.root_node, slow, 0)
    if slow.problems:  # the grammar glued lines together; the fast split is the shell's reading
        return

    def shape(p: bp.ParsedScript) -> list[object]:
        return [([w.value for w in s.words], [(n, v.value) for n, v in s.assignments], s.kind) for s in p.segments]

    assert shape(fast) == shape(slow), text
