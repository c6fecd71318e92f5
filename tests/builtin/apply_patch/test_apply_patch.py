"""ApplyPatch on real trees: the format, locating context, all or nothing, the workspace."""

from __future__ import annotations

import codecs
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import pegboard_apply_patch
from pegboard.testing import check_tool, isolated_pegboard
from tests.builtin.filetools import Files, kind, unprivileged


@pytest.fixture
def files(tmp_path: Path) -> Iterator[Files]:
    f = Files(tmp_path)
    yield f
    f.close()


@pytest.fixture
def trusted(tmp_path: Path) -> Iterator[Files]:
    """A session that approves every call: a patch without paths reaches the tool."""
    f = Files(tmp_path, mode="bypassPermissions")
    yield f
    f.close()


def patch(*body: str) -> str:
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"])


def test_conforms() -> None:
    check_tool(pegboard_apply_patch.apply_patch, {"input": patch("*** Delete File: a")})


def test_optional_unless_named_or_switched_on(tmp_path: Path) -> None:
    plain = isolated_pegboard(pegboard_apply_patch, cwd=tmp_path)
    assert plain.tools().enabled == []
    assert "optional" in {d.name: d.reason for d in plain.tools().disabled}["ApplyPatch"]
    named = isolated_pegboard(pegboard_apply_patch, cwd=tmp_path, config={"tools": {"allow": ["apply_patch"]}})
    assert named.tools().enabled == ["ApplyPatch"]
    on = isolated_pegboard(pegboard_apply_patch, cwd=tmp_path,
                           config={"tools": {"exec": {"applyPatch": {"enabled": True}}}})
    assert on.tools().enabled == ["ApplyPatch"]
    tool = on.tool("apply_patch")
    assert tool is not None and {"fs", "file"} <= set(tool.groups) and tool.family == "Edit"


def test_other_providers_get_it_only_with_all_models(tmp_path: Path) -> None:
    import pegboard_provider_openai

    def enabled(provider: str, **exec_: bool) -> bool:
        pb = isolated_pegboard(pegboard_apply_patch, pegboard_provider_openai, cwd=tmp_path,
                               config={"tools": {"exec": {"applyPatch": {"enabled": True, **exec_}}}})
        return "ApplyPatch" in pb.tools(provider=provider, model="m").enabled

    assert enabled("openai") and not enabled("anthropic")
    assert enabled("anthropic", allModels=True) and not enabled("anthropic", allModels=False)
    pb = isolated_pegboard(pegboard_apply_patch, pegboard_provider_openai, cwd=tmp_path,
                           config={"tools": {"exec": {"applyPatch": {"enabled": True}}}})
    assert "ApplyPatch" in pb.tools().enabled  # no provider known: offered


def test_add_update_move_delete_in_one_patch(files: Files) -> None:
    (files.root / "app.py").write_text("import os\n\ndef main():\n    print('hi')\n")
    (files.root / "old.txt").write_text("bye\n")
    (files.root / "name.txt").write_text("a\nb\n")
    result = files.call("ApplyPatch", input=patch(
        "*** Add File: pkg dir/nëw.py",
        "+x = 1",
        "+y = 2",
        "*** Update File: app.py",
        "@@ def main():",
        "-    print('hi')",
        "+    print('hello')",
        "*** Delete File: old.txt",
        "*** Update File: name.txt",
        "*** Move to: renamed.txt",
        " a",
        "-b",
        "+B",
    ))
    assert not result.is_error, result.text
    assert (files.root / "pkg dir" / "nëw.py").read_text() == "x = 1\ny = 2\n"
    assert (files.root / "app.py").read_text() == "import os\n\ndef main():\n    print('hello')\n"
    assert not (files.root / "old.txt").exists() and not (files.root / "name.txt").exists()
    assert (files.root / "renamed.txt").read_text() == "a\nB\n"
    assert result.text.splitlines() == ["Success. Updated the following files:", "A pkg dir/nëw.py", "M app.py",
                                        "D old.txt", "M name.txt -> renamed.txt"]
    s = result.structured
    assert s is not None
    assert [f["action"] for f in s["files"]] == ["added", "updated", "deleted", "moved"]
    assert s["files"][1]["structuredPatch"][0]["lines"][-2:] == ["-    print('hi')", "+    print('hello')"]
    assert s["files"][3]["movePath"] == str(files.root / "renamed.txt")


def test_nested_context_headers_pick_the_right_place(files: Files) -> None:
    src = "class A:\n    def f(self):\n        return 1\n\nclass B:\n    def f(self):\n        return 1\n"
    (files.root / "m.py").write_text(src)
    result = files.call("ApplyPatch", input=patch(
        "*** Update File: m.py", "@@ class B:", "@@     def f(self):", "-        return 1", "+        return 2"))
    assert not result.is_error, result.text
    assert (files.root / "m.py").read_text() == src[: src.rindex("1")] + "2\n"


def test_context_found_despite_whitespace_and_unicode_punctuation(files: Files) -> None:
    (files.root / "t.txt").write_text("say “hi” — now  \n    indented\nend\n")
    result = files.call("ApplyPatch", input=patch(
        "*** Update File: t.txt", ' say "hi" - now', "-indented", "+    changed", " end"))
    assert not result.is_error, result.text
    assert (files.root / "t.txt").read_text() == "say “hi” — now  \n    changed\nend\n"


def test_end_of_file_anchors_the_hunk(files: Files) -> None:
    (files.root / "e.txt").write_text("x\ny\nx\n")
    result = files.call("ApplyPatch", input=patch("*** Update File: e.txt", "-x", "+z", "*** End of File"))
    assert not result.is_error, result.text
    assert (files.root / "e.txt").read_text() == "x\ny\nz\n"


def test_a_hunk_that_does_not_apply_changes_nothing(files: Files) -> None:
    (files.root / "a.txt").write_text("one\n")
    (files.root / "b.txt").write_text("two\n")
    result = files.call("ApplyPatch", input=patch(
        "*** Update File: a.txt", "-one", "+ONE",
        "*** Add File: c.txt", "+new",
        "*** Update File: b.txt", "@@", "-three", "+THREE"))
    assert kind(result) == "hunk_not_found"
    assert "hunk 1 of b.txt" in result.text and "three" in result.text
    assert (files.root / "a.txt").read_text() == "one\n" and not (files.root / "c.txt").exists()


def test_second_hunk_failure_is_named(files: Files) -> None:
    (files.root / "a.txt").write_text("1\n2\n3\n4\n5\n6\n7\n8\n9\n")
    result = files.call("ApplyPatch", input=patch(
        "*** Update File: a.txt", "@@", "-2", "+two", "@@", "-nine", "+9"))
    assert kind(result) == "hunk_not_found" and "hunk 2 of a.txt" in result.text


@pytest.mark.parametrize("text,what", [
    ("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "git diff"),
    ("--- x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n", "unified diff"),
])
def test_other_dialects_are_refused_with_the_expected_format(trusted: Files, text: str, what: str) -> None:
    result = trusted.call("ApplyPatch", input=text)
    assert kind(result) == "wrong_format" and what in result.text and "*** Begin Patch" in result.text


def test_malformed_patches(trusted: Files) -> None:
    assert kind(trusted.call("ApplyPatch", input="hello")) == "invalid_patch"
    assert kind(trusted.call("ApplyPatch", input="*** Begin Patch\n*** Add File: a\n+x")) == "invalid_patch"
    result = trusted.call("ApplyPatch", input=patch("*** Add File: a", "no plus"))
    assert kind(result) == "invalid_patch" and "line 3" in result.text
    assert kind(trusted.call("ApplyPatch", input=patch("*** Update File: a"))) == "invalid_patch"
    assert kind(trusted.call("ApplyPatch", input=patch("*** Frobnicate: a"))) == "invalid_patch"


def test_heredoc_wrapper_is_unwrapped(files: Files) -> None:
    text = "apply_patch <<'EOF'\n" + patch("*** Add File: h.txt", "+hi") + "\nEOF\n"
    assert not files.call("ApplyPatch", input=text).is_error
    assert (files.root / "h.txt").read_text() == "hi\n"


def test_existing_and_missing_files(files: Files) -> None:
    (files.root / "here.txt").write_text("x\n")
    assert kind(files.call("ApplyPatch", input=patch("*** Add File: here.txt", "+y"))) == "file_exists"
    assert kind(files.call("ApplyPatch", input=patch("*** Delete File: gone.txt"))) == "file_not_found"
    assert kind(files.call("ApplyPatch", input=patch("*** Update File: gone.txt", "-a", "+b"))) == "file_not_found"
    (files.root / "dest.txt").write_text("d\n")
    result = files.call("ApplyPatch", input=patch("*** Update File: here.txt", "*** Move to: dest.txt", "-x", "+y"))
    assert kind(result) == "file_exists" and (files.root / "here.txt").read_text() == "x\n"


def test_line_endings_and_encodings_are_kept(files: Files) -> None:
    (files.root / "crlf.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    (files.root / "mixed.txt").write_bytes(b"a\r\nb\nc\r\n")
    (files.root / "noeol.txt").write_bytes(b"a\nb")
    (files.root / "u16.txt").write_bytes(codecs.BOM_UTF16_LE + "ä\r\nö\r\n".encode("utf-16-le"))
    result = files.call("ApplyPatch", input=patch(
        "*** Update File: crlf.txt", " a", "-b", "+B", "+B2",
        "*** Update File: mixed.txt", "-c", "+C",
        "*** Update File: noeol.txt", " a", "-b", "+B",
        "*** Update File: u16.txt", "-ö", "+ü"))
    assert not result.is_error, result.text
    assert (files.root / "crlf.txt").read_bytes() == b"a\r\nB\r\nB2\r\nc\r\n"
    assert (files.root / "mixed.txt").read_bytes() == b"a\r\nb\nC\r\n"
    assert (files.root / "noeol.txt").read_bytes() == b"a\nB\n"  # Codex adds the missing final newline
    assert (files.root / "u16.txt").read_bytes() == codecs.BOM_UTF16_LE + "ä\r\nü\r\n".encode("utf-16-le")


def test_paths_outside_the_workspace_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.txt").write_text("o\n")
    (root / "link").symlink_to(outside)
    files = Files(root, mode="bypassPermissions")
    try:
        for target in ("../outside/o.txt", "link/o.txt", str(outside / "o.txt")):
            result = files.call("ApplyPatch", input=patch(f"*** Update File: {target}", "-o", "+p"))
            assert kind(result) == "outside_workspace", (target, result.text)
        assert (outside / "o.txt").read_text() == "o\n"
    finally:
        files.close()
    loose = Files(root, mode="bypassPermissions", config={"tools": {"exec": {"applyPatch": {"workspaceOnly": False}}}})
    try:
        assert not loose.call("ApplyPatch", input=patch("*** Update File: link/o.txt", "-o", "+p")).is_error
        assert (outside / "o.txt").read_text() == "p\n"
    finally:
        loose.close()


def test_permission_subjects_name_every_file(files: Files) -> None:
    tool = files.pb.tool("ApplyPatch")
    assert tool is not None and tool.permission_subjects is not None
    text = patch("*** Add File: a", "+x", "*** Delete File: b", "*** Update File: c", "*** Move to: d", "-x", "+y")
    subjects = tool.permission_subjects(tool.input_model.model_validate({"input": text}))
    assert subjects.paths_written == ("a", "b", "c", "d")


def test_a_deny_rule_on_one_file_blocks_the_patch(tmp_path: Path) -> None:
    files = Files(tmp_path, config={"permissions": {"deny": ["Edit(secret/**)"]}})
    try:
        (tmp_path / "ok.txt").write_text("a\n")
        result = files.call("ApplyPatch", input=patch(
            "*** Update File: ok.txt", "-a", "+b", "*** Add File: secret/k.txt", "+x"))
        assert result.is_error and result.reason == "denied"
        assert (tmp_path / "ok.txt").read_text() == "a\n"
    finally:
        files.close()


def test_a_failing_write_puts_back_what_was_written() -> None:
    base = Path(tempfile.mkdtemp(prefix="pegboard-patch-"))
    base.chmod(0o777)
    (base / "a.txt").write_text("one\n")
    (base / "a.txt").chmod(0o666)
    (base / "locked").mkdir()
    (base / "locked").chmod(0o555)
    files = Files(base)
    try:
        with unprivileged():
            result = files.call("ApplyPatch", input=patch(
                "*** Update File: a.txt", "-one", "+ONE", "*** Add File: locked/new.txt", "+x"))
        assert kind(result) == "permission_denied" and "no file was changed" in result.text
        assert (base / "a.txt").read_text() == "one\n" and not (base / "locked" / "new.txt").exists()
    finally:
        files.close()
        (base / "locked").chmod(0o755)
        for p in sorted(base.rglob("*"), reverse=True):
            p.unlink() if p.is_file() or p.is_symlink() else p.rmdir()
        base.rmdir()


def test_an_update_adds_the_missing_final_newline(files: Files) -> None:
    (files.root / "a.txt").write_bytes(b"one\ntwo")
    result = files.call("ApplyPatch", input=patch("*** Update File: a.txt", " one", "-two", "+TWO"))
    assert not result.is_error, result.text
    assert (files.root / "a.txt").read_bytes() == b"one\nTWO\n"
    (files.root / "b.txt").write_bytes(b"x\ny")
    files.call("ApplyPatch", input=patch("*** Update File: b.txt", "-x", "+X"))
    assert (files.root / "b.txt").read_bytes() == b"X\ny\n"


def test_space_padded_headers_are_read(files: Files) -> None:
    (files.root / "a.txt").write_text("a\n")
    (files.root / "b.txt").write_text("b\n")
    result = files.call("ApplyPatch", input=patch(
        "  *** Update File: a.txt", "-a", "+A", "\t*** Update File: b.txt  ", "-b", "+B", " *** Add File: c.txt", "+c"))
    assert not result.is_error, result.text
    assert [(files.root / n).read_text() for n in ("a.txt", "b.txt", "c.txt")] == ["A\n", "B\n", "c\n"]


def test_a_padded_header_is_a_permission_subject(tmp_path: Path) -> None:
    files = Files(tmp_path, config={"permissions": {"deny": ["Edit(secret.txt)"]}})
    try:
        (tmp_path / "secret.txt").write_text("s\n")
        result = files.call("ApplyPatch", input=patch("   *** Update File: secret.txt", "-s", "+S"))
        assert result.is_error and result.reason == "denied"
        assert (tmp_path / "secret.txt").read_text() == "s\n"
    finally:
        files.close()


def test_a_move_without_a_hunk_is_refused(files: Files) -> None:
    (files.root / "a.txt").write_text("a\n")
    result = files.call("ApplyPatch", input=patch("*** Update File: a.txt", "*** Move to: b.txt"))
    assert kind(result) == "invalid_patch" and "no hunks" in result.text and "b.txt" in result.text
    assert (files.root / "a.txt").exists() and not (files.root / "b.txt").exists()


def test_context_lines_keep_their_own_ending_in_a_mixed_file(files: Files) -> None:
    (files.root / "m.txt").write_bytes(b"a\nb\r\nc\nd\n")
    result = files.call("ApplyPatch", input=patch("*** Update File: m.txt", " a", " b", "-c", "+C", " d"))
    assert not result.is_error, result.text
    assert (files.root / "m.txt").read_bytes() == b"a\nb\r\nC\nd\n"


@pytest.mark.parametrize("text", [
    "hello",
    "*** Begin Patch\n*** End Patch",
    "*** Begin Patch\n*** Update File: \n-a\n+b\n*** End Patch",
    "*** Begin Patch\n***Update File: a\n-a\n+b\n*** End Patch",
])
def test_a_malformed_patch_gets_its_parse_error_not_a_prompt(files: Files, text: str) -> None:
    result = files.call("ApplyPatch", input=text)
    assert result.reason == "tool_error", result
    assert kind(result) == "invalid_patch" and "no file path to check" not in result.text


def test_a_well_formed_patch_outside_the_rules_still_asks(tmp_path: Path) -> None:
    files = Files(tmp_path, mode="default")
    try:
        (tmp_path / "a.txt").write_text("a\n")
        result = files.call("ApplyPatch", input=patch("*** Update File: a.txt", "-a", "+b"))
        assert result.is_error and result.reason != "tool_error"
        assert (tmp_path / "a.txt").read_text() == "a\n"
    finally:
        files.close()
