"""Shared building blocks for Pegboard tool authors.

Built-in and third-party tools depend on this distribution; the kernel does not. Every
function here is written against Pegboard's public API only, so a tool that uses it stays
small and a fix lands in one place. It is a library, not a plugin: it registers nothing.
"""

from __future__ import annotations

from pegboard_toolkit.images import (
    ImageError,
    ImageLimits,
    ImageLimitsError,
    ProcessedImage,
    fit_base64_image,
    fit_result_images,
    image_limits,
    process_image,
)
from pegboard_toolkit.ledger import (
    LEDGER,
    NOT_READ,
    PARTIAL_READ,
    STALE_READ,
    LedgerEntry,
    ReadLedger,
    Staleness,
    file_digest,
)
from pegboard_toolkit.lines import Line, LineIndex, LineIndexCache, build_index, read_lines
from pegboard_toolkit.ripgrep import (
    RG_UNAVAILABLE,
    RgResult,
    RipgrepUnavailable,
    choose_backend,
    find_ripgrep,
    require_ripgrep,
    run_ripgrep,
)
from pegboard_toolkit.walk import (
    VCS_DIRS,
    GlobError,
    ReadFilter,
    WalkTimeout,
    compile_glob,
    rg_glob_matches,
    split_glob,
    walk_files,
)

__all__ = [
    "LEDGER",
    "NOT_READ",
    "PARTIAL_READ",
    "RG_UNAVAILABLE",
    "STALE_READ",
    "VCS_DIRS",
    "GlobError",
    "ImageError",
    "ImageLimits",
    "ImageLimitsError",
    "LedgerEntry",
    "Line",
    "LineIndex",
    "LineIndexCache",
    "ProcessedImage",
    "ReadFilter",
    "ReadLedger",
    "RgResult",
    "RipgrepUnavailable",
    "Staleness",
    "WalkTimeout",
    "build_index",
    "choose_backend",
    "compile_glob",
    "file_digest",
    "find_ripgrep",
    "fit_base64_image",
    "fit_result_images",
    "image_limits",
    "process_image",
    "read_lines",
    "require_ripgrep",
    "rg_glob_matches",
    "run_ripgrep",
    "split_glob",
    "walk_files",
]
