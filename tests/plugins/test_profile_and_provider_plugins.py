"""The profile and provider-policy plugins, each loaded into a Pegboard as the only plugins."""

from __future__ import annotations

import tomllib
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import pegboard_profile_coding
import pegboard_profile_full
import pegboard_profile_messaging
import pegboard_profile_minimal
import pegboard_provider_anthropic
import pegboard_provider_bedrock
import pegboard_provider_foundry
import pegboard_provider_google
import pegboard_provider_openai
import pegboard_provider_vertex
from pegboard import Pegboard, Tool, ToolContext, hookimpl
from pegboard.core.config import ConfigLayer
from pegboard.core.install_hints import no_tools_hint

REPO = Path(__file__).resolve().parents[2]
PROFILE_PLUGINS = [pegboard_profile_minimal, pegboard_profile_coding, pegboard_profile_messaging,
                   pegboard_profile_full]
PROVIDER_PLUGINS = [pegboard_provider_openai, pegboard_provider_anthropic, pegboard_provider_google,
                    pegboard_provider_bedrock, pegboard_provider_vertex, pegboard_provider_foundry]


class _In(BaseModel):
    path: str | None = None


async def _run(input: _In, ctx: ToolContext) -> str:
    return "ok"


# Fuxi Code's tool names plus a few of OpenClaw's, with the groups they declare
TOOL_GROUPS: dict[str, tuple[str, ...]] = {
    "Read": ("fs",), "Write": ("fs",), "Edit": ("fs",), "Glob": ("fs",), "Grep": ("fs",),
    "Bash": ("runtime",), "Monitor": ("runtime",), "WebFetch": ("web",), "WebSearch": ("web",),
    "Agent": ("sessions",), "SessionStatus": ("sessions",), "SessionsList": ("sessions",),
    "MemorySearch": ("memory",), "message": ("messaging",), "PushNotification": (), "RemoteTrigger": (),
    "ScheduleWakeup": (), "SendUserFile": (), "Artifact": (), "ShareOnboardingGuide": (), "ApplyPatch": ("fs",),
    "TaskCreate": ("tasks",), "cron": ("automation",), "CronCreate": ("automation",),
}


class SeedTools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        for name, groups in TOOL_GROUPS.items():
            register(Tool(name, f"The {name} tool.", _In, _run, groups=(*groups, "pegboard")))


def board(*plugins: object, config: dict[str, Any] | None = None) -> Pegboard:
    return Pegboard(plugins=list(plugins), load_entrypoints=False, layers=[ConfigLayer("project", config or {})])


# --------------------------------------------------------------------------- packaging


@pytest.mark.parametrize("directory", sorted(p.name for p in (REPO / "plugins").glob("p*-*")
                                             if p.name.startswith(("profile-", "provider-"))))
def test_distribution_metadata(directory: str) -> None:
    project = tomllib.loads((REPO / "plugins" / directory / "pyproject.toml").read_text())
    kind, name = directory.split("-", 1)
    module = f"pegboard_{kind}_{name}"
    assert project["project"]["name"] == f"pegboard-{directory}"
    assert project["project"]["version"] == "0.1.0"
    assert project["project"]["requires-python"] == ">=3.11"
    deps = project["project"]["dependencies"]
    assert deps[0] == "pegboard" and all(d.startswith("pegboard-provider-") for d in deps[1:])
    assert project["project"]["entry-points"]["pegboard"] == {directory: module}
    assert project["tool"]["setuptools"]["py-modules"] == [module]
    assert project["build-system"]["build-backend"] == "setuptools.build_meta"
    assert (REPO / "plugins" / directory / f"{module}.py").is_file()


def test_entry_points_are_installed() -> None:
    names = {ep.name: ep.value for ep in entry_points(group="pegboard")}
    for module in [*PROFILE_PLUGINS, *PROVIDER_PLUGINS]:
        directory = module.__name__.removeprefix("pegboard_").replace("_", "-", 1)
        assert names.get(directory) == module.__name__


# --------------------------------------------------------------------------- profiles


def test_profiles_are_the_seed_lists() -> None:
    pb = board(*PROFILE_PLUGINS)
    profiles = {name: p.allow for name, p in pb.registry.profiles.items()}
    assert profiles == {
        "minimal": ("session_status",),
        "coding": ("group:fs", "group:runtime", "group:sessions", "group:memory", "image", "cron",
                   "tool_result_read"),
        "messaging": (
            "group:messaging",
            "sessions_list",
            "sessions_history",
            "sessions_send",
            "session_status",
            "tool_result_read",
        ),
        "full": None,
    }
    assert all(p.description for p in pb.registry.profiles.values())


def test_profiles_with_no_tools_installed_are_not_an_error() -> None:
    pb = board(*PROFILE_PLUGINS)
    assert all(info.status == "loaded" for info in pb.plugins)
    for name in ("minimal", "coding", "messaging", "full"):
        result = pb.tools(profile=name)
        assert result.enabled == [] and result.errors == []
        assert result.warnings == [no_tools_hint()]  # only that no tool is installed, none about the profile


@pytest.mark.parametrize(("profile", "expected"), [
    ("minimal", {"SessionStatus"}),
    ("coding", {"Read", "Write", "Edit", "Glob", "Grep", "ApplyPatch", "Bash", "Monitor", "Agent",
                "SessionStatus", "SessionsList", "MemorySearch", "cron"}),
    ("messaging", {"message", "SessionStatus", "SessionsList"}),
    ("full", set(TOOL_GROUPS)),
])
def test_profiles_against_claude_code_style_tools(profile: str, expected: set[str]) -> None:
    pb = board(SeedTools(), *PROFILE_PLUGINS, config={"tools": {"profile": profile}})
    result = pb.tools()
    assert set(result.enabled) == expected
    assert result.warnings == []


def test_group_pegboard_is_every_builtin_tool() -> None:
    pb = board(SeedTools(), config={"tools": {"allow": ["group:pegboard"], "deny": ["group:fs"]}})
    assert set(pb.tools().enabled) == set(TOOL_GROUPS) - {n for n, g in TOOL_GROUPS.items() if "fs" in g}


# --------------------------------------------------------------------------- provider policies


@pytest.mark.parametrize(("provider", "name"), [("bedrock", "bedrock"), ("amazon-bedrock", "bedrock"),
                                                ("vertex", "vertex"), ("foundry", "foundry"),
                                                ("azure-foundry", "foundry")])
def test_platform_policies_remove_the_seed_tools_with_reasons(provider: str, name: str) -> None:
    pb = board(SeedTools(), *PROVIDER_PLUGINS)
    result = pb.tools(provider=provider, model="claude-sonnet-4")
    removed = {d.name: d for d in result.disabled}
    for tool in ("PushNotification", "RemoteTrigger", "ScheduleWakeup", "SendUserFile", "Monitor", "Artifact",
                 "ShareOnboardingGuide"):
        assert tool in removed, tool
        assert removed[tool].step == "provider-policy"
        assert f"provider policy {name!r}" in removed[tool].reason
    assert "Anthropic-hosted infrastructure" in removed["PushNotification"].reason
    assert "fixed schedule" in removed["ScheduleWakeup"].reason
    assert ("WebSearch" in removed) == (name == "bedrock")
    assert "ApplyPatch" in removed and "only available on openai" in removed["ApplyPatch"].reason
    assert {"Read", "Bash", "WebFetch"} <= set(result.enabled)


def test_vertex_web_search_needs_a_fuxi_4_model() -> None:
    pb = board(SeedTools(), pegboard_provider_vertex)
    old = pb.tools(provider="vertex", model="claude-3-5-sonnet@20240620")
    assert "WebSearch" not in old.enabled
    assert "Fuxi 4" in next(d.reason for d in old.disabled if d.name == "WebSearch")
    assert "WebSearch" in pb.tools(provider="vertex", model="claude-sonnet-4@20250514").enabled


def test_openai_keeps_apply_patch_and_anthropic_removes_nothing() -> None:
    pb = board(SeedTools(), *PROVIDER_PLUGINS)
    assert set(pb.tools(provider="openai", model="gpt-5").enabled) == set(TOOL_GROUPS)
    assert set(pb.tools(provider="anthropic", model="claude-sonnet-4").enabled) == set(TOOL_GROUPS) - {"ApplyPatch"}
    assert set(pb.tools().enabled) == set(TOOL_GROUPS)  # no provider: provider policies remove nothing


def test_schema_command_applies_the_transforms() -> None:
    pb = board(SeedTools(), *PROVIDER_PLUGINS)
    gemini = pb.schema("gemini", provider="google")
    assert all("additionalProperties" not in d["parameters"] for d in gemini)
    assert gemini[0]["parameters"]["properties"]["path"] == {"type": "string", "title": "Path", "nullable": True}
    openai = pb.schema("openai", provider="openai", model="gpt-5")
    assert {d["function"]["name"] for d in openai} == set(TOOL_GROUPS)
    assert all(d["function"]["strict"] is True for d in openai)
    assert all(d["function"]["parameters"]["required"] == ["path"] for d in openai)
