"""SearXNG: a self-hosted metasearch engine's JSON API at ``tools.web.search.searxng.baseUrl``."""

from __future__ import annotations

from collections.abc import Sequence

from pegboard import ToolContext
from pegboard_web_search.backends import SearchError, SearchHit, SearchRequest

from .settings import SETTINGS_KEY, WebSearchSettings


class SearxngBackend:
    name = "searxng"

    def unavailable_reason(self, context: ToolContext) -> str | None:
        settings: WebSearchSettings = context.settings(SETTINGS_KEY)
        if not settings.searxng.baseUrl:
            return f"SearXNG needs the URL of an instance: set {SETTINGS_KEY}.searxng.baseUrl"
        return None

    async def search(self, request: SearchRequest, context: ToolContext) -> Sequence[SearchHit]:
        import httpx

        settings: WebSearchSettings = context.settings(SETTINGS_KEY)
        base = settings.searxng.baseUrl
        if not base:
            raise SearchError(self.unavailable_reason(context) or "no URL", "search_unavailable")
        url = base.rstrip("/") + "/search"
        try:
            async with httpx.AsyncClient(timeout=settings.timeoutSeconds) as client:
                response = await client.get(url, params={"q": request.query, "format": "json"},
                                            headers={"Accept": "application/json"})
        except httpx.HTTPError as exc:
            raise SearchError(f"SearXNG at {base} could not be reached: {type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            hint = " (is format=json enabled in its settings.yml?)" if response.status_code == 403 else ""
            raise SearchError(f"SearXNG answered HTTP {response.status_code}{hint}")
        try:
            results = response.json().get("results", [])
        except (ValueError, AttributeError):
            raise SearchError("SearXNG answered something that is not its JSON format") from None
        hits = [
            SearchHit(str(r.get("title") or ""), str(r["url"]), str(r.get("content") or ""))
            for r in results if isinstance(r, dict) and r.get("url")
        ]
        return hits[: request.count]
