"""A credential hidden by look-alike characters (zero-width characters, fullwidth forms) is
still found and redacted, and the text around it comes back exactly as given."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pegboard.core.redaction import REDACTED, redact

#: ``(lead-in kept, secret, tail kept)``: each credential shape the redactor knows
TOKENS: list[tuple[str, str, str]] = [
    ("", "ghp_" + "aB3" * 12, ""),
    ("", "github_pat_" + "Zx9_" * 8, ""),
    ("", "sk-ant-" + "q1W2e3R4t5" * 3, ""),
    ("", "AKIA" + "ABCDEFGH23456789", ""),
    ("", "xoxb-" + "1234-5678-abcd", ""),
    ("", "AIza" + "Sy" + "a1B2c3D4e5" * 3 + "xyz", ""),
    ("Authorization: Bearer ", "eyJhbGciOi.JIUzI1NiJ9", ""),
    ("https://deploy:", "hunter2-correct-horse", "@127.0.0.1/repo"),
]
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e", "\ufe0f"]
#: text that holds no credential, look-alikes included (a ligature, fullwidth digits and brackets)
AROUND = st.text(alphabet="abc xyz éüß日本語\u00a0\ufb01\uff10\uff11\uff08\uff09\u3000\u200b", max_size=20)


def fullwidth(char: str) -> str:
    return chr(ord(char) + 0xFEE0) if "!" <= char <= "~" else "\u3000" if char == " " else char


@st.composite
def disguised(draw: st.DrawFn, text: str, *, first: bool = True, last: bool = True) -> str:
    """``text`` with some characters in fullwidth form and zero-width characters inserted,
    before its first character and after its last one only when ``first`` and ``last`` say so."""
    chars = [fullwidth(c) if draw(st.booleans()) else c for c in text]
    places = range(0 if first else 1, len(chars) + (1 if last else 0))
    for at in sorted(draw(st.lists(st.sampled_from(places), max_size=6)) if places else [], reverse=True):
        chars.insert(at, draw(st.sampled_from(ZERO_WIDTH)))
    return "".join(chars)


@st.composite
def hidden_tokens(draw: st.DrawFn) -> tuple[str, str, str, str, str]:
    head, secret, tail = draw(st.sampled_from(TOKENS))
    return (
        draw(AROUND),
        draw(disguised(head, last=False)),  # one right next to a URL password belongs to it
        draw(disguised(secret, first=False, last=False)),
        draw(disguised(tail, first=False)),
        draw(AROUND),
    )


@settings(max_examples=400, deadline=None)
@given(hidden_tokens())
def test_a_disguised_credential_is_redacted_and_the_rest_kept_as_given(case: tuple[str, str, str, str, str]) -> None:
    before, head, secret, tail, after = case
    text = f"{before} {head}{secret}{tail} {after}"
    assert redact(text) == f"{before} {head}{REDACTED}{tail} {after}"


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["hunter2-correct-horse", "s3cr3t-value-42"]), st.data())
def test_a_configured_secret_value_is_found_through_look_alikes(secret: str, data: st.DataObject) -> None:
    shown = data.draw(disguised(secret, first=False, last=False))
    before, after = data.draw(AROUND), data.draw(AROUND)
    assert redact(f"{before} {shown} {after}", [secret]) == f"{before} {REDACTED} {after}"


@given(AROUND)
def test_text_without_a_credential_comes_back_unchanged(text: str) -> None:
    assert redact(f"{text} plain words {text}") == f"{text} plain words {text}"


def test_each_look_alike_kind_alone() -> None:
    token = "ghp_" + "x" * 36
    assert redact(f"key ghp_\u200b{'x' * 36} end") == f"key {REDACTED} end"
    assert redact("key " + "".join(map(fullwidth, token)) + " end") == f"key {REDACTED} end"
    assert redact(f"Authorization: Bear\u200ber {'t' * 20}!") == f"Authorization: Bear\u200ber {REDACTED}!"
    kept = "\uff08\u6ce8\uff09 \ufb01le\u00a0names stay"
    assert redact(kept) == kept


async def test_memory_refuses_a_token_hidden_by_look_alikes(tmp_path: Path) -> None:
    import pegboard_memory
    from pegboard.testing import isolated_pegboard

    env = {"PEGBOARD_DATA_DIR": str(tmp_path / "data"), "HOME": str(tmp_path / "home")}
    pb = isolated_pegboard(pegboard_memory, cwd=tmp_path / "proj", env=env)
    token = "ghp_" + "b" * 36
    for text in (f"token ghp_\u200b{'b' * 36}", "token " + "".join(map(fullwidth, token))):
        refused = await pb.call("memory", {"action": "add", "content": text})
        assert refused.is_error and refused.metadata["error_kind"] == "secret_refused", text
        assert "b" * 36 not in refused.text
    assert not (tmp_path / "proj" / ".pegboard" / "memory" / "MEMORY.md").exists()


def test_the_invisible_characters_cover_every_format_character() -> None:
    import sys
    import unicodedata

    from pegboard.core.redaction import _INVISIBLE

    missing = [hex(c) for c in range(0x80, sys.maxunicode + 1)
               if unicodedata.category(chr(c)) == "Cf" and not _INVISIBLE.match(chr(c))]
    assert missing == [], f"add these format characters to _INVISIBLE: {missing}"
    assert redact("e\u0301 sk-" + "a" * 24) == "e\u0301 [REDACTED]"
