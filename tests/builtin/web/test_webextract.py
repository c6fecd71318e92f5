"""web_extract: several URLs at once, one structured result each, under a concurrency cap."""

from __future__ import annotations

import pegboard_web_extract
from pegboard.testing import check_tool
from tests.builtin.web.server import LocalServer, Reply
from tests.builtin.web.support import board


def page(title: str, body: str) -> bytes:
    return (f"<html><head><title>{title}</title></head><body><nav><a href='/menu'>Menu</a></nav>"
            f"<main><p>{body} <a href='/more'>more</a></p></main></body></html>").encode()


def test_conforms() -> None:
    check_tool(pegboard_web_extract.web_extract, {"urls": ["https://example.com/"], "extractMode": "text",
                                                  "maxChars": 500})


def test_each_url_gets_its_own_result_in_order(server: LocalServer) -> None:
    server.route("/a", Reply(body=page("Alpha", "first page")))
    server.route("/b", Reply(302, headers={"Location": "/b2"}))
    server.route("/b2", Reply(body=page("Beta", "second page")))
    server.route("/away", Reply(301, headers={"Location": "https://other.example/x"}))
    server.route("/bin", Reply(body=b"\x00\x01" * 100, content_type="application/octet-stream"))
    urls = [server.url("/a"), server.url("/b"), server.url("/nope"), server.url("/away"), server.url("/bin"),
            "http://10.0.0.1/"]
    result = board().call_sync("web_extract", {"urls": urls})
    assert not result.is_error and result.structured is not None
    items = result.structured["results"]
    assert [i["url"] for i in items] == urls
    a, b, missing, away, binary, private = items
    assert a["title"] == "Alpha" and "first page" in a["text"] and a["error"] is None
    assert a["links"] == [server.url("/more")] and "Menu" not in a["text"]
    assert b["final_url"] == server.url("/b2") and "second page" in b["text"]
    assert missing["error_kind"] == "http_error" and "404" in missing["error"]
    assert away["error_kind"] == "cross_host_redirect" and away["final_url"] == "https://other.example/x"
    assert binary["error_kind"] == "binary_content"
    assert private["error_kind"] == "blocked_address" and private["text"] is None
    assert result.metadata == {**result.metadata, "urls": 6, "failed": 4}
    assert "## [1] Alpha" in result.text and "ERROR (http_error)" in result.text


def test_text_mode_and_per_url_limit(server: LocalServer) -> None:
    server.route("/long", Reply(body=page("Long", "word " * 5000)))
    item = board().call_sync("web_extract", {"urls": [server.url("/long")], "extractMode": "text",
                                             "maxChars": 300}).structured["results"][0]  # type: ignore[index]
    assert len(item["text"]) <= 300 and item["truncated"] is True and "](" not in item["text"]


def test_urls_are_fetched_concurrently_under_the_cap(server: LocalServer) -> None:
    for n in range(8):
        server.route(f"/p{n}", Reply(body=page(f"P{n}", "slow"), delay=0.15))
    pb = board(extract={"maxConcurrency": 3})
    result = pb.call_sync("web_extract", {"urls": [server.url(f"/p{n}") for n in range(8)]})
    assert result.metadata["failed"] == 0
    assert 2 <= server.max_active <= 3


def test_shares_the_cache_with_webfetch(server: LocalServer) -> None:
    server.route("/a", Reply(body=page("Alpha", "cached")))
    pb = board()
    pb.call_sync("WebFetch", {"url": server.url("/a")})
    pb.call_sync("web_extract", {"urls": [server.url("/a")]})
    assert server.hits("/a") == 1


def test_all_failures_make_an_error_result_and_limits_are_checked() -> None:
    pb = board()
    failed = pb.call_sync("web_extract", {"urls": ["ftp://x.example/", "http://user:pw@example.com/"]})
    assert failed.is_error and failed.metadata["failed"] == 2 and failed.metadata["error_kind"] == "all_failed"
    one = pb.call_sync("web_extract", {"urls": ["ftp://x.example/"]})
    assert one.is_error and one.metadata["error_kind"] == "blocked_scheme"
    assert pb.call_sync("web_extract", {"urls": []}).reason == "invalid_input"
    assert pb.call_sync("web_extract", {"urls": ["https://e.example/"] * 11}).reason == "invalid_input"
