"""One readable page per URL, for every web tool: upgrade, guard, cache, fetch, convert.

WebFetch and web_extract both call ``load_page``; they share one cache per ``Pegboard``
(keyed by URL and extraction mode), so a page one of them fetched is not fetched again by
the other within the cache's lifetime, and concurrent loads of one URL reach the site once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pegboard import InvalidUrlError, StashKey, ToolResult
from pegboard_toolkit.webcache import WebCache
from pegboard_toolkit.webcontent import ContentError, Mode, PageContent, to_text
from pegboard_toolkit.webfetch import (
    CrossHostRedirect,
    FetchedBody,
    FetchError,
    FetchLimits,
    WebFetchSettings,
    fetch,
    guard_for,
    keeps_http,
    plain_http_hint,
    upgrade_url,
)

if TYPE_CHECKING:
    from pegboard import ToolContext


@dataclass(frozen=True)
class LoadedPage:
    """A page as text. ``url`` is what was fetched (after the https upgrade), ``final_url``
    where same-host redirects ended; ``truncated`` when the body was cut at the size cap."""

    url: str
    final_url: str
    status: int
    content: PageContent
    truncated: bool
    from_cache: bool = False


PageCache = WebCache["LoadedPage | CrossHostRedirect"]

#: The page cache of one ``Pegboard``; a test or host may put one with its own clock here.
PAGE_CACHE: StashKey[PageCache] = StashKey("pegboard_toolkit.webpages.cache")


def _size(value: LoadedPage | CrossHostRedirect) -> int:
    return len(value.content.text) if isinstance(value, LoadedPage) else len(value.location)


def page_cache(ctx: ToolContext, settings: WebFetchSettings) -> PageCache:
    cache = ctx.stash.get(PAGE_CACHE)
    if cache is None:
        cache = WebCache(ttl=settings.cacheTtlMinutes * 60, max_entries=settings.cacheMaxEntries,
                         max_size=64 * 1024 * 1024, size_of=_size)
        ctx.stash[PAGE_CACHE] = cache
    return cache


async def prepare_url(ctx: ToolContext, url: str, settings: WebFetchSettings, settings_key: str) -> str:
    """The URL that will be fetched: checked to be an http(s) URL and upgraded to https,
    unless ``allowHttpForPrivateHosts`` keeps http for an allowed private host (named, or
    one whose every address is allowed)."""
    from pegboard import parse_url
    from pegboard_toolkit.netguard import HostLookupError, NetworkRefused

    url = url.strip()
    parsed = parse_url(url)  # raises InvalidUrlError for text that is not a URL
    if parsed.scheme not in ("http", "https"):
        raise NetworkRefused(
            "blocked_scheme",
            f"refused {parsed.scheme}: URL for host {parsed.host or '(none)'}: only http and https URLs may be "
            "fetched; no setting allows other schemes",
            url=url, host=parsed.host)
    guard = guard_for(ctx, settings, settings_key)
    keep = keeps_http(guard, settings, url)
    if not keep and parsed.scheme == "http" and settings.allowHttpForPrivateHosts and parsed.ip is None:
        try:
            checked = await guard.acheck_url(url)
            keep = all(guard.policy.address_allowed(ip) for ip in checked.addresses)
        except (NetworkRefused, HostLookupError):
            keep = False
    return upgrade_url(url, keep)


async def load_page(
    ctx: ToolContext, url: str, mode: Mode, settings: WebFetchSettings, settings_key: str
) -> LoadedPage | CrossHostRedirect:
    """The readable page at ``url`` (already prepared by ``prepare_url``), from the cache or
    fetched. Raises ``FetchError``, ``ContentError``, ``NetworkRefused`` or ``InvalidUrlError``."""
    guard = guard_for(ctx, settings, settings_key)
    limits = FetchLimits.from_settings(settings)

    async def load() -> LoadedPage | CrossHostRedirect:
        answer = await fetch(url, guard, limits, keep_http=url.startswith("http:"))
        if isinstance(answer, CrossHostRedirect):
            return answer
        return await _convert(answer, mode, settings.maxCharsCap)

    value, cached = await page_cache(ctx, settings).get_or_fetch((url, mode), load)
    if isinstance(value, LoadedPage) and cached:
        return LoadedPage(value.url, value.final_url, value.status, value.content, value.truncated, True)
    return value


async def fetch_page(
    ctx: ToolContext, url: str, mode: Mode, settings: WebFetchSettings, settings_key: str
) -> LoadedPage | CrossHostRedirect:
    """``url`` as given by a model, prepared (:func:`prepare_url`) and loaded (:func:`load_page`):
    what WebFetch does for its URL and web_extract for each of its URLs. Raises what they raise."""
    prepared = await prepare_url(ctx, url, settings, settings_key)
    try:
        return await load_page(ctx, prepared, mode, settings, settings_key)
    except Exception as exc:
        plain_http_hint(exc, url, prepared, settings, settings_key)
        raise


async def _convert(answer: FetchedBody, mode: Mode, max_chars: int) -> LoadedPage:
    import anyio.to_thread

    content = await anyio.to_thread.run_sync(to_text, answer.body, answer.content_type, answer.final_url, mode,
                                             max_chars)
    return LoadedPage(answer.url, answer.final_url, answer.status, content, answer.truncated)


def error_kind_of(exc: BaseException) -> str | None:
    """The stable code of a web failure, or ``None`` for an exception that is not one."""
    from pegboard_toolkit.netguard import NetworkRefused

    if isinstance(exc, NetworkRefused | FetchError | ContentError):
        return exc.error_kind
    if isinstance(exc, InvalidUrlError):
        return "invalid_url"
    return None


def error_result(exc: BaseException, url: str) -> ToolResult:
    """A web failure as an error result with ``metadata["error_kind"]`` (and the host, the
    address and the setting for a guard refusal)."""
    from pegboard_toolkit.netguard import NetworkRefused

    kind = error_kind_of(exc) or "tool_error"
    meta: dict[str, object] = {"error_kind": kind, "url": url}
    if isinstance(exc, NetworkRefused):
        meta.update(host=exc.host, address=exc.address, setting=exc.setting)
    if isinstance(exc, FetchError) and exc.status is not None:
        meta["status"] = exc.status
    message = str(exc) if kind != "invalid_url" else f"not a URL that can be fetched: {exc}"
    return ToolResult.error(message, **meta)


def cut(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to ``limit`` characters on a line break where one is near."""
    if len(text) <= limit:
        return text, False
    head = text[:limit]
    nl = head.rfind("\n")
    if nl > limit * 0.8:
        head = head[:nl]
    return head, True


__all__ = [
    "PAGE_CACHE",
    "LoadedPage",
    "PageCache",
    "cut",
    "error_kind_of",
    "error_result",
    "fetch_page",
    "load_page",
    "page_cache",
    "prepare_url",
]
