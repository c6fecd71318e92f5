"""Config files change while a Pegboard runs: the watcher puts each change in force for the
next call, reports widening changes with their file, and never falls open on a broken file."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel

from pegboard import NARROWS, ConfigSection, ConfigWatcher, Pegboard, ToolContext, Widens, hookimpl, tool
from pegboard.core.config import ConfigLayer
from pegboard.core.configwatch import fingerprint, narrowing_keys, widening_changes
from pegboard.core.sections import widening_table
from pegboard.trust import set_trusted, trust_file
from tests.kernel.toolkit import ALL_TOOLS, ToolsPlugin


def project(tmp_path: Path, settings: dict[str, Any] | None = None) -> Path:
    root = tmp_path / "repo"
    (root / ".pegboard").mkdir(parents=True)
    (root / ".git").mkdir()
    if settings is not None:
        write(root / ".pegboard" / "settings.json", settings)
    return root


def write(path: Path, data: dict[str, Any] | str) -> None:
    """Write a config file so that its fingerprint changes even within one clock tick."""
    before = fingerprint(path)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    after = fingerprint(path)
    if before is not None and after is not None and after[:2] == before[:2]:
        os.utime(path, ns=(before[0] + 1_000_000, before[0] + 1_000_000))


def environment(root: Path, *, trusted: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PEGBOARD_TRUST_PROJECT"}
    env["HOME"] = str(root.parent / "home")
    if trusted:
        env["PEGBOARD_TRUST_PROJECT"] = "1"
    return env


def board(root: Path, *, trusted: bool = True, plugins: tuple[object, ...] = ()) -> Pegboard:
    env = environment(root, trusted=trusted)
    return Pegboard(cwd=root, env=env, plugins=[ToolsPlugin(*ALL_TOOLS), *plugins], load_entrypoints=False)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_a_deny_added_then_removed_applies_to_the_next_call(tmp_path: Path) -> None:
    root = project(tmp_path, {"permissions": {"allow": ["Guarded"]}})
    pb = board(root)
    watcher = ConfigWatcher(pb)
    assert watcher.poll() is None, "the first poll finds the config the Pegboard loaded"
    settings = root / ".pegboard" / "settings.json"
    async with pb.session(persist=False) as session:
        assert not (await session.call("Guarded", {"text": "a"})).is_error
        version = pb.tool_set_version
        write(settings, {"permissions": {"allow": ["Guarded"], "deny": ["Guarded"]}})
        change = watcher.poll()
        assert change is not None and change.applied == (settings,) and change.widened == ()
        assert pb.tool_set_version > version, "a host learns that its clients' tool lists may have changed"
        refused = await session.call("Guarded", {"text": "a"})
        assert refused.is_error and refused.reason == "denied" and str(settings) in refused.text
        assert not (await session.call("Echo", {"text": "abc"})).is_error
        write(settings, {"permissions": {"allow": ["Guarded"]}})
        change = watcher.poll()
        assert change is not None
        assert change.widened == (f'{settings}: permissions.deny no longer holds "Guarded"',)
        assert not (await session.call("Guarded", {"text": "a"})).is_error
    assert watcher.poll() is None


async def test_a_bare_name_deny_takes_the_tool_out_of_the_list(tmp_path: Path) -> None:
    root = project(tmp_path)
    pb = board(root)
    watcher = ConfigWatcher(pb)
    assert "Echo" in pb.tools().enabled
    write(root / ".pegboard" / "settings.json", {"tools": {"deny": ["Echo"]}})
    assert watcher.poll() is not None
    assert "Echo" not in pb.tools().enabled
    assert (await pb.call("Echo", {"text": "a"})).is_error
    (root / ".pegboard" / "settings.json").unlink()
    change = watcher.poll()
    assert change is not None and any('tools.deny no longer holds "Echo"' in w for w in change.widened)
    assert "Echo" in pb.tools().enabled


def test_a_file_created_later_is_read(tmp_path: Path) -> None:
    root = project(tmp_path)
    pb = board(root)
    watcher = ConfigWatcher(pb)
    assert watcher.poll() is None
    local = root / ".pegboard" / "settings.local.toml"
    write(local, '[permissions]\ndeny = ["Boom"]\n')
    change = watcher.poll()
    assert change is not None and change.applied == (local,)
    assert pb.check("Boom", {}).decision == "deny"
    assert [ly.scope for ly in pb.layers] == ["default", "project-local"]


async def test_a_file_that_stops_parsing_keeps_its_last_good_rules(tmp_path: Path) -> None:
    root = project(tmp_path, {"permissions": {"deny": ["Boom"]}})
    settings = root / ".pegboard" / "settings.json"
    pb = board(root)
    watcher = ConfigWatcher(pb)
    version = pb.tool_set_version
    write(settings, '{"permissions": {"deny": ["Boom", "Echo"')  # half written
    change = watcher.poll()
    assert change is not None and change.applied == ()
    assert len(change.problems) == 1
    assert str(settings) in change.problems[0] and "cannot parse as JSON" in change.problems[0]
    assert "stays in force" in change.problems[0]
    assert pb.check("Boom", {}).decision == "deny", "a broken file never falls open"
    assert pb.tool_set_version == version
    assert watcher.poll() is None, "the problem is reported once"
    write(settings, {"permissions": {"deny": ["Boom", "Echo"]}})
    change = watcher.poll()
    assert change is not None and change.applied == (settings,) and change.problems == ()
    assert pb.check("Echo", {"text": "a"}).decision == "deny"


def test_a_wrong_type_keeps_the_last_good_layer_and_names_file_and_key(tmp_path: Path) -> None:
    root = project(tmp_path, {"permissions": {"deny": ["Boom"]}})
    settings = root / ".pegboard" / "settings.json"
    pb = board(root)
    watcher = ConfigWatcher(pb)
    write(settings, {"permissions": {"deny": "Boom"}})
    change = watcher.poll()
    assert change is not None and len(change.problems) == 1
    assert f"{settings}: key 'permissions.deny': expected a valid list" in change.problems[0]
    assert pb.check("Boom", {}).decision == "deny"
    assert watcher.poll() is None


def test_an_emptied_file_is_held_for_one_poll(tmp_path: Path) -> None:
    root = project(tmp_path)
    settings = root / ".pegboard" / "settings.toml"
    write(settings, '[permissions]\ndeny = ["Boom"]\n')
    pb = board(root)
    watcher = ConfigWatcher(pb)
    write(settings, "")  # an editor that truncates before it writes
    assert watcher.poll() is None and pb.check("Boom", {}).decision == "deny"
    write(settings, '[permissions]\ndeny = ["Boom", "Echo"]\n')
    assert watcher.poll() is not None and pb.check("Echo", {"text": "a"}).decision == "deny"
    write(settings, "")
    assert watcher.poll() is None
    change = watcher.poll()  # still empty one poll later: the user emptied it
    assert change is not None and change.applied == (settings,)
    assert pb.check("Boom", {}).decision != "deny"


def test_widening_changes_are_reported_with_their_file(tmp_path: Path) -> None:
    before = {"permissions": {"deny": ["Boom"], "ask": ["Echo"], "disableBypassPermissionsMode": "disable"}}
    root = project(tmp_path, before)
    settings = root / ".pegboard" / "settings.json"
    pb = board(root)
    watcher = ConfigWatcher(pb)
    write(
        settings,
        {
            "permissions": {
                "allow": ["Bash(git *)"],
                "defaultMode": "acceptEdits",
                "additionalDirectories": [str(tmp_path)],
            },
            "tools": {"alsoAllow": ["Picture"]},
        },
    )
    change = watcher.poll()
    assert change is not None
    assert all(w.startswith(f"{settings}: ") for w in change.widened)
    details = {w.removeprefix(f"{settings}: ").split(":")[0] for w in change.widened}
    assert details == {
        'permissions.deny no longer holds "Boom"',
        'permissions.ask no longer holds "Echo"',
        'permissions.allow gained "Bash(git *)"',
        'permissions.defaultMode = "acceptEdits"',
        f"permissions.additionalDirectories gained {json.dumps(str(tmp_path))}",
        'permissions.disableBypassPermissionsMode was "disable", now unset',
    }, "the tool policy only picks what is offered: it is not reported"
    assert pb.config.permissions.default_mode == "acceptEdits"
    write(settings, {"permissions": {"defaultMode": "plan", "deny": ["Boom"]}})
    change = watcher.poll()
    assert change is not None and change.widened == (), "narrowing is not reported as widening"


def test_an_untrusted_projects_widening_keys_stay_refused(tmp_path: Path) -> None:
    root = project(tmp_path, {})
    settings = root / ".pegboard" / "settings.json"
    env = environment(root, trusted=False)
    pb = Pegboard(cwd=root, env=env, plugins=[ToolsPlugin(*ALL_TOOLS)], load_entrypoints=False)
    watcher = ConfigWatcher(pb)
    write(settings, {"permissions": {"allow": ["Guarded"], "deny": ["Echo"]}})
    change = watcher.poll()
    assert change is not None and change.widened == ()
    assert change.notices == (
        f'{settings}: permissions.allow = ["Guarded"] ignored until you trust this project (pegboard trust): '
        "allow rules let calls run without asking",
    )
    assert pb.check("Guarded", {"text": "a"}).decision == "ask"
    assert pb.check("Echo", {"text": "a"}).decision == "deny"
    set_trusted(root, env=env)  # the user trusts the project while the server runs
    change = watcher.poll()
    assert change is not None and change.applied == (trust_file(env),)
    reason = "allow rules let calls run without asking"
    assert change.widened == (f'{settings}: permissions.allow gained "Guarded": {reason}',)
    assert pb.check("Guarded", {"text": "a"}).decision == "allow"


class Strict(BaseModel):
    limit: int = 1
    blocked: Annotated[list[str], NARROWS] = []
    checked: Annotated[bool, Widens.when_false("turns the check off")] = True


class StrictPlugin:
    @hookimpl
    def register_config_sections(self, register: Any) -> None:
        register(ConfigSection("tools.strict", Strict, description="a section with a typed key"))


def test_one_broken_file_does_not_hold_back_another(tmp_path: Path) -> None:
    root = project(tmp_path, {"tools": {"strict": {"limit": 2}}})
    settings = root / ".pegboard" / "settings.json"
    local = root / ".pegboard" / "settings.local.json"
    pb = board(root, plugins=(StrictPlugin(),))
    watcher = ConfigWatcher(pb)
    write(settings, {"tools": {"strict": {"limit": "many"}}, "permissions": {"deny": ["Boom"]}})
    write(local, {"permissions": {"deny": ["Echo"]}})
    change = watcher.poll()
    assert change is not None and change.applied == (local,)
    assert len(change.problems) == 1 and str(settings) in change.problems[0]
    assert "tools.strict.limit" in change.problems[0]
    assert pb.settings("tools.strict").limit == 2, "the broken file's last good content stays"
    assert pb.check("Echo", {"text": "a"}).decision == "deny"
    assert pb.check("Boom", {}).decision != "deny"
    assert watcher.poll() is None
    write(settings, {"tools": {"strict": {"limit": 3}}, "permissions": {"deny": ["Boom"]}})
    change = watcher.poll()
    assert change is not None and change.applied == (settings,)
    assert pb.settings("tools.strict").limit == 3 and pb.check("Boom", {}).decision == "deny"


def test_check_polls_once_per_interval_of_its_clock(tmp_path: Path) -> None:
    root = project(tmp_path)
    pb = board(root)
    clock = Clock()
    watcher = ConfigWatcher(pb, interval=5.0, clock=clock)
    write(root / ".pegboard" / "settings.json", {"permissions": {"deny": ["Boom"]}})
    clock.now = 4.9
    assert watcher.check() is None and pb.check("Boom", {}).decision != "deny"
    clock.now = 5.0
    assert watcher.check() is not None and pb.check("Boom", {}).decision == "deny"


class Gate:
    opened: asyncio.Event | None = None
    seen: list[Any] = []


class GateInput(BaseModel):
    text: str = ""


@tool(name="Gate")
async def gate(input: GateInput, ctx: ToolContext) -> str:
    """Wait until the test opens the gate."""
    assert Gate.opened is not None
    await Gate.opened.wait()
    Gate.seen.append(ctx.config)
    return "through"


class GatePlugin:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(gate)


async def test_a_running_call_finishes_under_the_config_it_started_with(tmp_path: Path) -> None:
    root = project(tmp_path, {"permissions": {"allow": ["Gate"]}})
    pb = board(root, plugins=(GatePlugin(),))
    watcher = ConfigWatcher(pb)
    Gate.opened, Gate.seen = asyncio.Event(), []
    started = pb._loaded_config
    running = asyncio.ensure_future(pb.call("Gate", {}))
    await asyncio.sleep(0.01)
    write(root / ".pegboard" / "settings.json", {"permissions": {"deny": ["Gate"]}})
    assert watcher.poll() is not None
    Gate.opened.set()
    assert (await running).text == "through" and Gate.seen == [started]
    assert (await pb.call("Gate", {})).reason == "denied"


def test_config_given_in_code_is_not_watched(tmp_path: Path) -> None:
    layers = [ConfigLayer("code", {})]
    pb = Pegboard(layers=layers, cwd=tmp_path, plugins=[ToolsPlugin(*ALL_TOOLS)], load_entrypoints=False)
    watcher = ConfigWatcher(pb)
    assert not watcher.watching and watcher.poll() is None


def test_a_cli_config_file_that_goes_away_keeps_its_rules(tmp_path: Path) -> None:
    root = project(tmp_path)
    extra = tmp_path / "extra.json"
    write(extra, {"permissions": {"deny": ["Boom"]}})
    pb = Pegboard(
        cwd=root, env=environment(root), config_files=[extra], plugins=[ToolsPlugin(*ALL_TOOLS)], load_entrypoints=False
    )
    watcher = ConfigWatcher(pb)
    extra.unlink()
    change = watcher.poll()
    assert change is not None and change.problems == (
        f"{extra}: no such config file (the last content of this file that loaded stays in force)",
    )
    assert pb.check("Boom", {}).decision == "deny"


def test_a_plugins_declared_directions_decide_what_widens() -> None:
    sections = [ConfigSection("tools.strict", Strict, description="a section with a typed key")]
    assert "tools.strict.blocked" in narrowing_keys(sections) and "permissions.deny" in narrowing_keys(sections)
    old = {"tools": {"strict": {"blocked": ["a", "b"], "checked": True}}}
    new = {"tools": {"strict": {"blocked": ["b", "c"], "checked": False}}}
    changes = widening_changes(old, new, widening_table(sections), narrowing_keys(sections))
    assert changes == ['tools.strict.blocked no longer holds "a"', "tools.strict.checked = false: turns the check off"]
    assert widening_changes(new, old, widening_table(sections), narrowing_keys(sections)) == [
        'tools.strict.blocked no longer holds "c"'
    ]
