"""codemode: programs in Deno calling the session's tools through the whole pipeline."""

from __future__ import annotations

import asyncio
import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import pegboard_codemode as cm
from pegboard import Pegboard, ToolContext, ToolRegister, hookimpl, tool
from pegboard.testing import isolated_pegboard
from pegboard_codemode_deno import deno_binary
from pegboard_codemode_runtime import InnerAnswer, Limits, run_program

pytestmark = pytest.mark.skipif(deno_binary() is None, reason="the deno wheel is not installed")


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        return self.t


class EchoInput(BaseModel):
    text: str = ""


class Tools:
    """An Echo tool and a hook that records every call the pipeline sees."""

    def __init__(self, clock: FakeClock | None = None) -> None:
        self.seen: list[tuple[str, str | None]] = []
        self.clock = clock

        @tool(name="Echo", groups=["demo"])
        async def echo(input: EchoInput, ctx: ToolContext) -> dict[str, Any]:
            """Return the text."""
            if self.clock is not None:
                self.clock.t += 100
            return {"echo": input.text}

        self.echo = echo

    @hookimpl
    def register_tools(self, register: ToolRegister) -> None:
        register(self.echo)

    @hookimpl
    def pre_tool_use(self, call: Any, context: ToolContext) -> None:
        self.seen.append((call.name, context.tool_use_id))


def value(result: Any) -> Any:
    assert result.structured is not None, result.content
    return result.structured["value"]


def board(tmp_path: Path, plug: Tools, **codemode: Any) -> Pegboard:
    config: dict[str, Any] = {"tools": {"alsoAllow": ["codemode"], "codemode": codemode}}
    return isolated_pegboard(cm, plug, cwd=tmp_path, config=config)


async def run(pb: Pegboard, code: str, **kwargs: Any) -> Any:
    async with pb.session(persist=False, **kwargs) as session:
        return await session.call("codemode", {"code": code}, tool_use_id="t1")


def test_a_program_calls_tools_through_the_pipeline(tmp_path: Path) -> None:
    plug = Tools()
    pb = board(tmp_path, plug)
    code = "const a = await tools.Echo({text: 'one'}); const b = await tools.Echo({text: 'two'});" \
           " console.log('got', a.echo); return [a.echo, b.echo];"
    result = asyncio.run(run(pb, code))
    assert not result.is_error, result.content
    assert result.structured["value"] == ["one", "two"]
    assert result.structured["output"] == "got one\n"
    assert [c["tool"] for c in result.structured["calls"]] == ["Echo", "Echo"]
    assert ("Echo", "t1.1") in plug.seen and ("Echo", "t1.2") in plug.seen


def test_a_denied_inner_call_rejects_its_promise(tmp_path: Path) -> None:
    plug = Tools()
    pb = isolated_pegboard(cm, plug, cwd=tmp_path, config={
        "tools": {"alsoAllow": ["codemode"]}, "permissions": {"deny": ["Echo"]}})
    code = "try { await tools.Echo({text: 'x'}); return 'ran'; } catch (e) { return {msg: e.message, r: e.reason}; }"
    result = asyncio.run(run(pb, code))
    assert not result.is_error
    assert result.structured["value"]["r"] == "denied"
    assert "Echo" in result.structured["value"]["msg"]
    uncaught = asyncio.run(run(pb, "await tools.Echo({}); return 1;"))
    assert uncaught.is_error and uncaught.metadata["error_kind"] == "program_error"


def test_invalid_input_and_unknown_tools_are_refusals_not_crashes(tmp_path: Path) -> None:
    pb = board(tmp_path, Tools())
    code = ("const out = [];"
            "for (const f of [() => tools.Echo({text: 5}), () => tools.Nope({}), () => tools.Echo('x'),"
            " () => tools.codemode({code: '1'})]) {"
            " try { await f(); out.push('ok'); } catch (e) { out.push(e.reason); } }"
            " return out;")
    result = asyncio.run(run(pb, code))
    assert result.structured["value"] == ["invalid_input", "unknown_tool", "invalid_input", "invalid_input"]


def test_a_loop_is_cut_at_the_time_limit(tmp_path: Path) -> None:
    pb = board(tmp_path, Tools(), timeoutSeconds=1)
    result = asyncio.run(run(pb, "while (true) {}"))
    assert result.is_error and result.reason == "timeout"
    assert "did not finish within 1 s" in result.content[0].text


def test_the_wall_limit_follows_an_injected_clock(tmp_path: Path) -> None:
    clock = FakeClock()
    plug = Tools(clock)
    pb = board(tmp_path, plug, timeoutSeconds=30)

    async def go() -> Any:
        async with pb.session(persist=False) as session:
            session.state[cm.CLOCK] = clock
            return await session.call("codemode", {
                "code": "await tools.Echo({}); await new Promise(r => setTimeout(r, 20000)); return 1;"})

    started = time.monotonic()
    result = asyncio.run(go())
    assert result.reason == "timeout"
    assert time.monotonic() - started < 10


class Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:
        Recorder.hits.append(self.path)
        self.send_response(200)
        self.send_header("content-type", "application/javascript")
        self.end_headers()
        self.wfile.write(b"export const x = 1;")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    Recorder.hits = []
    httpd = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()


def test_an_http_import_makes_no_request(tmp_path: Path, server: int) -> None:
    pb = board(tmp_path, Tools())
    refused = asyncio.run(run(pb, f"import 'http://127.0.0.1:{server}/x.js';\nreturn 1;"))
    assert refused.is_error and refused.metadata["error_kind"] == "import_refused"
    dynamic = asyncio.run(run(pb, f"const m = await import('http://127.0.0.1:{server}/x.js'); return m.x;"))
    assert dynamic.is_error and dynamic.metadata["error_kind"] == "import_refused"
    # and the runtime itself, given the import with no source check, does not fetch it either
    module = f"import 'http://127.0.0.1:{server}/x.js';\n" + cm.module_text("return 1;")

    async def nothing(name: str, tool_input: Any) -> InnerAnswer:
        return InnerAnswer(ok=True)

    binary = deno_binary()
    assert binary is not None
    outcome = asyncio.run(run_program(module, binary=binary, limits=Limits(wall_seconds=10), call=nothing,
                                      store={}, clock=FakeClock()))
    assert outcome.status == "crashed"
    assert "--no-remote" in outcome.stderr
    fetched = asyncio.run(run_program(cm.module_text(f"return String(await import('http://127.0.0.1:{server}/x.js')"
                                                     ".catch(e => e.message));"),
                                      binary=binary, limits=Limits(wall_seconds=10), call=nothing, store={},
                                      clock=FakeClock()))
    assert fetched.status == "ok" and "--no-remote" in fetched.value
    assert Recorder.hits == []


def test_the_program_has_no_files_network_env_or_eval(tmp_path: Path, server: int) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    pb = board(tmp_path, Tools())
    code = (f"const out = []; for (const f of [() => Deno.readTextFileSync({str(secret)!r}),"
            f" () => Deno.env.get('HOME'), () => eval('1+1'), () => new Function('return 1')(),"
            f" () => fetch('http://127.0.0.1:{server}/f'), () => new Deno.Command('true').outputSync()]) {{"
            " try { const v = await f(); out.push('allowed ' + v); } catch (e) { out.push(e.name); } } return out;")
    result = asyncio.run(run(pb, code))
    assert not result.is_error, result.content
    assert not any(str(v).startswith("allowed") for v in result.structured["value"]), result.structured["value"]
    assert "s3cret" not in result.content[0].text
    assert Recorder.hits == []


def test_store_is_kept_per_session_between_programs(tmp_path: Path) -> None:
    pb = board(tmp_path, Tools())

    async def go() -> tuple[Any, Any, Any]:
        async with pb.session(persist=False) as one:
            await one.call("codemode", {"code": "store.set('n', (store.get('n') ?? 0) + 1); return store.get('n');"})
            second = await one.call("codemode", {"code": "store.set('n', store.get('n') + 1); return store.keys();"})
            again = await one.call("codemode", {"code": "return store.get('n');"})
        async with pb.session(persist=False) as other:
            elsewhere = await other.call("codemode", {"code": "return store.get('n') ?? 'none';"})
        return value(second), value(again), value(elsewhere)

    assert asyncio.run(go()) == (["n"], 2, "none")


def test_output_is_cut_at_its_limit(tmp_path: Path) -> None:
    pb = board(tmp_path, Tools(), maxOutputChars=1000)
    result = asyncio.run(run(pb, "for (let i = 0; i < 100; i++) console.log('x'.repeat(100)); return 'done';"))
    assert not result.is_error
    assert result.structured["output_truncated"] is True
    assert len(result.structured["output"]) == 1000
    assert "tools.codemode.maxOutputChars" in result.content[0].text


def test_the_heap_cap_stops_a_program(tmp_path: Path) -> None:
    pb = board(tmp_path, Tools(), memoryMiB=32)
    code = "const keep = []; while (true) keep.push(new Array(100000).fill(Math.random()));"
    result = asyncio.run(run(pb, code))
    assert result.is_error and result.metadata["error_kind"] == "memory", result.content


def test_declarations_describe_the_callable_tools(tmp_path: Path) -> None:
    pb = board(tmp_path, Tools())

    async def go() -> Any:
        async with pb.session(persist=False) as session:
            return await session.call("codemode", {"declarations": True})

    result = asyncio.run(go())
    text = result.structured["declarations"]
    assert "type EchoInput = {" in text and "text?: string;" in text
    assert "Echo(input: EchoInput): Promise<unknown>;" in text
    assert "declare const store" in text
    assert "codemode" not in result.structured["tools"]


def test_codemode_is_optional(tmp_path: Path) -> None:
    pb = isolated_pegboard(cm, Tools(), cwd=tmp_path)
    assert "codemode" not in [t.name for t in pb.enabled_tools()]


def test_errors_name_the_program_line_and_no_host_path(tmp_path: Path) -> None:
    pb = board(tmp_path, Tools())
    syntax = asyncio.run(run(pb, "const a = 1;\nconst x = ;"))
    assert syntax.is_error and syntax.metadata["error_kind"] == "crashed"
    assert "program:2:11" in syntax.content[0].text and "main.ts" not in syntax.content[0].text
    thrown = asyncio.run(run(pb, "\nnull.x"))
    assert thrown.metadata["error_kind"] == "program_error"
    assert "program:2:6" in thrown.content[0].text and "file://" not in thrown.content[0].text


def test_an_inner_call_that_asks_goes_to_the_sessions_approver(tmp_path: Path) -> None:
    pb = isolated_pegboard(cm, Tools(), cwd=tmp_path, config={
        "tools": {"alsoAllow": ["codemode"]}, "permissions": {"ask": ["Echo(text:secret*)"]}})
    asked: list[str] = []

    def approver(call: Any, decision: Any) -> bool:
        asked.append(call.input["text"])
        return call.input["text"] == "secret-ok"

    code = ("const out = []; for (const t of ['plain', 'secret-ok', 'secret-no']) {"
            " try { out.push((await tools.Echo({text: t})).echo); } catch (e) { out.push(e.reason); } } return out;")
    result = asyncio.run(run(pb, code, approver=approver))
    assert value(result) == ["plain", "secret-ok", "not_approved"]
    assert asked == ["secret-ok", "secret-no"]
    unapproved = asyncio.run(run(pb, "try { await tools.Echo({text: 'secret'}); } catch (e) { return e.message; }"))
    assert "Echo" in value(unapproved)


def test_concurrent_calls_each_get_their_own_answer(tmp_path: Path) -> None:
    plug = Tools()
    pb = board(tmp_path, plug, maxCalls=20)
    code = "const r = await Promise.all([...Array(20).keys()].map(i => tools.Echo({text: String(i)})));" \
           " return r.map(x => x.echo);"
    result = asyncio.run(run(pb, code))
    assert value(result) == [str(i) for i in range(20)]
    assert len(result.structured["calls"]) == 20
    over = asyncio.run(run(pb, "for (let i = 0; i < 25; i++) await tools.Echo({}); return 1;"))
    assert over.is_error and over.metadata["error_kind"] == "calls"
    assert "tools.codemode.maxCalls" in over.content[0].text
