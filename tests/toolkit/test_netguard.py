"""The network guard: addresses, names, schemes, domains, pinning. Only 127.0.0.1 is ever contacted."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import threading
from collections.abc import Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pegboard import InvalidUrlError
from pegboard_toolkit import (
    GuardPolicy,
    HostLookupError,
    NetworkGuard,
    NetworkRefused,
    embedded_ipv4,
    is_public,
    non_public_reason,
)
from tests.kernel.url_strategies import ip_host_spelling, ipv4_spelling


class FakeResolver:
    """Answers from a table; a name in ``changing`` gets its next answer at each lookup. Records lookups."""

    def __init__(self, table: Mapping[str, Sequence[str]],
                 changing: Mapping[str, Sequence[Sequence[str]]] | None = None) -> None:
        self.table = table
        self.changing = changing or {}
        self.calls: list[str] = []

    def resolve(self, host: str, port: int) -> Sequence[str]:
        self.calls.append(host)
        if host in self.changing:
            answers = self.changing[host]
            return answers[min(self.calls.count(host) - 1, len(answers) - 1)]
        if host not in self.table:
            raise OSError("name not known")
        return self.table[host]


def refused(guard: NetworkGuard, url: str) -> NetworkRefused:
    with pytest.raises(NetworkRefused) as info:
        guard.check_url(url)
    return info.value


# -- addresses on data ----------------------------------------------------------------------

@pytest.mark.parametrize(
    "address",
    [
        "0.0.0.0", "0.1.2.3", "10.0.0.1", "100.64.0.1", "100.127.255.254", "127.0.0.1", "127.255.0.1",
        "169.254.169.254", "169.254.0.1", "172.16.0.1", "172.31.255.255", "192.0.0.9", "192.0.2.1",
        "192.31.196.1", "192.52.193.1", "192.88.99.1", "192.168.1.1", "192.175.48.1", "198.18.0.1",
        "198.19.255.255", "198.51.100.7", "203.0.113.9", "224.0.0.1", "239.255.255.250", "240.0.0.1",
        "255.255.255.255",
        "::", "::1", "fe80::1", "febf::1", "fec0::1", "fc00::1", "fd12:3456::1", "ff02::1", "ff05::2",
        "2001:db8::1", "3fff::1", "100::1", "2001::1", "2001:2::1", "5f00::1", "64:ff9b:1::1",
        "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::127.0.0.1", "::8.8.8.8",
        "64:ff9b::7f00:1", "64:ff9b::a00:1", "2002:7f00:1::", "2002:a9fe:a9fe::1", "2002:c0a8:101::1",
        "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2607:f8b0::5efe:10.0.0.1", "2607:f8b0::200:5efe:192.168.0.1",
        "4000::1", "::2:3:4",
    ],
)
def test_not_public(address: str) -> None:
    ip = ipaddress.ip_address(address)
    assert not is_public(ip)
    assert non_public_reason(ip)


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8", "1.1.1.1", "93.184.215.14", "100.63.255.255", "100.128.0.1", "172.32.0.1", "11.0.0.1",
        "2606:4700:4700::1111", "2a00:1450:4001::1", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1",
        "2607:f8b0::5efe:8.8.8.8",
    ],
)
def test_public(address: str) -> None:
    assert is_public(ipaddress.ip_address(address)), non_public_reason(ipaddress.ip_address(address))


def test_embedded_forms_are_named() -> None:
    reason = non_public_reason(ipaddress.ip_address("64:ff9b::a9fe:a9fe"))
    assert reason is not None and "NAT64" in reason and "169.254.169.254" in reason
    assert embedded_ipv4(ipaddress.IPv6Address("2002:a00:1::"))[1] == "6to4"  # type: ignore[index]
    assert embedded_ipv4(ipaddress.IPv6Address("2001:db8::1")) is None


_V4 = st.integers(0, 2**32 - 1).map(ipaddress.IPv4Address)


@settings(max_examples=500, deadline=None)
@given(v4=_V4)
def test_every_ipv6_embedding_follows_its_ipv4(v4: ipaddress.IPv4Address) -> None:
    n = int(v4)
    forms = {
        "mapped": ipaddress.IPv6Address((0xFFFF << 32) | n),
        "nat64": ipaddress.IPv6Address((0x64FF9B << 96) | n),
        "6to4": ipaddress.IPv6Address((0x2002 << 112) | (n << 80) | 1),
        "isatap": ipaddress.IPv6Address((0x2607F8B0 << 96) | (0x5EFE << 32) | n),
    }
    for name, ip in forms.items():
        assert is_public(ip) == is_public(v4), (name, ip)
    assert not is_public(ipaddress.IPv6Address(n)), "IPv4-compatible addresses are never public"
    teredo = ipaddress.IPv6Address((0x20010000 << 96) | (int(ipaddress.IPv4Address("8.8.8.8")) << 64)
                                   | (n ^ 0xFFFFFFFF))
    assert not is_public(teredo)


# -- URLs on data ---------------------------------------------------------------------------

_PRIVATE_V4 = st.one_of(
    st.integers(int(ipaddress.IPv4Address("127.0.0.0")), int(ipaddress.IPv4Address("127.255.255.255"))),
    st.integers(int(ipaddress.IPv4Address("10.0.0.0")), int(ipaddress.IPv4Address("10.255.255.255"))),
    st.integers(int(ipaddress.IPv4Address("169.254.0.0")), int(ipaddress.IPv4Address("169.254.255.255"))),
    st.integers(int(ipaddress.IPv4Address("192.168.0.0")), int(ipaddress.IPv4Address("192.168.255.255"))),
    st.integers(int(ipaddress.IPv4Address("100.64.0.0")), int(ipaddress.IPv4Address("100.127.255.255"))),
    st.just(0),
).map(ipaddress.IPv4Address)


@settings(max_examples=500, deadline=None)
@given(data=st.data(), address=_PRIVATE_V4)
def test_no_spelling_of_a_private_address_gets_through(data: st.DataObject, address: ipaddress.IPv4Address) -> None:
    host = data.draw(ip_host_spelling(address))
    resolver = FakeResolver({})
    err = refused(NetworkGuard(resolver=resolver), f"http://{host}/x")
    assert err.error_kind == "blocked_address"
    assert err.address is not None and err.address in str(err)
    mapped = ipaddress.IPv6Address((0xFFFF << 32) | int(address))
    assert ipaddress.ip_address(err.address) in (address, mapped)
    assert resolver.calls == [], "an address needs no lookup"


@settings(max_examples=500, deadline=None)
@given(spelled=ipv4_spelling())
def test_any_ipv4_spelling_is_judged_as_its_address(spelled: tuple[int, str]) -> None:
    n, text = spelled
    address = ipaddress.IPv4Address(n)
    guard = NetworkGuard(resolver=FakeResolver({}))
    if is_public(address):
        assert guard.check_url(f"https://{text}/").addresses == (address,)
    else:
        assert refused(guard, f"https://{text}/").address == str(address)


@pytest.mark.parametrize(
    "name",
    ["localhost", "LOCALHOST.", "a.localhost", "x.y.localhost", "metadata", "metadata.google.internal",
     "instance-data", "anything.internal", "%6c%6fcalhost", "loc\u0430lhost.localhost",
     "\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54"],
)
def test_internal_names_are_refused_before_any_lookup(name: str) -> None:
    resolver = FakeResolver({})
    err = refused(NetworkGuard(resolver=resolver), f"http://{name}:8080/")
    assert err.error_kind == "blocked_address" and err.address is None
    assert "network.allowPrivateHosts" in str(err) and err.host in str(err)
    assert resolver.calls == []


def test_names_are_refused_when_any_answer_is_not_public() -> None:
    resolver = FakeResolver({
        "public.example": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
        "mixed.example": ["93.184.215.14", "10.0.0.5"],
        "ula.example": ["2606:4700:4700::1111", "fd00::7"],
        "mapped.example": ["::ffff:169.254.169.254"],
        "scoped.example": ["fe80::1%eth0"],
        "garbage.example": ["not-an-ip"],
        "empty.example": [],
    })
    guard = NetworkGuard(resolver=resolver)
    ok = guard.check_url("https://Public.Example./path")
    assert ok.host == "public.example" and ok.port == 443 and len(ok.addresses) == 2
    err = refused(guard, "https://mixed.example/")
    assert (err.error_kind, err.host, err.address) == ("blocked_address", "mixed.example", "10.0.0.5")
    message = str(err)
    assert "mixed.example" in message and "10.0.0.5" in message and "network.allowPrivateHosts" in message
    assert refused(guard, "https://ula.example/").address == "fd00::7"
    assert refused(guard, "https://mapped.example/").address == "::ffff:a9fe:a9fe"
    assert refused(guard, "https://scoped.example/").address == "fe80::1"
    for name in ("garbage.example", "empty.example", "unknown.example"):
        with pytest.raises(HostLookupError):
            guard.check_url(f"https://{name}/")


def test_schemes_and_credentials() -> None:
    guard = NetworkGuard(resolver=FakeResolver({"x.example": ["93.184.215.14"]}))
    for url in ("ftp://x.example/", "file:///etc/passwd", "javascript:alert(1)", "ws://x.example/", "gopher://x/"):
        assert refused(guard, url).error_kind == "blocked_scheme", url
    ws = NetworkGuard(GuardPolicy(websocket=True), resolver=FakeResolver({"x.example": ["93.184.215.14"]}))
    assert ws.check_url("wss://x.example/feed").port == 443
    assert refused(ws, "ws://127.0.0.1:9/").error_kind == "blocked_address"
    for url in ("https://user:pw@x.example/", "https://user@x.example/", "https://:pw@x.example/",
                "https://a@b@x.example/"):
        err = refused(guard, url)
        assert err.error_kind == "credentials_in_url" and err.host == "x.example"
    assert guard.check_url("https://@x.example/").host == "x.example", "an empty userinfo carries nothing"
    with pytest.raises(InvalidUrlError):
        guard.check_url("not a url")


def test_denied_and_managed_allowed_domains() -> None:
    resolver = FakeResolver({"evil.com": ["93.184.215.14"], "a.evil.com": ["93.184.215.14"],
                             "good.org": ["93.184.215.14"], "docs.good.org": ["93.184.215.14"]})
    guard = NetworkGuard(GuardPolicy(denied_domains=("evil.com", "*.evil.com", "0x7f.1")), resolver=resolver)
    for url in ("https://evil.com/", "https:evil.com", "https:/\\EVIL.com./", "https://a.evil.com/",
                "https://ev%69l.com/", "http://127.0.0.1/"):
        err = refused(guard, url)
        assert err.error_kind == "denied_domain" and "sandbox.network.deniedDomains" in str(err), url
    assert guard.check_url("https://good.org/").host == "good.org"
    managed = NetworkGuard(GuardPolicy(allowed_domains=("good.org", "*.good.org")), resolver=resolver)
    assert managed.check_url("https://docs.good.org/").host == "docs.good.org"
    err = refused(managed, "https://evil.com/")
    assert err.error_kind == "denied_domain" and "allowManagedDomainsOnly" in str(err)


def test_the_private_host_allowance() -> None:
    resolver = FakeResolver({"intranet.example": ["10.1.2.3"], "wiki.corp.example": ["10.9.9.9"],
                             "other.example": ["10.1.2.3"], "localhost": ["127.0.0.1"]})
    policy = GuardPolicy(allow_private_hosts=("intranet.example", "*.corp.example", "127.0.0.1", "192.168.0.0/16"))
    guard = NetworkGuard(policy, resolver=resolver)
    assert guard.check_url("http://intranet.example/").addresses == (ipaddress.IPv4Address("10.1.2.3"),)
    assert guard.check_url("http://wiki.corp.example/").host == "wiki.corp.example"
    assert guard.check_url("http://127.0.0.1:8000/").port == 8000
    assert guard.check_url("http://0x7f.1:8000/").host == "127.0.0.1"
    assert guard.check_url("http://[::ffff:127.0.0.1]/").host == "::ffff:7f00:1"
    assert guard.check_url("http://192.168.7.7/").host == "192.168.7.7"
    assert refused(guard, "http://other.example/").address == "10.1.2.3", "the allowance names hosts, not ranges"
    assert refused(guard, "http://127.0.0.2/").address == "127.0.0.2"
    assert refused(guard, "http://localhost/").address is None, "an address allowance does not lift a name"
    named = NetworkGuard(GuardPolicy(allow_private_hosts=("localhost",)), resolver=resolver)
    assert named.check_url("http://localhost/").addresses == (ipaddress.IPv4Address("127.0.0.1"),)
    custom = NetworkGuard(GuardPolicy(private_hosts_setting="tools.web.allowPrivateHosts"), resolver=resolver)
    assert "tools.web.allowPrivateHosts" in str(refused(custom, "http://10.0.0.1/"))


def test_redirect_hops_are_checked_again() -> None:
    resolver = FakeResolver({"site.example": ["93.184.215.14"], "inside.example": ["192.168.1.10"]})
    guard = NetworkGuard(resolver=resolver)
    start = guard.check_url("https://site.example/a/b")
    assert guard.check_redirect(start, "../c?d=1").href == "https://site.example/c?d=1"
    for location in ("http://169.254.169.254/latest/meta-data/", "//localhost/", "\\\\10.0.0.1\\share",
                     "https://inside.example/", "http://2130706433/", "http://[::1]/"):
        assert refused_redirect(guard, start, location).error_kind == "blocked_address", location
    assert refused_redirect(guard, start, "ftp://site.example/").error_kind == "blocked_scheme"


def refused_redirect(guard: NetworkGuard, start: object, location: str) -> NetworkRefused:
    with pytest.raises(NetworkRefused) as info:
        guard.check_redirect(start, location)  # type: ignore[arg-type]
    return info.value


def test_answers_that_change_between_checks() -> None:
    resolver = FakeResolver({}, {"rebind.example": [["93.184.215.14"], ["127.0.0.1"]]})
    guard = NetworkGuard(resolver=resolver)
    assert guard.check_url("https://rebind.example/").addresses == (ipaddress.IPv4Address("93.184.215.14"),)
    assert refused(guard, "https://rebind.example/").address == "127.0.0.1"


# -- real connections to 127.0.0.1 ------------------------------------------------------------

class _Seen:
    def __init__(self) -> None:
        self.hosts: list[str] = []
        self.sni: list[str | None] = []


@pytest.fixture
def server() -> Iterator[tuple[int, _Seen]]:
    seen = _Seen()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.hosts.append(self.headers.get("Host", ""))
            if self.path.startswith("/redirect-to/"):
                self.send_response(302)
                self.send_header("Location", self.path[len("/redirect-to/"):].replace("PORT", str(port)))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = b"hello from 127.0.0.1"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield port, seen
    finally:
        httpd.shutdown()
        httpd.server_close()


async def test_a_real_request_through_the_pinned_transport(server: tuple[int, _Seen]) -> None:
    port, seen = server
    guard = NetworkGuard(GuardPolicy(allow_private_hosts=("127.0.0.1",)))
    async with httpx.AsyncClient(transport=guard.transport()) as client:
        response = await client.get(f"http://127.0.0.1:{port}/hello")
        assert (response.status_code, response.text) == (200, "hello from 127.0.0.1")
        assert str(response.url) == f"http://127.0.0.1:{port}/hello"
    async with httpx.AsyncClient(transport=NetworkGuard().transport()) as client:
        with pytest.raises(NetworkRefused) as info:
            await client.get(f"http://127.0.0.1:{port}/hello")
        assert info.value.error_kind == "blocked_address"
    assert len(seen.hosts) == 1, "the refused request never reached the server"


async def test_a_name_is_pinned_to_the_address_it_was_checked_with(server: tuple[int, _Seen]) -> None:
    port, seen = server
    resolver = FakeResolver({}, {"rebind.example": [["127.0.0.1"], ["10.9.9.9"]]})
    guard = NetworkGuard(GuardPolicy(allow_private_hosts=("127.0.0.1",)), resolver=resolver)
    async with httpx.AsyncClient(transport=guard.transport()) as client:
        response = await client.get(f"http://rebind.example:{port}/page")
        assert response.status_code == 200
        assert seen.hosts == [f"rebind.example:{port}"], "the Host header keeps the name"
        assert resolver.calls == ["rebind.example"], "one lookup: the checked answer is the one connected to"
        with pytest.raises(NetworkRefused) as info:
            await client.get(f"http://rebind.example:{port}/page")
        assert info.value.address == "10.9.9.9"
    assert len(seen.hosts) == 1


async def test_every_redirect_hop_goes_through_the_guard(server: tuple[int, _Seen]) -> None:
    port, _ = server
    guard = NetworkGuard(GuardPolicy(allow_private_hosts=("127.0.0.1",)))
    async with httpx.AsyncClient(transport=guard.transport(), follow_redirects=True) as client:
        ok = await client.get(f"http://127.0.0.1:{port}/redirect-to/http://127.0.0.1:PORT/done")
        assert ok.status_code == 200 and str(ok.url).endswith("/done")
        for target in ("http://localhost:PORT/", "http://169.254.169.254/", "http://127.0.0.2:PORT/"):
            with pytest.raises(NetworkRefused):
                await client.get(f"http://127.0.0.1:{port}/redirect-to/{target}")


def test_the_sync_transport_and_the_connect_helper(server: tuple[int, _Seen]) -> None:
    port, _ = server
    guard = NetworkGuard(GuardPolicy(allow_private_hosts=("pinned.example",)),
                         resolver=FakeResolver({"pinned.example": ["127.0.0.1"]}))
    with httpx.Client(transport=guard.sync_transport()) as client:
        assert client.get(f"http://pinned.example:{port}/").text == "hello from 127.0.0.1"
    checked = guard.check_url(f"http://pinned.example:{port}/")
    with guard.connect(checked, timeout=5) as sock:
        assert sock.getpeername() == ("127.0.0.1", port)
        sock.sendall(b"GET / HTTP/1.0\r\nHost: pinned.example\r\n\r\n")
        assert sock.recv(100).startswith(b"HTTP/1.0 200")


def _certificate(tmp_path: Path, name: str) -> tuple[Path, Path]:
    crypto = pytest.importorskip("cryptography")
    del crypto
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


async def test_tls_keeps_the_name_for_sni_and_certificate_checks(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path, "pinned.example")
    seen = _Seen()
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)
    server_ctx.sni_callback = lambda _sock, name, _ctx: seen.sni.append(name)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.hosts.append(self.headers.get("Host", ""))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    httpd.socket = server_ctx.wrap_socket(httpd.socket, server_side=True)
    port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        client_ctx = ssl.create_default_context(cafile=str(cert))
        guard = NetworkGuard(GuardPolicy(allow_private_hosts=("pinned.example", "wrong.example")),
                             resolver=FakeResolver({"pinned.example": ["127.0.0.1"], "wrong.example": ["127.0.0.1"]}))
        async with httpx.AsyncClient(transport=guard.transport(verify=client_ctx)) as client:
            response = await client.get(f"https://pinned.example:{port}/")
            assert response.status_code == 204
            assert seen.sni == ["pinned.example"] and seen.hosts == [f"pinned.example:{port}"]
            with pytest.raises(httpx.ConnectError):  # the certificate is checked for the name asked for
                await client.get(f"https://wrong.example:{port}/")
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_public_names_load_lazily() -> None:
    import subprocess
    import sys

    import pegboard_toolkit

    for name in pegboard_toolkit.__all__:
        assert getattr(pegboard_toolkit, name) is not None
    code = "import sys, pegboard_toolkit; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "False", "a tool that needs no network does not import httpx"
