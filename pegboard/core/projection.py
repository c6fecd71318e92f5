"""Step 8 of a call: cut a result to the tool's size limit, keep the whole, redact credentials."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from pegboard.core.redaction import REDACTED, redact, secret_values
from pegboard.core.results import ImageBlock, TextBlock, ToolResult

__all__ = ["REDACTED", "ResultSink", "cut_note", "project", "redact", "redact_outgoing", "secret_values"]


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


_ATOMS = frozenset({int, float, bool, type(None)})


def redact_value(value: Any, secrets: list[str]) -> Any:
    """``value`` (a structured result: dicts, lists, strings ...) with every string redacted;
    the very same object when nothing in it changed, so a clean result is not copied.

    The strings are first redacted as one text, joined by newlines: no credential shape's
    lead holds a newline, so when that text comes back unchanged so would every string.
    """
    strings: list[str] = []
    _collect(value, strings)
    if not strings:
        return value
    joined = "\n".join(strings)
    if redact(joined, secrets) == joined:
        return value
    return _redacted(value, secrets)


def _collect(value: Any, into: list[str]) -> None:
    kind = type(value)
    if kind is str:
        into.append(value)
    elif kind is dict:
        for key, item in value.items():
            if isinstance(key, str):
                into.append(key)
            if type(item) is str:
                into.append(item)
            elif type(item) not in _ATOMS:
                _collect(item, into)
    elif kind is list or kind is tuple:
        for item in value:
            if type(item) is str:
                into.append(item)
            elif type(item) not in _ATOMS:
                _collect(item, into)
    elif isinstance(value, str):
        into.append(value)
    elif isinstance(value, dict | list | tuple):
        _collect(dict(value) if isinstance(value, dict) else list(value), into)


def _redacted(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        changed = False
        out: dict[Any, Any] = {}
        for key, item in value.items():
            clean_key = redact(key, secrets) if isinstance(key, str) else key
            clean = _redacted(item, secrets)
            changed |= clean is not item or clean_key is not key
            out[clean_key] = clean
        return out if changed else value
    if isinstance(value, list | tuple):
        items = [_redacted(item, secrets) for item in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return items if isinstance(value, list) else tuple(items)
    return value


def redact_outgoing(result: ToolResult, secrets: list[str], *, text: bool) -> ToolResult:
    """The last step before a result leaves the kernel: every string in ``metadata`` redacted
    (a rule that quotes a command, a fetched URL with a password), and with ``text`` the
    content and structured value too, for results that were never projected (refusals,
    which quote the call). The same object when nothing changed."""
    update: dict[str, Any] = {}
    if result.metadata:
        metadata = redact_value(result.metadata, secrets)
        if metadata is not result.metadata:
            update["metadata"] = metadata
    if text:
        blocks: list[TextBlock | ImageBlock] = []
        changed = False
        for block in result.content:
            if isinstance(block, TextBlock) and (clean := redact(block.text, secrets)) != block.text:
                blocks.append(TextBlock(text=clean))
                changed = True
            else:
                blocks.append(block)
        if changed:
            update["content"] = blocks
        if result.structured is not None and (structured := redact_value(result.structured, secrets)) is not (
            result.structured
        ):
            update["structured"] = structured
    return result.model_copy(update=update) if update else result


def project(
    result: ToolResult,
    *,
    tool: str,
    limit: int,
    store: ResultSink,
    secrets: list[str],
    reader: str | None = None,
    note: Callable[[str, int, int], str | None] | None = None,
    redact_text: bool = True,
) -> ToolResult:
    """Redact, then cut the text to ``limit`` characters with a visible note and a reference.

    The structured value is redacted too (every string in it), since hosts hand it to the
    model as well (MCP ``structuredContent``).

    ``reader`` is the enabled tool that pages through stored results (``reads_results``) and
    ``note`` its ``result_note(ref, limit, total)``, which words the note (how to read on);
    without a reader the note tells the model to narrow its request instead. ``redact_text``
    is false only for the reader itself, whose pages come from records redacted when stored.
    """
    if redact_text and result.structured is not None:
        structured = redact_value(result.structured, secrets)
        if structured is not result.structured:
            result = result.model_copy(update={"structured": structured, "metadata": dict(result.metadata)})
    content = result.content
    if len(content) == 1 and type(only := content[0]) is TextBlock and len(only.text) <= limit:
        clean = redact(only.text, secrets) if redact_text else only.text
        if clean == only.text:  # the common case: one short text with nothing to redact
            return result
        if len(clean) <= limit:
            return result.model_copy(update={"content": [TextBlock(text=clean)], "metadata": dict(result.metadata)})
    blocks: list[TextBlock | ImageBlock] = []
    changed = False
    for block in content:
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
