"""The warnings and errors one resolution or validation collects, and how they are worded."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from pegboard.core.policy.steps import UNKNOWN_MARKER

if TYPE_CHECKING:
    from pegboard.core.policy.compile import UnknownEntry


class Problems:
    """Warnings and errors of one resolution, each once, in the order found (an error is a
    setting that failed closed)."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.errors: list[str] = []

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    def error(self, text: str) -> None:
        if text not in self.errors:
            self.errors.append(text)


def entry_list(values: Iterable[str]) -> str:
    return ", ".join(repr(v) for v in values)


def unknown_warning(label: str, unknown: Sequence[UnknownEntry], tail: str = "") -> str:
    parts = "; ".join(f"{u.entry!r} ({u.why})" for u in unknown)
    noun = "entry" if len(unknown) == 1 else "entries"
    return f"{label}: unknown {noun} ({UNKNOWN_MARKER}): {parts}{tail}"


def specifier_warning(label: str, specs: Sequence[tuple[str, str]], consequence: str) -> str:
    """``label: 'Bash(rm *)' carries a specifier; <consequence>``."""
    verb = "carries" if len(specs) == 1 else "carry"
    return f"{label}: {entry_list(e for e, _ in specs)} {verb} a specifier; {consequence}"
