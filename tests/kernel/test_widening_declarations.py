"""Every config key declares its widening direction, and the untrusted-project filter follows
the declarations: the kernel's keys, every installed plugin's sections, and keys nobody declared."""

from __future__ import annotations

import json
import os
from importlib.metadata import entry_points
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ConfigDict

from pegboard import NARROWS, NEUTRAL, ConfigSection, Direction, Pegboard, Widens, hookimpl
from pegboard.core.config import ConfigLayer
from pegboard.core.sections import UNDECLARED, kernel_declarations, only_narrowing

HINT = "ignored until you trust this project (pegboard trust)"


def every_plugin(tmp_path: Path) -> Pegboard:
    """A Pegboard with every installed plugin (entry points), in an empty directory."""
    env = {"HOME": str(tmp_path / "home"), "PATH": os.environ.get("PATH", "")}
    return Pegboard(cwd=tmp_path, env=env)


def test_every_key_of_every_section_declares_its_direction(tmp_path: Path) -> None:
    pb = every_plugin(tmp_path)
    installed = {ep.name for ep in entry_points(group="pegboard")}
    loaded = {p.name for p in pb.plugins if p.status == "loaded"}
    assert installed <= loaded, f"plugins that did not load, so their sections went unchecked: {installed - loaded}"
    assert len(pb.registry.config_sections) >= 15
    missing = [f"kernel config: key {key!r} declares no widening direction (pegboard/core/config.py)"
               for key, marker in kernel_declarations().items() if marker is None]
    for section in pb.registry.config_sections.values():
        missing += [
            f"section {section.key!r} of plugin {section.owner!r}: key {key!r} declares no widening direction; "
            f"annotate its field with Widens.when_true/when_false/when_set(why), NARROWS or NEUTRAL"
            for key, marker in section.declarations().items() if marker is None
        ]
    assert missing == [], "\n".join(missing)


def test_the_kernel_declares_its_widening_keys() -> None:
    widening = {key: m.direction for key, m in kernel_declarations().items() if m is not None and m.widening}
    assert widening == {
        "permissions.allow": Direction.WHEN_SET,
        "permissions.defaultMode": Direction.WHEN_SET,
        "permissions.additionalDirectories": Direction.WHEN_SET,
        "plugins.disabled": Direction.WHEN_SET,
        "sessions.store": Direction.WHEN_SET,
    }


def test_directions_say_which_values_widen() -> None:
    on = Widens.when_true("lets commands skip the sandbox")
    off = Widens.when_false("turns the sandbox off")
    mode = Widens.when_set("asks less", unless=("default", "plan"))
    assert (on.reason(True), on.reason(False), on.reason("yes"), on.reason(None)) == (on.why, None, on.why, None)
    assert (off.reason(False), off.reason(True), off.reason(0)) == (off.why, None, off.why)
    assert (mode.reason("bypassPermissions"), mode.reason("plan"), mode.reason("default")) == (mode.why, None, None)
    assert NARROWS.reason(["x"]) is None and NEUTRAL.reason(5) is None
    with pytest.raises(ValueError, match="say why the key widens"):
        Widens.when_set("")


def test_the_old_widening_mapping_is_refused_with_the_way_to_declare() -> None:
    class Settings(BaseModel):
        url: str = ""

    with pytest.raises(ValueError, match=r"'tools\.x'.*declare each key on its field.*Widens\.when_set"):
        ConfigSection("tools.x", Settings, widening={"url": "sends data there"})


class Loose(BaseModel):
    """A third-party section that forgot to declare a key, and lets unknown keys through."""

    model_config = ConfigDict(extra="allow")

    endpoint: Annotated[str | None, Widens.when_set("sends call data to this endpoint")] = None
    retries: Annotated[int, NEUTRAL] = 3
    mirror: str | None = None


class LoosePlugin:
    @hookimpl
    def register_config_sections(self, register: Any) -> None:
        register(ConfigSection("tools.loose", Loose, description="a careless plugin"))


def project(tmp_path: Path, settings: dict[str, Any]) -> Path:
    root = tmp_path / "repo"
    (root / ".pegboard").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".pegboard" / "settings.json").write_text(json.dumps(settings))
    return root


def board(root: Path, *, trusted: bool, plugins: list[object] | None = None) -> Pegboard:
    env = {"HOME": str(root.parent / "home"), "PATH": os.environ.get("PATH", "")}
    if trusted:
        env["PEGBOARD_TRUST_PROJECT"] = "1"
    return Pegboard(cwd=root, env=env, plugins=plugins or [], load_entrypoints=plugins is None)


def test_an_undeclared_key_or_one_no_field_declares_counts_as_widening(tmp_path: Path) -> None:
    settings = {"tools": {"loose": {"endpoint": "https://x.example", "retries": 5, "mirror": "https://m.example",
                                    "backdoor": "https://b.example"}}}
    root = project(tmp_path, settings)
    pb = board(root, trusted=False, plugins=[LoosePlugin()])
    assert pb.settings("tools.loose").model_dump() == {"endpoint": None, "retries": 5, "mirror": None}
    notices = [w for w in pb.warnings if HINT in w]
    assert len(notices) == 3, notices
    assert any("tools.loose.mirror" in n and UNDECLARED in n for n in notices)
    assert any("tools.loose.backdoor" in n and "no field of its section declares it" in n for n in notices)
    assert not any("unknown key" in w for w in pb.warnings), pb.warnings
    trusted = board(root, trusted=True, plugins=[LoosePlugin()])
    assert trusted.settings("tools.loose").mirror == "https://m.example"
    assert any("unknown key 'tools.loose.backdoor'" in w for w in trusted.warnings)


def test_apply_patch_workspace_only_false_from_an_untrusted_project_is_ignored(tmp_path: Path) -> None:
    root = project(tmp_path, {"tools": {"exec": {"timeoutSec": 5, "applyPatch": {"enabled": True,
                                                                                 "workspaceOnly": False}}}})
    untrusted = board(root, trusted=False)
    assert untrusted.settings("tools.exec.applyPatch").model_dump() == {
        "enabled": True, "workspaceOnly": True, "allModels": False}
    ignored = [w for w in untrusted.warnings if HINT in w]
    assert ignored == [f"{root}/.pegboard/settings.json: tools.exec.applyPatch.workspaceOnly = false {HINT}: "
                       "lets ApplyPatch write outside the working directories"]
    assert not any("unknown key" in w for w in untrusted.warnings), untrusted.warnings
    assert untrusted.settings("tools.exec").timeoutSec == 5
    outside = tmp_path / "outside.txt"
    patch = f"*** Begin Patch\n*** Add File: {outside}\n+x\n*** End Patch"
    refused = untrusted.call_sync("ApplyPatch", {"input": patch}, mode="bypassPermissions")
    assert refused.is_error and not outside.exists(), refused.text
    trusted = board(root, trusted=True)
    assert trusted.settings("tools.exec.applyPatch").workspaceOnly is False
    assert not [w for w in trusted.warnings if HINT in w]


def test_a_declared_key_is_reported_once_in_every_spelling() -> None:
    layer = ConfigLayer("project", {"permissions": {"default_mode": "acceptEdits", "defaultMode": "plan"},
                                    "plugins": {"disabled": ["command-hooks"]}}, trusted=False)
    kept, notices = only_narrowing([layer])
    assert kept[0].data == {"permissions": {"defaultMode": "plan"}, "plugins": {}}
    assert [n.split(": ", 1)[1].split(" = ")[0] for n in notices] == ["permissions.default_mode", "plugins.disabled"]
