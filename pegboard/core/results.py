"""What a tool call returns: content blocks, an optional structured value, and a reason for refusals."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Reason(StrEnum):
    """Stable codes for why a call did not produce a normal result."""

    UNKNOWN_TOOL = "unknown_tool"
    INVALID_INPUT = "invalid_input"
    DENIED = "denied"
    NOT_APPROVED = "not_approved"
    HOOK_BLOCKED = "hook_blocked"
    TOOL_ERROR = "tool_error"
    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"


class TextBlock(BaseModel):
    model_config = ConfigDict(frozen=True)

    type: Literal["text"] = "text"
    text: str


class ImageBlock(BaseModel):
    """An image as base64 data, the way every provider accepts it."""

    model_config = ConfigDict(frozen=True)

    type: Literal["image"] = "image"
    data: str
    mime_type: str = "image/png"


ContentBlock = Annotated[TextBlock | ImageBlock, Field(discriminator="type")]


class ToolResult(BaseModel):
    """The outcome of one tool call; refusals are results too, with a ``reason`` code."""

    content: list[ContentBlock] = Field(default_factory=list)
    structured: dict[str, Any] | None = None
    is_error: bool = False
    reason: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_text(cls, text: str, **kwargs: Any) -> ToolResult:
        return cls(content=[TextBlock(text=text)], **kwargs)

    @classmethod
    def refusal(cls, reason: Reason | str, message: str, **metadata: Any) -> ToolResult:
        """An error result carrying a stable reason code and a message that says how to fix it."""
        return cls(content=[TextBlock(text=message)], is_error=True, reason=str(reason), metadata=metadata)

    @classmethod
    def error(cls, message: str, **metadata: Any) -> ToolResult:
        """A tool's own failure (reason ``tool_error``): what went wrong and how to go on.

        ``error_kind="..."`` and other keywords land in ``metadata`` for hosts that react to
        the kind of failure; the model reads ``message``.
        """
        return cls(content=[TextBlock(text=message)], is_error=True, reason=Reason.TOOL_ERROR.value, metadata=metadata)

    @property
    def text(self) -> str:
        """All text blocks joined by newlines."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))

    def to_json(self) -> dict[str, Any]:
        """The CLI's ``--json`` shape."""
        return {
            "is_error": self.is_error,
            "content": [b.model_dump() for b in self.content],
            "structured": self.structured,
            "reason": self.reason,
            "metadata": _jsonable(self.metadata),
        }


def _jsonable(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError):
        return {"unserialisable": str(value)}


def coerce_result(value: object) -> ToolResult:
    """Turn what a tool's ``run`` returned into a ``ToolResult``.

    A string becomes a text block; a dict becomes a structured value with its JSON as text.
    """
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult.from_text(value)
    if isinstance(value, dict):
        return ToolResult(
            content=[TextBlock(text=json.dumps(value, ensure_ascii=False, default=str))],
            structured=value,
        )
    if isinstance(value, TextBlock | ImageBlock):
        return ToolResult(content=[value])
    if value is None:
        return ToolResult()
    raise TypeError(f"a tool returned {type(value).__name__}; return a ToolResult, a str or a dict")
