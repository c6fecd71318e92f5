"""Limits of ``pegboard serve``: the message size both transports share, how it is written, and
the time and connection limits of ``--http``."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

DEFAULT_MAX_BODY = 64 * 1024 * 1024
MIN_MAX_BODY = 1024
UNITS = {"": 1, "b": 1, "k": 1024, "kib": 1024, "m": 1024**2, "mib": 1024**2, "g": 1024**3, "gib": 1024**3}
_SIZE = re.compile(r"\s*(\d{1,15})\s*([a-z]*)\s*", re.IGNORECASE | re.ASCII)


def parse_size(text: str) -> int:
    """``65536``, ``512K``, ``64MiB``, ``1G`` as bytes (K, M, G are powers of 1024).

    Raises ``ValueError`` with a message fit for the user.
    """
    match = _SIZE.fullmatch(text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in UNITS:
        raise ValueError(f"expected a number of bytes such as 65536, 512K or 64MiB, got {text!r}")
    return int(match.group(1)) * UNITS[unit]


def too_large_message(limit: int, size: int | None = None) -> str:
    """The one wording both transports use for a message over the cap."""
    what = f"of {size:,} bytes" if size is not None else f"of more than {limit:,} bytes"
    return (
        f"Message {what} exceeds the limit of {limit:,} bytes and was dropped; "
        "start pegboard serve with a larger --max-body to accept it."
    )


DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_BODY_TIMEOUT = 30.0
DEFAULT_MAX_CONNECTIONS = 256
DEFAULT_DISCONNECT_GRACE = 30.0


@dataclass(frozen=True)
class HttpLimits:
    """What ``pegboard serve --http`` grants one connection, so that clients that stall, pile up
    connections or leave mid-call cannot take the server from the others.

    ``header_timeout``: seconds from a connection's opening (or the first byte of its next
    request) to the end of the request head. ``body_timeout``: longest silence while a request
    body is being sent. ``max_connections``: connections open at once; a connection opened
    beyond them gets 503. ``disconnect_grace``: seconds a session-bound call goes on after its
    client closed the connection, before it is ended.
    """

    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    disconnect_grace: float = DEFAULT_DISCONNECT_GRACE

    def __post_init__(self) -> None:
        for option, value in (("--header-timeout", self.header_timeout), ("--body-timeout", self.body_timeout)):
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{option} must be a positive number of seconds, got {value!r}")
        if not (math.isfinite(self.disconnect_grace) and self.disconnect_grace >= 0):
            raise ValueError(f"--disconnect-grace must be 0 or more seconds, got {self.disconnect_grace!r}")
        if isinstance(self.max_connections, bool) or self.max_connections < 1:
            raise ValueError(f"--max-connections must be at least 1, got {self.max_connections!r}")
