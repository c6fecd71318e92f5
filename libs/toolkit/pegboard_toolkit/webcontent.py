"""What a fetched body says, as text a model reads: HTML as Markdown or plain text, text types
in their charset, PDF as its text; anything else is refused with its content type.

HTML goes through readable-content extraction first (navigation, page headers and footers,
sidebars, forms, scripts and hidden parts are dropped) and is then converted by
``html-to-markdown`` (chosen by the benchmark in ``benchmarks/bench_web.py``). Links are made
absolute against the page's URL.
"""

from __future__ import annotations

import codecs
import io
import re
from dataclasses import dataclass, field
from typing import Literal

Mode = Literal["markdown", "text"]

#: Parts of a page that are not its content (the readable-content step drops them).
BOILERPLATE_SELECTORS = (
    "body > header", "body > footer", "footer", "aside", "nav", "noscript", "template",
    "[role=navigation]", "[role=banner]", "[role=contentinfo]", "[role=complementary]",
    "[aria-hidden=true]", ".sidebar", "#sidebar", ".ads", ".advert", ".advertisement",
    ".cookie-banner", ".cookie-consent", ".newsletter", ".share", ".social", ".related",
)

HTML_TYPES = ("text/html", "application/xhtml+xml")
PDF_TYPES = ("application/pdf", "application/x-pdf")
TEXT_TYPES = (
    "application/json", "application/ld+json", "application/xml", "application/javascript",
    "application/x-javascript", "application/ecmascript", "application/x-yaml", "application/yaml",
    "application/toml", "application/x-sh", "application/sql", "application/graphql",
)

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-:.]+)""", re.IGNORECASE)
_TITLE = re.compile(r"<title\b[^>]*>.*?</title\s*>", re.IGNORECASE | re.DOTALL)
_FRONTMATTER = re.compile(r"\A---\n.*?\n---\n+", re.DOTALL)
_BLANKS = re.compile(r"\n{3,}")


class ContentError(Exception):
    """A body that cannot become text; ``error_kind`` is the stable code (``binary_content``,
    ``pdf_error``)."""

    def __init__(self, error_kind: str, message: str) -> None:
        super().__init__(message)
        self.error_kind = error_kind


@dataclass(frozen=True)
class PageContent:
    """A body turned into text. ``kind`` is ``html``, ``markdown``, ``text`` or ``pdf``;
    ``cut`` when there was more text than the ``max_chars`` it was converted for."""

    text: str
    kind: str
    content_type: str
    title: str | None = None
    links: tuple[str, ...] = field(default=())
    cut: bool = False


def media_type(content_type: str | None) -> tuple[str, str | None]:
    """``("text/html", "utf-8")`` from a Content-Type header; ``("", None)`` when absent."""
    if not content_type:
        return "", None
    parts = content_type.split(";")
    media = parts[0].strip().lower()
    charset = None
    for part in parts[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip("'\"") or None
    return media, charset


def _known_codec(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def decode_text(body: bytes | bytearray, charset: str | None = None, *, html: bool = False) -> str:
    """``body`` as text: a BOM first, then the declared charset (when Python knows it), then
    for HTML a ``<meta charset>``, then UTF-8, else windows-1252 (what browsers assume).
    Bytes that do not fit become U+FFFD, never an exception."""
    for bom, bom_codec in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
                           (codecs.BOM_UTF16_BE, "utf-16-be")):
        if body.startswith(bom):
            return body[len(bom):].decode(bom_codec, errors="replace")
    codec = _known_codec(charset)
    if codec is None and html:
        match = _META_CHARSET.search(body[:4096])
        codec = _known_codec(match.group(1).decode("ascii", "ignore")) if match else None
    if codec is not None:
        return body.decode(codec, errors="replace")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return body.decode("cp1252", errors="replace")


def looks_binary(body: bytes | bytearray) -> bool:
    """NUL bytes or mostly control characters in the first 4 KiB."""
    head = body[:4096]
    if b"\x00" in head:
        return True
    if not head:
        return False
    controls = sum(1 for b in head if b < 9 or 13 < b < 32)
    return controls / len(head) > 0.1


def sniff(body: bytes | bytearray) -> str:
    """A media type for a body its server did not label."""
    head = body[:1024].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "application/pdf"
    if head.startswith((b"<!doctype html", b"<html")) or b"<body" in head or b"<head" in head:
        return "text/html"
    if looks_binary(body):
        return "application/octet-stream"
    return "text/plain"


def _element(html: str, tag: str, *, only: bool) -> str | None:
    """From the first ``<tag`` to the last ``</tag>`` (``only``: when the tag occurs once)."""
    opens = [m.start() for m in re.finditer(rf"<{tag}[\s>]", html, re.IGNORECASE)]
    if not opens or (only and len(opens) > 1):
        return None
    close = html.lower().rfind(f"</{tag}>")
    return html[opens[0]: close + len(tag) + 3] if close > opens[0] else None


def readable_html(html: str) -> str:
    """The page's main content when it marks it (``<main>``, else a single ``<article>``),
    with the page's title kept; else the whole page (boilerplate is dropped later)."""
    part = _element(html, "main", only=False) or _element(html, "article", only=True)
    if part is None:
        return html
    title = _TITLE.search(html)
    return f"<html><head>{title.group(0) if title else ''}</head><body>{part}</body></html>"


def html_to_markdown(html: str, base_url: str | None = None, mode: Mode = "markdown") -> PageContent:
    """Readable content of ``html`` as Markdown (or plain text), with its title and links."""
    import html_to_markdown as h2m

    options = h2m.ConversionOptions(
        extract_metadata=True,
        exclude_selectors=list(BOILERPLATE_SELECTORS),
        preprocessing=h2m.PreprocessingOptions(enabled=True, preset="standard"),
        base_url=base_url,
        output_format="plain" if mode == "text" else "markdown",
        skip_images=mode == "text",
        inline_data_media="alt_text_only",
    )
    try:
        result = h2m.convert(readable_html(html), options)
    except Exception as exc:  # the converter's own error types, raised for input it cannot read
        raise ContentError("conversion_error", f"the HTML could not be converted: {exc}") from None
    text = _FRONTMATTER.sub("", result.content or "", count=1)
    text = _BLANKS.sub("\n\n", text).strip()
    title = None
    links: list[str] = []
    metadata = result.metadata
    if metadata is not None:
        title = (metadata.document.title or "").strip() or None
        for link in metadata.links:
            href = str(link.href or "")
            if href.startswith(("http://", "https://")) and href not in links:
                links.append(href)
    return PageContent(text=text, kind="html", content_type="text/html", title=title, links=tuple(links))


def pdf_to_text(body: bytes, max_pages: int = 500, max_chars: int = 1_000_000) -> str:
    """The text of each page of a PDF (pypdf), pages separated by a blank line; reading stops
    after ``max_pages`` pages or once ``max_chars`` characters were found."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(body))
        pages: list[str] = []
        found = 0
        for n, page in enumerate(reader.pages):
            if n >= max_pages or found >= max_chars:
                pages.append(f"[{len(reader.pages) - n} more pages not read]")
                break
            pages.append((page.extract_text() or "").strip())
            found += len(pages[-1])
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise ContentError("pdf_error", f"the PDF could not be read: {exc}") from None
    return "\n\n".join(p for p in pages if p)


def _head(body: bytes | bytearray, limit: int) -> bytes | bytearray:
    """The first ``limit`` bytes, copying only those."""
    return bytes(memoryview(body)[:limit]) if len(body) > limit else body


def to_text(body: bytes | bytearray, content_type: str | None, url: str, mode: Mode = "markdown",
            max_chars: int = 1_000_000) -> PageContent:
    """Turn a fetched body into ``PageContent`` of at most ``max_chars`` characters; raise
    ``ContentError`` for binary bodies. Only as much of the body is decoded and converted as
    that needs (for HTML ``max(1 MB, 20 * max_chars)`` bytes), so a large body costs no more
    memory than its own buffer plus a bounded amount."""
    media, charset = media_type(content_type)
    if not media or media == "application/octet-stream":
        sniffed = sniff(body)
        if sniffed != "application/octet-stream" or not media:
            media = sniffed
    if media in HTML_TYPES:
        if looks_binary(body):
            raise ContentError("binary_content", f"{url} is labelled {media} but its body is binary "
                               f"({len(body):,} bytes), not text")
        head = _head(body, max(1 << 20, 20 * max_chars))
        page = html_to_markdown(decode_text(head, charset, html=True), url, mode)
        more = len(page.text) > max_chars or len(head) < len(body)
        return PageContent(page.text[:max_chars], "html", media, page.title, page.links, more)
    if media in PDF_TYPES:
        text = pdf_to_text(bytes(body), max_chars=max_chars)
        return PageContent(text[:max_chars], "pdf", media, cut=len(text) > max_chars)
    textual = media.startswith("text/") or media in TEXT_TYPES or media.endswith(("+json", "+xml"))
    if textual and not looks_binary(body):
        kind = "markdown" if media in ("text/markdown", "text/x-markdown") else "text"
        head = _head(body, 4 * max_chars)
        text = decode_text(head, charset)
        return PageContent(text[:max_chars], kind, media, cut=len(text) > max_chars or len(head) < len(body))
    raise ContentError(
        "binary_content",
        f"{url} returned {media or 'an unlabelled body'} ({len(body):,} bytes), which is binary, not text: "
        "only HTML, text types and PDF can be read",
    )
