"""Fetching one URL a model asked for: guarded, streamed under a size cap, redirects judged.

``fetch`` sends a GET through the network guard's pinned transport (every hop checked and
connected to the address that was checked), follows redirects that stay on the same host
(up to ``max_redirects``) and returns a cross-host redirect instead of following it, so the
caller's next call gets its own permission check. The body is read as raw bytes and
decompressed here, a bounded amount at a time: it never holds more than the cap in memory,
and a body that inflates far beyond what was sent (a decompression bomb) is refused. A
connect timeout and a total deadline bound the time.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, Field

from pegboard import NEUTRAL, InvalidUrlError, StashKey, Widens, parse_url

if TYPE_CHECKING:
    import httpx

    from pegboard import ToolContext
    from pegboard_toolkit.netguard import NetworkGuard, Resolver

USER_AGENT = "Pegboard-User/0.1 (AI agent tool; fetches pages a user's agent asked for)"
#: Markdown first, so a server that negotiates content can skip the HTML conversion.
ACCEPT = "text/markdown, text/html;q=0.9, text/plain;q=0.8, application/pdf;q=0.7, */*;q=0.1"
ACCEPT_ENCODING = "gzip, deflate"
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
#: Inflation beyond this ratio, once past ``_BOMB_FLOOR`` bytes, is a decompression bomb.
BOMB_RATIO = 200
_BOMB_FLOOR = 1024 * 1024
_CHUNK = 64 * 1024

#: A test (or a host with its own DNS) may put a resolver here; default: the system's.
RESOLVER: StashKey[Resolver] = StashKey("pegboard_toolkit.webfetch.resolver")


class WebFetchSettings(BaseModel):
    """Settings every fetching web tool shares (each tool registers them under its own key)."""

    enabled: Annotated[bool, NEUTRAL] = Field(default=True, description="Offer the tool at all.")
    maxCharsCap: Annotated[int, NEUTRAL] = Field(default=50_000, ge=100,
                                                 description="Upper bound of maxChars and of the text a model reads.")
    maxBytes: Annotated[int, NEUTRAL] = Field(default=10 * 1024 * 1024, ge=1024,
                                              description="Body size cap, after decompression.")
    timeoutSeconds: Annotated[float, NEUTRAL] = Field(default=30.0, gt=0, description="Deadline for one whole fetch.")
    connectTimeoutSeconds: Annotated[float, NEUTRAL] = Field(default=10.0, gt=0,
                                                             description="Deadline for connecting.")
    maxRedirects: Annotated[int, NEUTRAL] = Field(default=10, ge=0, le=20, description="Same-host redirects followed.")
    cacheTtlMinutes: Annotated[float, NEUTRAL] = Field(default=15.0, gt=0,
                                                       description="How long a fetched page is reused.")
    cacheMaxEntries: Annotated[int, NEUTRAL] = Field(default=128, ge=1, description="Pages kept in the cache.")
    allowPrivateHosts: Annotated[list[str], Widens.when_set("lets the agent's fetches reach private hosts")] = Field(
        default_factory=list,
        description="Host names, addresses or networks that may be reached although not public (intranets, tests).",
    )
    allowHttpForPrivateHosts: Annotated[bool, Widens.when_true("sends requests to private hosts unencrypted")] = Field(
        default=False, description="Keep http:// (no https upgrade) for the allowed private hosts."
    )


class FetchError(Exception):
    """A fetch that failed; ``error_kind`` is the stable code a tool result carries."""

    def __init__(self, error_kind: str, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.error_kind = error_kind
        self.status = status


@dataclass(frozen=True)
class FetchLimits:
    max_bytes: int = 10 * 1024 * 1024
    connect_timeout: float = 10.0
    total_timeout: float = 30.0
    max_redirects: int = 10

    @classmethod
    def from_settings(cls, s: WebFetchSettings) -> FetchLimits:
        return cls(s.maxBytes, s.connectTimeoutSeconds, s.timeoutSeconds, s.maxRedirects)


@dataclass(frozen=True)
class FetchedBody:
    """A 2xx answer: ``final_url`` after same-host redirects; ``truncated`` when cut at the cap.
    ``body`` is the buffer it was read into (not copied again)."""

    url: str
    final_url: str
    status: int
    content_type: str | None
    body: bytes | bytearray
    truncated: bool = False


@dataclass(frozen=True)
class CrossHostRedirect:
    """A redirect to another host, returned instead of followed."""

    url: str
    location: str
    status: int


class _Inflater:
    """Decodes one Content-Encoding a bounded amount at a time."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        wbits = 16 + zlib.MAX_WBITS if encoding in ("gzip", "x-gzip") else zlib.MAX_WBITS
        self._d = zlib.decompressobj(wbits)
        self._raw_fallback = encoding == "deflate"
        self.consumed = 0

    def feed(self, data: bytes, room: int) -> bytes:
        """At most ``room + 1`` decoded bytes (one more than room says "over the cap");
        ``consumed`` counts the input bytes that produced them."""
        try:
            out = self._d.decompress(data, room + 1)
        except zlib.error:
            if not self._raw_fallback:
                raise
            self._raw_fallback = False
            self._d = zlib.decompressobj(-zlib.MAX_WBITS)
            out = self._d.decompress(data, room + 1)
        self._raw_fallback = False
        while len(out) <= room and self._d.unconsumed_tail:
            out += self._d.decompress(self._d.unconsumed_tail, room + 1 - len(out))
        self.consumed += len(data) - len(self._d.unconsumed_tail)
        return out


def upgrade_url(url: str, keep_http: bool) -> str:
    """``http://`` becomes ``https://`` unless ``keep_http``; other text is returned as is."""
    try:
        parsed = parse_url(url)
    except InvalidUrlError:
        return url
    if parsed.scheme != "http" or keep_http:
        return parsed.href
    return "https" + parsed.href[len("http"):]


def same_host(a: str, b: str) -> bool:
    try:
        return parse_url(a).host == parse_url(b).host
    except InvalidUrlError:
        return False


async def _read_body(response: httpx.Response, url: str, max_bytes: int) -> tuple[bytearray, bool]:
    encodings = [e.strip().lower() for e in response.headers.get("content-encoding", "").split(",") if e.strip()]
    encodings = [e for e in encodings if e != "identity"]
    for e in encodings:
        if e not in ("gzip", "x-gzip", "deflate"):
            raise FetchError("unsupported_encoding",
                             f"{url} sent Content-Encoding {e!r}, which Pegboard does not decode")
    stages = [_Inflater(e) for e in reversed(encodings)]
    buffer = bytearray()
    total = raw_total = 0
    try:
        async for chunk in response.aiter_raw(_CHUNK):
            raw_total += len(chunk)
            data = chunk
            for stage in stages:
                data = stage.feed(data, max_bytes - total)
            sent = stages[0].consumed if stages else raw_total
            if stages and total + len(data) > _BOMB_FLOOR and total + len(data) > BOMB_RATIO * sent:
                raise FetchError(
                    "decompression_bomb",
                    f"{url} sent {sent:,} compressed bytes that inflate to more than "
                    f"{total + len(data):,} (over {BOMB_RATIO}:1): refused as a decompression bomb",
                )
            if total + len(data) > max_bytes:
                buffer += data[: max_bytes - total]
                return buffer, True
            buffer += data
            total += len(data)
    except zlib.error as exc:
        raise FetchError("bad_encoding", f"{url} sent a body that does not decode as {encodings}: {exc}") from None
    return buffer, False


async def fetch(
    url: str,
    guard: NetworkGuard,
    limits: FetchLimits | None = None,
    *,
    keep_http: bool = False,
    headers: dict[str, str] | None = None,
) -> FetchedBody | CrossHostRedirect:
    """GET ``url`` through ``guard``. Raises ``FetchError`` (timeouts, HTTP errors, too many
    redirects, bodies that cannot be decoded) and the guard's ``NetworkRefused``."""
    import anyio
    import httpx

    from pegboard_toolkit.netguard import HostLookupError

    limits = limits or FetchLimits()
    sent = {"User-Agent": USER_AGENT, "Accept": ACCEPT, "Accept-Encoding": ACCEPT_ENCODING, **(headers or {})}
    timeout = httpx.Timeout(limits.total_timeout, connect=limits.connect_timeout)
    current = url
    try:
        with anyio.fail_after(limits.total_timeout):
            async with httpx.AsyncClient(transport=guard.transport(), timeout=timeout, follow_redirects=False) as c:
                for _hop in range(limits.max_redirects + 1):
                    request = c.build_request("GET", current, headers=sent)
                    response = await c.send(request, stream=True)
                    try:
                        location = response.headers.get("location")
                        if response.status_code in REDIRECT_STATUSES and location:
                            try:
                                target = guard.redirect_target(current, location)
                            except InvalidUrlError as exc:
                                raise FetchError("bad_redirect",
                                                 f"{current} redirects to an invalid URL: {exc}") from None
                            if not same_host(current, target):
                                return CrossHostRedirect(url, target, response.status_code)
                            current = upgrade_url(target, keep_http)
                            continue
                        if response.status_code >= 400:
                            raise FetchError(
                                "http_error",
                                f"{current} answered HTTP {response.status_code} {response.reason_phrase}".rstrip(),
                                status=response.status_code,
                            )
                        body, truncated = await _read_body(response, current, limits.max_bytes)
                        return FetchedBody(url, current, response.status_code,
                                           response.headers.get("content-type"), body, truncated)
                    finally:
                        await response.aclose()
                raise FetchError("too_many_redirects", f"{url} redirected more than {limits.max_redirects} times")
    except TimeoutError:
        raise FetchError("timeout", f"fetching {current} took longer than {limits.total_timeout:g} s") from None
    except httpx.TimeoutException:
        raise FetchError("timeout", f"fetching {current} timed out") from None
    except HostLookupError as exc:
        raise FetchError("host_not_found", str(exc)) from None
    except httpx.HTTPError as exc:
        raise FetchError("connect_error", f"fetching {current} failed: {type(exc).__name__}: {exc}") from None


def guard_for(ctx: ToolContext, settings: WebFetchSettings, settings_key: str) -> NetworkGuard:
    """The network guard for this context: the tool's private-host allowance, the sandbox's
    ``deniedDomains`` and, when managed settings say ``allowManagedDomainsOnly``, only the
    managed ``allowedDomains``."""
    from pegboard_toolkit.netguard import GuardPolicy, NetworkGuard

    denied: list[str] = []
    allowed: list[str] | None = None
    loaded: Any = ctx.config
    if loaded is not None:
        network = (loaded.data.get("sandbox") or {}).get("network") or {}
        denied = [str(d) for d in network.get("deniedDomains") or []]
        for layer in loaded.layers:
            if layer.scope != "managed":
                continue
            managed = (layer.data.get("sandbox") or {}).get("network") or {}
            if managed.get("allowManagedDomainsOnly"):
                allowed = [*(allowed or []), *(str(d) for d in managed.get("allowedDomains") or [])]
    policy = GuardPolicy(
        allow_private_hosts=tuple(settings.allowPrivateHosts),
        denied_domains=tuple(denied),
        allowed_domains=tuple(allowed) if allowed is not None else None,
        private_hosts_setting=f"{settings_key}.allowPrivateHosts",
    )
    try:
        resolver = ctx.stash.get(RESOLVER)
    except RuntimeError:
        resolver = None
    return NetworkGuard(policy, resolver)


def keeps_http(guard: NetworkGuard, settings: WebFetchSettings, url: str) -> bool:
    """Whether ``url`` stays http: only for an allowed private host, and only when configured."""
    if not settings.allowHttpForPrivateHosts:
        return False
    try:
        parsed = parse_url(url)
    except InvalidUrlError:
        return False
    policy = guard.policy
    return policy.name_allowed(parsed.host) or (parsed.ip is not None and policy.address_allowed(parsed.ip))


def plain_http_hint(exc: Exception, asked: str, fetched: str, settings: WebFetchSettings, settings_key: str) -> None:
    """Complete the message of a failed fetch of an ``http://`` URL with every setting a server
    on a private host needs, so the user does not learn them one failure at a time: the host
    in ``allowPrivateHosts``, and ``allowHttpForPrivateHosts`` to keep the URL from being upgraded
    to https (a plain-http server answers a TLS handshake with ``WRONG_VERSION_NUMBER``)."""
    from pegboard_toolkit.netguard import NetworkRefused

    try:
        was_http = parse_url(asked.strip()).scheme == "http"
    except InvalidUrlError:
        return
    upgraded = was_http and fetched.startswith("https:")
    keep_http = f"{settings_key}.allowHttpForPrivateHosts = true"
    if isinstance(exc, NetworkRefused) and exc.error_kind == "blocked_address" and upgraded and (
        not settings.allowHttpForPrivateHosts
    ):
        hint = f"; for a server that speaks only http, also set {keep_http} (without it http:// is upgraded to https://)"
    elif isinstance(exc, FetchError) and exc.error_kind == "connect_error" and upgraded and (
        settings.allowPrivateHosts and not settings.allowHttpForPrivateHosts
    ):
        hint = (f"; {asked.strip()} was upgraded to https://; if the server on this private host speaks only http, "
                f"set {keep_http} to keep http:// for the hosts in {settings_key}.allowPrivateHosts")
    else:
        return
    exc.args = (f"{exc.args[0] if exc.args else exc}{hint}", *exc.args[1:])
