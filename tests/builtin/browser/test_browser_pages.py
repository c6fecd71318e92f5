"""The browser on real pages: one Chromium for the module, driven through a Pegboard session."""

from __future__ import annotations

import base64
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from websockets.asyncio.server import serve

from pegboard import PermissionUpdate, Session
from tests.builtin.browser.site import board, site, skip_without_chromium
from tests.builtin.web.server import LocalServer

pytestmark = [skip_without_chromium(), pytest.mark.asyncio(loop_scope="module")]


class Answers:
    """The approver: records what was asked; answers with ``answer``."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []
        self.answer: Any = True

    def __call__(self, call: Any, decision: Any) -> Any:
        self.asked.append(dict(call.input))
        return self.answer


@pytest.fixture(scope="module")
def server() -> Any:
    with site() as srv:
        yield srv


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("browser")


@pytest.fixture(scope="module")
def answers() -> Answers:
    return Answers()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def session(server: LocalServer, tmp: Path, answers: Answers) -> AsyncIterator[Session]:
    (tmp / "secret.txt").write_text("secret")
    (tmp / "upload-me.txt").write_text("upload")
    pb = board(server, tmp, rules={"allow": ["Browser(domain:127.0.0.1)", "Browser(evaluate)"],
                                   "deny": ["Read(secret.txt)", "Browser(domain:denied.test)"]},
               private=["127.0.0.1", "localhost"])
    async with pb.session(approver=answers, cwd=tmp) as s:
        yield s


def ref_of(snapshot: str, needle: str) -> str:
    """The ref on the snapshot line that shows ``needle``."""
    line = next(line for line in snapshot.splitlines() if needle in line)
    found = re.search(r"\[(?:ref=)?(e?\d+)\]", line)
    assert found, line
    return found.group(1)


WS_JS = """new Promise(done => { const s = new WebSocket('%s');
    s.onopen = () => s.send('hi'); s.onmessage = (m) => done(m.data); s.onerror = () => done('error'); })"""


async def call(s: Session, **input: Any) -> Any:
    return await s.call("browser", input)


async def test_open_snapshot_and_fill_a_form(session: Session, server: LocalServer) -> None:
    opened = await call(session, action="open", url=server.url("/form"))
    assert not opened.is_error, opened.text
    assert "Form" in opened.text
    snap = await call(session, action="snapshot")
    assert not snap.is_error, snap.text
    text = snap.text
    name_ref = ref_of(text, 'textbox "Name"')
    box_ref = ref_of(text, 'checkbox "Agree"')
    select_ref = ref_of(text, "combobox")
    send_ref = ref_of(text, 'button "Send"')
    assert name_ref.isdigit()
    filled = await call(session, action="act", kind="fill", fields=[{"ref": name_ref, "value": "Ada"},
                                                                    {"ref": f"e{box_ref}", "value": "true"}])
    assert not filled.is_error, filled.text
    assert not (await call(session, action="act", kind="select", ref=select_ref, values=["blue"])).is_error
    clicked = await call(session, action="act", kind="click", ref=send_ref)
    assert not clicked.is_error, clicked.text
    await call(session, action="act", kind="wait", text="who=Ada")
    done = await call(session, action="snapshot", format="aria")
    assert "who=Ada color=blue ok=on" in done.text


async def test_aria_snapshot_refs_and_options(session: Session, server: LocalServer) -> None:
    await call(session, action="navigate", url=server.url("/"))
    aria = await call(session, action="snapshot", format="aria", interactive=True)
    assert '- link "Go to form" [ref=e1]' in aria.text
    assert "Welcome" not in aria.text  # interactive: only what one can act on
    full = await call(session, action="snapshot", format="aria")
    assert 'heading "Welcome" [level=1]' in full.text
    stale = await call(session, action="act", kind="click", ref="e99")
    assert stale.is_error and stale.metadata["error_kind"] == "stale_ref"
    bad = await call(session, action="act", kind="click", ref="#x")
    assert bad.is_error and bad.metadata["error_kind"] == "invalid_ref"


async def test_long_snapshot_is_cut_with_a_ref(session: Session, server: LocalServer) -> None:
    await call(session, action="navigate", url=server.url("/long"))
    snap = await call(session, action="snapshot", maxChars=2000)
    assert "snapshot cut at" in snap.text
    ref = snap.structured["result_ref"]
    assert ref.startswith("tr_")
    kept = session.results.get(ref)
    assert kept is not None and "Item number 799" in kept.text


async def test_screenshot_is_an_image_with_media(session: Session, server: LocalServer) -> None:
    await call(session, action="navigate", url=server.url("/"))
    shot = await call(session, action="screenshot")
    assert not shot.is_error, shot.text
    image = shot.content[0]
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data)[:8] == b"\x89PNG\r\n\x1a\n"
    media = next(line for line in shot.text.splitlines() if line.startswith("MEDIA:"))
    assert Path(media[6:]).is_file()


async def test_pdf(session: Session, server: LocalServer) -> None:
    await call(session, action="navigate", url=server.url("/"))
    pdf = await call(session, action="pdf")
    assert not pdf.is_error, pdf.text
    assert Path(pdf.structured["path"]).read_bytes()[:5] == b"%PDF-"


async def test_dialog_armed_and_unarmed(session: Session, server: LocalServer) -> None:
    await call(session, action="navigate", url=server.url("/dialog"))
    snap = await call(session, action="snapshot")
    ask = ref_of(snap.text, 'button "Ask"')
    clicked = await call(session, action="act", kind="click", ref=ask)
    assert "dismissed" in clicked.text
    assert (await call(session, action="act", kind="evaluate", fn="document.getElementById('out').textContent")
            ).structured["value"] == "no"
    assert not (await call(session, action="dialog", accept=True)).is_error
    clicked = await call(session, action="act", kind="click", ref=ask)
    assert "accepted" in clicked.text
    value = await call(session, action="act", kind="evaluate", fn="document.getElementById('out').textContent")
    assert value.structured["value"] == "yes"


async def test_download_lands_in_the_session_directory(session: Session, server: LocalServer) -> None:
    await call(session, action="navigate", url=server.url("/download"))
    snap = await call(session, action="snapshot")
    ref = ref_of(snap.text, 'link "Get file"')
    await call(session, action="act", kind="click", ref=ref)
    await call(session, action="act", kind="wait", timeMs=500)
    saved = session.directory / "browser-downloads" / "notes.txt"
    assert saved.read_text() == "file body\n"


async def test_upload_follows_the_read_rules(session: Session, server: LocalServer, tmp: Path) -> None:
    await call(session, action="navigate", url=server.url("/upload"))
    denied = await call(session, action="upload", paths=["secret.txt"], element="#f")
    assert denied.is_error and "Read" in denied.text
    done = await call(session, action="upload", paths=["upload-me.txt"], element="#f")
    assert not done.is_error, done.text
    shown = await call(session, action="act", kind="evaluate", fn="document.getElementById('n').textContent")
    assert shown.structured["value"] == "upload-me.txt"


async def test_tabs_focus_close_console(session: Session, server: LocalServer) -> None:
    first = await call(session, action="open", url=server.url("/"))
    second = await call(session, action="open", url=server.url("/form"))
    tabs = await call(session, action="tabs")
    ids = [t["targetId"] for t in tabs.structured["tabs"]]
    assert first.structured["targetId"] in ids and second.structured["targetId"] in ids
    focused = await call(session, action="focus", targetId=first.structured["targetId"])
    assert f"* {first.structured['targetId']}" in focused.text
    await call(session, action="act", kind="evaluate", fn="console.error('boom here')")
    console = await call(session, action="console", level="error")
    assert "boom here" in console.text
    closed = await call(session, action="close", targetId=second.structured["targetId"])
    assert second.structured["targetId"] not in [t["targetId"] for t in closed.structured["tabs"]]
    unknown = await call(session, action="focus", targetId="t999")
    assert unknown.is_error and unknown.metadata["error_kind"] == "unknown_tab"


async def test_refused_schemes(session: Session) -> None:
    for url in ("file:///etc/passwd", "chrome://settings", "javascript:alert(1)"):
        result = await call(session, action="navigate", url=url)
        assert result.is_error, url
        assert result.metadata["error_kind"] == "blocked_scheme", result.text


async def test_private_redirect_and_subresources_are_refused(session: Session, server: LocalServer) -> None:
    redirected = await call(session, action="navigate", url=server.url("/to-private"))
    assert redirected.is_error and redirected.metadata["error_kind"] == "blocked", redirected.text
    await call(session, action="navigate", url=server.url("/private"))
    await call(session, action="act", kind="wait", timeMs=300)
    blocked = await call(session, action="console", level="blocked")
    assert "10.0.0.1" in blocked.text and "private" in blocked.text
    assert "169.254.169.254" in blocked.text


async def test_evaluate_cannot_reach_metadata_or_other_ports(session: Session, server: LocalServer) -> None:
    await call(session, action="navigate", url=server.url("/"))
    fetched = await call(session, action="act", kind="evaluate",
                         fn="fetch('http://169.254.169.254/latest/').then(r => 'got ' + r.status, e => 'failed')")
    assert fetched.structured["value"] in ("failed", "got 403"), fetched.text
    refused = await call(session, action="act", kind="evaluate", fn=WS_JS % "ws://127.0.0.2:8765/")
    assert refused.structured["value"] == "error"
    blocked = await call(session, action="console", level="blocked")
    assert "127.0.0.2:8765" in blocked.text  # loopback too goes through the guard proxy
    assert "169.254.169.254" in blocked.text

    async def echo(ws: Any) -> None:
        async for message in ws:
            await ws.send(f"echo {message}")

    async with serve(echo, "127.0.0.1", 0) as server_ws:
        port = server_ws.sockets[0].getsockname()[1]
        echoed = await call(session, action="act", kind="evaluate", fn=WS_JS % f"ws://127.0.0.1:{port}/")
    assert echoed.structured["value"] == "echo hi"  # the allowed loopback address is tunnelled


async def test_a_deny_rule_blocks_and_an_act_navigation_asks(session: Session, server: LocalServer,
                                                             answers: Answers) -> None:
    denied = await call(session, action="navigate", url="http://denied.test/")
    assert denied.is_error and denied.reason == "denied"
    # a link to another host (localhost is 127.0.0.1 too, but another domain): the act's navigation asks
    port = server.server_address[1]

    async def click_away() -> Any:
        await call(session, action="navigate", url=server.url("/"))
        await call(session, action="act", kind="evaluate",
                   fn=f"document.body.insertAdjacentHTML('beforeend', \"<a href='http://localhost:{port}/echo'>"
                      "away</a>\")")
        snap = await call(session, action="snapshot")
        return await call(session, action="act", kind="click", ref=ref_of(snap.text, 'link "away"'))

    answers.asked.clear()
    answers.answer = False
    refused = await click_away()
    assert answers.asked and answers.asked[-1]["url"].startswith(f"http://localhost:{port}/")
    assert "blocked" in refused.text and "needs permission" in refused.text
    answers.answer = PermissionUpdate(rules=["Browser(domain:localhost)"])
    await click_away()
    await call(session, action="act", kind="wait", text="/echo")
    assert f"http://localhost:{port}/echo" in (await call(session, action="tabs")).text
    assert "Browser(domain:localhost)" in session.session_rules()["allow"]
    answers.asked.clear()
    answers.answer = False
    await click_away()  # "always" was remembered: no second question
    assert answers.asked == []
