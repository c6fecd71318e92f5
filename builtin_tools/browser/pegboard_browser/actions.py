"""Each browser action: what it does with the session's runtime, and the result it gives."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pegboard import ImageBlock, PermissionUpdate, TextBlock, ToolCall, ToolResult, default_data_dir, parse_url
from pegboard_browser.engine import (
    BrowserRuntime,
    EngineError,
    ProfileBrowser,
    Tab,
    ctx_session,
    first_line,
    pids_listening,
    process_command,
    scheme_refusal,
)
from pegboard_browser.profiles import Profile, ProfileError, ProfileStore
from pegboard_browser.proxy import REFUSED_HEADER
from pegboard_browser.rules import domain_rule
from pegboard_browser.snapshot import WALK_JS, SnapshotOptions, parse_ref, ref_selector, render, walk_options

if TYPE_CHECKING:
    from playwright.async_api import Locator

    from pegboard import Session, Tool, ToolContext
    from pegboard_browser import BrowserInput
    from pegboard_browser.settings import BrowserSettings

NO_BROWSER_ACTIONS = frozenset({"status", "stop", "profiles", "create-profile", "delete-profile", "reset-profile"})


class CallState:
    """What one call lets through without asking again: the host the pipeline approved."""

    def __init__(self, ctx: ToolContext, tool: Tool, approved: set[str]) -> None:
        self.ctx = ctx
        self.tool = tool
        self.approved = approved
        self.deny_cache: dict[str, str | None] = {}


def _fail(message: str, kind: str, **meta: Any) -> ToolResult:
    return ToolResult.error(message, error_kind=kind, **meta)


def _host(url: str) -> str | None:
    try:
        return parse_url(url).host or None
    except Exception:
        return None


def _store(ctx: ToolContext, settings: BrowserSettings) -> ProfileStore:
    return ProfileStore(default_data_dir(ctx.env or None) / "browser", settings)


def _runtime(ctx: ToolContext, settings: BrowserSettings) -> BrowserRuntime:
    from pegboard_browser import RUNTIME
    from pegboard_toolkit.webfetch import RESOLVER

    session = ctx_session(ctx)
    runtime: BrowserRuntime | None = session.state[RUNTIME]
    if runtime is None:
        from pegboard_toolkit.netguard import GuardPolicy, NetworkGuard

        try:
            resolver = ctx.stash.get(RESOLVER)
        except RuntimeError:
            resolver = None
        policy = GuardPolicy(allow_private_hosts=tuple(settings.allowPrivateHosts),
                             private_hosts_setting="browser.allowPrivateHosts")
        holder: dict[str, Any] = {}
        runtime = BrowserRuntime(session, settings, NetworkGuard(policy, resolver),
                                 lambda url, top, tab: _judge(holder["call"], url, top, tab))
        runtime.holder = holder
        session.state[RUNTIME] = runtime
        session.on_close(runtime.close)
    return runtime


def _deny_reason(state: CallState, host: str) -> str | None:
    """The Browser deny rule covering ``host``, as a reason, or ``None`` (cached per call)."""
    if host in state.deny_cache:
        return state.deny_cache[host]
    session = ctx_session(state.ctx)
    decision = session.check(state.tool.name, {"action": "navigate", "url": f"https://{host}/"})
    reason = None
    if decision.decision == "deny" and decision.rule is not None:
        reason = f"denied by {decision.rule}" + (f" ({decision.source})" if decision.source else "")
    state.deny_cache[host] = reason
    return reason


async def _judge(state: CallState, url: str, top: bool, tab: Tab | None) -> str | None:
    """Why a request must not go out, or ``None``. Deny rules judge every request; allow and
    ask rules only top-level navigations (a new domain asks; "always" remembers the domain)."""
    if top and (why := scheme_refusal(url)) is not None:
        return why
    host = _host(url)
    if host is None:
        return None if not top else f"cannot read a host in {url!r}"
    denied = _deny_reason(state, host)
    if denied is not None or not top or host in state.approved:
        return denied
    session = ctx_session(state.ctx)
    data = {"action": "navigate", "url": url}
    decision = session.check(state.tool.name, data)
    if decision.decision == "allow":
        return None
    if decision.decision == "deny":
        return decision.reason or "denied"
    answer = await _ask(state, session, data, decision)
    if isinstance(answer, PermissionUpdate):
        if answer.approve:
            session.remember(answer)
            state.approved.add(host)
            return None
        return "the approver refused"
    if answer is True:
        state.approved.add(host)
        return None
    why = "the approver refused" if answer is False else "no approver answered"
    return (f"navigation to {host} needs permission ({decision.reason}); {why}. To open it, call browser "
            f"action=navigate url={url!r}, or allow it with the rule {domain_rule(host)}")


async def _ask(state: CallState, session: Session, data: dict[str, Any], decision: Any) -> Any:
    from pegboard import ask_host

    call = ToolCall(tool=state.tool, input=data, requested_name=state.tool.name)
    try:
        answer = await ask_host(state.ctx, "request_approval", call=call, decision=decision)
    except Exception:
        answer = None
    if answer is None and session.approver is not None:
        try:
            answer = session.approver(call, decision)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception:
            answer = None
    return answer


async def run_action(input: BrowserInput, ctx: ToolContext, settings: BrowserSettings, *,
                     browser_tool: Tool) -> ToolResult:
    if input.target in ("sandbox", "node") or input.node:
        where = f"node {input.node!r}" if input.node else f"target={input.target}"
        return _fail(f"{where} is not available: no plugin here backs browsers in a sandbox or on a node; the "
                     "browser runs on the host Pegboard runs on (leave target out or use target=host)",
                     "target_unavailable")
    try:
        if input.action in ("profiles", "create-profile", "delete-profile", "reset-profile"):
            return await _profile_action(input, ctx, settings)
        return await _browser_action(input, ctx, settings, browser_tool)
    except ProfileError as exc:
        return _fail(str(exc), exc.kind)
    except EngineError as exc:
        return _fail(str(exc), exc.kind)


async def _browser_action(input: BrowserInput, ctx: ToolContext, settings: BrowserSettings,
                          browser_tool: Tool) -> ToolResult:
    store = _store(ctx, settings)
    name = input.profile or settings.defaultProfile
    profile = store.get(name)
    runtime = _runtime(ctx, settings)
    approved: set[str] = set()
    if input.action in ("open", "navigate") and input.url and (host := _host(input.url)):
        approved.add(host)
    state = CallState(ctx, browser_tool, approved)
    runtime.holder["call"] = state
    running = runtime.browsers.get(profile.name)
    if input.action == "status":
        return _status(runtime, profile, settings, running)
    if input.action == "stop":
        if profile.remote and running is None:
            return ToolResult.from_text(f"profile {profile.name} is remote (attach-only) and not attached")
        stopped = await runtime.stop(profile.name)
        return ToolResult.from_text(f"browser of profile {profile.name} {'stopped' if stopped else 'was not running'}",
                                    structured={"profile": profile.name, "running": False})
    browser = running or await runtime.start(profile, store.user_data_dir(profile.name),
                                             lambda host: _deny_reason(runtime.holder["call"], host))
    if input.action == "start":
        return _status(runtime, profile, settings, browser)
    handler = _HANDLERS[input.action]
    return await handler(input, ctx, settings, browser)


def _status(runtime: BrowserRuntime, profile: Profile, settings: BrowserSettings,
            running: ProfileBrowser | None) -> ToolResult:
    from pegboard_browser.discovery import find_chromium

    exe, how = find_chromium(settings)
    data: dict[str, Any] = {
        "profile": profile.name, "running": running is not None, "remote": profile.remote,
        "cdpPort": profile.port, "cdpUrl": profile.cdp_url, "engine": how if exe else None,
        "headless": settings.headless, "tabs": len(running.tabs) if running else 0,
    }
    if running is not None:
        data["proxy"] = running.proxy.url
    lines = [f"profile {profile.name}: {'running' if running else 'not running'}"
             + (f", {len(running.tabs)} tab(s)" if running else ""),
             f"engine: {'Chromium from ' + how if exe else how}"]
    if profile.remote:
        lines.append(f"remote (attach-only) at {profile.cdp_url}")
    else:
        lines.append(f"port {profile.port}")
    return ToolResult.from_text("\n".join(lines), structured=data)


def _tabs_result(browser: ProfileBrowser, head: str = "") -> ToolResult:
    rows = []
    lines = [head] if head else []
    for tab in browser.tabs.values():
        rows.append({"targetId": tab.id, "url": tab.page.url, "active": tab.id == browser.active})
        lines.append(f"{'*' if tab.id == browser.active else ' '} {tab.id} {tab.page.url}")
    if not rows:
        lines.append("no tabs open")
    return ToolResult.from_text("\n".join(lines), structured={"tabs": rows, "profile": browser.profile.name})


def _events(tab: Tab) -> list[str]:
    out, tab.events = tab.events, []
    return out


async def _page_result(tab: Tab, head: str, extra: dict[str, Any] | None = None) -> ToolResult:
    try:
        title = await tab.page.title()
    except Exception:
        title = ""
    lines = [head, f"tab {tab.id}: {tab.page.url}" + (f" ({title})" if title else "")]
    events = _events(tab)
    lines += [f"note: {e}" for e in events]
    data = {"targetId": tab.id, "url": tab.page.url, "title": title, "events": events, **(extra or {})}
    return ToolResult.from_text("\n".join(lines), structured=data)


async def _goto(tab: Tab, url: str, settings: BrowserSettings, timeout_ms: int | None) -> ToolResult:
    why = scheme_refusal(url)
    if why is not None:
        return _fail(f"refused to open {url!r}: {why}", "blocked_scheme")
    timeout = timeout_ms or settings.navigationTimeoutMs
    try:
        response = await tab.page.goto(url, timeout=timeout, wait_until="load")
    except Exception as exc:
        text = first_line(exc)
        events = _events(tab)
        if "Timeout" in text:
            return _fail(f"{url} did not finish loading within {timeout:,} ms (raise timeoutMs or "
                         "browser.navigationTimeoutMs); the tab shows what arrived so far", "timeout",
                         targetId=tab.id, url=tab.page.url)
        blocked = next((e for e in events if "blocked" in e), None)
        detail = blocked or text
        kind = "blocked" if ("ERR_BLOCKED_BY_CLIENT" in text or "ERR_TUNNEL" in text or blocked
                             or "ERR_PROXY" in text) else "navigation_failed"
        if kind == "blocked" and not blocked:
            detail = f"{text}; the guard proxy refused the connection (see action=console level=blocked)"
        return _fail(f"could not open {url}: {detail}", kind, targetId=tab.id)
    status = response.status if response is not None else None
    if response is not None and response.headers.get(REFUSED_HEADER.lower()):
        reason = (await response.text()).strip()
        await tab.page.goto("about:blank")
        _events(tab)
        return _fail(f"could not open {url}: {reason}", "blocked", targetId=tab.id)
    return await _page_result(tab, f"opened {url}" + (f" (HTTP {status})" if status else ""), {"status": status})


async def _open(input: BrowserInput, ctx: ToolContext, s: BrowserSettings, b: ProfileBrowser) -> ToolResult:
    if not input.url:
        return _fail("action=open needs url", "missing_field")
    tab = await b.new_tab()
    return await _goto(tab, input.url, s, input.timeoutMs)


async def _navigate(input: BrowserInput, ctx: ToolContext, s: BrowserSettings, b: ProfileBrowser) -> ToolResult:
    if not input.url:
        return _fail("action=navigate needs url", "missing_field")
    tab = b.tab(input.targetId) if (input.targetId or b.tabs) else await b.new_tab()
    return await _goto(tab, input.url, s, input.timeoutMs)


async def _tabs(input: BrowserInput, ctx: ToolContext, s: BrowserSettings, b: ProfileBrowser) -> ToolResult:
    return _tabs_result(b)


async def _focus(input: BrowserInput, ctx: ToolContext, s: BrowserSettings, b: ProfileBrowser) -> ToolResult:
    if not input.targetId:
        return _fail("action=focus needs targetId (from action=tabs)", "missing_field")
    tab = b.tab(input.targetId)
    b.active = tab.id
    await tab.page.bring_to_front()
    return _tabs_result(b, f"focused {tab.id}")


async def _close(input: BrowserInput, ctx: ToolContext, s: BrowserSettings, b: ProfileBrowser) -> ToolResult:
    tab = b.tab(input.targetId)
    await tab.page.close()
    b.tabs.pop(tab.id, None)
    if b.active == tab.id:
        b.active = next(reversed(b.tabs), None) if b.tabs else None
    return _tabs_result(b, f"closed {tab.id}")


async def _snapshot(input: BrowserInput, ctx: ToolContext, s: BrowserSettings, b: ProfileBrowser) -> ToolResult:
    tab = b.tab(input.targetId)
    opts = SnapshotOptions(input.format, input.interactive, input.compact, input.depth, input.selector,
                           s.snapshotMaxNodes)
    try:
        walked = await tab.page.evaluate(WALK_JS, walk_options(opts))
    except Exception as exc:
        return _fail(f"snapshot failed: {first_line(exc)}", "snapshot_failed")
    if walked.get("error"):
        return _fail(f"snapshot: {walked['error']}", "no_match")
    text = render(walked["items"], input.format)
    title = await tab.page.title()
    head = f"{tab.page.url}" + (f" ({title})" if title else "") + f" — {walked['refs']} ref(s), format {input.format}"
    if walked.get("cut"):
        head += f"\n[only the first {s.snapshotMaxNodes:,} nodes (browser.snapshotMaxNodes); narrow with selector]"
    limit = min(input.maxChars or s.snapshotMaxChars, s.snapshotMaxChars)
    body = text
    meta: dict[str, Any] = {"targetId": tab.id, "url": tab.page.url, "refs": walked["refs"], "format": input.format,
                            "chars": len(text)}
    if len(text) > limit:
        ref = ctx_session(ctx).results.put("browser", text, meta={"url": tab.page.url})
        cut = text.rfind("\n", 0, limit)
        body = text[: cut if cut > 0 else limit]
        body += (f"\n[snapshot cut at {len(body):,} of {len(text):,} characters; the whole snapshot is kept as {ref}: "
                 f"read it with tool_result_read, or narrow with selector, depth or interactive]")
        meta["result_ref"] = ref
    events = [f"note: {e}" for e in _events(tab)]
    return ToolResult.from_text("\n".join([head, *events, body]), structured=meta)


def _locator(tab: Tab, ref: str | None, element: str | None, what: str) -> Locator:
    if ref is not None:
        number = parse_ref(ref)
        if number is None:
            raise EngineError(f"{what}: ref {ref!r} is not a snapshot ref (12 or e12)", "invalid_ref")
        return tab.page.locator(ref_selector(number))
    if element:
        return tab.page.locator(element)
    raise EngineError(f"{what} needs ref (from action=snapshot)", "missing_field")


async def _resolved(loc: Locator, ref: str | None) -> Locator:
    if ref is not None and await loc.count() == 0:
        raise EngineError(f"ref {ref} is not on the page any more (refs come from the latest snapshot; take a new "
                          "snapshot)", "stale_ref")
    return loc.first


async def _screenshot(input: BrowserInput, ctx: ToolContext, s: BrowserSettings, b: ProfileBrowser) -> ToolResult:
    from pegboard_read import image_limits_for
    from pegboard_read_images import ImageError, process_image

    tab = b.tab(input.targetId)
    session = ctx_session(ctx)
    directory = session.directory / "browser-media"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"screenshot-{tab.id}-{len(list(directory.iterdir())) + 1}.{input.type}"
    if input.ref or input.element:
        loc = await _resolved(_locator(tab, input.ref, input.element, "screenshot"), input.ref)
        data = await loc.screenshot(type=input.type)
    else:
        data = await tab.page.screenshot(full_page=input.fullPage, type=input.type)
    path.write_bytes(data)
    try:
        processed = process_image(data, image_limits_for(ctx))
    except ImageError as exc:
        return _fail(f"the screenshot was taken (MEDIA:{path}) but cannot be sent: {exc}", "image_error",
                     path=str(path))
    note = f"MEDIA:{path}\nscreenshot of {tab.page.url}: {processed.original_width}x{processed.original_height}" + (
        f", sent as {processed.width}x{processed.height} {processed.mime_type}" if processed.changed else "")
    return ToolResult(content=[ImageBlock(data=processed.base64, mime_type=processed.mime_type), TextBlock(text=note)],
                      structured={"path": str(path), "targetId": tab.id, "width": processed.width,
                                  "height": processed.height})


async def _act(input: BrowserInput, ctx: ToolContext, s: BrowserSettings, b: ProfileBrowser) -> ToolResult:
    if input.kind is None:
        return _fail("action=act needs kind (click, type, press, hover, drag, select, fill, resize, wait, "
                     "evaluate)", "missing_field")
    tab = b.tab(input.targetId)
    page = tab.page
    timeout = input.timeoutMs or s.actionTimeoutMs
    kind = input.kind
    value: Any = None
    try:
        if kind == "click":
            await (await _resolved(_locator(tab, input.ref, None, "act click"), input.ref)).click(timeout=timeout)
        elif kind == "hover":
            await (await _resolved(_locator(tab, input.ref, None, "act hover"), input.ref)).hover(timeout=timeout)
        elif kind == "type":
            if input.text is None:
                return _fail("act type needs text", "missing_field")
            loc = await _resolved(_locator(tab, input.ref, None, "act type"), input.ref)
            if input.slowly:
                await loc.press_sequentially(input.text, timeout=timeout)
            else:
                await loc.fill(input.text, timeout=timeout)
            if input.submit:
                await loc.press("Enter", timeout=timeout)
        elif kind == "press":
            if not input.key:
                return _fail("act press needs key (such as Enter)", "missing_field")
            if input.ref:
                await (await _resolved(_locator(tab, input.ref, None, "act press"), input.ref)).press(
                    input.key, timeout=timeout)
            else:
                await page.keyboard.press(input.key)
        elif kind == "drag":
            if not input.startRef or not input.endRef:
                return _fail("act drag needs startRef and endRef", "missing_field")
            src = await _resolved(_locator(tab, input.startRef, None, "act drag"), input.startRef)
            dst = await _resolved(_locator(tab, input.endRef, None, "act drag"), input.endRef)
            await src.drag_to(dst, timeout=timeout)
        elif kind == "select":
            if not input.values:
                return _fail("act select needs values", "missing_field")
            loc = await _resolved(_locator(tab, input.ref, None, "act select"), input.ref)
            value = await loc.select_option(input.values, timeout=timeout)
        elif kind == "fill":
            if not input.fields:
                return _fail("act fill needs fields: [{ref, value}, ...]", "missing_field")
            for f in input.fields:
                loc = await _resolved(_locator(tab, f.ref, None, "act fill"), f.ref)
                kind_of = await loc.evaluate("e => (e.type || '').toLowerCase()")
                if kind_of in ("checkbox", "radio"):
                    await loc.set_checked(f.value.strip().lower() in ("true", "1", "yes", "on"), timeout=timeout)
                else:
                    await loc.fill(f.value, timeout=timeout)
        elif kind == "resize":
            if not input.width or not input.height:
                return _fail("act resize needs width and height", "missing_field")
            await page.set_viewport_size({"width": input.width, "height": input.height})
        elif kind == "wait":
            await _wait(input, tab, s)
        elif kind == "evaluate":
            if not input.fn:
                return _fail("act evaluate needs fn (a JavaScript function or expression)", "missing_field")
            if input.ref:
                loc = await _resolved(_locator(tab, input.ref, None, "act evaluate"), input.ref)
                value = await loc.evaluate(input.fn)
            else:
                value = await page.evaluate(input.fn)
    except EngineError:
        raise
    except Exception as exc:
        text = first_line(exc)
        if "Timeout" in text:
            return _fail(f"act {kind} did not finish within {timeout:,} ms: {text}", "timeout", targetId=tab.id)
        return _fail(f"act {kind} failed: {text}", "act_failed", targetId=tab.id)
    await asyncio.sleep(0.05)
    with contextlib.suppress(Exception):
        await page.wait_for_load_state("domcontentloaded", timeout=min(timeout, 5000))
    extra: dict[str, Any] = {"kind": kind}
    head = f"act {kind} done"
    if kind == "evaluate":
        shown = json.dumps(value, default=str, ensure_ascii=False)
        if len(shown) > s.evaluateMaxChars:
            shown = shown[: s.evaluateMaxChars] + f"... [cut at browser.evaluateMaxChars = {s.evaluateMaxChars:,}]"
        head += f"\nresult: {shown}"
        extra["value"] = value if len(shown) <= s.evaluateMaxChars else None
    elif value is not None:
        extra["value"] = value
    return await _page_result(tab, head, extra)


async def _wait(input: BrowserInput, tab: Tab, s: BrowserSettings) -> None:
    page = tab.page
    cap = s.waitMaxMs
    timeout = min(input.timeoutMs or cap, cap)
    if input.timeMs is not None:
        if input.timeMs > cap:
            raise EngineError(f"act wait timeMs {input.timeMs:,} is over browser.waitMaxMs ({cap:,})", "invalid_input")
        await asyncio.sleep(input.timeMs / 1000)
    if input.text:
        await page.get_by_text(input.text).first.wait_for(state="visible", timeout=timeout)
    if input.textGone:
        await page.get_by_text(input.textGone).first.wait_for(state="hidden", timeout=timeout)
    if input.selector:
        await page.locator(input.selector).first.wait_for(state="visible", timeout=timeout)
    if input.url:
        await page.wait_for_url(input.url, timeout=timeout)
    if input.loadState:
        await page.wait_for_load_state(input.loadState, timeout=timeout)


async def _console(input: BrowserInput, ctx: ToolContext, s: BrowserSettings, b: ProfileBrowser) -> ToolResult:
    tab = b.tab(input.targetId)
    levels = {"all": None, "error": {"error", "pageerror"}, "warning": {"warning", "error", "pageerror"},
              "blocked": {"blocked"}}[input.level]
    entries = [e for e in tab.console if levels is None or e.kind in levels]
    if input.clear:
        tab.console.clear()
    text = "\n".join(e.line() for e in entries) or "(no console entries)"
    return ToolResult.from_text(f"console of {tab.id} ({tab.page.url}), {len(entries)} entr(ies):\n{text}",
                                structured={"entries": [{"type": e.kind, "text": e.text} for e in entries]})


async def _pdf(input: BrowserInput, ctx: ToolContext, s: BrowserSettings, b: ProfileBrowser) -> ToolResult:
    tab = b.tab(input.targetId)
    directory = ctx_session(ctx).directory / "browser-media"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"page-{tab.id}-{len(list(directory.iterdir())) + 1}.pdf"
    try:
        await tab.page.pdf(path=str(path))
    except Exception as exc:
        return _fail(f"pdf failed: {first_line(exc)} (PDFs need a headless Chromium)", "pdf_failed")
    return ToolResult.from_text(f"MEDIA:{path}\nPDF of {tab.page.url}, {path.stat().st_size:,} bytes",
                                structured={"path": str(path), "targetId": tab.id})


async def _upload(input: BrowserInput, ctx: ToolContext, s: BrowserSettings, b: ProfileBrowser) -> ToolResult:
    from pegboard import resolve_path

    if not input.paths:
        return _fail("action=upload needs paths", "missing_field")
    files: list[str] = []
    for raw in input.paths:
        path = Path(resolve_path(raw, ctx.cwd, ctx.env.get("HOME") if ctx.env else None))
        if not ctx.permissions.may_read(path):
            return _fail(f"upload refused: {path} is denied by the Read rules", "denied", path=str(path))
        if not path.is_file():
            return _fail(f"upload: {path} is not a file", "path_not_found", path=str(path))
        files.append(str(path))
    tab = b.tab(input.targetId)
    timeout = input.timeoutMs or s.actionTimeoutMs
    try:
        if input.inputRef or input.element:
            loc = await _resolved(_locator(tab, input.inputRef, input.element, "upload"), input.inputRef)
            await loc.set_input_files(files, timeout=timeout)
        elif input.ref:
            loc = await _resolved(_locator(tab, input.ref, None, "upload"), input.ref)
            async with tab.page.expect_file_chooser(timeout=timeout) as chooser:
                await loc.click(timeout=timeout)
            await (await chooser.value).set_files(files, timeout=timeout)
        else:
            return _fail("action=upload needs ref (clicked to open the chooser), inputRef or element", "missing_field")
    except EngineError:
        raise
    except Exception as exc:
        return _fail(f"upload failed: {first_line(exc)}", "upload_failed")
    return await _page_result(tab, f"attached {len(files)} file(s): {', '.join(files)}", {"files": files})


async def _dialog(input: BrowserInput, ctx: ToolContext, s: BrowserSettings, b: ProfileBrowser) -> ToolResult:
    if input.accept is None:
        return _fail("action=dialog needs accept (true or false), and promptText for a prompt", "missing_field")
    tab = b.tab(input.targetId)
    tab.dialog_answer = (input.accept, input.promptText)
    what = "accepted" + (f" with {input.promptText!r}" if input.promptText else "") if input.accept else "dismissed"
    return ToolResult.from_text(f"the next dialog in {tab.id} will be {what}",
                                structured={"targetId": tab.id, "accept": input.accept})


_HANDLERS = {
    "open": _open, "navigate": _navigate, "tabs": _tabs, "focus": _focus, "close": _close,
    "snapshot": _snapshot, "screenshot": _screenshot, "act": _act, "console": _console, "pdf": _pdf,
    "upload": _upload, "dialog": _dialog,
}


async def _profile_action(input: BrowserInput, ctx: ToolContext, settings: BrowserSettings) -> ToolResult:
    store = _store(ctx, settings)
    from pegboard_browser import RUNTIME

    runtime: BrowserRuntime | None = ctx.session.state[RUNTIME] if ctx.session is not None else None
    if input.action == "profiles":
        rows = []
        for p in store.all().values():
            running = runtime is not None and p.name in runtime.browsers
            rows.append({"name": p.name, "cdpPort": p.port, "cdpUrl": p.cdp_url, "source": p.source,
                         "running": running, "remote": p.remote, "default": p.name == settings.defaultProfile,
                         "color": p.color})
        lines = [f"{r['name']}{' (default)' if r['default'] else ''}: "
                 f"{'remote ' + str(r['cdpUrl']) if r['remote'] else 'port ' + str(r['cdpPort'])}, "
                 f"{'running' if r['running'] else 'stopped'}, from {r['source']}" for r in rows]
        return ToolResult.from_text("\n".join(lines), structured={"profiles": rows})
    if not input.name:
        return _fail(f"action={input.action} needs name", "missing_field")
    if input.action == "create-profile":
        if input.cdpUrl:
            try:
                parsed = parse_url(input.cdpUrl)
            except Exception:
                return _fail(f"cdpUrl {input.cdpUrl!r} is not a URL", "invalid_input")
            if parsed.scheme not in ("http", "https", "ws", "wss"):
                return _fail("cdpUrl must be an http(s) or ws(s) URL of a browser's DevTools endpoint",
                             "invalid_input")
        p = store.create(input.name, input.cdpUrl, input.color)
        where = f"remote at {p.cdp_url} (attach-only)" if p.remote else f"port {p.port}"
        return ToolResult.from_text(f"created profile {p.name}: {where}",
                                    structured={"name": p.name, "cdpPort": p.port, "cdpUrl": p.cdp_url})
    profile = store.get(input.name)
    if input.action == "delete-profile":
        if runtime is not None:
            await runtime.stop(profile.name)
        store.delete(profile.name)
        return ToolResult.from_text(f"deleted profile {profile.name}" + ("" if profile.remote else
                                                                          " and its browser data"),
                                    structured={"name": profile.name, "deleted": True})
    if profile.remote:
        return _fail(f"profile {profile.name} is remote (attach-only): it cannot be reset", "remote_profile")
    assert profile.port is not None
    user_data = str(store.user_data_dir(profile.name))
    ended = []
    for pid in pids_listening(profile.port):
        cmd = process_command(pid)
        if pid == os.getpid() or not any(a == f"--user-data-dir={user_data}" for a in cmd):
            return _fail(f"port {profile.port} is held by process {pid} ({' '.join(cmd[:1])}), which is not this "
                         f"profile's browser; it was left alone", "port_in_use", pid=pid)
        if runtime is not None and profile.name in runtime.browsers:
            await runtime.stop(profile.name)
            ended.append(pid)
            continue
        os.kill(pid, signal.SIGTERM)
        ended.append(pid)
    text = (f"ended the orphan browser(s) {', '.join(map(str, ended))} on port {profile.port}" if ended
            else f"nothing listens on port {profile.port}; profile {profile.name} needs no reset")
    return ToolResult.from_text(text, structured={"name": profile.name, "ended": ended})


__all__ = ["run_action"]
