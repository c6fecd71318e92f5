"""The toolkit parts under the web tools: the cache, text decoding, sniffing, cutting, domains."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pegboard_toolkit.webcache import WebCache
from pegboard_toolkit.webcontent import decode_text, media_type, sniff
from pegboard_toolkit.webpages import cut
from pegboard_web_search.backends import SearchHit, filter_hits, in_domain


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_entries_expire_after_the_ttl() -> None:
    clock = Clock()
    cache: WebCache[str] = WebCache(ttl=900, clock=clock)
    calls = []

    async def load() -> str:
        calls.append(1)
        return "v"

    assert await cache.get_or_fetch("k", load) == ("v", False)
    clock.now = 899
    assert await cache.get_or_fetch("k", load) == ("v", True)
    clock.now = 900
    assert await cache.get_or_fetch("k", load) == ("v", False)
    assert len(calls) == 2


def test_lru_bounds_by_count_and_size() -> None:
    cache: WebCache[str] = WebCache(max_entries=2, max_size=10, size_of=len, clock=Clock())
    cache.put("a", "1234")
    cache.put("b", "1234")
    assert cache.get("a") == "1234"  # a is now the most recently used
    cache.put("c", "12")
    assert cache.get("b") is None and cache.get("a") == "1234" and cache.get("c") == "12"
    cache.put("big", "12345678901")
    assert cache.get("big") is None, "larger than the whole cache: not kept"
    cache.put("d", "123456789")
    assert len(cache) == 1 and cache.size == 9


async def test_concurrent_callers_share_one_fetch_and_failures_are_not_cached() -> None:
    cache: WebCache[int] = WebCache(clock=Clock())
    started = []

    async def slow() -> int:
        started.append(1)
        await asyncio.sleep(0.05)
        return 7

    answers = await asyncio.gather(*(cache.get_or_fetch("k", slow) for _ in range(20)))
    assert [a for a, _ in answers] == [7] * 20 and len(started) == 1
    assert sum(1 for _, cached in answers if not cached) == 1

    async def boom() -> int:
        await asyncio.sleep(0.01)
        raise RuntimeError("down")

    results = await asyncio.gather(*(cache.get_or_fetch("x", boom) for _ in range(3)), return_exceptions=True)
    assert all(isinstance(r, RuntimeError) for r in results)
    assert cache.get("x") is None


def test_media_type_and_sniffing() -> None:
    assert media_type("Text/HTML; Charset=\"UTF-8\"") == ("text/html", "UTF-8")
    assert media_type(None) == ("", None)
    assert sniff(b"%PDF-1.7 ...") == "application/pdf"
    assert sniff(b"  <!DOCTYPE html><p>x") == "text/html"
    assert sniff(b"\x00\x01\x02") == "application/octet-stream"
    assert sniff(b"just words") == "text/plain"


def test_decoding_prefers_bom_then_declared_then_meta_then_utf8() -> None:
    assert decode_text(b"\xef\xbb\xbfcaf\xc3\xa9", "latin-1") == "caf\u00e9"
    assert decode_text("caf\u00e9".encode("latin-1"), "latin-1") == "caf\u00e9"
    assert decode_text(b'<meta charset="koi8-r"><p>\xc4\xc1', None, html=True).endswith("\u0434\u0430")
    assert decode_text("caf\u00e9".encode(), "bogus") == "caf\u00e9"
    assert decode_text(b"caf\xe9", None) == "caf\u00e9", "not UTF-8: windows-1252, as browsers assume"


@given(st.binary(max_size=300), st.sampled_from([None, "utf-8", "latin-1", "shift_jis", "nonsense", "utf-16"]))
def test_decoding_never_raises(body: bytes, charset: str | None) -> None:
    text = decode_text(body, charset, html=True)
    assert isinstance(text, str)
    if body.isascii() and charset in (None, "utf-8", "latin-1", "nonsense"):
        assert text == body.decode("ascii")  # ASCII reads the same in every charset it may pick


@given(st.text(max_size=400), st.integers(min_value=1, max_value=500))
def test_cut_respects_the_limit(text: str, limit: int) -> None:
    out, was_cut = cut(text, limit)
    assert len(out) <= limit and was_cut == (len(text) > limit) and text.startswith(out)


labels = st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True)


@given(st.lists(labels, min_size=1, max_size=3), st.lists(labels, min_size=2, max_size=3))
def test_blocked_domains_never_come_back(sub: list[str], domain: list[str]) -> None:
    d = ".".join(domain)
    host = ".".join([*sub, d])
    hits = [SearchHit("t", f"https://{host}/x"), SearchHit("u", f"https://{d}/"), SearchHit("v", "https://other.test/")]
    kept = filter_hits(hits, blocked=[d])
    assert all(not in_domain(h.url.split("/")[2], d) for h in kept)
    assert in_domain(host, d)
    assert filter_hits(hits, allowed=[d])[:2] == hits[:2]


@pytest.mark.parametrize("host", ["xexample.com", "example.com.evil.net"])
def test_lookalike_hosts_are_not_in_the_domain(host: str) -> None:
    assert not in_domain(host, "example.com")
