"""parse_url: hosts as a browser reads them (the WHATWG URL standard)."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pegboard
from pegboard import InvalidHostError, InvalidUrlError, ParsedUrl, parse_url
from tests.kernel.url_strategies import ipv4_spelling, number


def test_public_names() -> None:
    assert pegboard.parse_url is parse_url and pegboard.ParsedUrl is ParsedUrl
    assert {"parse_url", "ParsedUrl", "InvalidUrlError", "InvalidHostError"} <= set(pegboard.__all__)
    assert issubclass(InvalidHostError, InvalidUrlError) and issubclass(InvalidUrlError, ValueError)


def test_fields() -> None:
    u = parse_url("HTTPS://User:Pw@Example.COM.:8443/a/b?q=1#frag")
    assert (u.scheme, u.username, u.password, u.host, u.port) == ("https", "User", "Pw", "example.com", 8443)
    assert (u.path, u.query, u.fragment, u.ip) == ("/a/b", "q=1", "frag", None)
    assert u.has_credentials and u.is_special and u.effective_port == 8443
    assert parse_url("http://example.com:80/").port is None, "the default port is no port"
    assert parse_url("http://example.com/").effective_port == 80
    with pytest.raises(AttributeError):
        u.host = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https:evil.com", "evil.com"),
        ("https:/evil.com", "evil.com"),
        ("https:\\\\evil.com", "evil.com"),
        ("https:\\/evil.com/x", "evil.com"),
        ("https://example.com\\@evil.com/", "example.com"),
        ("https://example.com@evil.com/", "evil.com"),
        ("https://a@b@evil.com/", "evil.com"),
        ("https://user:pa@ss@evil.com/", "evil.com"),
        ("https://evil.com./", "evil.com"),
        ("https://EVIL.com../", "evil.com"),
        ("https://ev%69l.com/", "evil.com"),
        ("https://evil%2Ecom/", "evil.com"),
        ("https://b\u00fccher.ch/", "xn--bcher-kva.ch"),
        ("https://XN--BCHER-KVA.ch/", "xn--bcher-kva.ch"),
        ("https://evil\u3002com/", "evil.com"),
        ("https://\uff45vil.com/", "evil.com"),
        ("  https://evil.com/  ", "evil.com"),
        ("https://ev\til\n.com/", "evil.com"),
        ("wss://Evil.com/socket", "evil.com"),
    ],
)
def test_hosts_as_a_browser_reads_them(url: str, host: str) -> None:
    assert parse_url(url).host == host


@pytest.mark.parametrize(
    ("url", "ip"),
    [
        ("http://2130706433/", "127.0.0.1"),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://0x7F000001/", "127.0.0.1"),
        ("http://0177.0.0.1/", "127.0.0.1"),
        ("http://0177.0.1/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://127.0.1/", "127.0.0.1"),
        ("http://0x7f.0.0.0x1/", "127.0.0.1"),
        ("http://127.0.0.1./", "127.0.0.1"),
        ("http://%31%32%37.0.0.1/", "127.0.0.1"),
        ("http://\uff11\uff12\uff17.0.0.1/", "127.0.0.1"),
        ("http://0/", "0.0.0.0"),
        ("http://169.254.43518/", "169.254.169.254"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:7f00:1"),
        ("http://[0:0:0:0:0:ffff:7f00:0001]/", "::ffff:7f00:1"),
        ("http://[::1]:8080/", "::1"),
        ("http://[2001:DB8::0:1]/", "2001:db8::1"),
    ],
)
def test_ip_spellings(url: str, ip: str) -> None:
    u = parse_url(url)
    assert u.host == ip
    assert u.ip == ipaddress.ip_address(ip)


@pytest.mark.parametrize(
    "url",
    [
        "http://256.0.0.1/",
        "http://0x100000000/",
        "http://1.2.3.4.5/",
        "http://1.2.3.09/",
        "http://a b.com/",
        "http://exa<mple.com/",
        "http://a%00b.com/",
        "http://a%zzb.com/",
        "http://[::1/",
        "http://[::1%25eth0]/",
        "http:///",
        "http://user@/",
        "https://xn--a.com\u0000/",
        "http://\u00ad/",
    ],
)
def test_invalid_hosts_are_refused(url: str) -> None:
    with pytest.raises(InvalidHostError):
        parse_url(url)


@pytest.mark.parametrize(
    "url", ["example.com/path", "", "//evil.com/", "http://x:99999/", "http://x:8o/", "http://x:\u00b9/", 42, None]
)
def test_not_urls(url: object) -> None:
    with pytest.raises(InvalidUrlError):
        parse_url(url)  # type: ignore[arg-type]


def test_messages_name_the_problem() -> None:
    with pytest.raises(InvalidUrlError, match="no scheme"):
        parse_url("example.com")
    with pytest.raises(InvalidUrlError, match="port"):
        parse_url("https://example.com:70000/")
    with pytest.raises(InvalidHostError, match=r"'exa mple\.com' is not a valid host"):
        parse_url("https://exa mple.com/")


def test_relative_to_a_base() -> None:
    base = "https://site.example/a/b?q"
    assert parse_url("../c", base=base).href == "https://site.example/c"
    assert parse_url("//other.example/x", base=base).host == "other.example"
    assert parse_url("\\\\evil.example\\x", base=base).host == "evil.example"
    assert parse_url("http://0x7f.1/", base=base).host == "127.0.0.1"
    with pytest.raises(InvalidHostError):
        parse_url("http://exa mple/", base=base)
    with pytest.raises(InvalidUrlError):
        parse_url("/x", base="not absolute")


def test_other_schemes_keep_their_opaque_host() -> None:
    assert parse_url("foo://Bar/x").host == "Bar"
    assert parse_url("mailto:a@b.com").host == ""
    assert parse_url("file:///etc/passwd").path == "/etc/passwd"


_URL_CHARS = st.sampled_from(
    [*"aZ09.:/\\@%#?[]-_~ \t\n\x00\x7f\u00e9\u3002\uff0e\ud800", "%2e", "%40", "xn--", "0x"]
)


@settings(max_examples=1000, deadline=None)
@given(
    prefix=st.sampled_from(["", "http://", "https:", "https:/", "ws://", "foo:", "file://", "http://[", "HTTP://a@"]),
    body=st.one_of(st.text(max_size=40), st.lists(_URL_CHARS, max_size=25).map("".join)),
)
def test_any_text_parses_or_raises_its_own_error(prefix: str, body: str) -> None:
    try:
        u = parse_url(prefix + body)
    except InvalidUrlError:
        return
    assert isinstance(u, ParsedUrl)
    if u.is_special and u.scheme != "file":
        assert u.host and u.host == u.host.lower() and not u.host.endswith(".")
        assert parse_url(u.href).host == u.host, "the serialised URL names the same host"


@settings(max_examples=800, deadline=None)
@given(spelled=ipv4_spelling())
def test_every_ipv4_spelling_agrees_with_ipaddress(spelled: tuple[int, str]) -> None:
    n, text = spelled
    u = parse_url(f"http://{text}/x")
    assert u.ip == ipaddress.IPv4Address(n)
    assert u.host == str(ipaddress.IPv4Address(n))
    mapped = parse_url(f"http://[::ffff:{ipaddress.IPv4Address(n)}]/")
    assert isinstance(mapped.ip, ipaddress.IPv6Address) and mapped.ip.ipv4_mapped == ipaddress.IPv4Address(n)


@settings(max_examples=300, deadline=None)
@given(n=st.integers(2**32, 2**40), radix=st.sampled_from(["dec", "hex", "oct"]))
def test_numbers_beyond_ipv4_are_refused(n: int, radix: str) -> None:
    with pytest.raises(InvalidHostError):
        parse_url(f"http://{number(n, radix)}/")
