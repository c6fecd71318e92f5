"""Properties of exact replacement: revert restores the original, no input crashes it."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pegboard_edit.engine import EditError, apply_edit, count, find_spans
from pegboard_toolkit import decode, encode
from tests.builtin.filetools import Files

line_text = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n"), max_size=12)
lines = st.lists(line_text, max_size=8)
newline = st.sampled_from(["\n", "\r\n"])
snippet = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\r"), min_size=1, max_size=10)


@given(lines, newline, st.data())
def test_apply_then_revert_returns_the_original(body: list[str], nl: str, data: st.DataObject) -> None:
    text = nl.join(body) + (nl if body else "")
    lf = text.replace("\r\n", "\n")
    assume(lf)
    start = data.draw(st.integers(0, len(lf) - 1))
    end = data.draw(st.integers(start + 1, len(lf)))
    old = lf[start:end]
    new = data.draw(snippet)
    assume(old != new and count(text, old) == 1)
    changed = apply_edit(text, old, new)
    assume(count(changed.text, new) == 1)
    # a file left without any line break has no ending style to restore
    assume("\n" in changed.text or "\n" not in text)
    back = apply_edit(changed.text, new, old)
    assert back.text == text


@given(st.text(max_size=40), st.text(max_size=8), st.text(max_size=8), st.booleans(), st.lists(
    st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=3))
def test_any_input_gives_a_text_or_an_edit_error(text: str, old: str, new: str, replace_all: bool,
                                                  protected: list[tuple[int, int]]) -> None:
    try:
        applied = apply_edit(text, old, new, replace_all, protected=[(a, a + b) for a, b in protected])
    except EditError as exc:
        assert exc.kind in {"no_change", "not_found", "not_unique", "conflicts_with_previous_edit"}
        return
    assert applied.replacements >= 1
    if "\r" not in text and "\r" not in old and "\r" not in new:
        expected = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        assert applied.text == expected


@given(st.lists(st.sampled_from(["a", "b", "\n", "\r\n", "ab"]), max_size=20), st.sampled_from(["a", "b\na", "a\nb"]))
def test_spans_point_at_the_match_in_the_original_text(parts: list[str], old: str) -> None:
    text = "".join(parts)
    for s, e in find_spans(text, old):
        assert text[s:e].replace("\r\n", "\n") == old


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=60), st.text(max_size=6), st.text(max_size=6), st.booleans())
def test_the_tool_never_fails_without_an_error_kind(data: bytes, old: str, new: str, replace_all: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = Files(root)
        try:
            path = root / "f.txt"
            path.write_bytes(data)
            files.read(path)
            result = files.call("Edit", file_path=str(path), old_string=old, new_string=new, replace_all=replace_all)
            if result.is_error:
                assert result.reason == "tool_error" and result.metadata["error_kind"]
                assert path.read_bytes() == data
            else:
                after = decode(path.read_bytes())
                assert after.format.bom == decode(data).format.bom
                assert encode(after.text, after.format) == path.read_bytes()
        finally:
            files.close()


utf8ish = st.lists(st.one_of(st.sampled_from([b"\n", b"\xe9", b"\xe2\x82", "€".encode(), "ü".encode(), b"ab"]),
                             st.text("abc \n", max_size=4).map(str.encode)), max_size=30).map(b"".join)


@given(utf8ish, st.text("abc €ü\n", min_size=1, max_size=4), st.text("xyz €\n", max_size=4))
def test_the_byte_path_agrees_with_the_text_path(data: bytes, old: str, new: str) -> None:
    from pegboard_edit import bigfile
    from pegboard_toolkit import apply_hunks, structured_patch

    old_bytes = old.encode()
    assume(old != new and b"\r" not in data)
    decoded = decode(data)
    try:
        expected = encode(apply_edit(decoded.text, old, new).text, decoded.format)
    except EditError as exc:
        assert exc.kind in {"not_found", "not_unique"}
        assert (data.count(old_bytes) == 0) == (exc.kind == "not_found")
        return
    assert data.count(old_bytes) == 1
    at = data.find(old_bytes)
    assert data[:at] + new.encode() + data[at + len(old_bytes):] == expected
    hunks = bigfile.window_patch(data, at, len(old_bytes), new.encode())
    whole = structured_patch(decoded.text, decode(expected).text)
    # where blank lines make the alignment ambiguous both patches are right; each must
    # turn the old text into the new one
    assert apply_hunks(decoded.text, hunks) == apply_hunks(decoded.text, whole) == decode(expected).text
