"""WebFetch against a real server on 127.0.0.1: conversion, redirects, limits, content types, cache."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pegboard_web_fetch
from pegboard import Pegboard, ToolResult
from pegboard.testing import check_tool, isolated_pegboard
from pegboard_toolkit.webcache import WebCache
from pegboard_toolkit.webfetch import upgrade_url
from pegboard_toolkit.webpages import PAGE_CACHE
from tests.builtin.web.server import LocalServer, Reply
from tests.builtin.web.support import board, gzip_bytes, gzip_zeros, pdf_with_text

ARTICLE = b"""<!doctype html><html><head><title>Field notes</title></head><body>
<header><a href="/">Site home</a> | <a href="/about">About</a></header>
<nav><ul><li><a href="/a">Menu A</a></li><li><a href="/b">Menu B</a></li></ul></nav>
<main><article><h1>Tide pools</h1><p>Tide pools hold <strong>anemones</strong> and
<a href="/crabs">crabs</a>.</p><ul><li>low tide</li><li>high tide</li></ul></article></main>
<aside class="sidebar">Subscribe now</aside><footer>Copyright nobody</footer>
<script>window.track = 1;</script></body></html>"""


def fetch(pb: Pegboard, **input: object) -> ToolResult:
    return pb.call_sync("WebFetch", input)


def test_conforms() -> None:
    check_tool(pegboard_web_fetch.web_fetch, {"url": "https://example.com/", "prompt": "x", "extractMode": "text",
                                              "maxChars": 500})


def test_html_becomes_markdown_of_the_readable_content(server: LocalServer) -> None:
    server.route("/page", Reply(body=ARTICLE))
    result = fetch(board(), url=server.url("/page"))
    assert not result.is_error, result.text
    text = result.text
    assert "# Tide pools" in text and "**anemones**" in text and "- low tide" in text
    assert f"[crabs]({server.base}/crabs)" in text, "links are absolute"
    for boilerplate in ("Menu A", "Site home", "Subscribe now", "Copyright nobody", "window.track"):
        assert boilerplate not in text
    assert result.metadata["title"] == "Field notes" and result.metadata["content_type"] == "text/html"


def test_text_mode_is_plain(server: LocalServer) -> None:
    server.route("/page", Reply(body=ARTICLE))
    text = fetch(board(), url=server.url("/page"), extractMode="text").text
    assert "Tide pools" in text and "# Tide pools" not in text and "**" not in text and "](" not in text


def test_the_seed_spelling_web_fetch_is_the_same_tool(server: LocalServer) -> None:
    server.route("/page", Reply(body=ARTICLE))
    assert "Tide pools" in board().call_sync("web_fetch", {"url": server.url("/page")}).text


def test_user_agent_and_accept_headers(server: LocalServer) -> None:
    server.route("/page", Reply(body=ARTICLE))
    fetch(board(), url=server.url("/page"))
    headers = server.seen[-1].headers
    assert headers["user-agent"].startswith("Pegboard-User")
    accept = [p.split(";")[0].strip() for p in headers["accept"].split(",")]
    assert accept[0] == "text/markdown" and accept.index("text/markdown") < accept.index("text/html")


def test_markdown_from_content_negotiation_passes_through(server: LocalServer) -> None:
    server.route("/doc", Reply(body=b"# Already markdown\n\n*kept*", content_type="text/markdown; charset=utf-8"))
    result = fetch(board(), url=server.url("/doc"))
    assert "# Already markdown\n\n*kept*" in result.text


def test_http_is_upgraded_to_https_unless_kept_for_an_allowed_private_host(server: LocalServer) -> None:
    assert upgrade_url("http://example.com/a?b#c", keep_http=False) == "https://example.com/a?b#c"
    assert upgrade_url("https://example.com/", keep_http=False) == "https://example.com/"
    server.route("/page", Reply(body=ARTICLE))
    pb = board(fetch={"allowHttpForPrivateHosts": False, "timeoutSeconds": 5})
    result = fetch(pb, url=server.url("/page"))
    assert result.is_error and result.metadata["error_kind"] == "connect_error"
    assert "https://127.0.0.1" in result.text, "the https form was tried, and the plain-http server refused TLS"
    assert server.hits("/page") == 0


def test_same_host_redirects_are_followed(server: LocalServer) -> None:
    server.route("/r1", Reply(302, headers={"Location": "/r2"}))
    server.route("/r2", Reply(301, headers={"Location": server.url("/page")}))
    server.route("/page", Reply(body=ARTICLE))
    result = fetch(board(), url=server.url("/r1"))
    assert "Tide pools" in result.text and result.metadata["final_url"] == server.url("/page")


def test_more_than_ten_redirects_is_an_error(server: LocalServer) -> None:
    server.route("/loop", Reply(302, headers={"Location": "/loop"}))
    result = fetch(board(), url=server.url("/loop"))
    assert result.is_error and result.metadata["error_kind"] == "too_many_redirects"
    assert server.hits("/loop") == 11


def test_a_redirect_to_another_host_is_returned_not_followed(server: LocalServer) -> None:
    server.route("/away", Reply(301, headers={"Location": "https://elsewhere.example/landing"}))
    result = fetch(board(), url=server.url("/away"))
    assert not result.is_error
    assert server.url("/away") in result.text and "https://elsewhere.example/landing" in result.text
    assert result.metadata["redirect"] == {"url": server.url("/away"), "location": "https://elsewhere.example/landing",
                                           "status": 301}


def test_a_redirect_into_private_space_is_not_followed_and_a_second_call_is_refused(server: LocalServer) -> None:
    server.route("/meta", Reply(302, headers={"Location": "http://169.254.169.254/latest/meta-data/"}))
    pb = board()
    first = fetch(pb, url=server.url("/meta"))
    assert first.metadata["redirect"]["location"] == "http://169.254.169.254/latest/meta-data/"
    second = fetch(pb, url=first.metadata["redirect"]["location"])
    assert second.is_error and second.metadata["error_kind"] == "blocked_address"
    assert "169.254.169.254" in second.text and "tools.web.fetch.allowPrivateHosts" in second.text


def test_huge_bodies_are_cut_at_the_byte_cap(server: LocalServer) -> None:
    big = b"<html><body><main><p>" + b"word " * 800_000 + b"</p></main></body></html>"
    server.route("/big", Reply(body=big))
    result = fetch(board(fetch={"maxBytes": 100_000}), url=server.url("/big"))
    assert not result.is_error
    assert "larger than the download cap" in result.text
    assert result.metadata["chars"] <= 100_000


def test_slow_bodies_hit_the_total_deadline(server: LocalServer) -> None:
    def trickle() -> Iterator[bytes]:
        yield b"<html><body>"
        for _ in range(50):
            time.sleep(0.1)
            yield b"<p>slow</p>"

    server.route("/slow", Reply(body=trickle()))
    started = time.monotonic()
    result = fetch(board(fetch={"timeoutSeconds": 0.5}), url=server.url("/slow"))
    assert result.is_error and result.metadata["error_kind"] == "timeout"
    assert time.monotonic() - started < 3


def test_gzip_pages_are_decoded_and_gzip_bombs_refused(server: LocalServer) -> None:
    server.route("/gz", Reply(body=gzip_bytes(ARTICLE), headers={"Content-Encoding": "gzip"}))
    server.route("/bomb", Reply(body=gzip_zeros(64 * 1024 * 1024), headers={"Content-Encoding": "gzip"}))
    pb = board()
    assert "Tide pools" in fetch(pb, url=server.url("/gz")).text
    bomb = fetch(pb, url=server.url("/bomb"))
    assert bomb.is_error and bomb.metadata["error_kind"] == "decompression_bomb"


def test_charsets_declared_wrong_or_missing(server: LocalServer) -> None:
    latin = "<html><body><main><p>Caf\u00e9 cr\u00e8me</p></main></body></html>".encode("cp1252")
    server.route("/declared", Reply(body=latin, content_type="text/html; charset=iso-8859-1"))
    server.route("/unknown", Reply(body=latin, content_type="text/html; charset=no-such-charset"))
    server.route("/missing", Reply(body=latin, content_type="text/html"))
    meta = b'<html><head><meta charset="windows-1252"></head><body><p>Caf\xe9</p></body></html>'
    server.route("/meta", Reply(body=meta, content_type="text/html"))
    server.route("/utf8", Reply(body="<p>\u65e5\u672c</p>".encode(), content_type="text/html"))
    server.route("/lying", Reply(body=latin, content_type="text/plain; charset=utf-8"))
    pb = board()
    assert "Caf\u00e9 cr\u00e8me" in fetch(pb, url=server.url("/declared")).text
    assert "Caf\u00e9 cr\u00e8me" in fetch(pb, url=server.url("/unknown")).text
    assert "Caf\u00e9 cr\u00e8me" in fetch(pb, url=server.url("/missing")).text
    assert "Caf\u00e9" in fetch(pb, url=server.url("/meta")).text
    assert "\u65e5\u672c" in fetch(pb, url=server.url("/utf8")).text
    lying = fetch(pb, url=server.url("/lying"))
    assert not lying.is_error and "Caf\ufffd" in lying.text, "undecodable bytes are replaced, never a crash"


def test_binary_is_refused_with_its_content_type(server: LocalServer) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    server.route("/img", Reply(body=png, content_type="image/png"))
    server.route("/blob", Reply(body=png, content_type=None))
    pb = board()
    for path, shown in (("/img", "image/png"), ("/blob", "application/octet-stream")):
        result = fetch(pb, url=server.url(path))
        assert result.is_error and result.metadata["error_kind"] == "binary_content", path
        assert shown in result.text


def test_pdf_becomes_text(server: LocalServer) -> None:
    server.route("/doc.pdf", Reply(body=pdf_with_text("Quarterly report", "Revenue grew"),
                                   content_type="application/pdf"))
    server.route("/broken.pdf", Reply(body=b"%PDF-1.4\nnot really", content_type="application/pdf"))
    pb = board()
    result = fetch(pb, url=server.url("/doc.pdf"))
    assert "Quarterly report" in result.text and "Revenue grew" in result.text
    broken = fetch(pb, url=server.url("/broken.pdf"))
    assert broken.is_error and broken.metadata["error_kind"] == "pdf_error"


def test_http_errors_are_results_with_the_status(server: LocalServer) -> None:
    server.route("/boom", Reply(500, b"oops"))
    pb = board()
    for path, status in (("/missing", 404), ("/boom", 500)):
        result = fetch(pb, url=server.url(path))
        assert result.is_error and result.metadata["error_kind"] == "http_error"
        assert result.metadata["status"] == status and str(status) in result.text


def test_content_is_cut_to_max_chars_and_the_cap(server: LocalServer) -> None:
    body = b"<html><body><main>" + b"".join(b"<p>paragraph %d</p>" % i for i in range(3000)) + b"</main></body></html>"
    server.route("/long", Reply(body=body))
    pb = board(fetch={"maxCharsCap": 5000})
    short = fetch(pb, url=server.url("/long"), maxChars=1000)
    assert "content cut at" in short.text and "up to 5,000" in short.text
    assert len(short.text) < 1400
    capped = fetch(pb, url=server.url("/long"), maxChars=1_000_000)
    assert len(capped.text) < 5600 and "content cut at" in capped.text


def test_cache_reuses_pages_for_fifteen_minutes_by_url_and_mode(server: LocalServer) -> None:
    server.route("/page", Reply(body=ARTICLE))
    pb = board()
    now = [1000.0]
    pb.stash[PAGE_CACHE] = WebCache(clock=lambda: now[0])
    assert fetch(pb, url=server.url("/page")).metadata["from_cache"] is False
    assert fetch(pb, url=server.url("/page")).metadata["from_cache"] is True
    assert server.hits("/page") == 1
    fetch(pb, url=server.url("/page"), extractMode="text")
    assert server.hits("/page") == 2, "the mode is part of the key"
    now[0] += 14 * 60
    fetch(pb, url=server.url("/page"))
    assert server.hits("/page") == 2
    now[0] += 2 * 60
    assert fetch(pb, url=server.url("/page")).metadata["from_cache"] is False
    assert server.hits("/page") == 3


async def test_concurrent_fetches_of_one_url_reach_the_server_once(server: LocalServer) -> None:
    server.route("/page", Reply(body=ARTICLE, delay=0.2))
    pb = board()
    results = await asyncio.gather(*(pb.call("WebFetch", {"url": server.url("/page")}) for _ in range(20)))
    assert all("Tide pools" in r.text for r in results)
    assert server.hits("/page") == 1


def test_disabled_fetch_is_listed_unavailable() -> None:
    pb = isolated_pegboard(pegboard_web_fetch, config={"tools": {"web": {"fetch": {"enabled": False}}}})
    decision = next(d for d in pb.tools().disabled if d.name == "WebFetch")
    assert "tools.web.fetch.enabled" in (decision.reason or "")


def test_saved_real_pages_convert_to_their_main_content(server: LocalServer) -> None:
    pages = Path(__file__).parent / "pages"
    for name in ("rustdoc-what-is-rustdoc.html", "zlib-usage-example.html", "synthetic-news-article.html"):
        data = (pages / name).read_bytes()
        kind = "text/html; charset=iso-8859-1" if name.startswith("zlib") else "text/html"
        server.route("/" + name, Reply(body=data, content_type=kind))
    pb = board()
    rustdoc = fetch(pb, url=server.url("/rustdoc-what-is-rustdoc.html"))
    assert "# [What is rustdoc?]" in rustdoc.text and "Keyboard shortcuts" not in rustdoc.text
    assert rustdoc.metadata["title"] == "What is rustdoc? - The rustdoc book"
    zlib = fetch(pb, url=server.url("/zlib-usage-example.html"))
    assert "`deflate()`" in zlib.text and "\ufffd" not in zlib.text
    news = fetch(pb, url=server.url("/synthetic-news-article.html"))
    assert "# The tide pool census" in news.text and "| Species" in news.text
    for chrome in ("We use cookies", "Buy boats now", "Most read", "Sign up for our newsletter"):
        assert chrome not in news.text
