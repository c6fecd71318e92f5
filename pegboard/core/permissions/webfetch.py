"""``WebFetch(domain:...)`` rules: which host a URL really names, and domain patterns.

A rule names a host, so the URL is reduced to its hostname the way a fetcher would see
it: userinfo (``example.com@evil.net``) is not the host, case and a trailing dot do not
matter, percent-escapes in the host are decoded. When two reasonable parsers would
disagree about the host (a backslash in the authority, whitespace, control characters),
no allow rule may match and every candidate host is checked against deny and ask rules.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

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

_BAD_AUTHORITY = re.compile(r"[\\\s\x00-\x1f\x7f]")


def _clean_host(host: str) -> str:
    h = unquote(host).strip().lower().rstrip(".")
    if h.startswith("[") and h.endswith("]"):
        return h
    return h


def url_hosts(url: str) -> tuple[list[str], bool]:
    """(candidate hostnames, unambiguous). An empty list: no host could be found."""
    if not isinstance(url, str):
        return [], False
    raw = url.strip()
    candidates: list[str] = []
    ambiguous = raw != url or bool(_BAD_AUTHORITY.search(raw))
    for variant in (raw, raw.replace("\\", "/")):
        try:
            parts = urlsplit(variant if "://" in variant else "https://" + variant)
            host = parts.hostname
        except ValueError:
            ambiguous = True
            continue
        if host:
            h = _clean_host(host)
            if h and h not in candidates:
                candidates.append(h)
    try:
        scheme = urlsplit(raw).scheme.lower()
    except ValueError:
        scheme = ""
    if scheme not in ("http", "https"):
        ambiguous = True
    if len(candidates) != 1:
        ambiguous = True
    if any(not re.fullmatch(r"[a-z0-9.\-_\[\]:]+", h) for h in candidates):
        # IDN or odd characters: also try the IDNA form for deny matching.
        for h in list(candidates):
            try:
                idna = h.encode("idna").decode("ascii")
            except (UnicodeError, ValueError):
                continue
            if idna not in candidates:
                candidates.append(idna)
        ambiguous = True
    return candidates, not ambiguous


def domain_regex(spec: str) -> str:
    """Regex for a ``domain:`` pattern: ``*.x`` any subdomain (not the apex), else ``*`` per label."""
    d = spec.strip().lower().rstrip(".")
    if d in ("*", ""):
        return r".*\Z"
    if d.startswith("*."):
        rest = d[2:]
        return r"(?:[^/]+\.)" + _label_glob(rest) + r"\Z"
    return _label_glob(d) + r"\Z"


def _label_glob(d: str) -> str:
    return "".join("[^.]*" if ch == "*" else re.escape(ch) for ch in d)
