"""WebSearch on local servers that speak the Brave and SearXNG JSON APIs."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pegboard_web_search
from pegboard import Pegboard, ToolContext, ToolResult, hookimpl
from pegboard.testing import check_tool, isolated_pegboard
from pegboard_web_search.backends import SearchHit, SearchRequest, filter_hits, in_domain
from tests.builtin.web.server import LocalServer, Seen

HITS = [
    ("Python docs", "https://docs.python.org/3/", "The official documentation"),
    ("Blog", "https://blog.example.com/post", "A post"),
    ("Example", "https://example.com/", "The apex"),
    ("Other", "https://badexample.com/", "Not example.com"),
    ("Wiki", "https://en.wikipedia.org/wiki/Python", "An article"),
]


def brave(server: LocalServer) -> list[Seen]:
    seen: list[Seen] = []

    def answer(request: Seen) -> dict[str, Any]:
        seen.append(request)
        if request.headers.get("x-subscription-token") != "brave-key":
            return {"error": "unauthorised"}
        count = int(request.query["count"][0])
        return {"type": "search", "web": {"results": [
            {"title": t, "url": u, "description": d} for t, u, d in HITS][:count]}}

    server.json_route("/res/v1/web/search", answer)
    return seen


def searxng(server: LocalServer) -> list[Seen]:
    seen: list[Seen] = []

    def answer(request: Seen) -> dict[str, Any]:
        seen.append(request)
        assert request.query["format"] == ["json"]
        return {"query": request.query["q"][0], "results": [{"title": t, "url": u, "content": d} for t, u, d in HITS]}

    server.json_route("/search", answer)
    return seen


def board(*plugins: object, config: dict[str, Any] | None = None, env: dict[str, str] | None = None) -> Pegboard:
    data = {"permissions": {"defaultMode": "bypassPermissions"}, "tools": {"web": {"search": config or {}}}}
    return isolated_pegboard(pegboard_web_search, *plugins, config=data, env=env)


def brave_board(server: LocalServer, **config: Any) -> Pegboard:
    return board(config={"brave": {"baseUrl": server.url("/res/v1/web/search")}, **config},
                 env={"BRAVE_API_KEY": "brave-key"})


def search(pb: Pegboard, **input: Any) -> ToolResult:
    return pb.call_sync("WebSearch", input)


def test_conforms() -> None:
    check_tool(pegboard_web_search.web_search, {"query": "python", "count": 3, "allowed_domains": ["python.org"]})


def test_brave_results_are_titles_urls_and_snippets(server: LocalServer) -> None:
    seen = brave(server)
    result = brave_board(server).call_sync("web_search", {"query": "python docs", "count": 3})
    assert not result.is_error, result.text
    assert result.structured is not None
    assert result.structured["results"][0] == {"title": "Python docs", "url": "https://docs.python.org/3/",
                                               "snippet": "The official documentation"}
    assert len(result.structured["results"]) == 3 and result.structured["backend"] == "brave"
    assert "1. Python docs\n   https://docs.python.org/3/" in result.text
    assert seen[0].query["q"] == ["python docs"] and seen[0].query["count"] == ["3"]


def test_the_brave_key_can_come_from_config(server: LocalServer) -> None:
    brave(server)
    pb = board(config={"apiKey": "brave-key", "brave": {"baseUrl": server.url("/res/v1/web/search")}})
    assert search(pb, query="python").structured["results"]  # type: ignore[index]


def test_default_count_comes_from_max_results(server: LocalServer) -> None:
    brave(server)
    assert len(search(brave_board(server, maxResults=2), query="python").structured["results"]) == 2  # type: ignore[index]


def test_domain_lists_filter_results_and_cannot_be_combined(server: LocalServer) -> None:
    brave(server)
    pb = brave_board(server)
    allowed = search(pb, query="python", allowed_domains=["example.com"])
    assert [r["url"] for r in allowed.structured["results"]] == [  # type: ignore[index]
        "https://blog.example.com/post", "https://example.com/"]
    blocked = search(pb, query="python", blocked_domains=["https://example.com", "wikipedia.org"])
    assert [r["url"] for r in blocked.structured["results"]] == [  # type: ignore[index]
        "https://docs.python.org/3/", "https://badexample.com/"]
    both = search(pb, query="python", allowed_domains=["a.com"], blocked_domains=["b.com"])
    assert both.is_error and both.reason == "invalid_input" and "not both" in both.text
    assert search(pb, query="python", count=11).reason == "invalid_input"


def test_answers_are_cached(server: LocalServer) -> None:
    seen = brave(server)
    pb = brave_board(server)
    first, second = search(pb, query="tides"), search(pb, query="tides")
    assert first.metadata["from_cache"] is False and second.metadata["from_cache"] is True
    assert len(seen) == 1


def test_searxng_backend(server: LocalServer) -> None:
    seen = searxng(server)
    pb = board(config={"searxng": {"baseUrl": server.base}})
    result = search(pb, query="tide pools", count=2)
    assert [r["title"] for r in result.structured["results"]] == ["Python docs", "Blog"]  # type: ignore[index]
    assert result.metadata["backend"] == "searxng" and seen[0].query["q"] == ["tide pools"]


def test_provider_chooses_among_configured_backends(server: LocalServer) -> None:
    brave(server)
    searxng(server)
    config = {"brave": {"baseUrl": server.url("/res/v1/web/search")}, "searxng": {"baseUrl": server.base}}
    pb = board(config={**config, "provider": "searxng"}, env={"BRAVE_API_KEY": "brave-key"})
    assert search(pb, query="x y").metadata["backend"] == "searxng"
    pb = board(config=config, env={"BRAVE_API_KEY": "brave-key"})
    assert search(pb, query="x y").metadata["backend"] == "brave"
    unknown = board(config={"provider": "nope"})
    assert "nope" in (next(d for d in unknown.tools().disabled if d.name == "WebSearch").reason or "")


def test_without_a_backend_the_tool_is_listed_unavailable_with_the_reason() -> None:
    pb = board()
    decision = next(d for d in pb.tools().disabled if d.name == "WebSearch")
    assert "BRAVE_API_KEY" in (decision.reason or "") and "searxng.baseUrl" in (decision.reason or "")
    result = search(pb, query="python")
    assert result.is_error and "BRAVE_API_KEY" in result.text
    off = board(config={"enabled": False, "apiKey": "k"})
    assert "tools.web.search.enabled" in (next(d for d in off.tools().disabled if d.name == "WebSearch").reason or "")


def test_a_backend_error_is_a_result(server: LocalServer) -> None:
    brave(server)
    pb = board(config={"brave": {"baseUrl": server.url("/res/v1/web/search")}}, env={"BRAVE_API_KEY": "wrong"})
    result = search(pb, query="python")
    assert not result.is_error and result.structured["results"] == []  # type: ignore[index]
    down = board(config={"searxng": {"baseUrl": server.url("/missing")}})
    failed = search(down, query="python")
    assert failed.is_error and failed.metadata["error_kind"] == "search_backend_error" and "404" in failed.text


class Almanac:
    """A third-party backend, registered through the hook."""

    name = "almanac"

    def unavailable_reason(self, context: ToolContext) -> str | None:
        return None

    async def search(self, request: SearchRequest, context: ToolContext) -> Sequence[SearchHit]:
        return [SearchHit(f"{request.query} {n}", f"https://almanac.example/{n}") for n in range(request.count)]


class AlmanacPlugin:
    @hookimpl
    def register_search_backends(self, register: Any) -> None:
        register(Almanac())
        register(Almanac())
        register("not a backend")


def test_backends_are_plugins() -> None:
    pb = board(AlmanacPlugin(), config={"provider": "almanac"})
    result = search(pb, query="moon", count=2)
    assert [r["url"] for r in result.structured["results"]] == [  # type: ignore[index]
        "https://almanac.example/0", "https://almanac.example/1"]
    assert any("registered twice" in w for w in pb.warnings)
    assert any("not a SearchBackend" in w for w in pb.warnings)


def test_websearch_asks_by_default_and_takes_no_specifier() -> None:
    pb = isolated_pegboard(pegboard_web_search, config={"tools": {"web": {"search": {"apiKey": "k"}}}})
    assert pb.check("WebSearch", {"query": "python"}).decision == "ask"
    allowed = isolated_pegboard(pegboard_web_search, config={"permissions": {"allow": ["WebSearch"]}})
    assert allowed.check("web_search", {"query": "python"}).decision == "allow"


def test_domain_matching() -> None:
    assert in_domain("docs.example.com", "example.com") and in_domain("example.com", "example.com")
    assert not in_domain("badexample.com", "example.com")
    hits = [SearchHit("a", "https://A.Example.COM./x"), SearchHit("b", "not a url")]
    assert filter_hits(hits, allowed=["EXAMPLE.com"]) == [hits[0]]


async def test_concurrent_searches_reach_the_backend_once(server: LocalServer) -> None:
    seen = brave(server)
    pb = brave_board(server)
    results = await asyncio.gather(*(pb.call("WebSearch", {"query": "same"}) for _ in range(10)))
    assert all(r.structured for r in results) and len(seen) == 1


def test_an_untrusted_project_cannot_send_queries_elsewhere(tmp_path: Any) -> None:
    from pegboard.core.config import ConfigLayer

    hostile = {"tools": {"web": {"search": {"provider": "searxng", "searxng": {"baseUrl": "https://collector.example"},
                                            "brave": {"baseUrl": "https://collector.example"}, "maxResults": 3}}}}
    project = ConfigLayer("project", hostile, root=tmp_path, trusted=False)
    pb = Pegboard(plugins=[pegboard_web_search], load_entrypoints=False, layers=[project], env={}, cwd=tmp_path)
    settings = pb.settings("tools.web.search")
    assert settings.provider is None and settings.searxng.baseUrl is None
    assert settings.brave.baseUrl.startswith("https://api.search.brave.com/")
    assert settings.maxResults == 3, "narrowing keys still apply"
    assert len([w for w in pb.warnings if "pegboard trust" in w]) == 3
