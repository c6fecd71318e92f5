"""Hypothesis strategies for host spellings, shared by the URL, permission and guard tests."""

from __future__ import annotations

import ipaddress

from hypothesis import strategies as st


def number(value: int, radix: str) -> str:
    """``value`` as a URL host part: decimal, ``0x`` / ``0X`` hex, or ``0``-prefixed octal."""
    if radix == "hex":
        return hex(value)
    if radix == "HEX":
        return "0X" + format(value, "X")
    if radix == "oct":
        return "0" + format(value, "o")
    return str(value)


@st.composite
def ipv4_spelling(draw: st.DrawFn, addresses: st.SearchStrategy[int] | None = None) -> tuple[int, str]:
    """(an IPv4 address as an int, one legacy spelling of it: 1 to 4 parts, mixed radixes)."""
    n = draw(addresses if addresses is not None else st.integers(0, 2**32 - 1))
    shape = draw(st.sampled_from([1, 2, 3, 4]))
    octets = list(n.to_bytes(4, "big"))
    if shape == 1:
        values = [n]
    elif shape == 2:
        values = [octets[0], n & 0xFFFFFF]
    elif shape == 3:
        values = [octets[0], octets[1], n & 0xFFFF]
    else:
        values = octets
    radices = draw(st.lists(st.sampled_from(["dec", "hex", "HEX", "oct"]), min_size=shape, max_size=shape))
    text = ".".join(number(v, r) for v, r in zip(values, radices, strict=True))
    if draw(st.booleans()):
        text += "."
    return n, text


@st.composite
def ip_host_spelling(draw: st.DrawFn, address: ipaddress.IPv4Address) -> str:
    """A URL host (as written between ``//`` and ``/``) that a browser reads as ``address``."""
    kind = draw(st.sampled_from(["legacy", "mapped", "mapped-hex", "percent"]))
    if kind == "legacy":
        return draw(ipv4_spelling(st.just(int(address))))[1]
    if kind == "mapped":
        return f"[::ffff:{address}]"
    if kind == "mapped-hex":
        n = int(address)
        return f"[0:0:0:0:0:FFFF:{n >> 16:x}:{n & 0xFFFF:04x}]"
    return "".join(f"%{ord(c):02x}" if c.isdigit() and draw(st.booleans()) else c for c in str(address))
