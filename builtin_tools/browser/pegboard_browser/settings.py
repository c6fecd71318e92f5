"""The ``browser`` config section: the switch, the profiles, the engine and every limit."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, Field, field_validator

from pegboard import NARROWS, NEUTRAL, Widens

SETTINGS_KEY = "browser"
PROFILE_NAME = re.compile(r"^[a-z0-9-]{1,64}$")
PORT_MIN, PORT_MAX = 18800, 18899
DEFAULT_EXECUTABLES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class ProfileConfig(BaseModel):
    """A profile named in config: a local one on ``cdpPort``, or a remote one at ``cdpUrl``."""

    cdpPort: Annotated[int | None, NEUTRAL] = Field(default=None, ge=PORT_MIN, le=PORT_MAX)
    cdpUrl: Annotated[str | None, Widens.when_set("attaches the agent to a browser Pegboard did not start")] = None
    color: Annotated[str | None, NEUTRAL] = None


class BrowserSettings(BaseModel):
    enabled: Annotated[bool, NEUTRAL] = Field(default=True, description="Offer the browser tool at all.")
    defaultProfile: Annotated[str, NEUTRAL] = Field(default="chrome",
                                                    description="The profile a call without one uses.")
    profiles: Annotated[dict[str, ProfileConfig],
                        Widens.when_set("adds browser profiles, remote ones included")] = Field(
        default_factory=dict, description="Profiles by name (cdpPort, or cdpUrl for an attach-only remote browser).")
    executablePath: Annotated[str | None, Widens.when_set("chooses the program started as the browser")] = Field(
        default=None, description="The Chromium to start; default: chromium on PATH.")
    headless: Annotated[bool, NEUTRAL] = Field(default=True, description="Start Chromium without a window.")
    allowPrivateHosts: Annotated[list[str], Widens.when_set("lets the browser reach private hosts")] = Field(
        default_factory=list,
        description="Host names, addresses or networks the guard proxy lets the browser reach although not public.")
    navigationTimeoutMs: Annotated[int, NEUTRAL] = Field(default=30_000, ge=100, le=600_000)
    actionTimeoutMs: Annotated[int, NEUTRAL] = Field(default=10_000, ge=100, le=600_000)
    waitMaxMs: Annotated[int, NEUTRAL] = Field(default=30_000, ge=0, le=600_000,
                                               description="Upper bound of act wait's timeMs.")
    snapshotMaxChars: Annotated[int, NEUTRAL] = Field(default=20_000, ge=500, le=1_000_000,
                                                      description="A longer snapshot is cut and kept under a tr_ ref.")
    snapshotMaxNodes: Annotated[int, NEUTRAL] = Field(default=5_000, ge=10, le=100_000)
    evaluateMaxChars: Annotated[int, NEUTRAL] = Field(default=20_000, ge=100, le=1_000_000)
    consoleMaxEntries: Annotated[int, NEUTRAL] = Field(default=500, ge=10, le=100_000,
                                                       description="Console entries kept per tab.")
    maxTabs: Annotated[int, NARROWS] = Field(default=20, ge=1, le=500)
    maxDownloadBytes: Annotated[int, NEUTRAL] = Field(default=100 * 1024 * 1024, ge=1024)

    @field_validator("defaultProfile")
    @classmethod
    def _profile_name(cls, v: str) -> str:
        if not PROFILE_NAME.match(v):
            raise ValueError("a profile name is 1 to 64 characters of a-z, 0-9 and '-'")
        return v

    @field_validator("profiles")
    @classmethod
    def _profile_names(cls, v: dict[str, ProfileConfig]) -> dict[str, ProfileConfig]:
        for name in v:
            if not PROFILE_NAME.match(name):
                raise ValueError(f"profile name {name!r}: use 1 to 64 characters of a-z, 0-9 and '-'")
        return v


__all__ = ["PORT_MAX", "PORT_MIN", "PROFILE_NAME", "SETTINGS_KEY", "BrowserSettings", "ProfileConfig"]
