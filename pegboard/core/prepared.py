"""What the calls of one session share while nothing they depend on changes.

Each call needs the caller's enabled tool set (the policy) and a ``ToolContext``. Both follow
from the registry's version, the tools' availability, the selection, the working directory,
the mode, the extra directories and the config in force (a new one, from
``Pegboard.reload_config``, is a new context's config). A session keeps the last answer with
those inputs; a call whose inputs match reuses the set and copies the context, any other call
works both out again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pegboard.core.session import Selection
    from pegboard.core.tools import ToolContext


class PreparedCall:
    """The enabled names, why the others are not, and the context each call copies."""

    __slots__ = ("additional_dirs", "context", "cwd", "disabled", "enabled", "mode", "selection", "unavailable",
                 "version")

    def __init__(
        self,
        version: int,
        unavailable: tuple[str | None, ...],
        selection: Selection,
        cwd: Path,
        mode: str | None,
        additional_dirs: Sequence[Path],
        enabled: set[str],
        disabled: Mapping[str, str],
        context: ToolContext,
    ) -> None:
        self.version = version
        self.unavailable = unavailable
        self.selection = selection
        self.cwd = cwd
        self.mode = mode
        self.additional_dirs = additional_dirs
        self.enabled = enabled
        self.disabled = disabled
        self.context = context

    def fits(
        self,
        version: int,
        unavailable: tuple[str | None, ...],
        selection: Selection,
        cwd: Path,
        mode: str | None,
        additional_dirs: Sequence[Path],
    ) -> bool:
        """Were these the inputs? (Identity first: a session hands the same objects back.)"""
        return (
            self.version == version
            and (self.unavailable is unavailable or self.unavailable == unavailable)
            and (self.selection is selection or self.selection == selection)
            and (self.cwd is cwd or self.cwd == cwd)
            and self.mode == mode
            and (self.additional_dirs is additional_dirs or tuple(self.additional_dirs) == tuple(additional_dirs))
        )


__all__ = ["PreparedCall"]
