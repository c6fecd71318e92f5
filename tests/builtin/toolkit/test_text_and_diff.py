"""pegboard_toolkit.text and .diff: decoding round-trips every byte; patches say what changed."""

from __future__ import annotations

import codecs

from hypothesis import given
from hypothesis import strategies as st

from pegboard_toolkit import (
    apply_hunks,
    decode,
    detect_newline,
    encode,
    format_hunks,
    structured_patch,
    unified_diff,
)


@given(st.binary(max_size=200))
def test_decode_never_raises_and_encode_gives_the_bytes_back(data: bytes) -> None:
    decoded = decode(data)
    assert encode(decoded.text, decoded.format) == data


@given(st.text(max_size=50), st.sampled_from([b"", codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE]))
def test_boms_are_found_and_kept(text: str, bom: bytes) -> None:
    codec = {codecs.BOM_UTF16_LE: "utf-16-le", codecs.BOM_UTF16_BE: "utf-16-be"}.get(bom, "utf-8")
    try:
        data = bom + text.encode(codec)
    except UnicodeEncodeError:
        return
    decoded = decode(data)
    if decoded.format.lossless:
        assert decoded.text == text and decoded.format.bom == bom
    assert encode(decoded.text, decoded.format) == data


def test_newline_detection() -> None:
    assert detect_newline("a\nb\n") == "lf"
    assert detect_newline("a\r\nb\r\n") == "crlf"
    assert detect_newline("a\r\nb\n") == "mixed"
    assert detect_newline("a") == "none"
    assert detect_newline("a\rb\r") == "cr"


def test_invalid_utf8_is_carried_and_labelled() -> None:
    decoded = decode(b"caf\xe9")
    assert not decoded.format.lossless and "invalid bytes" in decoded.format.label
    assert encode(decoded.text + "!", decoded.format) == b"caf\xe9!"


lf_lines = st.lists(st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n"), max_size=5),
                    max_size=12)


@given(lf_lines, lf_lines, st.booleans(), st.booleans())
def test_hunks_turn_old_into_new(a: list[str], b: list[str], end_a: bool, end_b: bool) -> None:
    old = "\n".join(a) + ("\n" if end_a and a else "")
    new = "\n".join(b) + ("\n" if end_b and b else "")
    hunks = structured_patch(old, new)
    assert apply_hunks(old, hunks) == new
    assert (hunks == []) == (old == new)
    for h in hunks:
        assert h["oldLines"] == sum(1 for line in h["lines"] if line[:1] in (" ", "-"))
        assert h["newLines"] == sum(1 for line in h["lines"] if line[:1] in (" ", "+"))


def test_one_line_change_in_a_big_text_is_one_small_hunk() -> None:
    old = "".join(f"line {i}\n" for i in range(200_000))
    new = old.replace("line 123456\n", "LINE 123456\n")
    hunks = structured_patch(old, new)
    assert hunks == [{
        "oldStart": 123454, "oldLines": 7, "newStart": 123454, "newLines": 7,
        "lines": [" line 123453", " line 123454", " line 123455", "-line 123456", "+LINE 123456",
                  " line 123457", " line 123458", " line 123459"],
    }]
    assert format_hunks(hunks).startswith("@@ -123454,7 +123454,7 @@\n line 123453")


def test_unified_diff_has_headers_and_no_newline_markers() -> None:
    text = unified_diff("a\nb", "a\nc", "a/f", "b/f")
    assert text.splitlines() == ["--- a/f", "+++ b/f", "@@ -1,2 +1,2 @@", " a", "-b",
                                 "\\ No newline at end of file", "+c", "\\ No newline at end of file"]
    assert unified_diff("same", "same") == ""


def test_creation_hunk_starts_at_zero_in_text() -> None:
    assert format_hunks(structured_patch("", "x\n")) == "@@ -0,0 +1 @@\n+x"
