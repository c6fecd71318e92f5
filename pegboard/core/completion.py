"""Small-model completion: the ``complete`` first-result hook and how a tool asks it.

(The services only the agent loop provides, such as asking the user, are in ``hostservices``.)

A tool that wants "run this prompt over this text" builds a ``CompletionRequest`` and awaits
``request_completion(ctx, request)``. Whichever plugin answers the ``complete`` hook first
(an OpenAI-compatible endpoint, an MCP client's own model through sampling, a test double)
supplies the text; with no implementation the answer is ``None`` and the tool says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pegboard.core.results import ImageBlock

if TYPE_CHECKING:
    from pegboard.core.tools import ToolContext


class CompletionError(RuntimeError):
    """Every ``complete`` implementation that was asked failed; the message names them."""


@dataclass(frozen=True)
class CompletionRequest:
    """One small-model job: ``prompt`` (the instruction) run over ``text`` (the material).

    ``purpose`` says what the answer is for (``"web_fetch"``, ``"summary"``,
    ``"image_description"``), so a host can choose a model, log or refuse by purpose.
    ``max_chars`` is the answer's size budget: an implementation asks its model for no more,
    and the kernel cuts a longer answer to it. ``images`` are pictures the model must see
    (``ImageBlock``: base64 data and MIME type); an implementation whose model cannot see
    images returns ``None`` for such a request, so the next one may answer.
    """

    prompt: str
    text: str = ""
    purpose: str = ""
    max_chars: int = 4_000
    images: tuple[ImageBlock, ...] = ()
    model: str | None = None

    def __post_init__(self) -> None:
        if self.max_chars <= 0:
            raise ValueError("CompletionRequest.max_chars must be positive")


def has_completion(context: ToolContext) -> bool:
    """Whether any plugin implements ``complete`` for this context's ``Pegboard``."""
    pb: Any = context._pegboard
    return pb is not None and bool(pb.hooks.has("complete"))


async def request_completion(context: ToolContext, request: CompletionRequest) -> str | None:
    """The first ``complete`` answer, cut to ``request.max_chars``; ``None`` when no plugin
    answered. Raises ``CompletionError`` when implementations raised and none answered."""
    pb: Any = context._pegboard
    if pb is None or not pb.hooks.has("complete"):
        return None
    errors: list[Any] = []
    answer = await pb.hooks.first("complete", errors, request=request, context=context)
    if answer is None:
        if errors:
            raise CompletionError("; ".join(f"{e.plugin}: {e.error}" for e in errors))
        return None
    text = str(answer)
    return text[: request.max_chars]


__all__ = ["CompletionError", "CompletionRequest", "has_completion", "request_completion"]
