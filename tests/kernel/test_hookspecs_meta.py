"""Meta-tests: every hook is documented with its exact arguments, and Pegboard really calls it."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import BaseModel

import pegboard_skill
from pegboard import (
    CompletionRequest,
    ConfigLayer,
    Pegboard,
    ToolContext,
    ask_host,
    hookimpl,
    hookspecs,
    request_completion,
    tool,
)
from pegboard.core.plugins import plugin_hookspecs
from pegboard_messaging import collect_channels
from pegboard_web_search.backends import collect_backends
from tests.kernel.toolkit import NoInput, ToolsPlugin, boom, echo, guarded

REPO = Path(__file__).resolve().parents[2]
#: the kernel's contract and the hookspec modules distributions declare (``pegboard.hookspecs``)
SPEC_MODULES = [hookspecs, *plugin_hookspecs()]
SPECS = {name: getattr(module, name) for module in SPEC_MODULES for name in module.__all__}
HOOKS = sorted(SPECS)


def test_all_lists_exactly_the_hookspecs() -> None:
    for module in SPEC_MODULES:
        marked = {n for n, f in vars(module).items() if callable(f) and hasattr(f, "pegboard_spec")}
        assert marked == set(module.__all__), module.__name__


def test_plugins_declare_their_own_hooks_and_the_kernel_names_none_of_them() -> None:
    declared = {name for module in SPEC_MODULES[1:] for name in module.__all__}
    assert {"register_search_backends", "register_skills"} <= declared
    assert not declared & set(hookspecs.__all__)


@pytest.mark.parametrize("name", HOOKS)
def test_hook_has_a_full_docstring(name: str) -> None:
    doc = inspect.getdoc(SPECS[name]) or ""
    assert "Example::" in doc, f"{name} needs an example"
    assert len(doc.splitlines()) >= 5


@pytest.mark.parametrize("name", HOOKS)
def test_hook_is_documented_with_its_exact_arguments(name: str) -> None:
    docs = "\n".join(p.read_text() for p in (REPO / "docs").glob("*.md"))
    args = ", ".join(inspect.signature(SPECS[name]).parameters)
    assert f"### `{name}({args})`" in docs, f"docs/ needs a heading for {name}({args})"


# -- each hook is called: a plugin implementing every hookspec records what Pegboard calls ----


def recording_plugin(calls: list[str]) -> ModuleType:
    """A plugin with one implementation per hookspec, taking exactly the spec's arguments; each
    records its name and answers ``None`` (no opinion), so nothing else changes."""
    plugin = ModuleType("hook_recorder")
    for name in HOOKS:
        params = ", ".join(inspect.signature(SPECS[name]).parameters)
        namespace: dict[str, Any] = {}
        exec(f"def {name}({params}):\n    calls.append({name!r})", {"calls": calls}, namespace)
        setattr(plugin, name, hookimpl(namespace[name]))
    return plugin


class HostInput(BaseModel):
    hook: str = ""


@tool(name="AskHost")
async def ask_host_tool(input: HostInput, ctx: ToolContext) -> str:
    """Ask the host hook named by ``hook`` once, as the host-integrated tools do."""
    await ask_host(ctx, input.hook, request=None)
    return "asked"


@tool(name="Backend")
async def backend_tool(input: NoInput, ctx: ToolContext) -> str:
    """Ask how processes start, as the shell tools do."""
    with contextlib.suppress(Exception):
        await ctx.exec_backend()
    return "asked"


@tool(name="Summarise")
async def summarise_tool(input: NoInput, ctx: ToolContext) -> str:
    """Ask the host's small model, as WebFetch does."""
    return str(await request_completion(ctx, CompletionRequest("Summarise.", "text")))


def _call(pb: Pegboard, name: str, tool_input: dict[str, Any] | None = None) -> None:
    asyncio.run(pb.call(name, tool_input or {}))


async def _session_call(pb: Pegboard) -> None:
    async with pb.session(persist=False) as session:
        await session.call("Echo", {"text": "hi"})


def _commands_from_an_installed_plugin(tmp_path: Path) -> None:
    """``register_commands`` is read from installed plugins: install one (a module and its
    dist-info on ``PYTHONPATH``) and run the command it adds."""
    (tmp_path / "hook_commands.py").write_text(
        "import click\nfrom pegboard import hookimpl\n\n@hookimpl\ndef register_commands(cli):\n"
        "    @cli.command('recorded-hook')\n    def recorded():\n        click.echo('register_commands called')\n",
        encoding="utf-8",
    )
    info = tmp_path / "hook_commands-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hook-commands\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[pegboard]\nhook_commands = hook_commands\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "pegboard", "recorded-hook"], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120)
    assert "register_commands called" in done.stdout, done.stderr


#: what a host or tool does that makes Pegboard call each hook
SCENARIOS: dict[str, Callable[[Pegboard, Path], object]] = {
    "register_tools": lambda pb, _: pb.tools(),
    "register_groups": lambda pb, _: pb.tools(),
    "register_profiles": lambda pb, _: pb.tools(),
    "register_provider_policies": lambda pb, _: pb.tools(),
    "register_permission_families": lambda pb, _: pb.check("Echo", {"text": "x"}),
    "register_config_sections": lambda pb, _: pb.tools(),
    "pegboard_ready": lambda pb, _: pb.tools(),
    "pegboard_close": lambda pb, _: pb.close(),
    "session_store": lambda pb, _: pb.session_store,
    "pre_tool_use": lambda pb, _: _call(pb, "Echo", {"text": "hi"}),
    "check_permission": lambda pb, _: _call(pb, "Echo", {"text": "hi"}),
    "post_tool_use": lambda pb, _: _call(pb, "Echo", {"text": "hi"}),
    "post_tool_use_failure": lambda pb, _: _call(pb, "Boom"),
    "permission_request": lambda pb, _: _call(pb, "Guarded", {"text": "hi"}),
    "request_approval": lambda pb, _: _call(pb, "Guarded", {"text": "hi"}),
    "on_event": lambda pb, _: asyncio.run(_session_call(pb)),
    "session_opened": lambda pb, _: asyncio.run(_session_call(pb)),
    "session_start": lambda pb, _: asyncio.run(pb.fire("session_start", session_id="s1", source="startup")),
    "session_end": lambda pb, _: asyncio.run(pb.fire("session_end", session_id="s1", reason="exit")),
    "exec_backend": lambda pb, _: _call(pb, "Backend"),
    "complete": lambda pb, _: _call(pb, "Summarise"),
    "ask_user": lambda pb, _: _call(pb, "AskHost", {"hook": "ask_user"}),
    "approve_plan": lambda pb, _: _call(pb, "AskHost", {"hook": "approve_plan"}),
    "run_subagent": lambda pb, _: _call(pb, "AskHost", {"hook": "run_subagent"}),
    "deliver_message": lambda pb, _: _call(pb, "AskHost", {"hook": "deliver_message"}),
    "register_search_backends": lambda pb, _: collect_backends(pb),
    "register_skills": lambda pb, _: pegboard_skill.discover(pb),
    "register_channels": lambda pb, _: collect_channels(pb),
}


def test_every_hookspec_has_a_scenario() -> None:
    assert set(SCENARIOS) | {"register_commands"} == set(HOOKS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_hook_is_called_with_its_arguments(name: str, tmp_path: Path) -> None:
    calls: list[str] = []
    tools = ToolsPlugin(echo, boom, guarded, ask_host_tool, backend_tool, summarise_tool)
    pb = Pegboard(  # no store given, so the session_store hook is asked for one
        plugins=[recording_plugin(calls), tools],
        load_entrypoints=False,
        layers=[ConfigLayer("project", {}, path=None, root=tmp_path)],
        cwd=tmp_path,
        env={"HOME": str(tmp_path), "PEGBOARD_DATA_DIR": str(tmp_path / "data")},
    )
    try:
        SCENARIOS[name](pb, tmp_path)
    finally:
        pb.close()
    assert name in calls, f"Pegboard never called {name}; it called {sorted(set(calls))}"


def test_register_commands_is_called_for_an_installed_plugin(tmp_path: Path) -> None:
    _commands_from_an_installed_plugin(tmp_path)
