"""Images in every result: before any tool's result (MCP tools' too) goes to the model, its
images are re-processed to the current model's limits, with the same sizing as Read.

A plugin of its own (entry point ``result-images`` of ``pegboard-read``), so that it can be
blocked or disabled apart from the Read tool. It runs as a ``post_tool_use`` hook, right
before the kernel projects the result; an image that cannot be processed is kept as it
came, and the structured value is never touched. Read's own images are already sized.
"""

from __future__ import annotations

from pegboard import ImageBlock, ToolCall, ToolContext, ToolResult, hookimpl
from pegboard_read import image_limits_for
from pegboard_read_images import ImageLimitsError, fit_result_images


@hookimpl
def post_tool_use(call: ToolCall, result: ToolResult, context: ToolContext) -> ToolResult | None:
    if call.tool.name == "Read" or not any(isinstance(b, ImageBlock) for b in result.content):
        return None
    try:
        limits = image_limits_for(context)
    except ImageLimitsError:
        return None
    return fit_result_images(result, limits)
