"""The built-in ``web_extract`` tool (as in Anyy): the readable content of several public URLs
as structured results, one per URL, fetched concurrently under a per-call cap.

Same guard, limits and cache as WebFetch (``pegboard_toolkit.webpages``); every URL is a
permission subject judged by ``WebFetch(domain:...)`` rules.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from pegboard import (
    NEUTRAL,
    ConfigSection,
    ConfigSectionRegister,
    Subjects,
    TextBlock,
    ToolContext,
    ToolRegister,
    ToolResult,
    hookimpl,
    tool,
)
from pegboard_toolkit.availability import SwitchedOff
from pegboard_toolkit.toolconfig import turned_off
from pegboard_toolkit.webfetch import WebFetchSettings
from pegboard_toolkit.webpages import LoadedPage, cut, error_kind_of, fetch_page

SETTINGS_KEY = "tools.web.extract"
MAX_URLS = 10

USAGE = (
    "web_extract(urls, extractMode?, maxChars?): readable content of up to 10 public http(s) URLs at once, "
    "as one result per URL (url, final_url, title, text, links, error). Each text is cut to maxChars "
    "(default 20,000). Redirects to another host are reported, not followed."
)


class ExtractSettings(WebFetchSettings):
    maxConcurrency: Annotated[int, NEUTRAL] = Field(default=4, ge=1, le=MAX_URLS,
                                                    description="URLs fetched at the same time per call.")
    defaultMaxChars: Annotated[int, NEUTRAL] = Field(default=20_000, ge=100,
                                                     description="Characters per URL when a call gives no maxChars.")


class WebExtractInput(BaseModel):
    urls: list[str] = Field(min_length=1, max_length=MAX_URLS, description="1-10 http(s) URLs.")
    extractMode: Literal["markdown", "text"] = Field(default="markdown", description="markdown or plain text.")
    maxChars: int | None = Field(default=None, ge=100, description="Characters per URL (capped by maxCharsCap).")


async def _one(ctx: ToolContext, url: str, mode: Literal["markdown", "text"], limit: int,
               settings: ExtractSettings) -> dict[str, Any]:
    item: dict[str, Any] = {"url": url, "final_url": None, "title": None, "text": None, "links": [], "error": None}
    try:
        page = await fetch_page(ctx, url, mode, settings, SETTINGS_KEY)
    except Exception as exc:
        kind = error_kind_of(exc)
        if kind is None:
            kind = "tool_error"
            message = f"{type(exc).__name__}: {exc}"
        else:
            message = str(exc)
        item.update(error=message, error_kind=kind)
        return item
    if not isinstance(page, LoadedPage):
        item.update(final_url=page.location, error_kind="cross_host_redirect",
                    error=f"redirects (HTTP {page.status}) to {page.location} on another host; not followed")
        return item
    text, was_cut = cut(page.content.text, limit)
    item.update(final_url=page.final_url, title=page.content.title, text=text, links=list(page.content.links),
                truncated=was_cut or page.truncated or page.content.cut, content_type=page.content.content_type)
    return item


def _render(results: list[dict[str, Any]]) -> str:
    parts = []
    for n, r in enumerate(results, 1):
        head = f"## [{n}] {r.get('title') or r['url']}\nURL: {r['url']}"
        if r.get("final_url") and r["final_url"] != r["url"]:
            head += f"\nFinal URL: {r['final_url']}"
        body = f"ERROR ({r.get('error_kind')}): {r['error']}" if r["error"] else r["text"] or "(no text)"
        parts.append(f"{head}\n\n{body}")
    return "\n\n".join(parts)


@tool(
    availability=SwitchedOff(SETTINGS_KEY),
    name="web_extract",
    groups=["web", "pegboard"],
    permission_family="WebFetch",
    requires_permission=True,
    permission_subjects=lambda i: Subjects(urls=i.urls),
    read_only=True,
    open_world=True,
    usage=USAGE,
)
async def web_extract(input: WebExtractInput, ctx: ToolContext) -> ToolResult:
    """Extract the readable content of up to 10 public URLs at once. Returns one structured
    result per URL, in the order given: url, final_url (after same-host redirects), title,
    text (Markdown, or plain text with extractMode="text"), links (absolute URLs on the page)
    and error (null, or why that URL failed: blocked address, HTTP error, binary content, a
    redirect to another host that was not followed). One URL failing does not fail the others."""
    import anyio

    settings: ExtractSettings = ctx.settings(SETTINGS_KEY)
    if (refusal := turned_off("web_extract", settings, SETTINGS_KEY)) is not None:
        return refusal
    limit = min(input.maxChars or settings.defaultMaxChars, settings.maxCharsCap)
    results: list[dict[str, Any]] = [{} for _ in input.urls]
    gate = anyio.Semaphore(settings.maxConcurrency)

    async def run(i: int, url: str) -> None:
        async with gate:
            results[i] = await _one(ctx, url, input.extractMode, limit, settings)

    async with anyio.create_task_group() as tg:
        for i, url in enumerate(input.urls):
            tg.start_soon(run, i, url)
    failed = sum(1 for r in results if r["error"])
    meta: dict[str, Any] = {"urls": len(results), "failed": failed}
    everything_failed = failed == len(results)
    if everything_failed:
        meta["error_kind"] = results[0]["error_kind"] if failed == 1 else "all_failed"
    return ToolResult(
        content=[TextBlock(text=_render(results))],
        structured={"results": results},
        is_error=everything_failed,
        reason="tool_error" if everything_failed else None,
        metadata=meta,
    )


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(ConfigSection(SETTINGS_KEY, ExtractSettings, description="The web_extract tool."))


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(web_extract)
