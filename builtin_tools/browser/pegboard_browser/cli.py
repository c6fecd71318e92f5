"""``pegboard browser engine``: which Chromium and Playwright the browser tool found, or why none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from pegboard.cli import config_options, emit_json, json_option, load_pegboard


def engine_info(settings: Any) -> dict[str, Any]:
    """The engine as data: found or not, the Chromium path and how it was found, Playwright's version."""
    import subprocess

    from pegboard_browser.discovery import find_chromium, playwright_missing

    missing = playwright_missing()
    executable, how = find_chromium(settings)
    info: dict[str, Any] = {"available": False, "playwright": None, "chromium": executable, "found_by": None,
                            "chromium_version": None, "reason": None}
    if missing is None:
        from importlib.metadata import version

        info["playwright"] = version("playwright")
    if executable is not None:
        info["found_by"] = how
        try:
            out = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=20)
            info["chromium_version"] = out.stdout.strip() or None
        except (OSError, subprocess.SubprocessError) as exc:
            info["chromium_version"] = None
            info["reason"] = f"{executable} --version failed: {exc}"
    if not settings.enabled:
        info["reason"] = "turned off by browser.enabled"
    elif missing is not None:
        info["reason"] = missing
    elif executable is None:
        info["reason"] = how
    else:
        info["available"] = info["reason"] is None
    return info


@click.group("browser")
def browser_cli() -> None:
    """The browser tool's engine."""


@browser_cli.command("engine")
@config_options
@json_option
def engine(config_files: tuple[Path, ...], cwd: Path | None, as_json: bool) -> None:
    """Say which Chromium and Playwright the browser tool uses, or why it is unavailable."""
    from pegboard_browser.settings import SETTINGS_KEY

    pb = load_pegboard(config_files, cwd)
    info = engine_info(pb.settings(SETTINGS_KEY))
    if as_json:
        emit_json(info)
        return
    if info["available"]:
        chromium = info["chromium_version"] or "Chromium"
        click.echo(f"browser: available: Playwright {info['playwright']} driving {chromium} ({info['found_by']})")
    else:
        click.echo(f"browser: unavailable: {info['reason']}")
