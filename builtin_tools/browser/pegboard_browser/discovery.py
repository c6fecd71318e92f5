"""Finding the engine without starting it: cheap enough for every tool listing (no asyncio, no Playwright)."""

from __future__ import annotations

import shutil

from pegboard_browser.settings import DEFAULT_EXECUTABLES, BrowserSettings


def find_chromium(settings: BrowserSettings) -> tuple[str | None, str]:
    """The Chromium to start and how it was found, or ``None`` and why there is none."""
    if settings.executablePath:
        path = settings.executablePath
        found = shutil.which(path)
        if found:
            return found, f"browser.executablePath {path}"
        return None, f"browser.executablePath {path!r} is not an executable file"
    for name in DEFAULT_EXECUTABLES:
        found = shutil.which(name)
        if found:
            return found, f"{name} on PATH ({found})"
    return None, ("no Chromium found: install Debian's chromium package (apt-get install chromium) or set "
                  "browser.executablePath")


def playwright_missing() -> str | None:
    import importlib.util

    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is not installed (pip install playwright; no browser download is needed)"
    return None


__all__ = ["find_chromium", "playwright_missing"]
