"""Brave Search: the web search API, key from ``tools.web.search.apiKey`` or ``BRAVE_API_KEY``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pegboard import ToolContext
from pegboard_web_search.backends import SearchError, SearchHit, SearchRequest

from .settings import SETTINGS_KEY, WebSearchSettings


def _key(context: ToolContext) -> str | None:
    settings: WebSearchSettings = context.settings(SETTINGS_KEY)
    return settings.apiKey or context.env.get("BRAVE_API_KEY") or None


class BraveBackend:
    name = "brave"

    def unavailable_reason(self, context: ToolContext) -> str | None:
        if _key(context) is None:
            return f"Brave Search needs an API key: set {SETTINGS_KEY}.apiKey or BRAVE_API_KEY"
        return None

    async def search(self, request: SearchRequest, context: ToolContext) -> Sequence[SearchHit]:
        import httpx

        settings: WebSearchSettings = context.settings(SETTINGS_KEY)
        key = _key(context)
        if key is None:
            raise SearchError(self.unavailable_reason(context) or "no API key", "search_unavailable")
        params: dict[str, Any] = {"q": request.query, "count": min(max(request.count, 1), 20)}
        headers = {"Accept": "application/json", "X-Subscription-Token": key}
        try:
            async with httpx.AsyncClient(timeout=settings.timeoutSeconds) as client:
                response = await client.get(settings.brave.baseUrl, params=params, headers=headers)
        except httpx.HTTPError as exc:
            raise SearchError(f"Brave Search could not be reached: {type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            raise SearchError(f"Brave Search answered HTTP {response.status_code}: {response.text[:200]}")
        try:
            results = response.json().get("web", {}).get("results", [])
        except (ValueError, AttributeError):
            raise SearchError("Brave Search answered something that is not its JSON format") from None
        return [
            SearchHit(str(r.get("title") or ""), str(r["url"]), str(r.get("description") or ""))
            for r in results if isinstance(r, dict) and r.get("url")
        ]
