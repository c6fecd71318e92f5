"""``codemode``: one JavaScript/TypeScript program that calls the session's tools.

The model writes the body of an async function; ``tools.<Name>(input)`` calls a tool and
``store`` keeps JSON values for the session (the conversation branch) between programs. The
program runs in Deno with no permissions (see ``pegboard_codemode_runtime``); every tool call
it makes comes back to Pegboard and runs the whole pipeline (policy, rules, hooks, projection)
as a direct call of the same session would. A refused call rejects its promise with the
refusal text. The program itself needs no permission: it can do nothing but call tools.

Optional (off unless an allowlist names it), as in the seed.
"""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, Field

from pegboard import (
    NEUTRAL,
    ConfigSection,
    ConfigSectionRegister,
    SessionKey,
    SystemClock,
    TextBlock,
    ToolContext,
    ToolRegister,
    ToolResult,
    hookimpl,
    redact,
    tool,
)
from pegboard_codemode_declarations import declarations
from pegboard_codemode_deno import deno_binary, deno_missing
from pegboard_codemode_source import find_import

if TYPE_CHECKING:  # the runtime imports asyncio: loaded when a program runs, not when tools are listed
    from pegboard_codemode_runtime import Clock, InnerAnswer, RunOutcome

TOOL_NAME = "codemode"
SETTINGS_KEY = "tools.codemode"
#: the session's branch-local storage
STORE: SessionKey[dict[str, Any]] = SessionKey("pegboard-codemode-store", dict, persist=True, default=dict)
#: how a test replaces the wall clock (``ctx.stash``-free: a key of the session's process state)
CLOCK: SessionKey[Clock] = SessionKey("pegboard-codemode-clock", object)
_SELF = re.compile(r"[^a-z0-9]")


class CodemodeSettings(BaseModel):
    """``tools.codemode``: the runtime's limits."""

    timeoutSeconds: Annotated[float, NEUTRAL] = Field(default=30.0, gt=0, le=3600,
                                                      description="wall time of one program")
    memoryMiB: Annotated[int, NEUTRAL] = Field(default=256, ge=16, le=16384, description="V8 heap cap")
    maxOutputChars: Annotated[int, NEUTRAL] = Field(default=100_000, ge=1_000, description="console output kept")
    maxCalls: Annotated[int, NEUTRAL] = Field(default=1_000, ge=1, description="tool calls one program may make")
    maxStoreChars: Annotated[int, NEUTRAL] = Field(default=1_000_000, ge=1_000,
                                                   description="branch-local storage, as JSON characters")


class CodemodeInput(BaseModel):
    code: str = Field(
        default="",
        description="The body of an async function in JavaScript or TypeScript: call tools as "
        "`await tools.Read({file_path: \"/x\"})`, keep values with `store.set(k, v)`, and `return` the answer.",
    )
    declarations: bool = Field(
        default=False, description="Return the TypeScript declarations of the callable tools instead of running code."
    )


PRELUDE = r"""
const __pb = (() => {
  const enc = new TextEncoder();
  const out = Deno.stdout;
  const write = (frame) => {
    const bytes = enc.encode("\x1e" + JSON.stringify(frame) + "\n");
    let off = 0;
    while (off < bytes.length) off += out.writeSync(bytes.subarray(off));
  };
  const fmt = (args) => args.map((a) => typeof a === "string" ? a : Deno.inspect(a, { depth: 6 })).join(" ");
  for (const level of ["log", "info", "warn", "error", "debug", "trace"]) {
    console[level] = (...args) => write({ t: "log", level, text: fmt(args) });
  }
  const waiting = new Map();
  let nextId = 0;
  let ready;
  const initial = new Promise((resolve) => { ready = resolve; });
  (async () => {
    const dec = new TextDecoder();
    let buf = "";
    const chunk = new Uint8Array(1 << 16);
    for (;;) {
      const n = await Deno.stdin.read(chunk);
      if (n === null) break;
      buf += dec.decode(chunk.subarray(0, n), { stream: true });
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const msg = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        if (msg.t === "init") { ready(msg.store || {}); continue; }
        const w = waiting.get(msg.id);
        if (!w) continue;
        waiting.delete(msg.id);
        if (msg.ok) w.resolve(msg.value);
        else { const e = new Error(msg.error); e.reason = msg.reason; w.reject(e); }
      }
    }
  })();
  const call = (tool, input) => new Promise((resolve, reject) => {
    const id = ++nextId;
    waiting.set(id, { resolve, reject });
    write({ t: "call", id, tool, input: input === undefined ? {} : input });
  });
  const tools = new Proxy({}, {
    get: (_t, name) => typeof name === "string" ? (input) => call(name, input) : undefined,
  });
  return { write, initial, tools };
})();
delete globalThis.Worker;
const __data = new Map(Object.entries(await __pb.initial));
const store = Object.freeze({
  get: (k) => __data.get(String(k)),
  set: (k, v) => { __data.set(String(k), v === undefined ? null : JSON.parse(JSON.stringify(v))); },
  delete: (k) => __data.delete(String(k)),
  keys: () => [...__data.keys()],
});
const tools = __pb.tools;
let __value, __ok = true, __error = "";
try {
  __value = await (async () => {
/*__PROGRAM__*/
  })();
} catch (e) {
  __ok = false;
  __error = e instanceof Error ? (e.stack || String(e)) : String(e);
}
try { JSON.stringify(__value); } catch (e) { __value = String(__value); }
__pb.write({ t: "done", ok: __ok, value: __value === undefined ? null : __value, error: __error,
             store: Object.fromEntries(__data) });
Deno.exit(0);
"""


def module_text(code: str) -> str:
    """The module Deno runs: the prelude around the program."""
    return PRELUDE.replace("/*__PROGRAM__*/", code, 1)


#: the 1-based line of the module where the program's first line is
PROGRAM_LINE = PRELUDE.split("/*__PROGRAM__*/", 1)[0].count("\n") + 1
_LOCATION = re.compile(r"file://\S*?main\.ts:(\d+):(\d+)")
_CODE_FRAME = re.compile(r"^\s*\d*\s*\|")


def program_locations(text: str, lines: int) -> str:
    """Deno's ``file:///tmp/.../main.ts:61:11`` as ``program:1:11`` (no host path, the program's own lines)."""

    def place(m: re.Match[str]) -> str:
        line = int(m.group(1)) - PROGRAM_LINE + 1
        return f"program:{line}:{m.group(2)}" if 1 <= line <= lines else "codemode prelude"

    kept = [line for line in text.splitlines() if not _CODE_FRAME.match(line)]
    return _LOCATION.sub(place, "\n".join(kept))


def _settings(ctx: ToolContext) -> CodemodeSettings:
    if ctx.pegboard is None:
        return CodemodeSettings()
    found: CodemodeSettings = ctx.settings(SETTINGS_KEY)
    return found


def _is_self(name: str) -> bool:
    return _SELF.sub("", name.casefold()) == TOOL_NAME


def _callable_tools(ctx: ToolContext) -> list[tuple[str, str, dict[str, Any]]]:
    found = []
    for t in ctx.enabled_tools():
        if _is_self(t.name):
            continue
        schema = t.input_schema()
        schema.pop("title", None)
        found.append((t.name, t.description, schema))
    return found


def _value_of(result: ToolResult) -> Any:
    """What a call's promise resolves to: the structured value, else the text."""
    if result.structured is not None:
        return result.structured
    texts = [getattr(b, "text", "") for b in result.content if getattr(b, "type", "") == "text"]
    return "\n".join(texts)


async def _inner_call(ctx: ToolContext, log: list[dict[str, Any]], name: str, tool_input: Any) -> InnerAnswer:
    from pegboard_codemode_runtime import InnerAnswer

    if _is_self(name):
        return InnerAnswer(ok=False, reason="invalid_input",
                           error="codemode cannot call codemode: call the tools directly from this program")
    if not isinstance(tool_input, dict):
        return InnerAnswer(ok=False, reason="invalid_input",
                           error=f"tools.{name}(input) takes one object, got {type(tool_input).__name__}")
    number = len(log) + 1
    use_id = f"{ctx.tool_use_id or 'codemode'}.{number}"
    started = time.monotonic()
    session = ctx.session
    pb = ctx.pegboard
    if session is not None and session.selection == ctx.selection and session.cwd == ctx.cwd \
            and session.mode == ctx.mode:
        result = await session.call(name, tool_input, tool_use_id=use_id)
    elif pb is not None:
        result = await pb.call(name, tool_input, tool_use_id=use_id, session_id=ctx.session_id, cwd=ctx.cwd,
                               mode=ctx.mode, additional_dirs=ctx.additional_dirs,
                               approver=session.approver if session is not None else None,
                               **ctx.selection.as_kwargs())
    else:
        return InnerAnswer(ok=False, reason="unavailable", error="codemode needs a context built by Pegboard")
    entry = {"n": number, "tool": name, "is_error": result.is_error, "reason": result.reason,
             "ms": round((time.monotonic() - started) * 1000, 1)}
    log.append(entry)
    ctx.emit("codemode.call", entry)
    if result.is_error:
        texts = [getattr(b, "text", "") for b in result.content if getattr(b, "type", "") == "text"]
        return InnerAnswer(ok=False, error="\n".join(texts) or f"{name} failed", reason=result.reason)
    return InnerAnswer(ok=True, value=_value_of(result))


_ENDINGS = {
    "timeout": ("timeout", "The program did not finish within {limit:g} s and was stopped "
                "(raise tools.codemode.timeoutSeconds, or make it do less per run)."),
    "memory": ("tool_error", "The program ran out of memory ({mib} MiB heap; tools.codemode.memoryMiB) and was "
               "stopped."),
    "calls": ("tool_error", "The program made more than {calls} tool calls (tools.codemode.maxCalls) and was "
              "stopped."),
    "crashed": ("tool_error", "The runtime ended without finishing the program: {stderr}"),
}


def _report(outcome: RunOutcome, settings: CodemodeSettings, log: list[dict[str, Any]], lines: int) -> ToolResult:
    structured = {"status": outcome.status, "value": outcome.value, "output": outcome.output,
                  "output_truncated": outcome.output_truncated, "calls": log,
                  "elapsed_seconds": round(outcome.elapsed, 3)}
    parts = []
    if outcome.output:
        parts.append(outcome.output.rstrip("\n"))
    if outcome.output_truncated:
        parts.append(f"[output cut at {settings.maxOutputChars:,} characters; tools.codemode.maxOutputChars]")
    calls = f"{len(log)} tool call(s)"
    if outcome.status == "ok":
        value = outcome.value if isinstance(outcome.value, str) else json.dumps(outcome.value, ensure_ascii=False)
        parts.append(f"Result ({calls}): {value}")
        return ToolResult.from_text(redact("\n".join(parts)), structured=redact_value(structured))
    if outcome.status == "error":
        parts.append(f"The program threw ({calls}): {program_locations(outcome.error, lines)}")
        return ToolResult.refusal("tool_error", redact("\n".join(parts)), error_kind="program_error",
                                  codemode=redact_value(structured))
    reason, template = _ENDINGS[outcome.status]
    stderr = program_locations(outcome.stderr.strip(), lines).splitlines()[-8:]
    message = template.format(limit=settings.timeoutSeconds, mib=settings.memoryMiB, calls=settings.maxCalls,
                              stderr="\n".join(stderr) or "no message")
    parts.append(f"{message}\n{calls} ran before that.")
    return ToolResult.refusal(reason, redact("\n".join(parts)), error_kind=outcome.status,
                              codemode=redact_value(structured))


def redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    return value


@tool(
    name=TOOL_NAME,
    groups=["pegboard", "codemode"],
    optional=True,
    availability=deno_missing,
    timeout=3600,
    usage="Run one JavaScript/TypeScript program that calls tools as `await tools.Name({...})`; "
    "call with {\"declarations\": true} for their TypeScript types.",
)
async def codemode(input: CodemodeInput, ctx: ToolContext) -> ToolResult:
    """Run raw JavaScript/TypeScript with the session's tools as async functions (`tools.<Name>(input)`)
    and branch-local storage (`store`). Write the body of an async function and `return` the answer;
    console output is kept. No files, network or imports: everything goes through the tools, and
    each call is judged like a direct one."""
    callable_tools = _callable_tools(ctx)
    if input.declarations:
        text = declarations(callable_tools)
        return ToolResult.from_text(text, structured={"declarations": text,
                                                      "tools": [name for name, _, _ in callable_tools]})
    if not input.code.strip():
        return ToolResult.refusal("invalid_input", "code is empty: write the program's body, or pass "
                                  "{\"declarations\": true} to see the callable tools", error_kind="invalid_input")
    at = find_import(input.code)
    if at is not None:
        line = input.code.count("\n", 0, at) + 1
        return ToolResult.refusal(
            "invalid_input",
            f"line {line}: codemode programs cannot import modules (the runtime has no files, network or "
            "packages); call the tools through `tools.<Name>(...)` instead",
            error_kind="import_refused",
        )
    binary = deno_binary()
    if binary is None:
        return ToolResult.refusal("unavailable", deno_missing() or "Deno is missing", error_kind="unavailable")
    from pegboard_codemode_runtime import Limits, run_program

    settings = _settings(ctx)
    limits = Limits(wall_seconds=settings.timeoutSeconds, memory_mib=settings.memoryMiB,
                    output_chars=settings.maxOutputChars, max_calls=settings.maxCalls)
    session = ctx.session
    stored: dict[str, Any] = {}
    clock: Clock | None = None
    if session is not None:
        current: dict[str, Any] = session.state[STORE]
        stored = dict(current)
        clock = session.state.get(CLOCK)
    log: list[dict[str, Any]] = []

    async def call(name: str, tool_input: Any) -> InnerAnswer:
        return await _inner_call(ctx, log, name, tool_input)

    try:
        outcome = await run_program(module_text(input.code), binary=binary, limits=limits, call=call,
                                    store=stored, clock=clock or SystemClock())
    except OSError as exc:
        return ToolResult.refusal("unavailable", f"Deno could not start: {exc}", error_kind="unavailable")
    result = _report(outcome, settings, log, input.code.count("\n") + 1)
    if outcome.store is not None and session is not None:
        size = len(json.dumps(outcome.store, ensure_ascii=False, default=str))
        if size > settings.maxStoreChars:
            note = (f"\n[store not saved: {size:,} characters is over tools.codemode.maxStoreChars "
                    f"({settings.maxStoreChars:,})]")
            result.content.append(TextBlock(text=note))
        elif outcome.status in ("ok", "error"):
            session.state[STORE] = outcome.store
    return result


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(codemode)


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(ConfigSection(SETTINGS_KEY, CodemodeSettings, description="codemode: the runtime's limits"))
