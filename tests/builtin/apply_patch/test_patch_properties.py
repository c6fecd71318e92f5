"""Properties of the patch format: no text crashes the parser, and a patch generated from two
files turns the first into the second."""

from __future__ import annotations

import difflib
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pegboard_apply_patch.apply import commit, plan
from pegboard_apply_patch.parser import PatchError, parse_patch, patch_paths
from tests.builtin.filetools import Files

fragments = st.sampled_from([
    "*** Begin Patch", "*** End Patch", "*** Add File: a", "*** Update File: a", "*** Delete File: a",
    "*** Move to: b", "*** End of File", "@@", "@@ def f():", " ctx", "-old", "+new", "", "<<'EOF'", "EOF",
    "diff --git a/x b/x", "--- a/x", "+++ b/x", "@@ -1 +1 @@", "\r",
])


@given(st.one_of(st.text(max_size=200), st.lists(st.one_of(fragments, st.text(max_size=10)), max_size=15)
                 .map("\n".join)))
def test_any_text_parses_or_gives_a_patch_error(text: str) -> None:
    try:
        ops = parse_patch(text)
    except PatchError as exc:
        assert exc.kind in {"invalid_patch", "wrong_format"} and exc.message
    else:
        assert ops
    patch_paths(text)


# Lines unique even after the loosest matching pass, so every hunk has one place to go.
words = st.text("abcdefghij", min_size=1, max_size=6)
unique_lines = st.lists(words, unique=True, max_size=25)
any_lines = st.lists(st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n"), max_size=8),
                     max_size=25)


def make_patch(path: str, a: list[str], b: list[str], context: int) -> str:
    out = ["*** Begin Patch", f"*** Update File: {path}"]
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        out.append("@@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in a[i1:i2]]
            else:
                out += ["-" + line for line in a[i1:i2]]
                out += ["+" + line for line in b[j1:j2]]
    out.append("*** End Patch")
    return "\n".join(out)


def text_of(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(unique_lines, any_lines, st.integers(1, 3))
def test_a_generated_patch_turns_the_first_file_into_the_second(a: list[str], b: list[str], context: int) -> None:
    if a == b:
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "f.txt").write_text(text_of(a))
        ws, _changes = plan(parse_patch(make_patch("f.txt", a, b, context)), lambda p: root / p)
        commit(ws)
        assert (root / "f.txt").read_text() == text_of(b)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(unique_lines, any_lines, st.lists(words, max_size=5), st.booleans())
def test_through_the_tool_with_added_and_deleted_files(a: list[str], b: list[str], added: list[str],
                                                        crlf: bool) -> None:
    if a == b:
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        nl = "\r\n" if crlf else "\n"
        (root / "f.txt").write_bytes("".join(line + nl for line in a).encode())
        (root / "gone.txt").write_text("bye\n")
        body = make_patch("f.txt", a, b, 2).split("\n")[1:-1]
        body += ["*** Add File: new/added.txt", *("+" + w for w in added), "*** Delete File: gone.txt"]
        files = Files(root)
        try:
            result = files.call("ApplyPatch", input="\n".join(["*** Begin Patch", *body, "*** End Patch"]))
        finally:
            files.close()
        assert not result.is_error, result.text
        nl_after = nl if a else "\n"  # an empty file has no line ending to keep
        assert (root / "f.txt").read_bytes() == "".join(line + nl_after for line in b).encode()
        assert (root / "new" / "added.txt").read_text() == text_of(added)
        assert not (root / "gone.txt").exists()


hunk_lines = st.lists(st.one_of(st.sampled_from(["@@", "@@ a", "*** End of File", "", " ", "-", "+"]),
                                st.tuples(st.sampled_from(" -+"), words).map("".join)), max_size=12)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(words, max_size=10), hunk_lines)
def test_any_hunk_against_any_file_applies_or_gives_a_patch_error(a: list[str], body: list[str]) -> None:
    text = "\n".join(["*** Begin Patch", "*** Update File: f.txt", *body, "*** End Patch"])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "f.txt").write_text(text_of(a))
        try:
            plan(parse_patch(text), lambda p: root / p)
        except PatchError as exc:
            assert exc.kind in {"invalid_patch", "hunk_not_found"}


padded = st.sampled_from(["", " ", "  ", "\t", " \t"])


@given(st.lists(st.one_of(fragments, st.tuples(padded, fragments).map("".join), st.text(max_size=10)), max_size=15)
       .map("\n".join))
def test_the_permission_family_sees_every_path_the_parser_accepts(text: str) -> None:
    from pegboard_permissions_paths import EditFamily

    try:
        ops = parse_patch(text)
    except PatchError:
        return
    named = {p for op in ops for p in (op.path, getattr(op, "move_to", None)) if p}
    seen, _complete = EditFamily().input_paths("ApplyPatch", {"input": text})
    assert named <= set(seen)
