"""The local site the browser tests drive: real pages on a real server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import random
import shutil
import socket
from typing import Any

import pytest

import pegboard_browser
from pegboard import Pegboard, hookimpl
from pegboard.testing import isolated_pegboard
from pegboard_browser.rules import BrowserFamily
from tests.builtin.web.server import LocalServer, Reply, Seen

PAGES: dict[str, str] = {
    "/": "<title>Home</title><h1>Welcome</h1><p>Hello from the test site.</p>"
         "<a href='/form'>Go to form</a> <a href='/dialog'>Dialogs</a>",
    "/form": "<title>Form</title><form action='/submitted' method='get'>"
             "<label for='who'>Name</label><input id='who' name='who'>"
             "<label><input type='checkbox' name='ok' id='ok'>Agree</label>"
             "<select name='color' id='color'><option value='red'>Red</option><option value='blue'>Blue</option>"
             "</select><button type='submit'>Send</button></form>",
    "/dialog": "<title>Dialog</title><button onclick=\"document.getElementById('out').textContent = "
               "confirm('Sure?') ? 'yes' : 'no'\">Ask</button><p id='out'>none</p>",
    "/download": "<title>Download</title><a href='/file.txt' download='notes.txt'>Get file</a>",
    "/private": "<title>Private bits</title><img src='http://10.0.0.1/pixel.png' alt='pixel'>"
                "<iframe src='http://169.254.169.254/latest/meta-data/'></iframe><p>private page</p>",
    "/upload": "<title>Upload</title><input type='file' id='f' "
               "onchange=\"document.getElementById('n').textContent = this.files[0].name\"><p id='n'>no file</p>",
    "/long": "<title>Long</title>" + "".join(f"<p><a href='/p{i}'>Item number {i}</a></p>" for i in range(800)),
}


def chromium_reason() -> str | None:
    if shutil.which("chromium") is None:
        return "Chromium is not installed (dev.py setup installs Debian's chromium package)"
    return None


class FamilyPlugin:
    """Registers the Browser family in an isolated Pegboard (no entry points are read there)."""

    @hookimpl
    def register_permission_families(self, register: Any) -> None:
        register(BrowserFamily())


def site() -> LocalServer:
    srv = LocalServer()
    for path, html in PAGES.items():
        srv.route(path, Reply(body=html.encode()))
    srv.route("/submitted", lambda seen: Reply(body=(
        f"<title>Done</title><p>who={seen.query.get('who', [''])[0]} color={seen.query.get('color', [''])[0]} "
        f"ok={seen.query.get('ok', ['off'])[0]}</p>").encode()))
    srv.route("/file.txt", Reply(body=b"file body\n", content_type="text/plain",
                                 headers={"Content-Disposition": "attachment; filename=notes.txt"}))
    srv.route("/to-private", Reply(302, b"", headers={"Location": "http://10.0.0.1/admin"}))
    srv.route("/slow", Reply(body=b"<title>Slow</title><p>finally</p>", delay=3.0))

    def echo(seen: Seen) -> Reply:
        return Reply(body=b"<title>Echo</title><p>" + seen.path.encode() + b"</p>")

    srv.route("/echo", echo)
    return srv


def free_profile_port() -> int:
    """A port of the profile range nothing listens on, picked at random: test processes running
    side by side (pytest -n) must not start two browsers on one port."""
    ports = list(range(18800, 18900))
    random.shuffle(ports)
    for port in ports:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("every port of 18800-18899 is in use")


def board(srv: LocalServer, tmp: Any, *, rules: dict[str, list[str]] | None = None,
          mode: str = "default", private: list[str] | None = None, **browser: Any) -> Pegboard:
    config: dict[str, Any] = {
        "permissions": {"defaultMode": mode, **(rules or {})},
        "browser": {"allowPrivateHosts": private if private is not None else ["127.0.0.1"],
                    "navigationTimeoutMs": 10_000, "actionTimeoutMs": 5_000,
                    "profiles": {"chrome": {"cdpPort": free_profile_port()}}, **browser},
    }
    return isolated_pegboard(pegboard_browser, FamilyPlugin(), config=config, cwd=tmp,
                             env={"PEGBOARD_DATA_DIR": str(tmp / "data"), "HOME": str(tmp)})


def skip_without_chromium() -> Any:
    reason = chromium_reason()
    return pytest.mark.skipif(reason is not None, reason=reason or "")


async def settle() -> None:
    await asyncio.sleep(0.2)
