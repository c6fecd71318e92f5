"""Config files: formats, scopes, precedence, merging, unknown keys, type errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pegboard import ConfigError, load_config
from pegboard.core.config import ConfigLayer, load_layers


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / ".pegboard").mkdir(parents=True)
    monkeypatch.setenv("PEGBOARD_CONFIG_DIR", str(tmp_path / "user"))
    monkeypatch.setenv("PEGBOARD_MANAGED_CONFIG_DIR", str(tmp_path / "managed"))
    return root


def test_all_three_formats_load(project: Path, tmp_path: Path) -> None:
    write(project / ".pegboard/settings.toml", '[tools]\nprofile = "coding"\n')
    write(project / ".pegboard/settings.local.json5", "{permissions: {allow: ['Read'],},} // json5")
    extra = write(tmp_path / "extra.json", json.dumps({"permissions": {"deny": ["Bash"]}}))
    loaded = load_config(project, [extra])
    assert loaded.config.tools.profile == "coding"
    assert loaded.config.permissions.allow == ["Read"]
    assert loaded.config.permissions.deny == ["Bash"]
    assert [ly.scope for ly in loaded.layers] == ["default", "project", "project-local", "cli"]


def test_scalars_by_precedence_and_rule_lists_merge(project: Path, tmp_path: Path) -> None:
    write(tmp_path / "user/settings.toml", '[tools]\nprofile = "minimal"\n[permissions]\ndeny = ["WebFetch"]\n')
    write(
        project / ".pegboard/settings.json",
        json.dumps({"tools": {"profile": "coding"}, "permissions": {"deny": ["Bash"], "allow": ["Read"]}}),
    )
    write(tmp_path / "managed/settings.json", json.dumps({"permissions": {"defaultMode": "plan", "deny": ["Bash"]}}))
    loaded = load_config(project)
    assert loaded.config.tools.profile == "coding"
    assert loaded.config.permissions.deny == ["WebFetch", "Bash"]
    assert loaded.config.permissions.default_mode == "plan"
    assert loaded.origins["tools"]["profile"].startswith("project:")
    assert loaded.origins["permissions"]["deny"][0].startswith("user:")
    assert loaded.origins["permissions"]["defaultMode"].startswith("managed:")


def test_managed_beats_command_line(project: Path, tmp_path: Path) -> None:
    cli = write(tmp_path / "cli.toml", '[tools]\nprofile = "coding"\n')
    write(tmp_path / "managed/settings.toml", '[tools]\nprofile = "minimal"\n')
    assert load_config(project, [cli]).config.tools.profile == "minimal"


def test_unknown_keys_warn_with_their_path(project: Path) -> None:
    write(
        project / ".pegboard/settings.json",
        json.dumps(
            {
                "theme": "dark",
                "tools": {"elevated": {"enabled": True}},
                "agents": {"list": [{"id": "main", "workspace": "~/w"}]},
            }
        ),
    )
    loaded = load_config(project)
    text = "\n".join(loaded.warnings)
    assert "unknown key 'theme'" in text
    assert "unknown key 'tools.elevated'" in text
    assert "unknown key 'agents.list[0].workspace'" in text


def test_wrong_type_names_file_key_expected_and_found(project: Path) -> None:
    path = write(project / ".pegboard/settings.json", json.dumps({"permissions": {"allow": "Read"}}))
    with pytest.raises(ConfigError) as info:
        load_config(project)
    message = str(info.value)
    assert str(path) in message
    assert "permissions.allow" in message
    assert "valid list" in message and "found string" in message


@pytest.mark.parametrize(
    ("name", "text", "fragment"),
    [
        ("settings.json", "{not json", "cannot parse as JSON"),
        ("settings.toml", "a = = 1", "cannot parse as TOML"),
        ("settings.json", "[1, 2]", "top level must be an object"),
    ],
)
def test_broken_files_are_errors_naming_the_file(project: Path, name: str, text: str, fragment: str) -> None:
    path = write(project / ".pegboard" / name, text)
    with pytest.raises(ConfigError, match=fragment) as info:
        load_config(project)
    assert str(path) in str(info.value)


def test_missing_cli_file_is_an_error(project: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(project, [tmp_path / "nope.toml"])


def test_agents_merge_by_id_across_scopes() -> None:
    loaded = load_layers(
        [
            ConfigLayer("user", {"agents": {"list": [{"id": "a", "tools": {"deny": ["x"]}}, {"id": "b"}]}}),
            ConfigLayer("project", {"agents": {"list": [{"id": "a", "tools": {"profile": "coding"}}]}}),
        ]
    )
    agents = {a.id: a for a in loaded.config.agents.entries}
    assert set(agents) == {"a", "b"}
    assert agents["a"].tools is not None
    assert agents["a"].tools.deny == ["x"] and agents["a"].tools.profile == "coding"


def test_embedded_default_is_the_lowest_layer(project: Path) -> None:
    loaded = load_config(project)
    assert loaded.layers[0].scope == "default"
    assert loaded.config.tools.profile == "full"


def test_lists_of_objects_concatenate_across_scopes_without_duplicates() -> None:
    hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "check.sh"}]}
    other = {"matcher": "Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}
    loaded = load_layers(
        [
            ConfigLayer("user", {"hooks": {"PreToolUse": [hook]}}),
            ConfigLayer("project", {"hooks": {"PreToolUse": [hook, other]}}),
        ]
    )
    assert loaded.data["hooks"]["PreToolUse"] == [hook, other]


def test_permission_switches_are_known_keys() -> None:
    loaded = load_layers(
        [
            ConfigLayer(
                "managed",
                {"permissions": {"disableBypassPermissionsMode": "disable", "allowManagedPermissionRulesOnly": True}},
            ),
        ]
    )
    assert loaded.warnings == []
    assert loaded.config.permissions.disable_bypass_permissions_mode == "disable"
