"""The engine: Playwright driving a system Chromium, one per session and profile.

Chromium is never downloaded: it is started from ``executable_path`` (``browser.executablePath``
or ``chromium`` on PATH), headless, with the flags that keep it from calling home, behind the
session's guard proxy. Every request also passes a route handler that applies the
``Browser(...)`` deny rules to every request and the allow/ask rules to top-level
navigations; what it blocks is written to the tab's console. The runtime is kept in an
unpersisted session slot and closed by the session's close callback.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pegboard_browser.discovery import find_chromium
from pegboard_browser.profiles import Profile, ProfileError, port_free
from pegboard_browser.proxy import Blocked, GuardProxy
from pegboard_browser.settings import BrowserSettings

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page, Playwright, Request, Route

    from pegboard import Session, ToolContext
    from pegboard_toolkit.netguard import NetworkGuard

CHROMIUM_FLAGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-gpu",
    "--no-default-browser-check",
    "--disable-client-side-phishing-detection",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--no-pings",
    "--disable-breakpad",
    "--disable-features=MediaRouter,OptimizationHints,Translate,AutofillServerCommunication,"
    "CertificateTransparencyComponentUpdater,SafeBrowsing,NetworkTimeServiceQuerying,SigninInterception",
)
REFUSED_SCHEMES = ("file:", "chrome:", "javascript:", "chrome-extension:", "devtools:", "view-source:", "about:")
ALLOWED_ABOUT = ("about:blank",)


class EngineError(Exception):
    """The browser cannot do what was asked; ``kind`` is the result's ``error_kind``."""

    def __init__(self, message: str, kind: str = "browser_error") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class ConsoleEntry:
    kind: str
    text: str

    def line(self) -> str:
        return f"[{self.kind}] {self.text}"


@dataclass
class Tab:
    id: str
    page: Page
    console: deque[ConsoleEntry]
    dialog_answer: tuple[bool, str | None] | None = None
    events: list[str] = field(default_factory=list)


def pids_listening(port: int) -> list[int]:
    """Processes with a TCP socket listening on 127.0.0.1/any ``port`` (Linux ``/proc``)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) > 9 and cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(cols[9])
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (entry / "fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target.startswith("socket:[") and target[8:-1] in inodes:
                        pids.append(int(entry.name))
                        break
    return pids


def process_command(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


class ProfileBrowser:
    """One running (or attached) browser of one profile: its context, tabs and proxy."""

    def __init__(self, runtime: BrowserRuntime, profile: Profile, context: BrowserContext,
                 proxy: GuardProxy, closer: Callable[[], Any]) -> None:
        self.runtime = runtime
        self.profile = profile
        self.context = context
        self.proxy = proxy
        self._closer = closer
        self.tabs: dict[str, Tab] = {}
        self.active: str | None = None
        self._next = 0
        self.downloads: list[str] = []
        context.on("page", self._on_page)
        for page in context.pages:
            self._adopt(page)

    def _on_page(self, page: Page) -> None:
        self._adopt(page)

    def _adopt(self, page: Page) -> Tab:
        for tab in self.tabs.values():
            if tab.page is page:
                return tab
        self._next += 1
        tab = Tab(f"t{self._next}", page, deque(maxlen=self.runtime.settings.consoleMaxEntries))
        self.tabs[tab.id] = tab
        self.active = tab.id
        page.set_default_timeout(self.runtime.settings.actionTimeoutMs)
        page.set_default_navigation_timeout(self.runtime.settings.navigationTimeoutMs)
        page.on("console", lambda m: tab.console.append(ConsoleEntry(m.type, m.text)))
        page.on("pageerror", lambda e: tab.console.append(ConsoleEntry("pageerror", str(e))))
        page.on("dialog", lambda d: asyncio.ensure_future(self._dialog(tab, d)))
        page.on("download", lambda d: asyncio.ensure_future(self._download(tab, d)))
        page.on("close", lambda _p: self._forget(tab))
        return tab

    def _forget(self, tab: Tab) -> None:
        self.tabs.pop(tab.id, None)
        if self.active == tab.id:
            self.active = next(reversed(self.tabs), None) if self.tabs else None

    async def _dialog(self, tab: Tab, dialog: Any) -> None:
        answer, tab.dialog_answer = tab.dialog_answer, None
        text = f"{dialog.type} dialog: {dialog.message!r}"
        try:
            if answer is not None and answer[0]:
                await dialog.accept(answer[1] or "") if dialog.type == "prompt" else await dialog.accept()
                tab.events.append(f"{text} accepted" + (f" with {answer[1]!r}" if answer[1] else ""))
            elif answer is not None or dialog.type != "alert":
                await dialog.dismiss()
                tab.events.append(f"{text} dismissed" + ("" if answer else " (arm an answer with action=dialog)"))
            else:
                await dialog.accept()
                tab.events.append(f"{text} closed")
        except Exception as exc:  # the page may be gone
            tab.events.append(f"{text}: could not answer ({exc})")
        tab.console.append(ConsoleEntry("dialog", tab.events[-1]))

    async def _download(self, tab: Tab, download: Any) -> None:
        directory = self.runtime.downloads_dir()
        name = Path(download.suggested_filename or "download").name.lstrip(".") or "download"
        target = directory / name
        n = 1
        while target.exists():
            target = directory / f"{Path(name).stem}-{n}{Path(name).suffix}"
            n += 1
        try:
            await download.save_as(str(target))
            size = target.stat().st_size
            if size > self.runtime.settings.maxDownloadBytes:
                target.unlink(missing_ok=True)
                note = (f"download {name} refused: {size:,} bytes, over browser.maxDownloadBytes "
                        f"({self.runtime.settings.maxDownloadBytes:,})")
            else:
                self.downloads.append(str(target))
                note = f"downloaded {download.url} to MEDIA:{target} ({size:,} bytes)"
        except Exception as exc:
            note = f"download of {download.url} failed: {exc}"
        tab.events.append(note)
        tab.console.append(ConsoleEntry("download", note))

    def tab(self, tab_id: str | None) -> Tab:
        if tab_id:
            tab = self.tabs.get(tab_id)
            if tab is None:
                known = ", ".join(self.tabs) or "none"
                raise EngineError(f"no tab {tab_id!r} in profile {self.profile.name} (tabs: {known}); list them "
                                  "with action=tabs", "unknown_tab")
            return tab
        if self.active is None or self.active not in self.tabs:
            raise EngineError("no tab is open; open one with action=open url=...", "no_tab")
        return self.tabs[self.active]

    async def new_tab(self) -> Tab:
        if len(self.tabs) >= self.runtime.settings.maxTabs:
            raise EngineError(f"{len(self.tabs)} tabs are open, the most browser.maxTabs allows; close one first",
                              "too_many_tabs")
        page = await self.context.new_page()
        return self._adopt(page)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self._closer()
        await self.proxy.close()


class BrowserRuntime:
    """The session's browsers, by profile, and what judges their requests."""

    def __init__(self, session: Session, settings: BrowserSettings, guard: NetworkGuard,
                 judge: Callable[[str, bool, Tab | None], Any]) -> None:
        self.session = session
        self.settings = settings
        self.guard = guard
        self.judge = judge
        self.browsers: dict[str, ProfileBrowser] = {}
        #: the current call's state, read by ``judge`` (set by each call before it acts)
        self.holder: dict[str, Any] = {}
        self._pw: Playwright | None = None
        self._pw_manager: Any = None
        self._lock = asyncio.Lock()

    def downloads_dir(self) -> Path:
        d = self.session.directory / "browser-downloads"
        d.mkdir(parents=True, exist_ok=True)
        return d

    async def _playwright(self) -> Playwright:
        if self._pw is None:
            from playwright.async_api import async_playwright

            self._pw_manager = async_playwright()
            self._pw = await self._pw_manager.start()
        return self._pw

    async def start(self, profile: Profile, user_data_dir: Path, deny: Callable[[str], str | None]) -> ProfileBrowser:
        async with self._lock:
            running = self.browsers.get(profile.name)
            if running is not None:
                return running
            browser = await self._launch(profile, user_data_dir, deny)
            self.browsers[profile.name] = browser
            return browser

    async def _launch(self, profile: Profile, user_data_dir: Path, deny: Callable[[str], str | None]) -> ProfileBrowser:
        tabs_holder: dict[str, ProfileBrowser] = {}

        def on_block(blocked: Blocked) -> None:
            pb = tabs_holder.get("b")
            tab = pb.tabs.get(pb.active) if pb is not None and pb.active else None
            if tab is not None:
                tab.console.append(ConsoleEntry("blocked", f"{blocked.target}: {blocked.reason}"))

        proxy = GuardProxy(self.guard, deny, on_block, connect_timeout=self.settings.navigationTimeoutMs / 1000)
        await proxy.start()
        pw = await self._playwright()
        proxy_arg = {"server": proxy.url, "bypass": "<-loopback>"}
        try:
            if profile.remote:
                assert profile.cdp_url is not None
                attached = await pw.chromium.connect_over_cdp(profile.cdp_url,
                                                              timeout=self.settings.navigationTimeoutMs)
                context = await attached.new_context(proxy=proxy_arg, service_workers="block",  # type: ignore[arg-type]
                                                     accept_downloads=True)

                async def close_remote() -> None:
                    await context.close()  # the remote browser itself is left running: attach-only

                closer: Callable[[], Any] = close_remote
            else:
                executable, how = find_chromium(self.settings)
                if executable is None:
                    raise EngineError(how, "engine_unavailable")
                assert profile.port is not None
                if not port_free(profile.port):
                    raise EngineError(
                        f"port {profile.port} of profile {profile.name} is in use (another browser on this profile, "
                        "or an orphan): stop it, or end an orphan with action=reset-profile", "port_in_use")
                user_data_dir.mkdir(parents=True, exist_ok=True)
                args = [*CHROMIUM_FLAGS, f"--remote-debugging-port={profile.port}",
                        "--remote-debugging-address=127.0.0.1",
                        f"--proxy-server={proxy.url}", "--proxy-bypass-list=<-loopback>"]
                if os.geteuid() == 0:
                    args.append("--no-sandbox")
                context = await pw.chromium.launch_persistent_context(
                    str(user_data_dir), executable_path=executable, headless=self.settings.headless, args=args,
                    service_workers="block", accept_downloads=True, downloads_path=str(self.downloads_dir()),
                    timeout=self.settings.navigationTimeoutMs, ignore_default_args=["--enable-automation"],
                )
                closer = context.close
        except EngineError:
            await proxy.close()
            raise
        except Exception as exc:
            await proxy.close()
            raise EngineError(f"the browser for profile {profile.name} did not start: {first_line(exc)}",
                              "engine_failed") from None
        browser = ProfileBrowser(self, profile, context, proxy, closer)
        tabs_holder["b"] = browser
        await context.route("**/*", lambda route, request: self._route(browser, route, request))
        return browser

    async def _route(self, browser: ProfileBrowser, route: Route, request: Request) -> None:
        try:
            frame = request.frame
            top = request.is_navigation_request() and frame.parent_frame is None
        except Exception:
            top = False
        tab = next((t for t in browser.tabs.values() if _owns(t, request)), None)
        try:
            reason = await self.judge(request.url, top, tab)
        except Exception as exc:
            reason = f"the permission check failed: {exc}"
        if reason is None:
            with contextlib.suppress(Exception):
                await route.continue_()
            return
        if tab is not None:
            tab.console.append(ConsoleEntry("blocked", f"{request.url}: {reason}"))
            if top:
                tab.events.append(f"navigation to {request.url} blocked: {reason}")
        with contextlib.suppress(Exception):
            await route.abort("blockedbyclient")

    async def stop(self, name: str) -> bool:
        browser = self.browsers.pop(name, None)
        if browser is None:
            return False
        await browser.close()
        return True

    async def close(self) -> None:
        for name in list(self.browsers):
            await self.stop(name)
        if self._pw_manager is not None:
            with contextlib.suppress(Exception):
                await self._pw_manager.__aexit__(None, None, None)
            self._pw_manager = self._pw = None


def _owns(tab: Tab, request: Request) -> bool:
    try:
        return request.frame.page is tab.page
    except Exception:
        return False


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def scheme_refusal(url: str) -> str | None:
    """Why the browser refuses to navigate to ``url`` by its scheme, or ``None``."""
    low = url.strip().lower()
    if low in ALLOWED_ABOUT:
        return None
    for scheme in REFUSED_SCHEMES:
        if low.startswith(scheme):
            return f"{scheme} URLs are never opened by the browser tool; only http and https pages are"
    if not (low.startswith("http://") or low.startswith("https://")):
        return "only http:// and https:// URLs can be opened (give the full URL with its scheme)"
    return None


def profile_error(exc: ProfileError) -> EngineError:
    return EngineError(str(exc), exc.kind)


def ctx_session(ctx: ToolContext) -> Session:
    if ctx.session is None:
        raise EngineError("the browser needs a session (it lives as long as the session does); call it through "
                          "a Pegboard session", "no_session")
    return ctx.session


__all__ = [
    "BrowserRuntime",
    "ConsoleEntry",
    "EngineError",
    "ProfileBrowser",
    "Tab",
    "pids_listening",
    "process_command",
    "scheme_refusal",
]
