"""Size limits shared by both transports of ``pegboard serve``, and how they are written."""

from __future__ import annotations

import re

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
