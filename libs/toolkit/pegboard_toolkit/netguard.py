"""The network guard: whether a connection a model asked for may be opened, and opening it safely.

Every tool that connects where a model points it (web fetch, web search result fetches,
a WebSocket monitor) goes through one ``NetworkGuard``. It reads the URL with
``pegboard.parse_url`` (so it and the ``WebFetch(domain:...)`` rules agree on the host),
refuses other schemes and credentials in the URL, applies the denied and allowed domains,
refuses well-known internal names before any lookup, resolves the name with the system
resolver and refuses when the host or any address it resolves to is not public unicast.
The connection is then pinned to an address that was checked (``PinnedTransport`` for
httpx, ``connect`` for raw sockets), so a second DNS answer cannot move it (no
DNS-rebinding window), and every redirect hop is checked again.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pegboard import InvalidUrlError, ParsedUrl, parse_url

if TYPE_CHECKING:
    import socket

    from pegboard_toolkit.pinned import PinnedTransport, SyncPinnedTransport

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
ErrorKind = Literal["blocked_address", "blocked_scheme", "credentials_in_url", "denied_domain"]

#: The settings a refusal names; a caller that maps them to other keys passes its own names.
PRIVATE_HOSTS_SETTING = "network.allowPrivateHosts"
DENIED_DOMAINS_SETTING = "sandbox.network.deniedDomains"
ALLOWED_DOMAINS_SETTING = "sandbox.network.allowedDomains"

#: Names refused before any lookup: they name the machine itself or a cloud metadata service.
BLOCKED_NAMES = frozenset({"localhost", "metadata", "metadata.google.internal", "instance-data"})
BLOCKED_SUFFIXES = (".localhost", ".internal")


class NetworkRefused(Exception):
    """A connection the guard refuses. ``error_kind`` is the stable code a tool result carries."""

    def __init__(self, error_kind: ErrorKind, message: str, *, url: str, host: str,
                 address: str | None = None, setting: str | None = None) -> None:
        super().__init__(message)
        self.error_kind: ErrorKind = error_kind
        self.url = url
        self.host = host
        self.address = address
        self.setting = setting


class HostLookupError(OSError):
    """The host name resolves to no address (not a refusal: the host cannot be reached at all)."""


class Resolver(Protocol):
    """Turns a host name into the addresses a connection may go to."""

    def resolve(self, host: str, port: int) -> Sequence[str]:
        """Every address ``host`` resolves to, as text; raise ``OSError`` when it resolves to none."""
        ...


class SystemResolver:
    """``getaddrinfo``: the system's resolver, so ``/etc/hosts`` and search domains apply."""

    def resolve(self, host: str, port: int) -> Sequence[str]:
        import socket

        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        out: list[str] = []
        for _family, _type, _proto, _name, sockaddr in infos:
            text = str(sockaddr[0]).split("%", 1)[0]
            if text not in out:
                out.append(text)
        return out


def _nets(*cidrs: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(c) for c in cidrs)


#: IPv4 ranges that are not public unicast: the IANA special-purpose registry, multicast
#: and reserved space, each with the reason a refusal gives.
_V4_BLOCKED: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...] = tuple(
    (net, why)
    for cidrs, why in (
        (("0.0.0.0/8",), "a 'this network' address"),
        (("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"), "a private address"),
        (("100.64.0.0/10",), "a carrier-grade NAT (shared) address"),
        (("127.0.0.0/8",), "a loopback address"),
        (("169.254.0.0/16",), "a link-local address (cloud metadata services live here)"),
        (("192.0.0.0/24", "192.31.196.0/24", "192.52.193.0/24", "192.88.99.0/24", "192.175.48.0/24",
          "198.18.0.0/15"), "an IANA special-purpose address"),
        (("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"), "a documentation address"),
        (("224.0.0.0/4",), "a multicast address"),
        (("240.0.0.0/4",), "a reserved address"),
    )
    for net in _nets(*cidrs)
)
_V6_BLOCKED: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...] = tuple(
    (net, why)
    for cidrs, why in (
        (("::/128",), "the unspecified address"),
        (("::1/128",), "a loopback address"),
        (("64:ff9b:1::/48",), "a local-use IPv4/IPv6 translation address"),
        (("100::/64", "100:0:0:1::/64", "2001::/23", "2620:4f:8000::/48", "5f00::/16"),
         "an IANA special-purpose address"),
        (("2001:db8::/32", "3fff::/20"), "a documentation address"),
        (("fc00::/7",), "a unique-local address"),
        (("fe80::/10",), "a link-local address"),
        (("fec0::/10",), "a site-local address"),
        (("ff00::/8",), "a multicast address"),
    )
    for net in _nets(*cidrs)
)
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_COMPATIBLE = ipaddress.IPv6Network("::/96")
_SIXTOFOUR = ipaddress.IPv6Network("2002::/16")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, str] | None:
    """The IPv4 address an IPv6 address carries, with the form's name, if it carries one."""
    n = int(ip)
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped, "IPv4-mapped"
    if ip in _NAT64:
        return ipaddress.IPv4Address(n & 0xFFFFFFFF), "NAT64"
    if ip in _COMPATIBLE and n > 1:
        return ipaddress.IPv4Address(n & 0xFFFFFFFF), "IPv4-compatible"
    if ip in _SIXTOFOUR:
        return ipaddress.IPv4Address((n >> 80) & 0xFFFFFFFF), "6to4"
    if ip.teredo is not None:
        return ip.teredo[1], "Teredo"
    if (n >> 32) & 0xFDFFFFFF == 0x00005EFE:  # ISATAP interface identifier, u/l bit either way
        return ipaddress.IPv4Address(n & 0xFFFFFFFF), "ISATAP"
    return None


def non_public_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` is not a public unicast address, or ``None`` when it is one."""
    if isinstance(ip, ipaddress.IPv4Address):
        for net, why in _V4_BLOCKED:
            if ip in net:
                return f"{why} ({net})"
        return None
    embedded = embedded_ipv4(ip)
    if embedded is not None:
        v4, form = embedded
        inner = non_public_reason(v4)
        if inner is not None:
            return f"the {form} IPv6 form of {v4}, {inner}"
        if form in ("IPv4-mapped", "NAT64", "6to4"):
            return None
    for net, why in _V6_BLOCKED:
        if ip in net:
            return f"{why} ({net})"
    if ip not in _GLOBAL_UNICAST:
        return "not a global unicast address (outside 2000::/3)"
    return None


def is_public(ip: IPAddress) -> bool:
    """Whether a connection to ``ip`` leaves this machine's private networks for the internet."""
    return non_public_reason(ip) is None


def _domain_pattern(pattern: str) -> str:
    """A domain pattern in the form ``parse_url`` gives hosts (``*.`` prefix kept)."""
    p = pattern.strip().lower().rstrip(".")
    if p.startswith("*."):
        return "*." + _domain_pattern(p[2:])
    if not p or any(c in p for c in "*/\\@?#"):
        return p
    text = f"[{p}]" if ":" in p and not p.startswith("[") else p
    try:
        return parse_url(f"http://{text}/").host or p
    except InvalidUrlError:
        return p


def _domain_matches(host: str, pattern: str) -> bool:
    if pattern == "*":
        return True
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return host == pattern


@dataclass(frozen=True)
class GuardPolicy:
    """What the guard lets through beyond public hosts, and what it refuses even there.

    ``allow_private_hosts``: host names (``intranet.example``, ``*.corp.example``), addresses
    or networks (``127.0.0.1``, ``10.0.0.0/8``) that may be reached although they are not
    public: the allowance for intranets and for tests on 127.0.0.1. A listed name lifts the
    by-name refusal too (``localhost``). It widens what an agent may reach, so it must come
    from settings an untrusted project cannot write. ``denied_domains``: domain patterns
    refused everywhere. ``allowed_domains``: when not ``None``, the only domains reachable
    (the managed allowlist-only mode). ``websocket``: ws/wss accepted (for a WebSocket
    source); http and https always are. The ``*_setting`` fields are the names a refusal
    tells the user to change.
    """

    allow_private_hosts: tuple[str, ...] = ()
    denied_domains: tuple[str, ...] = ()
    allowed_domains: tuple[str, ...] | None = None
    websocket: bool = False
    private_hosts_setting: str = PRIVATE_HOSTS_SETTING
    denied_domains_setting: str = DENIED_DOMAINS_SETTING
    allowed_domains_setting: str = ALLOWED_DOMAINS_SETTING
    _names: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = field(
        init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names: list[str] = []
        networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in self.allow_private_hosts:
            text = entry.strip().strip("[]")
            try:
                networks.append(ipaddress.ip_network(text, strict=False))
                continue
            except ValueError:
                pass
            names.append(_domain_pattern(entry))
        object.__setattr__(self, "_names", tuple(names))
        object.__setattr__(self, "_networks", tuple(networks))

    def name_allowed(self, host: str) -> bool:
        return any(_domain_matches(host, p) for p in self._names)

    def address_allowed(self, ip: IPAddress) -> bool:
        if any(ip in net for net in self._networks):
            return True
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            return any(ip.ipv4_mapped in net for net in self._networks)
        return False


@dataclass(frozen=True)
class CheckedUrl:
    """A URL the guard let through: connect to one of ``addresses``, never to a new lookup."""

    url: ParsedUrl
    host: str
    port: int
    addresses: tuple[IPAddress, ...]

    @property
    def href(self) -> str:
        """The URL as the standard serialises it: what a client must request."""
        return self.url.href


class NetworkGuard:
    """Checks URLs against a ``GuardPolicy`` and opens connections pinned to checked addresses."""

    def __init__(self, policy: GuardPolicy | None = None, resolver: Resolver | None = None) -> None:
        self.policy = policy or GuardPolicy()
        self.resolver: Resolver = resolver or SystemResolver()

    # -- checks ------------------------------------------------------------------------------
    def check_url(self, url: str) -> CheckedUrl:
        """Check ``url`` and resolve its host. Raises ``NetworkRefused``, ``InvalidUrlError``
        (not a URL) or ``HostLookupError`` (the name resolves to nothing). Blocks on DNS."""
        parsed, port = self._check_static(url)
        if parsed.ip is not None:
            return CheckedUrl(parsed, parsed.host, port, (parsed.ip,))
        return self._check_addresses(url, parsed, port, self._lookup(parsed.host, port))

    async def acheck_url(self, url: str) -> CheckedUrl:
        """``check_url`` with the lookup run in a worker thread."""
        parsed, port = self._check_static(url)
        if parsed.ip is not None:
            return CheckedUrl(parsed, parsed.host, port, (parsed.ip,))
        import anyio.to_thread

        addresses = await anyio.to_thread.run_sync(self._lookup, parsed.host, port)
        return self._check_addresses(url, parsed, port, addresses)

    def check_redirect(self, current: CheckedUrl | str, location: str) -> CheckedUrl:
        """Check one redirect hop: ``location`` (absolute or relative) from ``current``."""
        return self.check_url(self.redirect_target(current, location))

    async def acheck_redirect(self, current: CheckedUrl | str, location: str) -> CheckedUrl:
        return await self.acheck_url(self.redirect_target(current, location))

    @staticmethod
    def redirect_target(current: CheckedUrl | str, location: str) -> str:
        """The absolute URL a ``Location`` header names, resolved as a browser resolves it."""
        base = current.href if isinstance(current, CheckedUrl) else current
        return parse_url(location, base=base).href

    def _check_static(self, url: str) -> tuple[ParsedUrl, int]:
        """Everything decided without a lookup: scheme, credentials, domains, IP literals, names."""
        parsed = parse_url(url)
        schemes = ("http", "https", "ws", "wss") if self.policy.websocket else ("http", "https")
        host = parsed.host
        if parsed.scheme not in schemes:
            raise NetworkRefused(
                "blocked_scheme",
                f"refused {parsed.scheme}: URL for host {host or '(none)'}: only {', '.join(schemes)} URLs may be "
                "opened; no setting allows other schemes",
                url=url, host=host)
        if parsed.has_credentials:
            raise NetworkRefused(
                "credentials_in_url",
                f"refused the URL for host {host}: it carries a user name or password; no setting allows "
                "credentials in a URL the model wrote",
                url=url, host=host)
        for pattern in self.policy.denied_domains:
            if _domain_matches(host, _domain_pattern(pattern)):
                raise NetworkRefused(
                    "denied_domain",
                    f"refused host {host}: it matches {pattern!r} in {self.policy.denied_domains_setting}; "
                    f"remove it there to allow it",
                    url=url, host=host, setting=self.policy.denied_domains_setting)
        allowed = self.policy.allowed_domains
        if allowed is not None and not any(_domain_matches(host, _domain_pattern(p)) for p in allowed):
            raise NetworkRefused(
                "denied_domain",
                f"refused host {host}: only the managed allowlist {self.policy.allowed_domains_setting} may be "
                f"reached (allowManagedDomainsOnly); an administrator must add {host} there",
                url=url, host=host, setting=self.policy.allowed_domains_setting)
        port = parsed.effective_port or 0
        if parsed.ip is not None:
            self._check_address(url, host, parsed.ip)
        elif (host in BLOCKED_NAMES or host.endswith(BLOCKED_SUFFIXES)) and not self.policy.name_allowed(host):
            raise NetworkRefused(
                "blocked_address",
                f"refused host {host} (no address looked up): the name belongs to this machine or a cloud "
                f"metadata service; add {host!r} to {self.policy.private_hosts_setting} to allow it",
                url=url, host=host, setting=self.policy.private_hosts_setting)
        return parsed, port

    def _lookup(self, host: str, port: int) -> list[IPAddress]:
        try:
            answers = self.resolver.resolve(host, port)
        except OSError as exc:
            raise HostLookupError(f"cannot resolve host {host}: {exc}") from exc
        addresses: list[IPAddress] = []
        for text in answers:
            try:
                ip = ipaddress.ip_address(str(text).split("%", 1)[0])
            except ValueError:
                raise HostLookupError(f"the resolver answered {text!r} for {host}, which is not an address") from None
            if ip not in addresses:
                addresses.append(ip)
        if not addresses:
            raise HostLookupError(f"host {host} resolves to no address")
        return addresses

    def _check_addresses(self, url: str, parsed: ParsedUrl, port: int, addresses: Iterable[IPAddress]) -> CheckedUrl:
        checked = tuple(addresses)
        if not self.policy.name_allowed(parsed.host):
            for ip in checked:
                self._check_address(url, parsed.host, ip)
        return CheckedUrl(parsed, parsed.host, port, checked)

    def _check_address(self, url: str, host: str, ip: IPAddress) -> None:
        why = non_public_reason(ip)
        if why is None or self.policy.address_allowed(ip) or self.policy.name_allowed(host):
            return
        via = "" if host == ip.compressed else f" (it resolves to {ip})"
        raise NetworkRefused(
            "blocked_address",
            f"refused host {host}{via}: {ip} is {why}, not a public address; add {host!r} to "
            f"{self.policy.private_hosts_setting} to allow it",
            url=url, host=host, address=str(ip), setting=self.policy.private_hosts_setting)

    # -- connections -------------------------------------------------------------------------
    def connect(self, checked: CheckedUrl, timeout: float | None = None) -> socket.socket:
        """A TCP connection to one of the checked addresses (tried in order); no new lookup.

        Wrap it in TLS with ``server_hostname=checked.host`` so the certificate is verified for
        the name, not the address.
        """
        import socket

        error: OSError | None = None
        for ip in checked.addresses:
            try:
                return socket.create_connection((str(ip), checked.port), timeout=timeout)
            except OSError as exc:
                error = exc
        raise error or OSError(f"no address to connect to for {checked.host}")

    def transport(self, **options: object) -> PinnedTransport:
        """An httpx async transport that checks every request (each redirect hop too) and pins it."""
        from pegboard_toolkit.pinned import PinnedTransport

        return PinnedTransport(self, **options)

    def sync_transport(self, **options: object) -> SyncPinnedTransport:
        """The same for ``httpx.Client``."""
        from pegboard_toolkit.pinned import SyncPinnedTransport

        return SyncPinnedTransport(self, **options)


def __getattr__(name: str) -> Any:
    """The pinned transports live in ``pegboard_toolkit.pinned`` (it imports httpx); old names still work."""
    if name in ("PinnedTransport", "SyncPinnedTransport"):
        from pegboard_toolkit import pinned

        return getattr(pinned, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
