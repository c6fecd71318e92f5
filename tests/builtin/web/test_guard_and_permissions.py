"""The web tools behind the network guard and the permission rules, on a real server on 127.0.0.1.

Host names are resolved by a test resolver (put where the tools look for one), so names can
resolve to private, mixed or changing addresses without touching the machine's DNS.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pegboard_web_extract
import pegboard_web_fetch
from pegboard import Pegboard, PermissionUpdate, ToolResult
from pegboard.core.config import ConfigLayer
from pegboard.testing import isolated_pegboard
from pegboard_toolkit.webfetch import RESOLVER
from tests.builtin.web.server import LocalServer, Reply
from tests.builtin.web.support import board, local

PAGE = b"<html><head><title>Hi</title></head><body><main><p>Hello from the test server</p></main></body></html>"


class TableResolver:
    """A DNS stand-in: each name answers from its list, one entry per lookup (the last repeats)."""

    def __init__(self, answers: Mapping[str, Sequence[Sequence[str]]]) -> None:
        self.answers = answers
        self.lookups: list[str] = []

    def resolve(self, host: str, port: int) -> Sequence[str]:
        self.lookups.append(host)
        if host not in self.answers:
            raise OSError("name not known")
        seq = self.answers[host]
        return seq[min(self.lookups.count(host) - 1, len(seq) - 1)]


def fetch(pb: Pegboard, url: str) -> ToolResult:
    return pb.call_sync("WebFetch", {"url": url})


def unguarded(**fetch_settings: Any) -> Pegboard:
    """A Pegboard without the private-host test setting."""
    return isolated_pegboard(pegboard_web_fetch, config={"permissions": {"defaultMode": "bypassPermissions"},
                                                         "tools": {"web": {"fetch": fetch_settings}}})


def test_loopback_is_refused_without_the_explicit_setting(server: LocalServer) -> None:
    server.route("/p", Reply(body=PAGE))
    result = fetch(unguarded(), server.url("/p"))
    assert result.is_error and result.metadata["error_kind"] == "blocked_address"
    assert result.metadata["host"] == "127.0.0.1" and result.metadata["address"] == "127.0.0.1"
    assert result.metadata["setting"] == "tools.web.fetch.allowPrivateHosts"
    assert "127.0.0.1" in result.text and "tools.web.fetch.allowPrivateHosts" in result.text
    assert server.seen == []


def test_ip_spellings_name_the_same_host_for_the_guard(server: LocalServer) -> None:
    server.route("/p", Reply(body=PAGE))
    port = server.server_address[1]
    allowed = board()
    assert "Hello from the test server" in fetch(allowed, f"http://2130706433:{port}/p").text
    assert "Hello from the test server" in fetch(allowed, f"http://0x7f.0.0.1:{port}/p").text
    pb = unguarded()
    for url in (f"http://0x7f.1:{port}/p", f"http://0177.0.0.1:{port}/p", f"http://127.1:{port}/p",
                f"http://[::ffff:127.0.0.1]:{port}/p", f"http:127.0.0.1:{port}/p", "http://[::1]/",
                "http://169.254.169.254/latest/meta-data/", "http://[fd00::1]/", "http://100.64.0.1/"):
        result = fetch(pb, url)
        assert result.metadata.get("error_kind") == "blocked_address", url
    assert server.hits("/p") == 1, "both spellings are one URL, so the second came from the cache"


def test_internal_names_are_refused_before_any_lookup() -> None:
    pb = unguarded()
    resolver = TableResolver({})
    pb.stash[RESOLVER] = resolver
    for url in ("http://localhost:8080/", "http://app.localhost/", "http://metadata.google.internal/x",
                "http://metadata/", "http://instance-data/latest", "http://db.internal/"):
        result = fetch(pb, url)
        assert result.metadata.get("error_kind") == "blocked_address", url
        assert "no address looked up" in result.text
    assert resolver.lookups == []


def test_schemes_and_credentials_are_refused() -> None:
    pb = board()
    for url, kind in (("ftp://127.0.0.1/file", "blocked_scheme"), ("file:///etc/passwd", "blocked_scheme"),
                      ("http://user:secret@127.0.0.1/", "credentials_in_url"), ("http://:pw@127.0.0.1/",
                                                                                   "credentials_in_url")):
        result = fetch(pb, url)
        assert result.is_error and result.metadata["error_kind"] == kind, url
    bad = fetch(pb, "not a url")
    assert bad.is_error and bad.metadata["error_kind"] == "invalid_url"


def test_names_resolving_to_private_or_mixed_addresses(server: LocalServer) -> None:
    server.route("/p", Reply(body=PAGE))
    port = server.server_address[1]
    pb = unguarded()
    pb.stash[RESOLVER] = TableResolver({"mixed.test": [["93.184.216.34", "10.1.2.3"]],
                                        "inside.test": [["192.168.7.7"]]})
    mixed = fetch(pb, f"http://mixed.test:{port}/p")
    assert mixed.metadata["error_kind"] == "blocked_address" and mixed.metadata["address"] == "10.1.2.3"
    assert "resolves to 10.1.2.3" in mixed.text
    assert fetch(pb, "http://inside.test/").metadata["error_kind"] == "blocked_address"
    missing = fetch(pb, "http://nowhere.test/")
    assert missing.metadata["error_kind"] == "host_not_found"


def test_a_name_resolving_to_an_allowed_address_is_fetched_with_its_host_header(server: LocalServer) -> None:
    server.route("/p", Reply(body=PAGE))
    port = server.server_address[1]
    pb = board()
    pb.stash[RESOLVER] = TableResolver({"pages.test": [["127.0.0.1"]]})
    result = fetch(pb, f"http://pages.test:{port}/p")
    assert "Hello from the test server" in result.text
    assert server.seen[-1].headers["host"] == f"pages.test:{port}"


def test_a_dns_answer_that_changes_is_checked_again_on_every_hop(server: LocalServer) -> None:
    server.route("/hop", Reply(302, headers={"Location": "/p"}))
    server.route("/p", Reply(body=PAGE))
    port = server.server_address[1]
    pb = board()
    resolver = TableResolver({"flip.test": [["127.0.0.1"], ["127.0.0.1"], ["10.0.0.7"]]})
    pb.stash[RESOLVER] = resolver
    result = fetch(pb, f"http://flip.test:{port}/hop")
    assert result.metadata["error_kind"] == "blocked_address" and result.metadata["address"] == "10.0.0.7"
    assert server.hits("/hop") == 1 and server.hits("/p") == 0
    assert resolver.lookups == ["flip.test"] * 3, "checked for the http decision, then at each hop"


def test_denied_domains_and_the_managed_allowlist(server: LocalServer) -> None:
    server.route("/p", Reply(body=PAGE))
    denied = board(config={"sandbox": {"network": {"deniedDomains": ["127.0.0.1"]}}})
    result = fetch(denied, server.url("/p"))
    assert result.metadata["error_kind"] == "denied_domain" and "sandbox.network.deniedDomains" in result.text
    layers = [
        ConfigLayer("managed", {"sandbox": {"network": {"allowManagedDomainsOnly": True,
                                                        "allowedDomains": ["docs.example.org"]}}}),
        ConfigLayer("user", {"tools": {"web": {"fetch": local()}},
                             "permissions": {"defaultMode": "bypassPermissions"}}),
    ]
    managed = Pegboard(plugins=[pegboard_web_fetch], load_entrypoints=False, layers=layers, env={})
    result = fetch(managed, server.url("/p"))
    assert result.metadata["error_kind"] == "denied_domain" and "allowManagedDomainsOnly" in result.text
    assert server.seen == []


def test_an_untrusted_project_cannot_allow_private_hosts(server: LocalServer, tmp_path: Any) -> None:
    server.route("/p", Reply(body=PAGE))
    project = ConfigLayer("project", {"tools": {"web": {"fetch": local()}}}, root=tmp_path, trusted=False)
    user = ConfigLayer("user", {"permissions": {"defaultMode": "bypassPermissions"}})
    pb = Pegboard(plugins=[pegboard_web_fetch], load_entrypoints=False, layers=[user, project], env={}, cwd=tmp_path)
    assert pb.settings("tools.web.fetch").allowPrivateHosts == []
    ignored = [w for w in pb.warnings if "tools.web.fetch.allowPrivateHosts" in w]
    assert ignored and "pegboard trust" in ignored[0]
    assert fetch(pb, server.url("/p")).metadata["error_kind"] == "blocked_address"


def test_new_domains_ask_and_preapproved_documentation_domains_do_not() -> None:
    pb = isolated_pegboard(pegboard_web_fetch, pegboard_web_extract)
    assert pb.check("WebFetch", {"url": "https://example.com/page"}).decision == "ask"
    assert pb.check("WebFetch", {"url": "https://example.com/page"}, mode="acceptEdits").decision == "ask"
    assert pb.check("web_fetch", {"url": "https://docs.python.org/3/library/"}).decision == "allow"
    assert pb.check("WebFetch", {"url": "https://docs.python.org/3/", "prompt": "x"}).decision == "allow"
    assert pb.check("WebFetch", {"url": "https://example.com/"}, mode="bypassPermissions").decision == "allow"
    ruled = isolated_pegboard(pegboard_web_fetch, pegboard_web_extract, config={"permissions": {
        "deny": ["WebFetch(domain:docs.python.org)"], "allow": ["WebFetch(domain:*.example.com)"]}})
    assert ruled.check("WebFetch", {"url": "https://docs.python.org/3/"}).decision == "deny"
    assert ruled.check("WebFetch", {"url": "https://api.example.com/"}).decision == "allow"
    extract = {"urls": ["https://api.example.com/", "https://docs.python.org/3/"]}
    assert ruled.check("web_extract", extract).decision == "deny", "every URL of web_extract is judged"
    assert ruled.check("web_extract", {"urls": ["https://api.example.com/"]}).decision == "allow"
    assert pb.check("web_extract", {"urls": ["https://docs.python.org/3/", "https://other.example/"]}).decision == "ask"


async def test_allow_for_this_session_is_remembered_per_domain(server: LocalServer) -> None:
    server.route("/p", Reply(body=PAGE))
    asked: list[str] = []

    def approver(call: Any, decision: Any) -> PermissionUpdate:
        asked.append(call.input["url"])
        return PermissionUpdate(rules=["WebFetch(domain:127.0.0.1)"])

    pb = board(mode="default")
    refused = await pb.call("WebFetch", {"url": server.url("/p")})
    assert refused.is_error and refused.reason == "not_approved"
    async with pb.session(approver=approver) as s:
        assert "Hello" in (await s.call("WebFetch", {"url": server.url("/p")})).text
        assert "Hello" in (await s.call("WebFetch", {"url": server.url("/p?again")})).text
        assert asked == [server.url("/p")]
        assert s.check("WebFetch", {"url": "https://other.example/"}).decision == "ask"
    async with pb.session() as fresh:
        assert fresh.check("WebFetch", {"url": server.url("/p")}).decision == "ask"
