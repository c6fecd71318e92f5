"""Step 8 of a call: cut a result to the tool's size limit, keep the whole, redact credentials."""

from __future__ import annotations

from typing import Protocol

from pegboard.core.redaction import REDACTED, redact, secret_values
from pegboard.core.results import ImageBlock, TextBlock, ToolResult

__all__ = ["REDACTED", "ResultSink", "project", "redact", "secret_values"]


class ResultSink(Protocol):
    """Where a cut result's whole text goes; ``Session.results`` is one."""

    def put(self, tool: str, text: str) -> str: ...


def project(
    result: ToolResult, *, tool: str, limit: int, store: ResultSink, secrets: list[str], reader: str | None = None
) -> ToolResult:
    """Redact, then cut the text to ``limit`` characters with a visible note and a reference.

    ``reader`` is the enabled tool that pages through stored results (``reads_results``);
    without one the note tells the model to narrow its request instead.
    """
    blocks: list[TextBlock | ImageBlock] = []
    changed = False
    for block in result.content:
        if isinstance(block, TextBlock):
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
        how = (
            f"read more with {reader}(ref={ref!r}, offset={limit})"
            if reader
            else "no tool to page through it is enabled, so narrow the request to see the rest"
        )
        note = f"\n\n[Result cut to {limit:,} of {len(whole):,} characters. The whole result is kept as {ref}: {how}]"
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
        kept.append(TextBlock(text=note))
        blocks = kept
        metadata.update(truncated=True, full_result_ref=ref, details_ref=ref, full_length=len(whole))
        changed = True
    if not changed:
        return result
    return result.model_copy(update={"content": blocks, "metadata": metadata})
