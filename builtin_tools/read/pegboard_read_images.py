"""Images sized for the model: resize and re-encode with Pillow to the model's limits.

Defaults: 2000 x 2000 pixels, 4.5 MiB after base64, JPEG quality 80. A model entry of the
config may set its own (``providers[].models[].input_limits.images.resize`` with
``maxWidth``, ``maxHeight``, ``maxBytes``, ``jpegQuality``: positive integers, quality at
most 100, ``maxBytes`` counted after base64). An image still over 500 KB after resizing is
re-encoded as JPEG at reduced quality with its pixel size unchanged. BMP becomes PNG.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pegboard import ToolResult

DEFAULT_MAX_WIDTH = 2000
DEFAULT_MAX_HEIGHT = 2000
DEFAULT_MAX_BYTES = int(4.5 * 1024 * 1024)
DEFAULT_JPEG_QUALITY = 80
RECOMPRESS_ABOVE = 500 * 1024
MIN_JPEG_QUALITY = 20

FORMAT_MIME = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
IMAGE_SUFFIXES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
}
_LIMIT_FIELDS = {
    "maxWidth": "max_width",
    "maxHeight": "max_height",
    "maxBytes": "max_bytes",
    "jpegQuality": "jpeg_quality",
}


class ImageError(ValueError):
    """An image that cannot be decoded, or cannot be brought under the limits."""


class ImageLimitsError(ValueError):
    """A model's ``input_limits.images.resize`` that is not valid; the message names the key."""


@dataclass(frozen=True)
class ImageLimits:
    max_width: int = DEFAULT_MAX_WIDTH
    max_height: int = DEFAULT_MAX_HEIGHT
    max_bytes: int = DEFAULT_MAX_BYTES
    jpeg_quality: int = DEFAULT_JPEG_QUALITY


@dataclass(frozen=True)
class ProcessedImage:
    """The image to send: its bytes, type and size, and what was done to it."""

    data: bytes
    mime_type: str
    width: int
    height: int
    original_bytes: int
    original_width: int
    original_height: int
    changed: bool

    @property
    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")


def _b64_len(n: int) -> int:
    return 4 * ((n + 2) // 3)


def _entries(value: Any) -> list[tuple[str, Mapping[str, Any]]]:
    if isinstance(value, Mapping):
        return [(str(k), v) for k, v in value.items() if isinstance(v, Mapping)]
    if isinstance(value, Sequence) and not isinstance(value, str):
        out = []
        for item in value:
            if isinstance(item, Mapping):
                out.append((str(item.get("id") or item.get("name") or ""), item))
        return out
    return []


def _index_of(value: Any, key: str) -> str:
    return f"[{key!r}]" if isinstance(value, Mapping) else f"[id={key!r}]"


def validate_resize(raw: Any, where: str) -> ImageLimits:
    """``input_limits.images.resize`` as ``ImageLimits``; a wrong value raises naming the key."""
    if not isinstance(raw, Mapping):
        raise ImageLimitsError(f"{where}: expected an object with maxWidth, maxHeight, maxBytes, jpegQuality")
    values: dict[str, int] = {}
    for key, value in raw.items():
        field = _LIMIT_FIELDS.get(key)
        if field is None:
            raise ImageLimitsError(f"{where}.{key}: unknown key; use {', '.join(_LIMIT_FIELDS)}")
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ImageLimitsError(f"{where}.{key}: expected a positive integer, found {value!r}")
        if key == "jpegQuality" and value > 100:
            raise ImageLimitsError(f"{where}.{key}: expected an integer from 1 to 100, found {value!r}")
        values[field] = value
    return ImageLimits(**values)


def image_limits(config: Mapping[str, Any] | None, provider: str | None, model: str | None) -> ImageLimits:
    """The limits of ``provider``/``model`` from the merged config data, else the defaults.

    Model entries live in ``providers`` (a list of ``{id, models: [...]}`` or a mapping by
    id); a model entry matches by ``id`` or ``name``, also as ``provider/model``.
    """
    if not config or not model:
        return ImageLimits()
    providers = config.get("providers")
    for pkey, pentry in _entries(providers):
        if provider and pkey and pkey != provider:
            continue
        models = pentry.get("models")
        for mkey, mentry in _entries(models):
            if mkey not in (model, f"{pkey}/{model}") and mentry.get("name") != model:
                continue
            limits = mentry.get("input_limits")
            if limits is None:
                return ImageLimits()
            where = f"providers{_index_of(providers, pkey)}.models{_index_of(models, mkey)}.input_limits"
            if not isinstance(limits, Mapping):
                raise ImageLimitsError(f"{where}: expected an object")
            images = limits.get("images")
            if images is None:
                return ImageLimits()
            if not isinstance(images, Mapping):
                raise ImageLimitsError(f"{where}.images: expected an object")
            resize = images.get("resize")
            return ImageLimits() if resize is None else validate_resize(resize, f"{where}.images.resize")
    return ImageLimits()


def _open(data: bytes) -> Any:
    from PIL import Image, UnidentifiedImageError

    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise ImageError(f"cannot decode the image: {exc}") from None
    return image


def _encode(image: Any, fmt: str, quality: int) -> bytes:
    out = io.BytesIO()
    if fmt == "JPEG":
        _as_rgb(image).save(out, "JPEG", quality=quality, optimize=True)
    elif fmt == "WEBP":
        image.save(out, "WEBP", quality=quality)
    elif fmt == "GIF":
        image.save(out, "GIF")
    else:
        if image.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
            image = image.convert("RGBA")
        image.save(out, "PNG", optimize=True)
    return out.getvalue()


def _as_rgb(image: Any) -> Any:
    from PIL import Image

    if image.mode == "RGB":
        return image
    if image.mode in ("RGBA", "LA", "P", "PA"):
        rgba = image.convert("RGBA")
        background = Image.new("RGB", rgba.size, (255, 255, 255))
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    return image.convert("RGB")


def _fit(width: int, height: int, max_w: int, max_h: int) -> tuple[int, int]:
    scale = min(max_w / width, max_h / height, 1.0)
    return max(1, round(width * scale)), max(1, round(height * scale))


def process_image(data: bytes, limits: ImageLimits | None = None) -> ProcessedImage:
    """Bring ``data`` (PNG, JPEG, GIF, WebP or BMP) under ``limits``.

    An image already within every limit comes back byte for byte. Raises ``ImageError``
    when it cannot be decoded or not be brought under ``max_bytes``.
    """
    limits = limits or ImageLimits()
    image = _open(data)
    fmt = (image.format or "PNG").upper()
    width, height = image.size
    target = _fit(width, height, limits.max_width, limits.max_height)
    supported = fmt in FORMAT_MIME
    within = (
        supported
        and target == (width, height)
        and _b64_len(len(data)) <= limits.max_bytes
        and len(data) <= RECOMPRESS_ABOVE
    )
    if within:
        return ProcessedImage(data, FORMAT_MIME[fmt], width, height, len(data), width, height, changed=False)
    out_fmt = fmt if supported else "PNG"
    if target != (width, height):
        from PIL import Image

        if getattr(image, "is_animated", False):
            image.seek(0)
        image = image.convert("RGBA") if image.mode == "P" else image
        image = image.resize(target, Image.Resampling.LANCZOS)
    encoded = _encode(image, out_fmt, limits.jpeg_quality)
    if len(encoded) > RECOMPRESS_ABOVE:
        quality = limits.jpeg_quality
        best: bytes | None = None
        while True:
            candidate = _encode(image, "JPEG", quality)
            if best is None or len(candidate) < len(best):
                best = candidate
            if len(candidate) <= RECOMPRESS_ABOVE or quality <= MIN_JPEG_QUALITY:
                break
            quality = max(MIN_JPEG_QUALITY, quality - 15)
        encoded, out_fmt = best, "JPEG"
    while _b64_len(len(encoded)) > limits.max_bytes:
        w, h = image.size
        if w <= 16 or h <= 16:
            raise ImageError(f"the image cannot be brought under {limits.max_bytes:,} bytes after base64 encoding")
        from PIL import Image

        image = image.resize((max(1, int(w * 0.75)), max(1, int(h * 0.75))), Image.Resampling.LANCZOS)
        encoded, out_fmt = _encode(image, "JPEG", MIN_JPEG_QUALITY), "JPEG"
    return ProcessedImage(encoded, FORMAT_MIME[out_fmt], image.size[0], image.size[1], len(data), width, height, True)


def fit_base64_image(data: str, mime_type: str, limits: ImageLimits | None = None) -> tuple[str, str] | None:
    """For a base64 image already in a result: the re-processed ``(data, mime_type)``, or
    ``None`` when it is within the limits already or cannot be processed (keep the original)."""
    try:
        raw = base64.b64decode(data, validate=False)
        processed = process_image(raw, limits)
    except Exception:  # a result image Pillow cannot handle is kept as it came
        return None
    if not processed.changed:
        return None
    return processed.base64, processed.mime_type


def fit_result_images(result: ToolResult, limits: ImageLimits | None = None) -> ToolResult | None:
    """``result`` with every image block re-processed to ``limits``, or ``None`` when nothing
    changed. An image that cannot be processed is kept as it came; text and the structured
    value are never touched."""
    from pegboard import ImageBlock

    changed = False
    blocks: list[Any] = []
    for block in result.content:
        if isinstance(block, ImageBlock):
            fitted = fit_base64_image(block.data, block.mime_type, limits)
            if fitted is not None:
                block = ImageBlock(data=fitted[0], mime_type=fitted[1])
                changed = True
        blocks.append(block)
    if not changed:
        return None
    return result.model_copy(update={"content": blocks, "metadata": {**result.metadata, "images_fitted": True}})


__all__ = [
    "DEFAULT_JPEG_QUALITY",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_HEIGHT",
    "DEFAULT_MAX_WIDTH",
    "IMAGE_SUFFIXES",
    "ImageError",
    "ImageLimits",
    "ImageLimitsError",
    "ProcessedImage",
    "fit_base64_image",
    "fit_result_images",
    "image_limits",
    "process_image",
    "validate_resize",
]
