"""``when_configured`` hooks and ``enabled_by`` tools: what the config must set for a plugin to
be needed is data, so a plugin the config does not name stays unimported, and one that a new
config names is imported then."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pegboard import ConfigLayer, Pegboard, hookimpl, when_configured
from pegboard.core import plugins
from pegboard.core.declarations import declare, read_declaration, render
from pegboard.core.entrypoints import EntryPoint
from pegboard.testing import isolated_pegboard

PLUGIN = """
    from pegboard import PermissionDecision, hookimpl, when_configured

    READY = []

    @hookimpl
    @when_configured("acme")
    def pegboard_ready(pegboard):
        READY.append(pegboard)

    @hookimpl
    @when_configured("acme.strict", "acme_strict")
    def check_permission(call, context):
        if call.name == "Probe":
            return PermissionDecision(decision="deny", reason="acme says no")
        return None

    @hookimpl
    def register_tools(register):
        from pydantic import BaseModel
        from pegboard import tool

        class ProbeInput(BaseModel):
            pass

        @tool(name="Probe")
        async def probe(input: ProbeInput, ctx) -> str:
            "Answer ok."
            return "ok"

        register(probe)
"""


@pytest.fixture
def waiting_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A plugin module on the path, with its declaration written, found as an entry point."""
    name = f"waits_demo_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(PLUGIN))
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / f"{name}.pegboard.json").write_text(render(declare(name)))
    del sys.modules[name]  # declaring imported it; each Pegboard below starts without it
    monkeypatch.setattr(plugins, "entry_points", lambda: [EntryPoint("waits-demo", name, "pegboard")])
    return name


def board(tmp_path: Path, config: dict[str, Any]) -> Pegboard:
    return Pegboard(layers=[ConfigLayer("project", config, path=None, root=tmp_path)], cwd=tmp_path, env={})


def test_the_declaration_records_the_keys(waiting_plugin: str) -> None:
    declaration = read_declaration(waiting_plugin)
    assert declaration is not None
    assert declaration.when_configured == {
        "pegboard_ready": ("acme",), "check_permission": ("acme.strict", "acme_strict"),
    }
    assert not declaration.lazy  # with every key set it must load at start-up
    assert declaration.lazy_under(lambda key: False)


def test_a_plugin_the_config_does_not_name_stays_unimported(tmp_path: Path, waiting_plugin: str) -> None:
    pb = board(tmp_path, {})
    assert waiting_plugin not in sys.modules
    assert "Probe" in pb.tools().enabled
    assert waiting_plugin not in sys.modules  # listed from the declaration
    assert pb.call_sync("Probe", {}).text == "ok"  # the marked check_permission is not active
    assert not sys.modules[waiting_plugin].READY


def test_a_named_plugin_loads_at_start_up_and_its_hooks_run(tmp_path: Path, waiting_plugin: str) -> None:
    pb = board(tmp_path, {"acme": {"strict": True}})
    module = sys.modules[waiting_plugin]
    assert [pb] == module.READY
    result = pb.call_sync("Probe", {})
    assert result.is_error and "acme says no" in result.text


def test_a_key_spelled_by_field_name_counts(tmp_path: Path, waiting_plugin: str) -> None:
    pb = board(tmp_path, {"acme_strict": 1})
    result = pb.call_sync("Probe", {})
    assert result.is_error and "acme says no" in result.text


def test_a_reloaded_config_that_names_the_plugin_imports_it(tmp_path: Path, waiting_plugin: str) -> None:
    pb = board(tmp_path, {})
    assert pb.call_sync("Probe", {}).text == "ok"
    pb.reload_config([ConfigLayer("project", {"acme": {"strict": True}}, path=None, root=tmp_path)])
    module = sys.modules[waiting_plugin]
    assert [pb] == module.READY
    result = pb.call_sync("Probe", {})
    assert result.is_error and "acme says no" in result.text


def test_a_marked_hook_of_a_plugin_given_in_code_follows_the_config(tmp_path: Path) -> None:
    class Strict:
        @hookimpl
        @when_configured("acme")
        def check_permission(self, call: Any, context: Any) -> Any:
            from pegboard import PermissionDecision

            return PermissionDecision(decision="deny", reason="acme says no")

    import pegboard_read

    assert not isolated_pegboard(pegboard_read, Strict(), cwd=tmp_path).call_sync(
        "Read", {"file_path": str(tmp_path / "x")}).text.count("acme says no")
    named = isolated_pegboard(pegboard_read, Strict(), cwd=tmp_path, config={"acme": {}})
    assert "acme says no" in named.call_sync("Read", {"file_path": str(tmp_path / "x")}).text


def test_when_configured_needs_keys() -> None:
    with pytest.raises(ValueError, match="dotted config keys"):
        when_configured()
    with pytest.raises(ValueError, match="dotted config keys"):
        when_configured("")


@pytest.mark.parametrize(
    ("config", "optional"),
    [
        ({}, True),
        ({"tools": {"exec": {"applyPatch": {"enabled": True}}}}, False),
        ({"tools": {"exec": {"apply_patch": {"enabled": True}}}}, False),
        ({"tools": {"exec": {"applyPatch": {"enabled": False}}}}, True),
    ],
)
def test_enabled_by_switches_an_optional_tool_on(tmp_path: Path, config: dict[str, Any], optional: bool) -> None:
    import pegboard_apply_patch

    pb = isolated_pegboard(pegboard_apply_patch, cwd=tmp_path, config=config)
    assert ("ApplyPatch" in pb.tools().enabled) is not optional


def test_a_reloaded_config_activates_a_waiting_call_time_hook(tmp_path: Path, waiting_plugin: str) -> None:
    pb = board(tmp_path, {"acme": {}})  # pegboard_ready runs; check_permission still waits
    assert pb.call_sync("Probe", {}).text == "ok"
    pb.reload_config([ConfigLayer("project", {"acme": {"strict": True}}, path=None, root=tmp_path)])
    result = pb.call_sync("Probe", {})
    assert result.is_error and "acme says no" in result.text
    assert [pb] == sys.modules[waiting_plugin].READY  # not run twice


def test_a_reloaded_config_queues_the_hook_of_a_plugin_not_imported_yet(tmp_path: Path, waiting_plugin: str) -> None:
    pb = board(tmp_path, {})
    assert "Probe" in pb.tools().enabled and waiting_plugin not in sys.modules
    pb.reload_config([ConfigLayer("project", {"acme_strict": True}, path=None, root=tmp_path)])
    result = pb.call_sync("Probe", {})
    assert result.is_error and "acme says no" in result.text
    assert not sys.modules[waiting_plugin].READY  # its own key is still unset
