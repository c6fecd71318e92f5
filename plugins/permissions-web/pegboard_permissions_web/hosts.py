"""``WebFetch(domain:...)`` rules: which host a URL really names, and domain patterns.

The host is the one ``pegboard.parse_url`` finds, the browser's reading that the network
guard and the web tools also use, so a rule and the connection always mean the same
machine: ``https:evil.com`` names ``evil.com``, ``http://2130706433/`` names ``127.0.0.1``,
``example.com@evil.net`` names ``evil.net``. Rule domains are made canonical the same way
(case, trailing dot, IDNA, IP spellings). An IPv6 address that embeds an IPv4 address
(IPv4-mapped, IPv4-compatible, NAT64, 6to4, Teredo) is also checked as that IPv4 address
against deny and ask rules, and so is the host a client that does not read ``\\`` as ``/``
would find (``https://a.com\\@b.com/``: ``a.com`` by the standard, ``b.com`` for curl). A URL
the parser refuses, one without an http(s) scheme, and one not spelled plainly
(``https:evil.com``, a backslash, a space or control character) match deny and ask rules by
the parsed host but no allow rule.
"""

from __future__ import annotations

import ipaddress
import re

from pegboard import InvalidUrlError, ParsedUrl, parse_url

#: Documentation hosts fetched without a prompt unless an explicit rule says otherwise.
#: Exact hosts only: no user-content hosts (CVE-2026-54316 was a preapproved bare host
#: that served attacker-controlled files).
PREAPPROVED_DOMAINS = frozenset({
    "docs.python.org", "peps.python.org", "packaging.python.org", "docs.pydantic.dev", "docs.pytest.org",
    "developer.mozilla.org", "docs.rs", "doc.rust-lang.org", "go.dev", "pkg.go.dev", "nodejs.org",
    "react.dev", "www.typescriptlang.org", "docs.djangoproject.com", "flask.palletsprojects.com",
    "click.palletsprojects.com", "docs.github.com", "git-scm.com", "man7.org", "learn.microsoft.com",
    "docs.oracle.com", "kotlinlang.org", "docs.swift.org", "en.cppreference.com", "ruby-doc.org",
    "docs.docker.com", "kubernetes.io", "www.postgresql.org", "dev.mysql.com", "sqlite.org",
    "www.sqlite.org", "docs.aws.amazon.com", "cloud.google.com", "nextjs.org", "vuejs.org",
    "angular.dev", "tailwindcss.com", "numpy.org", "pandas.pydata.org", "docs.scipy.org",
    "pytorch.org", "www.tensorflow.org", "docs.astral.sh", "pluggy.readthedocs.io",
})

#: The plain spelling (``scheme://``, no backslash, space or control character): only such a
#: URL can match an allow rule, so a reader of the call sees the host the rule approved.
_PLAIN = re.compile(r"https?://", re.IGNORECASE)
_ODD = re.compile(r"[\\\s\x00-\x1f\x7f]")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_COMPATIBLE = ipaddress.IPv6Network("::/96")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for or tunnels to, if it has one."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64 or (ip in _COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    return None


def _hosts_of(parsed: ParsedUrl) -> list[str]:
    """The host of a URL (with its embedded IPv4 address, if any), or [] when it has none."""
    if not parsed.host:
        return []
    hosts = [parsed.host]
    if isinstance(parsed.ip, ipaddress.IPv6Address):
        v4 = embedded_ipv4(parsed.ip)
        if v4 is not None:
            hosts.append(str(v4))
    return hosts


def url_hosts(url: str) -> tuple[list[str], bool]:
    """(candidate hosts, unambiguous). An empty list: no host could be found.

    Unambiguous means a plainly spelled http(s) URL the parser accepts: the host any fetcher
    that uses ``parse_url`` connects to, and the one a reader sees. Text without ``://`` is
    also read as an https URL, for deny and ask rules only (``example.com/x``, ``localhost:8080``).
    """
    if not isinstance(url, str):
        return [], False
    try:
        parsed: ParsedUrl | None = parse_url(url)
    except InvalidUrlError:
        parsed = None
    if parsed is not None and parsed.scheme in ("http", "https") and parsed.host:
        hosts = _hosts_of(parsed)
        if "\\" in url:
            hosts += _other_reading(url.replace("\\", "%5C"), hosts)
        return hosts, _PLAIN.match(url) is not None and not _ODD.search(url)
    hosts = _hosts_of(parsed) if parsed is not None else []
    if "://" not in url:
        hosts += _other_reading("https://" + url.strip(), hosts)
    return hosts, False


def _other_reading(url: str, known: list[str]) -> list[str]:
    try:
        return [h for h in _hosts_of(parse_url(url)) if h not in known]
    except InvalidUrlError:
        return []


def canonical_domain(spec: str) -> str:
    """A rule's domain in the form ``parse_url`` gives hosts; wildcards and odd text kept as written."""
    d = spec.strip().lower().rstrip(".")
    if d.startswith("*."):
        return "*." + canonical_domain(d[2:])
    if not d or "*" in d or any(c in d for c in "/\\@?#"):
        return d
    text = f"[{d}]" if ":" in d and not d.startswith("[") else d
    try:
        return parse_url(f"http://{text}/").host or d
    except InvalidUrlError:
        return d


def domain_regex(spec: str) -> str:
    """Regex for a ``domain:`` pattern: ``*.x`` any subdomain (not the apex), else ``*`` per label."""
    d = canonical_domain(spec)
    if d in ("*", ""):
        return r".*\Z"
    if d.startswith("*."):
        rest = d[2:]
        return r"(?:[^/]+\.)" + _label_glob(rest) + r"\Z"
    return _label_glob(d) + r"\Z"


def _label_glob(d: str) -> str:
    return "".join("[^.]*" if ch == "*" else re.escape(ch) for ch in d)
