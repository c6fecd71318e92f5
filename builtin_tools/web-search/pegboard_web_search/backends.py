"""Web search backends: the protocol a backend implements, collecting them, filtering hits.

Backends are plugins: any plugin may implement ``register_search_backends(register)`` and
register an object with this module's ``SearchBackend`` shape. The WebSearch tool collects
them once per ``Pegboard`` (``collect_backends``), picks the configured one, and filters
hits by the call's ``allowed_domains`` / ``blocked_domains`` here, the same way for every
backend.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pegboard import InvalidUrlError, StashKey, parse_url
from pegboard_toolkit.registered import Registered, collect_registered

if TYPE_CHECKING:
    from pegboard import Pegboard, ToolContext


@dataclass(frozen=True)
class SearchRequest:
    """One query; ``count`` is how many hits the backend should return (before filtering)."""

    query: str
    count: int = 5
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()


@dataclass(frozen=True)
class SearchHit:
    title: str
    url: str
    snippet: str = ""

    def to_json(self) -> dict[str, str]:
        return {"title": self.title, "url": self.url, "snippet": self.snippet}


class SearchError(Exception):
    """A backend that failed (HTTP error, bad answer, timeout); ``error_kind`` is stable."""

    def __init__(self, message: str, error_kind: str = "search_backend_error") -> None:
        super().__init__(message)
        self.error_kind = error_kind


@runtime_checkable
class SearchBackend(Protocol):
    """What ``register_search_backends`` registers."""

    name: str

    def unavailable_reason(self, context: ToolContext) -> str | None:
        """``None`` when the backend can search here, else why not (no API key, no URL)."""
        ...

    async def search(self, request: SearchRequest, context: ToolContext) -> Sequence[SearchHit]:
        """The hits for ``request``; raise ``SearchError`` when the backend fails."""
        ...


#: the backends the plugins registered, by name, and what was wrong with the rest
Backends = Registered[SearchBackend]

BACKENDS: StashKey[Backends] = StashKey("pegboard_web_search.backends")


def collect_backends(pegboard: Pegboard) -> Backends:
    """Every backend the plugins of ``pegboard`` register, in registration order (cached)."""
    return collect_registered(pegboard, "register_search_backends", BACKENDS, SearchBackend,
                              kind_name="a SearchBackend", label="search backend")


def _host(url: str) -> str | None:
    try:
        return parse_url(url).host
    except InvalidUrlError:
        return None


def domain_of(text: str) -> str:
    """A domain as a user writes it (``example.com``, ``https://example.com/x``) made canonical."""
    text = text.strip()
    host = _host(text if "://" in text else f"https://{text}")
    return host or text.lower().strip(".")


def in_domain(host: str, domain: str) -> bool:
    """``docs.example.com`` is in ``example.com``; ``badexample.com`` is not."""
    return host == domain or host.endswith("." + domain)


def filter_hits(hits: Iterable[SearchHit], allowed: Sequence[str] = (), blocked: Sequence[str] = ()) -> list[SearchHit]:
    """Hits whose host is in an allowed domain (when any are given) and in no blocked one."""
    allow = [domain_of(d) for d in allowed]
    block = [domain_of(d) for d in blocked]
    out = []
    for hit in hits:
        host = _host(hit.url)
        if host is None:
            continue
        if allow and not any(in_domain(host, d) for d in allow):
            continue
        if any(in_domain(host, d) for d in block):
            continue
        out.append(hit)
    return out


__all__ = [
    "BACKENDS",
    "Backends",
    "SearchBackend",
    "SearchError",
    "SearchHit",
    "SearchRequest",
    "collect_backends",
    "domain_of",
    "filter_hits",
    "in_domain",
]
