"""Step 8 of a call: cut a result to the tool's size limit, keep the whole, redact credentials."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Protocol

from pegboard.core.results import ImageBlock, TextBlock, ToolResult

_CREDENTIAL_PATTERNS = [
    re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"),
    re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{30,}\b"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"(?i)\b(authorization:\s*bearer\s+)[A-Za-z0-9._~+/=-]{12,}"),
]
_SECRET_ENV_NAME = re.compile(r"(?i)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)")
REDACTED = "[REDACTED]"


def secret_values(env: Mapping[str, str]) -> list[str]:
    """Values of environment variables whose names say they are secrets (long enough to be real)."""
    return sorted({v for k, v in env.items() if _SECRET_ENV_NAME.search(k) and len(v) >= 12}, key=len, reverse=True)


def redact(text: str, secrets: list[str] = ()) -> str:  # type: ignore[assignment]
    """Replace known credential shapes and the given secret values with ``[REDACTED]``."""
    for value in secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern in _CREDENTIAL_PATTERNS:
        if pattern.groups:
            text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
        else:
            text = pattern.sub(REDACTED, text)
    return text


class ResultSink(Protocol):
    """Where a cut result's whole text goes; ``Session.results`` is one."""

    def put(self, tool: str, text: str) -> str: ...


def cut_note(ref: str, limit: int, total: int, reader: str | None = None) -> str:
    """The note a cut result ends with when the reader supplies none: it names the reference."""
    how = (
        f"page through it with {reader}"
        if reader
        else "no tool to page through it is enabled, so narrow the request to see the rest"
    )
    return f"[Result cut to {limit:,} of {total:,} characters. The whole result is kept as {ref}: {how}]"


def project(
    result: ToolResult,
    *,
    tool: str,
    limit: int,
    store: ResultSink,
    secrets: list[str],
    reader: str | None = None,
    note: Callable[[str, int, int], str] | None = None,
    redact_text: bool = True,
) -> ToolResult:
    """Redact, then cut the text to ``limit`` characters with a visible note and a reference.

    ``reader`` is the enabled tool that pages through stored results (``reads_results``) and
    ``note`` its ``result_note(ref, limit, total)``, which words the note (how to read on);
    without a reader the note tells the model to narrow its request instead. ``redact_text``
    is false only for the reader itself, whose pages come from records redacted when stored.
    """
    blocks: list[TextBlock | ImageBlock] = []
    changed = False
    for block in result.content:
        if isinstance(block, TextBlock) and redact_text:
            clean = redact(block.text, secrets)
            changed |= clean != block.text
            blocks.append(TextBlock(text=clean) if clean != block.text else block)
        else:
            blocks.append(block)
    text_len = sum(len(b.text) for b in blocks if isinstance(b, TextBlock))
    metadata = dict(result.metadata)
    if text_len > limit:
        whole = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
        ref = store.put(tool, whole)
        written: str | None = None
        if note is not None and reader:
            try:
                written = note(ref, limit, len(whole))
            except Exception:
                written = None
        text = written if written and ref in written else cut_note(ref, limit, len(whole), reader)
        kept: list[TextBlock | ImageBlock] = []
        budget = limit
        for block in blocks:
            if isinstance(block, TextBlock):
                if budget <= 0:
                    continue
                kept.append(TextBlock(text=block.text[:budget]))
                budget -= len(block.text)
            else:
                kept.append(block)
        kept.append(TextBlock(text="\n\n" + text))
        blocks = kept
        metadata.update(truncated=True, full_result_ref=ref, details_ref=ref, full_length=len(whole))
        changed = True
    if not changed:
        return result
    return result.model_copy(update={"content": blocks, "metadata": metadata})
