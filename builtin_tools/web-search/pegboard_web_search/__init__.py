"""The built-in ``WebSearch`` tool (``web_search`` in Anyy's and OpenClaw's spelling): titles, URLs and
snippets from a search backend, filtered by domain, cached for 15 minutes.

Backends are plugins (``register_search_backends``); this distribution ships Brave Search
and SearXNG. The tool is bound to each ``Pegboard`` when it is ready, so it is listed
unavailable, with the reason, where no backend is configured.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field, model_validator

from pegboard import (
    ConfigSection,
    ConfigSectionRegister,
    Pegboard,
    StashKey,
    TextBlock,
    ToolContext,
    ToolRegister,
    ToolResult,
    hookimpl,
    tool,
)
from pegboard_toolkit.toolconfig import turned_off
from pegboard_toolkit.webcache import WebCache
from pegboard_web_search.backends import (
    SearchBackend,
    SearchError,
    SearchHit,
    SearchRequest,
    collect_backends,
    filter_hits,
)

from .brave import BraveBackend
from .searxng import SearxngBackend
from .settings import SETTINGS_KEY, WebSearchSettings

MAX_COUNT = 10

#: Answers per ``Pegboard``, keyed by backend, query and count; a test may put its own here.
SEARCH_CACHE: StashKey[WebCache[tuple[SearchHit, ...]]] = StashKey("pegboard_web_search.cache")

USAGE = (
    "WebSearch(query, count?, allowed_domains? | blocked_domains?): search the web and return up to count "
    "(1-10) results as title, URL and snippet; it does not open the pages (use WebFetch for that). "
    "allowed_domains keeps only those sites, blocked_domains drops them; give one list, not both. "
    "Answers are cached for 15 minutes."
)


class WebSearchInput(BaseModel):
    query: str = Field(min_length=2, description="What to search for.")
    count: int | None = Field(default=None, ge=1, le=MAX_COUNT, description="How many results (1-10).")
    allowed_domains: list[str] | None = Field(default=None, description="Only return results from these domains.")
    blocked_domains: list[str] | None = Field(default=None, description="Never return results from these domains.")

    @model_validator(mode="after")
    def _one_list(self) -> WebSearchInput:
        if self.allowed_domains and self.blocked_domains:
            raise ValueError("give allowed_domains or blocked_domains, not both in one call")
        return self


def _settings(ctx: ToolContext) -> WebSearchSettings:
    value: WebSearchSettings = ctx.settings(SETTINGS_KEY)
    return value


def choose_backend(ctx: ToolContext, backends: dict[str, SearchBackend]) -> tuple[SearchBackend | None, str]:
    """The backend to use and, when there is none, why."""
    settings = _settings(ctx)
    if settings.provider:
        backend = backends.get(settings.provider)
        if backend is None:
            known = ", ".join(backends) or "none"
            why = f"{SETTINGS_KEY}.provider names {settings.provider!r}, which no plugin registers (known: {known})"
            return None, why
        reason = backend.unavailable_reason(ctx)
        return (None, reason) if reason else (backend, "")
    reasons = []
    for backend in backends.values():
        reason = backend.unavailable_reason(ctx)
        if reason is None:
            return backend, ""
        reasons.append(reason)
    if not reasons:
        return None, "no search backend is installed (no plugin implements register_search_backends)"
    return None, "no search backend is configured: " + "; or ".join(reasons)


def _format(query: str, backend: str, hits: list[SearchHit]) -> str:
    if not hits:
        return f'No results for "{query}" ({backend}).'
    lines = [f'Results for "{query}" ({backend}):']
    for n, hit in enumerate(hits, 1):
        lines.append(f"{n}. {hit.title or hit.url}\n   {hit.url}")
        if hit.snippet:
            lines.append(f"   {hit.snippet}")
    return "\n".join(lines)


def backends_of(pegboard: Pegboard | None) -> dict[str, SearchBackend]:
    """The backends the plugins of ``pegboard`` register (collected once per instance); their
    warnings join ``pegboard.warnings`` once."""
    if pegboard is None:
        return {}
    found = collect_backends(pegboard)
    for warning in found.warnings:
        if warning not in pegboard.warnings:
            pegboard.warnings.append(warning)
    return found.by_name


def unavailable(pegboard: Pegboard) -> str | None:
    """Why WebSearch cannot run for ``pegboard``: turned off, or no backend is usable."""
    ctx = pegboard.context()
    if not _settings(ctx).enabled:
        return f"turned off by {SETTINGS_KEY}.enabled"
    backend, why = choose_backend(ctx, backends_of(pegboard))
    return why if backend is None else None


@tool(
    name="WebSearch",
    availability=unavailable,
    groups=["web", "pegboard"],
    requires_permission=True,
    read_only=True,
    open_world=True,
    usage=USAGE,
)
async def web_search(input: WebSearchInput, ctx: ToolContext) -> ToolResult:
    """Search the web. Returns result titles, URLs and snippets, not the pages: follow up with
    WebFetch to read one. count is 1-10 (default tools.web.search.maxResults, 5).
    allowed_domains keeps only results from those domains (subdomains included);
    blocked_domains removes them; the two cannot be combined in one call. Answers are cached
    for 15 minutes."""
    settings = _settings(ctx)
    if (refusal := turned_off("WebSearch", settings, SETTINGS_KEY)) is not None:
        return refusal
    backend, why = choose_backend(ctx, backends_of(ctx.pegboard))
    if backend is None:
        return ToolResult.refusal("unavailable", f"WebSearch cannot run: {why}", error_kind="search_unavailable")
    count = input.count or settings.maxResults
    filtering = bool(input.allowed_domains or input.blocked_domains)
    asked = min(count * 3, 20) if filtering else count
    request = SearchRequest(input.query.strip(), asked, tuple(input.allowed_domains or ()),
                            tuple(input.blocked_domains or ()))
    cache = ctx.stash.get(SEARCH_CACHE)
    if cache is None:
        cache = WebCache(ttl=settings.cacheTtlMinutes * 60, max_entries=256)
        ctx.stash[SEARCH_CACHE] = cache

    async def run() -> tuple[SearchHit, ...]:
        return tuple(await backend.search(request, ctx))

    try:
        hits, cached = await cache.get_or_fetch((backend.name, request.query, asked), run)
    except SearchError as exc:
        return ToolResult.error(str(exc), error_kind=exc.error_kind, backend=backend.name)
    kept = filter_hits(hits, request.allowed_domains, request.blocked_domains)[:count]
    structured: dict[str, Any] = {
        "query": request.query, "backend": backend.name, "results": [h.to_json() for h in kept],
    }
    return ToolResult(
        content=[TextBlock(text=_format(request.query, backend.name, kept))],
        structured=structured,
        metadata={"backend": backend.name, "from_cache": cached, "count": len(kept)},
    )


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(ConfigSection(SETTINGS_KEY, WebSearchSettings, description="The WebSearch tool and its backends."))


@hookimpl
def register_search_backends(register: Callable[[Any], None]) -> None:
    register(BraveBackend())
    register(SearxngBackend())


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(web_search)
