"""Bypass classes 2 (tilde forms) and 9 (WebFetch host spellings): one parser each, shared with the tools."""

from __future__ import annotations

import ipaddress
import pwd
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pegboard import resolve_path
from tests.kernel.url_strategies import ip_host_spelling, ipv4_spelling
from tests.permissions.support import bash, decide, engine


def other_user() -> pwd.struct_passwd:
    """A user of this machine whose home is an absolute directory other than /root."""
    for entry in pwd.getpwall():
        if entry.pw_name != "root" and entry.pw_dir.startswith("/") and entry.pw_dir.count("/") >= 2:
            return entry
    pytest.skip("no suitable user in the password database")


# -- class 2: tilde forms ---------------------------------------------------------------------

def test_read_of_another_users_home_is_not_a_name_under_the_cwd() -> None:
    e = engine()
    assert decide(e, "Read", file_path="~root/.bashrc") == "ask", "outside the working directory"
    assert decide(e, "Read", file_path="./~root/.bashrc") == "allow", "a quoted-out name stays relative"
    denied = engine(deny=["Read(//root/**)"])
    assert decide(denied, "Read", file_path="~root/.bashrc") == "deny"
    assert decide(denied, "Edit", file_path="~root/.bashrc", old_string="a", new_string="b") == "deny"


def test_a_deny_on_a_home_is_not_evaded_by_tilde_user() -> None:
    user = other_user()
    e = engine(deny=[f"Read(/{user.pw_dir}/**)"])
    assert decide(e, "Read", file_path=f"~{user.pw_name}/secret") == "deny"
    assert bash(e, f"cat ~{user.pw_name}/secret") == "deny"
    assert bash(e, f"cat < ~{user.pw_name}/secret") == "deny"
    rule_side = engine(deny=[f"Read(~{user.pw_name}/**)"])
    assert decide(rule_side, "Read", file_path=f"{user.pw_dir}/secret") == "deny", "rules expand ~user too"


def test_tilde_plus_and_minus() -> None:
    e = engine(deny=["Read(//proj/secret.txt)"])
    assert decide(e, "Read", file_path="~+/secret.txt") == "deny"
    assert bash(e, "cat ~+/secret.txt") == "deny"
    assert bash(e, "cd sub && cat ~+/../secret.txt") == "deny"
    assert decide(e, "Read", file_path="~+/ok.txt") == "allow"
    # Without a previous directory, ~- is a literal name for a file tool (as resolve_path reads it) ...
    assert decide(e, "Read", file_path="~-/x") == "allow"
    # ... but a shell may have one, so Bash cannot know what ~- names.
    assert bash(engine(), "cat x") == "allow"
    assert bash(engine(), "cat ~-/x") == "ask"
    assert bash(engine(), "cat ~2/x") == "ask"
    assert bash(engine(), "cat ~nosuchuser/x") == "allow", "bash reads it as a name under the cwd"


@pytest.mark.parametrize("command", ["rm -rf ~root", "rm -rf ~root/", "rm -r ~+", "rm -rf ~", "rm -rf ~/"])
def test_rm_of_a_tilde_form_is_critical(command: str) -> None:
    d = engine(allow=["Bash(rm *)"], mode="bypassPermissions").check("Bash", {"command": command})
    assert d.decision == "ask" and "critical" in d.reason


def test_engine_and_resolve_path_agree(tmp_path: Path) -> None:
    proj = tmp_path.resolve()
    e = engine(deny=["Read(//root/**)"], cwd=proj)
    for spelled in ("~root/x", "~+/x", "~-/x", "~nosuchuser/x", "a/../~root/x"):
        target = resolve_path(spelled, proj, "/home/u")
        expected = "deny" if str(target).startswith("/root/") else "allow"
        assert decide(e, "Read", file_path=spelled) == expected, spelled


_TAILS = st.lists(st.sampled_from(["x", "sub", "..", ".", ".ssh", "id_rsa"]), max_size=4).map("/".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tail=_TAILS, form=st.sampled_from(["~", "~root", "~+", "~0", "~+0"]))
def test_every_tilde_form_is_judged_as_its_expansion(tail: str, form: str) -> None:
    e = engine(deny=["Read(//root/.ssh/**)", "Read(//home/u/.ssh/**)", "Read(//proj/.ssh/**)"])
    base = {"~": "/home/u", "~root": "/root"}.get(form, "/proj")
    spelled = form + ("/" + tail if tail else "")
    expanded = base + ("/" + tail if tail else "")
    assert decide(e, "Read", file_path=spelled) == decide(e, "Read", file_path=expanded)
    assert bash(e, f"cat {spelled}") == bash(e, f"cat {expanded}")


# -- class 9: WebFetch host spellings ---------------------------------------------------------

def fetch(e: object, url: str) -> str:
    return decide(e, "WebFetch", url=url, prompt="p")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://2130706433/",
        "http://0x7f000001/",
        "http://0x7f.1/",
        "http://0177.0.0.1/",
        "http://0177.1/",
        "http://127.1/",
        "http://127.0.1/",
        "http://127.0.0.1./",
        "http://%31%32%37.0.0.1/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:7f00:1]/",
        "http://[64:ff9b::7f00:1]/",
        "http://[2002:7f00:1::]/",
        "http://user@127.1:8080/x",
        "https:127.1",
    ],
)
def test_a_deny_on_an_ip_holds_for_every_spelling(url: str) -> None:
    assert fetch(engine(deny=["WebFetch(domain:127.0.0.1)"]), url) == "deny"


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.com/",
        "https:evil.com",
        "https:/evil.com",
        "https:\\\\evil.com",
        "https://EVIL.com./",
        "https://ev%69l.com/",
        "https://trusted.com@evil.com/",
        "https://trusted.com\\@evil.com/",
        "https://\uff45vil.com/",
        "evil.com/path",
        "https://sub.evil.com/",
    ],
)
def test_a_deny_on_a_domain_holds_for_every_spelling(url: str) -> None:
    e = engine(deny=["WebFetch(domain:evil.com)", "WebFetch(domain:*.evil.com)"],
               allow=["WebFetch(domain:trusted.com)"])
    assert fetch(e, url) == "deny"


def test_rule_domains_are_canonical_too() -> None:
    assert fetch(engine(deny=["WebFetch(domain:0x7f.1)"]), "http://127.0.0.1/") == "deny"
    assert fetch(engine(deny=["WebFetch(domain:[::1])"]), "http://[0:0::1]/") == "deny"
    assert fetch(engine(deny=["WebFetch(domain:::1)"]), "http://[::1]:8080/") == "deny"
    assert fetch(engine(deny=["WebFetch(domain:b\u00fccher.ch)"]), "https://xn--bcher-kva.ch/") == "deny"
    assert fetch(engine(deny=["WebFetch(domain:xn--bcher-kva.ch)"]), "https://B\u00dcCHER.ch/") == "deny"
    assert fetch(engine(deny=["WebFetch(domain:169.254.169.254)"]), "http://169.254.43518/") == "deny"


def test_allow_rules_need_the_plain_spelling() -> None:
    e = engine(allow=["WebFetch(domain:example.com)"])
    assert fetch(e, "https://example.com/") == "allow"
    assert fetch(e, "https://EXAMPLE.com./x") == "allow"
    assert fetch(e, "https://ex%61mple.com/") == "allow"
    # The host is example.com by the standard, but the spelling hides it from a reader: ask.
    assert fetch(e, "https:example.com") == "ask"
    assert fetch(e, "https://example.com\\@evil.net/") == "ask"
    assert fetch(e, "https://evil.net\\@example.com/") == "ask"
    assert fetch(e, "ftp://example.com/") == "ask"
    assert fetch(e, "example.com") == "ask"


@settings(max_examples=300, deadline=None)
@given(data=st.data(), address=st.sampled_from(["127.0.0.1", "169.254.169.254", "10.1.2.3", "8.8.8.8"]))
def test_ip_spellings_are_one_host(data: st.DataObject, address: str) -> None:
    host = data.draw(ip_host_spelling(ipaddress.IPv4Address(address)))
    e = engine(deny=[f"WebFetch(domain:{address})"])
    assert fetch(e, f"http://{host}/path") == "deny", host


@settings(max_examples=300, deadline=None)
@given(spelled=ipv4_spelling())
def test_any_legacy_spelling_of_any_address_meets_its_rule(spelled: tuple[int, str]) -> None:
    n, text = spelled
    address = ipaddress.IPv4Address(n)
    assert fetch(engine(deny=[f"WebFetch(domain:{address})"]), f"http://{text}/") == "deny"
    assert fetch(engine(deny=[f"WebFetch(domain:{text.rstrip('.')})"]), f"http://{address}/") == "deny"
