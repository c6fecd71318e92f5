"""The permission modes, apart from the config models so that the CLI can offer them without pydantic."""

from __future__ import annotations

from typing import Literal, get_args

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]
PERMISSION_MODES: tuple[str, ...] = get_args(PermissionMode)
