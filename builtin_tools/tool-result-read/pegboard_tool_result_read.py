"""``tool_result_read``: the model's way back to the part of a long result that was cut.

Results live in the session under ``tr_…`` references (``details_ref`` for the whole text as
the tool returned it, redacted; ``raw_ref`` for a raw form a tool kept beside it). A page is
``limit`` characters from ``offset`` (characters, never bytes); the page and its header must
also fit the reader's own result envelope, and a page cut to fit says ``envelope_clamped``.
Stored records were redacted when kept; an artifact file is redacted as it is read. Errors
carry a stable ``error_kind``: ``invalid_ref``, ``not_found``, ``out_of_scope``,
``not_available``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, Field

from pegboard import (
    NEUTRAL,
    ConfigSection,
    ConfigSectionRegister,
    Session,
    SessionKey,
    StoredResult,
    ToolContext,
    ToolRegister,
    ToolResult,
    hookimpl,
    redact,
    tool,
)

DEFAULT_LIMIT = 12_000
MAX_LIMIT = 48_000
ENVELOPE_CHARS = 50_000
REF_PATTERN = re.compile(r"^(tr_[0-9a-f]{8,64})(_raw)?$")
FULL_REF_LENGTH = 23
RAW_SUFFIX = "_raw"
SETTINGS_KEY = "tools.toolResultRead"
#: The records read last in this process (a ref never changes its record), so paging through
#: a large result does not fetch it from the store for every page.
RECENT: SessionKey[dict[str, StoredResult]] = SessionKey("pegboard-tool-result-read-recent", dict, default=dict)


class ResultReadInput(BaseModel):
    ref: str = Field(
        description="The reference exactly as a result gave it (details_ref or raw_ref), e.g. tr_1a2b3c4d5e6f7a8b9c0d."
    )
    offset: int = Field(default=0, ge=0, description="Character offset to start at.")
    limit: int = Field(
        default=DEFAULT_LIMIT, ge=1, le=MAX_LIMIT, description=f"Characters to return (at most {MAX_LIMIT:,})."
    )


def result_note(ref: str, limit: int, total: int) -> str:
    """The note a cut result ends with while this reader is enabled."""
    return (
        f"[Result cut to {limit:,} of {total:,} characters. The whole result is kept as {ref}; "
        f'read on with tool_result_read {{"ref": "{ref}", "offset": {limit}, "limit": {DEFAULT_LIMIT}}}]'
    )


def refusal(kind: str, message: str, ref: str) -> ToolResult:
    return ToolResult.refusal(kind, message, error_kind=kind, ref=ref)


class ReaderSettings(BaseModel):
    """``tools.toolResultRead``: the reader's envelope."""

    envelopeChars: Annotated[int, NEUTRAL] = Field(
        default=ENVELOPE_CHARS, ge=1_000, description="header and page together fit in this many characters"
    )


def envelope_chars(ctx: ToolContext) -> int:
    if ctx.pegboard is None:
        return ENVELOPE_CHARS
    settings: ReaderSettings = ctx.settings(SETTINGS_KEY)
    return settings.envelopeChars


def raw_ref(ref: str) -> str:
    """The reference of the raw form kept beside the record ``ref`` (``StoredResult.raw``)."""
    return ref + RAW_SUFFIX


def resolve(session: Session, ref: str) -> tuple[StoredResult | None, ToolResult | None, str]:
    """The record ``ref`` names in ``session`` and which of its texts (``text`` or ``raw``), or a refusal."""
    match = REF_PATTERN.match(ref)
    if match is None:
        return None, refusal(
            "invalid_ref",
            f"{ref!r} is not a result reference; use the tr_… reference a result gave, exactly as given "
            "(never a file path)",
            ref,
        ), "text"
    base, part = match.group(1), "raw" if match.group(2) else "text"
    recent = session.state[RECENT]
    record = recent.get(base) or session.results.get(base)
    if record is not None:
        recent.clear()
        recent[base] = record
    if record is None and len(base) < FULL_REF_LENGTH:
        matches = [r for r in session.results.all() if r.ref.startswith(base)]
        if len(matches) > 1:
            return None, refusal(
                "invalid_ref",
                f"{ref!r} is ambiguous: {len(matches)} references of this session start with it; give the whole one",
                ref,
            ), part
        record = matches[0] if matches else None
    if record is None:
        owner = session.results.owner_of(base)
        if owner is not None and owner != session.id:
            return None, refusal(
                "out_of_scope",
                f"{ref} belongs to another session; a reference can only be read in the session that made it",
                ref,
            ), part
        return None, refusal(
            "not_found",
            f"No stored result {ref} in this session: it may have been dropped to stay within the session's "
            "quota. Run the original tool again.",
            ref,
        ), part
    if part == "raw" and record.raw is None:
        return None, refusal("not_found", f"{record.ref} keeps no raw form; read {record.ref} instead", ref), part
    return record, None, part


ARTIFACTS: SessionKey[dict[str, tuple[tuple[int, int], str]]] = SessionKey(
    "pegboard-tool-result-read-artifacts", dict, default=dict
)


def _artifact_text(session: Session, record: StoredResult) -> str | None:
    """The redacted text of the session file an ``artifact`` record points at, or ``None``.

    The last file read is kept (by size and time) so that paging through it reads it once."""
    name = str(record.meta.get("path") or record.text)
    base = session.directory.resolve()
    path = (base / name).resolve()
    if not path.is_relative_to(base) or not path.is_file():
        return None
    try:
        stat = path.stat()
        mark = (stat.st_mtime_ns, stat.st_size)
        cache = session.state[ARTIFACTS]
        if record.ref in cache and cache[record.ref][0] == mark:
            return cache[record.ref][1]
        text = redact(path.read_bytes().decode("utf-8", errors="replace"), list(session.pegboard.secrets))
    except OSError:
        return None
    cache.clear()
    cache[record.ref] = (mark, text)
    return text


def page_header(fields: dict[str, Any]) -> str:
    state = "eof" if fields["eof"] else f"next_offset={fields['next_offset']}"
    clamp = ", envelope_clamped" if fields["envelope_clamped"] else ""
    return (
        f"[{fields['ref']} from {fields['source_tool']} ({fields['content_type']}, {fields['storage_kind']}): "
        f"characters {fields['offset']:,}-{fields['end']:,} of {fields['total_chars']:,}; {state}{clamp}]\n"
    )


def read_page(record: StoredResult, text: str, ref: str, offset: int, limit: int, envelope: int) -> ToolResult:
    """One page of ``text`` as the tool's result: header, then the characters."""
    total = len(text)
    start = min(offset, total)
    fields: dict[str, Any] = {
        "ref": ref,
        "offset": start,
        "limit": limit,
        "total_chars": total,
        "source_tool": record.tool,
        "content_type": record.content_type,
        "storage_kind": record.storage_kind,
        "envelope_clamped": False,
    }
    end = min(start + limit, total)
    fields.update(end=end, next_offset=end if end < total else None, eof=end >= total)
    room = envelope - len(page_header({**fields, "end": total, "next_offset": total, "envelope_clamped": True}))
    if end - start > room:
        end = start + max(room, 1)
        fields.update(end=end, next_offset=end, eof=False, envelope_clamped=True)
    chunk = text[start:end]
    return ToolResult.from_text(page_header(fields) + chunk, structured=dict(fields), metadata=dict(fields))


@tool(
    name="tool_result_read",
    groups=["core", "pegboard"],
    read_only=True,
    idempotent=True,
    reads_results=True,
    result_note=result_note,
    max_result_chars=ENVELOPE_CHARS * 4,
    usage=(
        "When a tool result says it was cut, read on with tool_result_read and the tr_… reference it "
        f"names: offset and limit count characters (default {DEFAULT_LIMIT:,}, at most {MAX_LIMIT:,}); "
        "continue from next_offset until eof."
    ),
)
async def tool_result_read(input: ResultReadInput, ctx: ToolContext) -> ToolResult:
    """Read a bounded part of a stored tool result by the reference (details_ref or raw_ref) a result gave.

    Offsets and limits count characters. Continue from next_offset until eof. Only results kept whole
    (storage_kind inspectable, or an artifact file of this session) can be read; a result kept only as
    a bounded projection cannot be rebuilt.
    """
    session = ctx.session
    if session is None:
        return refusal("not_available", "tool_result_read needs a session; none is open", input.ref)
    record, refused, part = resolve(session, input.ref)
    if refused is not None:
        return refused
    assert record is not None
    if not record.complete:
        return refusal(
            "not_available",
            f"{input.ref} was stored incomplete; its whole content is not available and is never rebuilt "
            "from a preview. Run the original tool again.",
            input.ref,
        )
    if record.storage_kind == "projected":
        return refusal(
            "not_available",
            f"only a bounded projection of {input.ref} was kept (storage_kind projected); the whole result "
            "is not available. Run the original tool again, narrower.",
            input.ref,
        )
    if record.storage_kind == "artifact":
        text = _artifact_text(session, record)
        if text is None:
            return refusal(
                "not_available", f"the file {input.ref} points at is gone from this session", input.ref
            )
    elif record.storage_kind == "inspectable":
        text = record.raw if part == "raw" and record.raw is not None else record.text
    else:
        return refusal(
            "not_available", f"{input.ref} has storage_kind {record.storage_kind!r}, which cannot be read", input.ref
        )
    return read_page(record, text, input.ref, input.offset, input.limit, envelope_chars(ctx))


def results_summary(session: Session) -> list[dict[str, Any]]:
    """The session's stored results without their text (for ``pegboard sessions show``)."""
    return [
        {
            "ref": r.ref,
            "tool": r.tool,
            "storage_kind": r.storage_kind,
            "content_type": r.content_type,
            "complete": r.complete,
            "total_chars": len(r.text) if r.storage_kind != "artifact" else None,
            "size": r.size,
            "created": r.created,
            **({"raw_ref": raw_ref(r.ref)} if r.raw is not None else {}),
        }
        for r in session.results.all()
    ]


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(ConfigSection(SETTINGS_KEY, ReaderSettings, description="tool_result_read"))


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(tool_result_read)


__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "raw_ref", "result_note", "results_summary", "tool_result_read"]
