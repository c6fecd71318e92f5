"""The built-in ``image`` tool (OpenClaw's): a vision-capable model's answer about one picture.

The picture comes from a path (judged by Read rules) or an http(s) URL (through the network
guard, as WebFetch); it is fitted to the image limits Read uses and sent with the prompt
through the ``complete`` hook as an image. Which plugin answers is the host's choice: the
OpenAI-compatible model plugin (``models.image``), ``pegboard serve`` (MCP sampling with
image content), or any other ``complete`` implementation that sees images.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

from pydantic import BaseModel, Field

from pegboard import (
    NEUTRAL,
    CompletionError,
    CompletionRequest,
    ConfigSection,
    ConfigSectionRegister,
    ImageBlock,
    InvalidPathError,
    Pegboard,
    Subjects,
    ToolContext,
    ToolRegister,
    ToolResult,
    hookimpl,
    request_completion,
    resolve_path,
    tool,
)
from pegboard_image_vision import SETTINGS_KEY, engine, unavailable, vision_reason
from pegboard_read_images import ImageError, ImageLimits, ImageLimitsError, image_limits, process_image
from pegboard_toolkit.toolconfig import tool_failure as _fail
from pegboard_toolkit.webfetch import WebFetchSettings

DEFAULT_PROMPT = "Describe the image."


class ImageSettings(WebFetchSettings):
    """The fetch settings of WebFetch (for image URLs) plus the picture's own limits."""

    maxBytesMb: Annotated[float, NEUTRAL] = Field(
        default=20.0, gt=0,
        description="Largest picture read or downloaded, in MB (the input's maxBytesMb is capped by it).")
    maxAnswerChars: Annotated[int, NEUTRAL] = Field(default=8_000, ge=100, description="Longest answer kept.")


class ImageInput(BaseModel):
    image: str = Field(min_length=1, description="Path of a local picture, or an http(s) URL.")
    prompt: str | None = Field(default=None, description=f'What to ask about the picture (default "{DEFAULT_PROMPT}").')
    model: str | None = Field(default=None, description="A model name override, passed to the answering plugin.")
    maxBytesMb: float | None = Field(default=None, gt=0, description="Refuse pictures larger than this many MB.")


def _is_url(value: str) -> bool:
    return value.strip().lower().startswith(("http://", "https://"))


def _subjects(i: ImageInput) -> Subjects:
    return Subjects(url=i.image.strip()) if _is_url(i.image) else Subjects(paths_read=(i.image,))


async def _download(ctx: ToolContext, url: str, settings: ImageSettings, cap: int) -> bytes | ToolResult:
    from pegboard_toolkit.webfetch import CrossHostRedirect, FetchLimits, fetch, guard_for
    from pegboard_toolkit.webpages import error_kind_of, error_result, prepare_url

    try:
        prepared = await prepare_url(ctx, url, settings, SETTINGS_KEY)
        limits = dataclasses.replace(FetchLimits.from_settings(settings), max_bytes=cap + 1)
        answer = await fetch(prepared, guard_for(ctx, settings, SETTINGS_KEY), limits,
                             keep_http=prepared.startswith("http:"), headers={"Accept": "image/*"})
    except Exception as exc:
        if error_kind_of(exc) is None:
            raise
        return error_result(exc, url)
    if isinstance(answer, CrossHostRedirect):
        return _fail(f"{url} redirects (HTTP {answer.status}) to {answer.location}, on another host; call image "
                     f"again with that URL", "redirect", location=answer.location)
    if answer.truncated or len(answer.body) > cap:
        return _fail(f"{url} is larger than {cap / 1e6:g} MB (maxBytesMb)", "too_large")
    return bytes(answer.body)


def _read(ctx: ToolContext, raw: str, cap: int) -> bytes | ToolResult:
    try:
        path = resolve_path(raw, ctx.cwd, ctx.env.get("HOME"))
    except (InvalidPathError, ValueError) as exc:
        return _fail(f"Invalid path: {exc}", "invalid_path")
    if not ctx.permissions.may_read(path):
        return ToolResult.refusal("denied", f"{path} is denied by a Read rule", error_kind="denied")
    if not path.is_file():
        return _fail(f"{path} does not exist or is not a file. The current working directory is {ctx.cwd}.",
                     "path_not_found")
    size = path.stat().st_size
    if size > cap:
        return _fail(f"{path} is {size / 1e6:.1f} MB, larger than {cap / 1e6:g} MB (maxBytesMb)", "too_large")
    return path.read_bytes()


def _limits(ctx: ToolContext) -> ImageLimits | ToolResult:
    try:
        return image_limits(ctx.config.data if ctx.config is not None else None, ctx.provider, ctx.model)
    except ImageLimitsError as exc:
        return _fail(f"image limits: {exc}", "invalid_config")


@tool(
    name="image",
    availability=unavailable,
    engine=engine,
    groups=["media", "openclaw"],
    requires_permission=False,
    permission_subjects=_subjects,
    path_fields=(),
    read_only=True,
    open_world=True,
    usage="image(image, prompt?): ask the configured vision model about a local picture or an image URL.",
)
async def image(input: ImageInput, ctx: ToolContext) -> ToolResult:
    """Analyse a picture with the configured vision model and return its answer. image is a
    local path or an http(s) URL; prompt defaults to "Describe the image."; model overrides
    the model name; maxBytesMb refuses larger pictures. The picture is scaled to the image
    limits Read uses before it is sent."""
    settings: ImageSettings = ctx.settings(SETTINGS_KEY)
    if not settings.enabled:
        return ToolResult.refusal("unavailable", f"image is turned off by {SETTINGS_KEY}.enabled",
                                  error_kind="disabled")
    cap_mb = min(input.maxBytesMb or settings.maxBytesMb, settings.maxBytesMb)
    cap = int(cap_mb * 1024 * 1024)
    source = input.image.strip()
    data = await _download(ctx, source, settings, cap) if _is_url(source) else _read(ctx, source, cap)
    if isinstance(data, ToolResult):
        return data
    limits = _limits(ctx)
    if isinstance(limits, ToolResult):
        return limits
    try:
        picture = process_image(data, limits)
    except ImageError as exc:
        return _fail(f"{source} is not a picture that can be read: {exc}", "invalid_image")
    prompt = input.prompt or DEFAULT_PROMPT
    request = CompletionRequest(
        prompt=prompt, purpose="image_description", max_chars=settings.maxAnswerChars,
        images=(ImageBlock(data=picture.base64, mime_type=picture.mime_type),),
        model=input.model)
    try:
        answer = await request_completion(ctx, request)
    except CompletionError as exc:
        return _fail(f"the vision model failed: {exc}", "model_error")
    if answer is None:
        return ToolResult.refusal("unavailable", _no_model_reason(ctx.pegboard), error_kind="no_vision_model")
    meta: dict[str, Any] = {"source": source, "mime_type": picture.mime_type, "width": picture.width,
                            "height": picture.height, "bytes": len(picture.data), "resized": picture.changed}
    return ToolResult.from_text(answer, structured={"answer": answer, **meta}, metadata=meta)


def _no_model_reason(pegboard: Pegboard | None) -> str:
    if pegboard is None:
        return "no vision model answered (no Pegboard)"
    return vision_reason(pegboard) or "no vision model answered: the complete hook's plugins returned nothing"


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(ConfigSection(SETTINGS_KEY, ImageSettings, description="The image tool."))


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(image)


__all__ = ["ImageInput", "ImageSettings", "image", "vision_reason"]
