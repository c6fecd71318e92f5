"""The built-in ``WebFetch`` tool (``web_fetch`` in OpenClaw's spelling): one URL's readable
content, or a small model's answer to a prompt over it.

Written only against Pegboard's public API and ``pegboard-toolkit``. Its availability check
reads the asking ``Pegboard``'s own settings, so the module is imported only when it is used.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from pegboard import (
    CompletionError,
    CompletionRequest,
    ConfigSection,
    ConfigSectionRegister,
    Subjects,
    ToolContext,
    ToolRegister,
    ToolResult,
    hookimpl,
    request_completion,
    tool,
)
from pegboard_toolkit.availability import SwitchedOff
from pegboard_toolkit.toolconfig import turned_off
from pegboard_toolkit.webfetch import WebFetchSettings
from pegboard_toolkit.webpages import LoadedPage, cut, error_result, fetch_page

SETTINGS_KEY = "tools.web.fetch"

USAGE = (
    "WebFetch(url, prompt?, extractMode?, maxChars?): fetch a public http(s) URL (http is upgraded to https) "
    "and return its readable content as Markdown (or plain text with extractMode=text), or, with a prompt and "
    "a configured small model, the model's answer over the page. Pages are cut to maxChars (at most the "
    "configured cap, 50,000 by default) and cached for 15 minutes. A redirect to another host is returned, not "
    "followed: call WebFetch again with the new URL. Binary content is refused; PDFs come back as text."
)


class WebFetchInput(BaseModel):
    url: str = Field(description="The http(s) URL to fetch; http is upgraded to https.")
    prompt: str | None = Field(
        default=None,
        description="What to extract from the page; a small model answers it over the page when one is configured.",
    )
    extractMode: Literal["markdown", "text"] = Field(
        default="markdown", description="markdown keeps headings, links and lists; text is plain text."
    )
    maxChars: int | None = Field(
        default=None, ge=100,
        description="Cut the content to this many characters (capped by tools.web.fetch.maxCharsCap).",
    )


def _settings(ctx: ToolContext) -> WebFetchSettings:
    value: WebFetchSettings = ctx.settings(SETTINGS_KEY)
    return value


def _redirect_text(url: str, location: str, status: int) -> str:
    return (
        f"REDIRECT: {url} redirects (HTTP {status}) to {location}, which is on another host, so it was not "
        f"followed. To read it, call WebFetch again with url=\"{location}\"."
    )


def _notes(page: LoadedPage, shown: int, total: int, limit: int, cap: int, cut_text: bool) -> list[str]:
    notes = []
    if page.truncated:
        notes.append("[the page body was larger than the download cap; only its beginning was read]")
    if cut_text or page.content.cut:
        more = f" (pass a larger maxChars, up to {cap:,})" if limit < cap else ""
        of = f" of {total:,}" if not page.content.cut else ""
        notes.append(f"[content cut at {shown:,}{of} characters{more}]")
    return notes


@tool(
    availability=SwitchedOff(SETTINGS_KEY),
    name="WebFetch",
    groups=["web", "pegboard"],
    permission_family="WebFetch",
    requires_permission=True,
    permission_subjects=lambda i: Subjects(url=i.url),
    read_only=True,
    open_world=True,
    usage=USAGE,
)
async def web_fetch(input: WebFetchInput, ctx: ToolContext) -> ToolResult:
    """Fetch a URL and return its readable content. HTML is converted to Markdown (navigation,
    headers, footers and scripts dropped) or plain text with extractMode="text"; text types are
    returned in their charset; PDFs as their text; binary content is refused. With a prompt and
    a configured small model, the result is the model's answer to the prompt over the page,
    not the page itself, so ask for what you need. http:// URLs are upgraded to https://. Long
    pages are cut to maxChars (default and upper bound: tools.web.fetch.maxCharsCap, 50,000).
    Answers are cached for 15 minutes. A redirect to another host is not followed: the result
    names the new URL; fetch it with a second call. For pages that need JavaScript, use a
    browser tool instead."""
    settings = _settings(ctx)
    if (refusal := turned_off("WebFetch", settings, SETTINGS_KEY)) is not None:
        return refusal
    try:
        page = await fetch_page(ctx, input.url, input.extractMode, settings, SETTINGS_KEY)
    except Exception as exc:
        from pegboard_toolkit.webpages import error_kind_of

        if error_kind_of(exc) is None:
            raise
        return error_result(exc, input.url)
    if not isinstance(page, LoadedPage):
        return ToolResult.from_text(
            _redirect_text(page.url, page.location, page.status),
            metadata={"redirect": {"url": page.url, "location": page.location, "status": page.status}},
        )
    cap = settings.maxCharsCap
    limit = min(input.maxChars or cap, cap)
    content = page.content
    meta: dict[str, object] = {
        "url": page.url, "final_url": page.final_url, "status": page.status, "content_type": content.content_type,
        "title": content.title, "from_cache": page.from_cache, "chars": len(content.text),
    }
    if input.prompt:
        material, _ = cut(content.text, cap)
        try:
            answer = await request_completion(
                ctx, CompletionRequest(prompt=input.prompt, text=material, purpose="web_fetch", max_chars=limit))
        except CompletionError as exc:
            answer, meta["model_error"] = None, str(exc)
        if answer is not None:
            meta["model_answer"] = True
            return ToolResult.from_text(answer, metadata=meta)
        meta["model_answer"] = False
    text, was_cut = cut(content.text, limit)
    header = f"Fetched {page.final_url} ({content.content_type}{', from cache' if page.from_cache else ''})"
    if content.title:
        header += f"\nTitle: {content.title}"
    if input.prompt:
        why = meta.get("model_error") or "no small model is configured (no plugin answers the complete hook)"
        header += f"\nThe prompt was not run: {why}; here is the converted page instead."
    parts = [header, "", text, *_notes(page, len(text), len(content.text), limit, cap, was_cut)]
    return ToolResult.from_text("\n".join(parts).rstrip() + "\n", metadata=meta)


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(ConfigSection(SETTINGS_KEY, WebFetchSettings, description="The WebFetch tool."))


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(web_fetch)
