"""Helpers for the web tool tests: Pegboards that may reach only 127.0.0.1, PDFs and gzip bodies."""

from __future__ import annotations

import zlib
from typing import Any

import pegboard_web_extract
import pegboard_web_fetch
from pegboard import Pegboard
from pegboard.testing import isolated_pegboard


def local(**extra: Any) -> dict[str, Any]:
    """The explicit test setting: 127.0.0.1 is the one private host allowed, over http."""
    return {"allowPrivateHosts": ["127.0.0.1"], "allowHttpForPrivateHosts": True, **extra}


def board(*plugins: object, fetch: dict[str, Any] | None = None, extract: dict[str, Any] | None = None,
          mode: str = "bypassPermissions", config: dict[str, Any] | None = None,
          env: dict[str, str] | None = None) -> Pegboard:
    data: dict[str, Any] = {"permissions": {"defaultMode": mode}, **(config or {})}
    web = data.setdefault("tools", {}).setdefault("web", {})
    web["fetch"] = local(**(fetch or {}))
    web["extract"] = local(**(extract or {}))
    return isolated_pegboard(pegboard_web_fetch, pegboard_web_extract, *plugins, config=data, env=env)


def gzip_bytes(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


def gzip_zeros(total: int, chunk: int = 1 << 20) -> bytes:
    """``total`` zero bytes, gzip-compressed, without holding them in memory."""
    c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(chunk)
    parts = [c.compress(zeros) for _ in range(total // chunk)]
    return b"".join(parts) + c.flush()


def pdf_with_text(*pages: str) -> bytes:
    """A small valid PDF whose pages show ``pages`` in Helvetica (offsets computed, so readers need no repair)."""
    objects: list[bytes] = []
    kids = []
    font_id = 3 + 2 * len(pages)
    for n, text in enumerate(pages):
        page_id, content_id = 3 + 2 * n, 4 + 2 * n
        kids.append(f"{page_id} 0 R")
        safe = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 18 Tf 72 720 Td ({safe}) Tj ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_id} 0 R "
            f"/Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode())
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    head = [b"<< /Type /Catalog /Pages 2 0 R >>",
            f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(pages)} >>".encode()]
    everything = head + objects + [b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, obj in enumerate(everything, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (i, obj)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(everything) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(everything) + 1, xref)
    return bytes(out)
