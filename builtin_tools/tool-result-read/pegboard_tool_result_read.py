"""``tool_result_read``: the model's way back to the part of a long result that was cut."""

from __future__ import annotations

from pydantic import BaseModel, Field

from pegboard import ToolContext, ToolRegister, ToolResult, hookimpl, tool

PAGE = 20_000


class ResultReadInput(BaseModel):
    ref: str = Field(description="The reference named in the cut result's note, e.g. 'tr_1a2b3c4d5e6f'.")
    offset: int = Field(default=0, ge=0, description="Character offset to start at.")
    limit: int = Field(default=PAGE, ge=1, le=100_000, description="Number of characters to return.")


@tool(
    name="tool_result_read",
    groups=["pegboard"],
    read_only=True,
    idempotent=True,
    reads_results=True,
    max_result_chars=100_000,
    usage="When a tool result says it was cut, page through the whole result with tool_result_read.",
)
async def tool_result_read(input: ResultReadInput, ctx: ToolContext) -> ToolResult:
    """Read part of a tool result that was cut to its size limit, by the reference its note gives."""
    entry = ctx.session.results.get(input.ref) if ctx.session is not None else None
    if entry is None:
        return ToolResult.refusal(
            "tool_error", f"No stored result {input.ref!r}; it may have expired. Run the original tool again."
        )
    chunk = entry.text[input.offset : input.offset + input.limit]
    end = input.offset + len(chunk)
    note = f"\n\n[characters {input.offset:,}-{end:,} of {len(entry.text):,} from {entry.tool}" + (
        f"; continue with offset={end}]" if end < len(entry.text) else "; end of result]"
    )
    return ToolResult.from_text(chunk + note, metadata={"ref": input.ref, "total": len(entry.text), "end": end})


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(tool_result_read)
