"""The client's own model as Pegboard's small model: ``complete`` answered through MCP sampling.

While a served call runs, the bridge sets the connection's sampler (``None`` when the client
did not declare the sampling capability); this plugin's ``complete`` hook asks it. A tool
that runs a prompt over text (WebFetch with a ``prompt``) then works over ``pegboard serve``
with no model configured on the server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import Any

from pegboard import CompletionRequest, hookimpl

#: ``sample(instruction, text, max_tokens, images)``: the client's model's answer, or ``None``;
#: ``images`` (``ImageBlock``) go first, one user message each, as MCP image content.
Sampler = Callable[[str, str, int, Sequence[Any]], Awaitable["str | None"]]

CURRENT_SAMPLER: ContextVar[Sampler | None] = ContextVar("pegboard_mcp_sampler", default=None)
CHARS_PER_TOKEN = 4


class ClientSampling:
    """A plugin object: answers ``complete`` with the calling client's model, when it has one."""

    @hookimpl(trylast=True)
    async def complete(self, request: CompletionRequest, context: Any) -> str | None:
        sampler = CURRENT_SAMPLER.get()
        if sampler is None:
            return None
        max_tokens = max(16, request.max_chars // CHARS_PER_TOKEN)
        return await sampler(request.prompt, request.text, max_tokens, request.images)


def sampling_message(instruction: str, text: str) -> str:
    """The one user message a sampling request carries: the material, then the instruction."""
    return f"{text}\n\n---\n\n{instruction}" if text else instruction


__all__ = ["CURRENT_SAMPLER", "ClientSampling", "Sampler", "sampling_message"]
