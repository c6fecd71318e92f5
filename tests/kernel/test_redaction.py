"""Redaction: the windowed redactor gives exactly what the plain one-pattern-at-a-time rule gives."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pegboard.core import projection
from pegboard.core.redaction import CREDENTIAL_PATTERNS, REDACTED, redact, secret_values

REFERENCE_PATTERNS = [
    re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"),
    re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{30,}\b"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"(?i)\b(authorization:\s*bearer\s+)[A-Za-z0-9._~+/=-]{12,}"),
    re.compile(r"(://[^\s:/?#@]*:)[^\s/?#@]+(?=@)"),
]


def reference_redact(text: str, secrets: list[str] = ()) -> str:  # type: ignore[assignment]
    """The straightforward redactor: each secret, then each pattern, in turn over the whole text."""
    for value in secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern in REFERENCE_PATTERNS:
        if pattern.groups:
            text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
        else:
            text = pattern.sub(REDACTED, text)
    return text


def reference_normalised(text: str) -> tuple[str, list[int]]:
    """Each character's NFKC form (nothing for a format or other invisible character), and for
    every normalised character the position of the character it came from."""
    out: list[str] = []
    origin: list[int] = []
    for i, char in enumerate(text):
        invisible = unicodedata.category(char) == "Cf" or 0xFE00 <= ord(char) <= 0xFE0F
        invisible |= 0xE0100 <= ord(char) <= 0xE01EF or char == "\u034f"
        plain = "" if invisible else unicodedata.normalize("NFKC", char)
        out.append(plain)
        origin += [i] * len(plain)
    return "".join(out), origin


def reference_spans(text: str, secrets: list[str]) -> list[tuple[int, int]]:
    spans = [(m.start(), m.end()) for value in secrets for m in re.finditer(re.escape(value), text)]
    for pattern in REFERENCE_PATTERNS:
        spans += [(m.end(1) if pattern.groups else m.start(), m.end()) for m in pattern.finditer(text)]
    return [s for s in spans if s[1] > s[0]]


def reference_full(text: str, secrets: list[str] = ()) -> str:  # type: ignore[assignment]
    """The plain rule, unless the normalised text shows a credential: then every span found
    on its own, in the text and in the normalised text, merged and replaced in the text."""
    normal, origin = reference_normalised(text)
    if normal == text or reference_redact(normal, secrets) == normal:
        return reference_redact(text, secrets)
    spans = reference_spans(text, secrets)
    spans += [(origin[start], origin[end - 1] + 1) for start, end in reference_spans(normal, secrets)]
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, done = [], 0
    for start, end in merged:
        out += [text[done:start], REDACTED]
        done = end
    return "".join(out) + text[done:]


def test_the_fast_redactor_has_the_reference_shapes() -> None:
    def shape(p: re.Pattern[str]) -> tuple[str, int]:
        return p.pattern.removeprefix("(?i)"), p.flags

    assert [shape(p) for p in CREDENTIAL_PATTERNS] == [shape(p) for p in REFERENCE_PATTERNS]


def test_projection_still_exports_the_names() -> None:
    assert (projection.redact, projection.secret_values, projection.REDACTED) == (redact, secret_values, REDACTED)


PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nq2l0\n-----END RSA PRIVATE KEY-----"
CASES: list[tuple[str, list[str], str]] = [
    ("key=sk-ant-" + "a" * 30, [], "key=[REDACTED]"),
    ("sk-proj-" + "B" * 25 + " and sk-short", [], "[REDACTED] and sk-short"),
    ("id AKIAABCDEFGHIJKLMNOP end", [], "id [REDACTED] end"),
    ("ASIAABCDEFGHIJKLMNOPQ", [], "ASIAABCDEFGHIJKLMNOPQ"),
    ("token ghp_" + "x" * 36, [], "token [REDACTED]"),
    ("github_pat_" + "1" * 40 + ".", [], "[REDACTED]."),
    ("slack xoxb-1234567890-abc", [], "slack [REDACTED]"),
    ("AIza" + "Q" * 35, [], "[REDACTED]"),
    (f"before\n{PEM}\nafter", [], "before\n[REDACTED]\nafter"),
    ("Authorization: Bearer abcdefghijklmnop", [], "Authorization: Bearer [REDACTED]"),
    ("AUTHORIZATION:\n\tbearer  abc.def~ghi/jkl=", [], "AUTHORIZATION:\n\tbearer  [REDACTED]"),
    ("author\u0131zation: Bearer abcdefghijklmnop", [], "author\u0131zation: Bearer [REDACTED]"),
    ("postgres://admin:hunter2@db:5432/app", [], "postgres://admin:[REDACTED]@db:5432/app"),
    ("redis://:s3cret@cache", [], "redis://:[REDACTED]@cache"),
    ("https://example.com:8080/path?x=a:b@c", [], "https://example.com:8080/path?x=a:b@c"),
    ("https://user@host/ and mailto:a@b", [], "https://user@host/ and mailto:a@b"),
    ("export X=abcdefghijkl123", ["abcdefghijkl123"], "export X=[REDACTED]"),
    ("aaaabbbbccccdddd", ["bbbbccccdddd", "aaaabbbbcccc"], "aaaa[REDACTED]"),
    ("https://u:" + "sk-" + "z" * 24 + "@h", [], "https://u:[REDACTED]@h"),
    ("Bearer: authorization: bearer abc.sk-" + "q" * 22, [], "Bearer: authorization: bearer abc.[REDACTED]"),
    ("-----BEGIN X PRIVATE KEY-----\nk\n-----END AKIAAAAAAAAAAAAAAAAA PRIVATE KEY-----", [], None),  # type: ignore[list-item]
    (f"://u:x{PEM}@host", [], "://u:[REDACTED]@host"),
    ("", ["abcdefghijklmnop"], ""),
]


@pytest.mark.parametrize(("text", "secrets", "expected"), CASES)
def test_cases_match_the_reference(text: str, secrets: list[str], expected: str | None) -> None:
    assert redact(text, secrets) == reference_full(text, secrets)
    if expected is not None:
        assert redact(text, secrets) == expected


def test_a_token_eating_into_the_end_line_moves_the_key_block_to_the_next_end() -> None:
    text = (
        "-----BEGIN X PRIVATE KEY-----\nk\n-----END AKIAAAAAAAAAAAAAAAAA PRIVATE KEY-----\n"
        + "filler " * 50
        + "\n-----END X PRIVATE KEY----- tail"
    )
    assert redact(text) == reference_redact(text) == "[REDACTED] tail"


def test_secret_values_come_from_secret_named_variables() -> None:
    env = {"API_TOKEN": "t" * 12, "db_password": "p" * 20, "SHORT_KEY": "abc", "HOME": "/home/someone/long/path"}
    assert secret_values(env) == ["p" * 20, "t" * 12]


FRAGMENTS = st.sampled_from(
    [
        "sk-",
        "sk-ant-",
        "sk-proj-",
        "AKIA",
        "ASIA",
        "ghp_",
        "gho_",
        "github_pat_",
        "xoxb-",
        "xoxz-",
        "AIza",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----BEGIN ",
        "-----END RSA PRIVATE KEY-----",
        "-----END ",
        " PRIVATE KEY-----",
        "Authorization:",
        "AUTHORIZATION: ",
        "author\u0131zation:",
        "author\u0130zation:",
        " Bearer ",
        "bearer\n",
        "://",
        "https://user:",
        "@",
        ":",
        "/",
        "?",
        " ",
        "\n",
        "\t",
        "\u00a0",
        "[REDACTED]",
        "[",
        "]",
        "_",
        "-",
        ".",
        "é",
        "\u0131",
        "\u212a",
        "\u200b",
        "\ufeff",
        "\u00ad",
        "\ufb01",
        "\uff47\uff48\uff50\uff3f",
        "\uff53\uff4b\uff0d",
        "\uff1a\uff0f\uff0f",
    ]
)
WORDS = st.text(alphabet="aZ09_-.=", min_size=1, max_size=45)
FILLER = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6)


@st.composite
def texts_with_secrets(draw: st.DrawFn) -> tuple[str, list[str]]:
    secrets = draw(st.lists(st.text(alphabet="aZ0-:@ [] \n", min_size=1, max_size=16), max_size=4))
    inner = [s[i:j] for s in secrets for i, j in [(1, len(s)), (0, len(s) - 1)] if len(s) > 2]  # contained
    tails = [s[len(s) // 2 :] + draw(st.text(alphabet="aZ0-", min_size=1, max_size=4)) for s in secrets]  # overlapping
    secrets += draw(st.lists(st.sampled_from(inner + tails), max_size=3)) if inner + tails else []
    pieces = st.one_of(FRAGMENTS, WORDS, FILLER, *([st.sampled_from(secrets)] if secrets else []))
    text = "".join(draw(st.lists(pieces, max_size=40)))
    return text, draw(st.permutations(secrets))


@settings(max_examples=1500, deadline=None)
@given(texts_with_secrets())
@example(("xoxb-aaaaaaaaaa-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----", []))
@example(("://u:a-----BEGIN A PRIVATE KEY-----b c-----END A PRIVATE KEY-----@h", []))
@example(("ab:cdab:cd", ["ab:cd", "b:cdab"]))
def test_random_texts_match_the_reference(case: tuple[str, list[str]]) -> None:
    text, secrets = case
    assert redact(text, secrets) == reference_full(text, secrets)


OPENAI_KEY = "sk-proj-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCD"


def test_a_structured_result_is_redacted_everywhere_and_a_clean_one_is_not_copied() -> None:
    from pegboard.core.results import ToolResult

    class Sink:
        def put(self, tool: str, text: str) -> str:
            raise AssertionError("nothing is cut")

    nested = {"content": f"key = {OPENAI_KEY}", "rows": [["ok", f"token {OPENAI_KEY}"]], "n": 3,
              OPENAI_KEY: "as a key", "pair": ("hunter2-value", 1)}
    result = ToolResult.model_validate({"content": [{"type": "text", "text": "fine"}], "structured": nested})
    out = projection.project(result, tool="T", limit=1000, store=Sink(), secrets=["hunter2-value"])
    assert OPENAI_KEY not in repr(out.structured) and "hunter2-value" not in repr(out.structured)
    assert out.structured is not None
    assert out.structured["content"] == f"key = {REDACTED}" and out.structured["n"] == 3
    assert out.structured["rows"] == [["ok", f"token {REDACTED}"]]
    assert result.structured == nested  # the tool's own value is left as it was
    clean = ToolResult.model_validate({"content": [{"type": "text", "text": "fine"}],
                                       "structured": {"a": ["b", 1, None]}})
    assert projection.project(clean, tool="T", limit=1000, store=Sink(), secrets=[]) is clean
    assert projection.project(result, tool="T", limit=1000, store=Sink(), secrets=[], redact_text=False) is result


def _reference_value(value: object, secrets: list[str]) -> object:
    if isinstance(value, str):
        return reference_full(value, secrets)
    if isinstance(value, dict):
        return {(_reference_value(k, secrets) if isinstance(k, str) else k): _reference_value(v, secrets)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_reference_value(v, secrets) for v in value]
    return value


@st.composite
def structures_with_secrets(draw: st.DrawFn) -> tuple[object, list[str]]:
    texts = draw(st.lists(texts_with_secrets(), min_size=1, max_size=5))
    secrets = [s for _t, ss in texts for s in ss]
    strings = st.sampled_from([t for t, _ss in texts])
    value = draw(st.recursive(strings | st.integers() | st.none(),
                              lambda inner: st.lists(inner, max_size=3) | st.dictionaries(strings, inner, max_size=3),
                              max_leaves=8))
    return value, secrets


@settings(max_examples=400, deadline=None)
@given(structures_with_secrets())
def test_structured_values_are_redacted_like_each_string_alone(case: tuple[object, list[str]]) -> None:
    value, secrets = case
    assert projection.redact_value(value, secrets) == _reference_value(value, secrets)
