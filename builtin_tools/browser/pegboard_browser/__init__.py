"""The built-in ``browser`` tool (OpenClaw's): a headless Chromium a model drives by actions.

Written only against Pegboard's public API, ``pegboard-toolkit``, ``pegboard-read`` (the image
limits) and ``pegboard-permissions-web`` (domain patterns). The engine lives in
:mod:`pegboard_browser.engine`, the guard proxy in :mod:`pegboard_browser.proxy`, the
``Browser(...)`` rules in :mod:`pegboard_browser.rules`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, Field

from pegboard import (
    ConfigSection,
    ConfigSectionRegister,
    Pegboard,
    SessionKey,
    Subjects,
    ToolContext,
    ToolResult,
    hookimpl,
    tool,
)
from pegboard_browser.settings import SETTINGS_KEY, BrowserSettings

OWNER = "pegboard-browser"

Action = Literal[
    "status", "start", "stop", "tabs", "open", "focus", "close", "navigate", "snapshot", "screenshot", "act",
    "console", "pdf", "upload", "dialog", "profiles", "create-profile", "delete-profile", "reset-profile",
]
ActKind = Literal["click", "type", "press", "hover", "drag", "select", "fill", "resize", "wait", "evaluate"]

USAGE = (
    "browser(action, ...): drive a headless Chromium. Flow: status/start, open or navigate a URL, snapshot "
    "(format ai gives refs like 12, aria gives e12), act with a ref (click/type/press/hover/drag/select/fill/"
    "resize/wait/evaluate), screenshot to check visually. Also tabs/focus/close, console, pdf, upload, dialog and "
    "the profile actions. Only http(s) pages; private addresses are refused unless configured."
)


class FillField(BaseModel):
    ref: str = Field(description="The ref of the field (12 or e12).")
    value: str = Field(description="The text to put in it (for a checkbox: true or false).")


class BrowserInput(BaseModel):
    action: Action = Field(description="What to do.")
    profile: str | None = Field(default=None, description="The browser profile (default browser.defaultProfile).")
    target: Literal["sandbox", "host", "node"] | None = Field(
        default=None, description="Where the browser runs; only the host Pegboard runs on is available.")
    node: str | None = Field(default=None, description="A node id or name; no node host is available here.")
    url: str | None = Field(default=None, validation_alias=AliasChoices("url", "targetUrl"),
                            description="open/navigate: the http(s) URL.")
    targetId: str | None = Field(default=None, description="The tab (from action=tabs); default the active tab.")
    format: Literal["ai", "aria"] = Field(default="ai", description="snapshot: ai (numeric refs) or aria (refs e12).")
    interactive: bool = Field(default=False, description="snapshot: only elements one can act on.")
    compact: bool = Field(default=False, description="snapshot: leave out unnamed containers.")
    depth: int | None = Field(default=None, ge=0, le=200, description="snapshot: how deep the tree goes.")
    selector: str | None = Field(default=None, description="snapshot: the CSS selector of the part to show.")
    maxChars: int | None = Field(default=None, ge=500, description="snapshot: cut it here (at most the setting).")
    fullPage: bool = Field(default=False, description="screenshot: the whole page, not just the viewport.")
    type: Literal["png", "jpeg"] = Field(default="png", description="screenshot: the image format.")
    ref: str | None = Field(default=None, description="act/screenshot/upload: an element ref from snapshot.")
    element: str | None = Field(default=None, description="upload/screenshot: a CSS selector instead of a ref.")
    inputRef: str | None = Field(default=None, description="upload: the ref of the file input itself.")
    kind: ActKind | None = Field(default=None, description="act: what to do.")
    text: str | None = Field(default=None, description="act type: the text; act wait: text to wait for.")
    textGone: str | None = Field(default=None, description="act wait: text to wait to disappear.")
    submit: bool = Field(default=False, description="act type: press Enter afterwards.")
    slowly: bool = Field(default=False, description="act type: type key by key.")
    key: str | None = Field(default=None, description="act press: a key such as Enter or Control+A.")
    values: list[str] | None = Field(default=None, description="act select: the option values or labels.")
    fields: list[FillField] | None = Field(default=None, description="act fill: the fields and their values.")
    startRef: str | None = Field(default=None, description="act drag: from this ref.")
    endRef: str | None = Field(default=None, description="act drag: to this ref.")
    width: int | None = Field(default=None, ge=100, le=8000, description="act resize: viewport width.")
    height: int | None = Field(default=None, ge=100, le=8000, description="act resize: viewport height.")
    timeMs: int | None = Field(default=None, ge=0, description="act wait: milliseconds to wait.")
    loadState: Literal["load", "domcontentloaded", "networkidle"] | None = Field(
        default=None, description="act wait: a load state to reach.")
    fn: str | None = Field(default=None, description="act evaluate: a JavaScript function or expression.")
    timeoutMs: int | None = Field(default=None, ge=100, le=600_000,
                                  description="This call's time limit for the page (default from settings).")
    level: Literal["all", "error", "warning", "blocked"] = Field(default="all", description="console: which entries.")
    clear: bool = Field(default=False, description="console: empty the tab's console after reading it.")
    paths: list[str] | None = Field(default=None, description="upload: the files to attach.")
    accept: bool | None = Field(default=None, description="dialog: accept (true) or dismiss (false) the next one.")
    promptText: str | None = Field(default=None, description="dialog: the text for a prompt dialog.")
    name: str | None = Field(default=None, description="create/delete/reset-profile: the profile name.")
    cdpUrl: str | None = Field(default=None, description="create-profile: a remote browser's CDP URL (attach-only).")
    color: str | None = Field(default=None, description="create-profile: a color to tell the profile apart.")


def _subjects(i: BrowserInput) -> Subjects:
    paths = list(i.paths or []) if i.action == "upload" else []
    url = i.url if i.action in ("open", "navigate") else None
    return Subjects(url=url, paths_read=paths)


def _settings(ctx: ToolContext) -> BrowserSettings:
    value: BrowserSettings = ctx.settings(SETTINGS_KEY)
    return value


@tool(
    name="browser",
    groups=["ui", "openclaw"],
    permission_family="Browser",
    requires_permission=True,
    permission_subjects=_subjects,
    path_fields=("paths",),
    open_world=True,
    max_result_chars=60_000,
    timeout=600,
    usage=USAGE,
)
async def browser(input: BrowserInput, ctx: ToolContext) -> ToolResult:
    """Control a dedicated headless Chromium that Pegboard starts for the session. Actions: status, start,
    stop, tabs, open, focus, close, navigate, snapshot (format ai: numeric refs like 12; aria: role tree with
    refs like e12, options interactive, compact, depth, selector), screenshot (an image plus MEDIA: path),
    act (kind click/type/press/hover/drag/select/fill/resize/wait/evaluate, with ref from the latest snapshot),
    console, pdf, upload (paths with ref, inputRef or element), dialog (arm accept/dismiss for the next one),
    and profiles, create-profile, delete-profile, reset-profile. Every action takes profile (default
    browser.defaultProfile). Only http(s) pages open; private addresses are refused unless configured;
    a navigation to a new domain asks. Prefer snapshot then act by ref; avoid act wait unless nothing else
    tells when the page is ready."""
    from pegboard_browser.actions import run_action

    settings = _settings(ctx)
    if not settings.enabled:
        return ToolResult.refusal("unavailable", "browser is turned off by browser.enabled", error_kind="disabled")
    return await run_action(input, ctx, settings, browser_tool=browser)


def availability(pegboard: Pegboard) -> str | None:
    """Why the browser cannot run here, or ``None``: off, no Playwright, or no Chromium."""
    from pegboard_browser.discovery import find_chromium, playwright_missing

    settings: BrowserSettings = pegboard.settings(SETTINGS_KEY)
    if not settings.enabled:
        return f"turned off by {SETTINGS_KEY}.enabled"
    missing = playwright_missing()
    if missing:
        return missing
    found, why = find_chromium(settings)
    return None if found else why


def engine_report(pegboard: Pegboard) -> str:
    """One line for doctor-like output: the engine the browser tool found, or why none."""
    from pegboard_browser.discovery import find_chromium, playwright_missing

    settings: BrowserSettings = pegboard.settings(SETTINGS_KEY)
    missing = playwright_missing()
    if missing:
        return f"browser: unavailable: {missing}"
    found, why = find_chromium(settings)
    return f"browser: Playwright with Chromium from {why}" if found else f"browser: unavailable: {why}"


RUNTIME: SessionKey[Any] = SessionKey("pegboard-browser-runtime", object, default=lambda: None)


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(ConfigSection(SETTINGS_KEY, BrowserSettings, description="The browser tool (Playwright + Chromium)."))


@hookimpl
def pegboard_ready(pegboard: Pegboard) -> None:
    pegboard.add_tool(dataclasses.replace(browser, availability=lambda: availability(pegboard)), owner=OWNER)


__all__ = ["RUNTIME", "BrowserInput", "availability", "browser", "engine_report"]
