"""``tools.cron``: whether scheduling is on, how many jobs a session may hold, when recurring
jobs expire. ``PEGBOARD_DISABLE_CRON=1`` (or Fuxi Code's ``FUXI_CODE_DISABLE_CRON``) turns the
tools off as well."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from pegboard import NEUTRAL, ToolContext

SETTINGS_KEY = "tools.cron"
DISABLE_ENV = ("PEGBOARD_DISABLE_CRON", "FUXI_CODE_DISABLE_CRON")
DAY = 86400.0


class CronSettings(BaseModel):
    enabled: Annotated[bool, NEUTRAL] = Field(default=True, description="false: the scheduling tools are unavailable")
    maxJobs: Annotated[int, NEUTRAL] = Field(default=50, ge=1, le=1000, description="jobs one session may hold at once")
    recurringExpiryDays: Annotated[float, NEUTRAL] = Field(
        default=7, gt=0, le=365, description="a recurring CronCreate job ends this many days after it was made"
    )


def settings(ctx: ToolContext) -> CronSettings:
    found: CronSettings = ctx.settings(SETTINGS_KEY)
    return found


def disabled_reason(env: dict[str, str] | None, config_enabled: bool) -> str | None:
    """Why scheduling is off, or ``None``."""
    for name in DISABLE_ENV:
        if (env or {}).get(name, "").strip().lower() in ("1", "true", "yes"):
            return f"scheduling is turned off ({name} is set)"
    if not config_enabled:
        return f"scheduling is turned off ({SETTINGS_KEY}.enabled is false)"
    return None


__all__ = ["DAY", "DISABLE_ENV", "SETTINGS_KEY", "CronSettings", "disabled_reason", "settings"]
