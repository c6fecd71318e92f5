"""One way to read a URL: ``parse_url``, which finds the host a browser would connect to.

``WebFetch(domain:...)`` rules, the toolkit's network guard and the web tools all take the
host from here, so a rule and the connection it guards always mean the same machine. The
parsing is the WHATWG URL standard's (what browsers do), through the ``ada-url`` library,
which implements that standard: percent-decoding and IDNA (UTS #46) of the host, the
legacy IPv4 spellings (``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``127.1``), backslashes
read as slashes and ``https:evil.com`` / ``https:/evil.com`` naming the host ``evil.com``,
userinfo ending at the last ``@``. On top of the standard the host is made canonical for
comparison: trailing dots removed and IPv6 written without brackets.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

import ada_url

#: Schemes the URL standard calls special (their host is a domain or an IP address).
SPECIAL_SCHEMES = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21, "file": None}

_SCHEME = re.compile(r"^[\x00-\x20]*([A-Za-z][A-Za-z0-9+.\-]*):")
_TAB_NEWLINE = re.compile(r"[\t\n\r]")
_MAX_URL_CHARS = 1_000_000


class InvalidUrlError(ValueError):
    """Text that is not a URL by the URL standard (no scheme, a bad port, ...)."""


class InvalidHostError(InvalidUrlError):
    """A URL whose host the URL standard refuses (forbidden characters, bad IDNA, bad IPv4/IPv6)."""


@dataclass(frozen=True)
class ParsedUrl:
    """A URL as a browser reads it.

    ``scheme`` is lower-case without the colon. ``username`` and ``password`` are as the
    standard serialises them (percent-encoded); empty when absent. ``host`` is canonical for
    special schemes (lower-case, punycode, no trailing dot, IPv4 dotted-quad, IPv6
    compressed without brackets), opaque as written for other schemes, empty when the URL
    has none. ``port`` is ``None`` when absent or the scheme's default. ``query`` and
    ``fragment`` are without their ``?`` / ``#``. ``ip`` is the host as an address, when
    it is one. ``href`` is the whole URL serialised by the standard: hand that, not the
    original text, to a client, so it connects where the checks looked.
    """

    scheme: str
    username: str
    password: str
    host: str
    port: int | None
    path: str
    query: str
    fragment: str
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None
    href: str

    @property
    def is_special(self) -> bool:
        return self.scheme in SPECIAL_SCHEMES

    @property
    def has_credentials(self) -> bool:
        return bool(self.username or self.password)

    @property
    def effective_port(self) -> int | None:
        """The port a connection uses: the explicit one, else the scheme's default."""
        return self.port if self.port is not None else SPECIAL_SCHEMES.get(self.scheme)


def parse_url(url: str, base: str | None = None) -> ParsedUrl:
    """Parse ``url`` as the WHATWG URL standard does; raise ``InvalidUrlError`` when it is not one.

    Without ``base`` an absolute URL is required; with it, ``url`` may be relative (a
    redirect's ``Location``) and is resolved against ``base`` as a browser resolves it. A
    refused host raises ``InvalidHostError``, a subclass. Nothing else is raised, whatever
    the text.
    """
    _check_text(url)
    if base is not None:
        _check_text(base)
        try:
            url = ada_url.join_url(base, url)
        except ValueError:
            raise _failure(url if _SCHEME.match(url) else base) from None
    try:
        parts = ada_url.parse_url(url)
    except ValueError:
        raise _failure(url) from None
    scheme = str(parts["protocol"]).rstrip(":")
    host = str(parts["hostname"])
    host_type = parts["host_type"]
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None = None
    if scheme in SPECIAL_SCHEMES:
        if host_type == ada_url.HostType.IPV4:
            ip = ipaddress.IPv4Address(host)
        elif host_type == ada_url.HostType.IPV6:
            host = host.strip("[]")
            ip = ipaddress.IPv6Address(host)
        else:
            host = host.rstrip(".")
            if not host and scheme != "file":
                raise InvalidHostError(f"{_shown(url)} has an empty host")
    port_text = str(parts["port"])
    return ParsedUrl(
        scheme=scheme,
        username=str(parts["username"]),
        password=str(parts["password"]),
        host=host,
        port=int(port_text) if port_text else None,
        path=str(parts["pathname"]),
        query=str(parts["search"])[1:],
        fragment=str(parts["hash"])[1:],
        ip=ip,
        href=str(parts["href"]),
    )


def _check_text(url: object) -> None:
    if not isinstance(url, str):
        raise InvalidUrlError(f"a URL must be a string, not {type(url).__name__}")
    if len(url) > _MAX_URL_CHARS:
        raise InvalidUrlError(f"the URL is longer than {_MAX_URL_CHARS} characters")
    try:
        url.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidUrlError(f"{_shown(url)} holds characters that are not valid Unicode") from None


def _shown(url: str) -> str:
    return repr(url if len(url) <= 200 else url[:200] + "...")


def _failure(url: str) -> InvalidUrlError:
    """The error for text the standard refuses, saying which part is wrong where it can tell."""
    text = _TAB_NEWLINE.sub("", url).strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f"
                                           "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
    m = _SCHEME.match(text)
    if m is None:
        return InvalidUrlError(f"{_shown(url)} is not an absolute URL: it has no scheme (such as https://)")
    scheme = m.group(1).lower()
    if scheme not in SPECIAL_SCHEMES:
        return InvalidUrlError(f"{_shown(url)} is not a valid {scheme}: URL")
    rest = text[m.end():].lstrip("/\\")
    authority = re.split(r"[/\\?#]", rest, maxsplit=1)[0]
    hostport = authority.rsplit("@", 1)[-1]
    if hostport.startswith("["):
        host, closed, tail = hostport.partition("]")
        host += closed
        port = tail[1:] if tail.startswith(":") else None
    else:
        host, sep, port_part = hostport.partition(":")
        port = port_part if sep else None
    if port and not (port.isascii() and port.isdigit() and int(port) <= 65535):
        return InvalidUrlError(f"{_shown(url)} has an invalid port {port!r}")
    if not host:
        return InvalidHostError(f"{_shown(url)} has no host")
    return InvalidHostError(f"{_shown(url)}: {host!r} is not a valid host (the URL standard refuses it)")
