"""Line continuations: the parser joins lines exactly where Bash does (checked against real bash)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pegboard_permissions_shell.bashparse import parse
from pegboard_permissions_shell.continuations import join_continued_lines
from tests.permissions.support import bash, engine

ENGINE = engine(allow=["Bash(echo *)", "Bash(cat *)"], deny=["Bash(rm *)"])
BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")


@pytest.mark.parametrize("command", [
    "echo \\\\\nrm -rf x",  # the backslash is escaped: the newline ends the command
    "echo hi # \\\nrm -rf x",  # a comment does not continue
    "echo hi \\\r\nrm -rf x",  # backslash-CR is an escaped CR; the newline ends the command
    "cat <<'E'\nfoo \\\nE\nrm -rf x\n",  # quoted here-document: its lines are kept as they are
    "cat <<\"E\"\nfoo \\\nE\nrm -rf x\n",
    "cat <<-\\E\n\tfoo \\\n\tE\nrm -rf x\n",
    "echo ok # a \\\n rm -rf x",
    "echo $(echo a # c \\\nrm -rf x)",
    "echo 'a' \\\\\n rm -rf x",
    "echo `echo a` \\\\\nrm x",
])
def test_a_line_bash_does_not_join_is_judged_on_its_own(command: str) -> None:
    assert bash(ENGINE, command) == "deny", command


@pytest.mark.parametrize("command", [
    "echo a \\\n b",
    "echo 'a\\\nb'",
    'echo "a\\\nb"',
    "echo a \\\n  && echo b",
    "cat <<E\nx\\\ny\nE",
])
def test_real_continuations_are_joined(command: str) -> None:
    assert bash(ENGINE, command) == "allow", command


def test_unquoted_heredoc_body_joins_before_the_delimiter_is_seen() -> None:
    # bash joins 'x\<newline>E' into 'xE', so the body runs to the end: nothing after it runs.
    joined, _problem = join_continued_lines("cat <<E\nx\\\nE\nrm -rf y\n")
    assert "xE" in joined
    joined, _problem = join_continued_lines("cat <<'E'\nx\\\nE\nrm -rf y\n")
    assert joined.endswith("E\nrm -rf y\n") and "x\\\n" in joined


def test_backticks_join_even_inside_their_single_quotes() -> None:
    joined, problem = join_continued_lines("echo `echo 'a\\\nb'`")
    assert joined == "echo `echo 'ab'`" and problem is None


def test_unterminated_quote_with_a_continuation_is_a_problem() -> None:
    assert join_continued_lines("echo \"abc \\\n rm x")[1] is not None
    assert bash(engine(deny=["Bash(rm *)"], allow=["Bash(echo *)"]), "echo \"abc \\\n rm x") != "allow"


# -- differential: our words against what bash prints ----------------------------------------

FRAGMENTS = ["a", "b1", "'q\\\nr'", '"d\\\ne"', "$'s\\\nt'", "\\\\", "x\\\ny", "'p q'", '"u v"', "\\#h"]
WORD_GAPS = [" ", " \\\n ", "\t"]
COMMAND_GAPS = ["\n", "\\\\\n", " # c \\\n", "\\\r\n", " ; ", " \\\n; ", "\n# x \\\n"]

words = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=3).map("".join)
commands = st.lists(st.tuples(st.lists(words, min_size=1, max_size=3), st.lists(st.sampled_from(WORD_GAPS),
                                                                                 min_size=3, max_size=3)),
                    min_size=1, max_size=4)


def _script(parts: list[tuple[list[str], list[str]]], gaps: list[str]) -> str:
    out = []
    for k, (ws, wgaps) in enumerate(parts):
        cmd = "echo"
        for w, g in zip(ws, wgaps, strict=False):
            cmd += g + w
        out.append(cmd)
        if k < len(parts) - 1:
            out.append(gaps[k % len(gaps)])
    return "".join(out) + "\n"


def _ours(script: str) -> str | None:
    """What the echo commands print by our parse; None when the parser reports a problem."""
    parsed = parse(script)
    if parsed.problems:  # the grammar reads backslash-CR-LF as a continuation: we refuse to guess
        return None
    lines = []
    for seg in parsed.segments:
        if seg.nested or not seg.words or seg.words[0].value != "echo":
            continue
        lines.append(" ".join(w.value for w in seg.words[1:]))
    return "".join(line + "\n" for line in lines)


@needs_bash
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(commands, st.lists(st.sampled_from(COMMAND_GAPS), min_size=1, max_size=3))
def test_commands_and_words_match_real_bash(tmp_path: Path, parts: list[tuple[list[str], list[str]]],
                                            gaps: list[str]) -> None:
    script = _script(parts, gaps)
    path = tmp_path / "s.sh"
    path.write_bytes(script.encode())
    assert BASH is not None
    got = subprocess.run([BASH, "--norc", "--noprofile", str(path)], capture_output=True, cwd=tmp_path,
                         env={"PATH": "/usr/bin:/bin"}, timeout=10)
    ours = _ours(script)
    if ours is None:
        assert bash(ENGINE, script) != "allow", script
    else:
        assert ours == got.stdout.decode(), script
