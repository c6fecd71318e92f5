"""Shared helpers for the policy tests: the acceptance-case file, catalogs and test plugins."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pegboard import Pegboard, Profile, Tool, ToolContext, hookimpl
from pegboard.core.config import ConfigLayer, PegboardConfig
from pegboard.core.policy import PolicyCatalog, PolicyTool
from tests.casefiles import CASES_DIR

REPO_ROOT = Path(__file__).resolve().parents[2]


CASES_FILE = CASES_DIR / "policy_cases.json"


@cache
def case_data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CASES_FILE.read_text(encoding="utf-8"))
    return data


class NoInput(BaseModel):
    pass


async def run_ok(input: NoInput, ctx: ToolContext) -> str:
    return "ok"


def make_tool(name: str, aliases: Iterable[str] = (), **options: Any) -> Tool:
    return Tool(name, f"The {name} test tool.", NoInput, run_ok, aliases=tuple(aliases), **options)


def aliases_for(name: str, aliases: Mapping[str, str]) -> list[str]:
    return sorted(alias for alias, target in aliases.items() if target == name)


class CasePlugin:
    """Registers exactly a case's tools and the case file's groups, profiles and aliases."""

    def __init__(
        self,
        tools: Sequence[str],
        groups: Mapping[str, Sequence[str]],
        profiles: Mapping[str, Sequence[str] | None],
        aliases: Mapping[str, str],
    ) -> None:
        self._tools = list(tools)
        self._groups = dict(groups)
        self._profiles = dict(profiles)
        self._aliases = dict(aliases)

    @hookimpl
    def register_tools(self, register: Any) -> None:
        for name in self._tools:
            register(make_tool(name, aliases_for(name, self._aliases)))

    @hookimpl
    def register_groups(self, register: Any) -> None:
        for name, members in self._groups.items():
            register(name, list(members))

    @hookimpl
    def register_profiles(self, register: Any) -> None:
        for name, allow in self._profiles.items():
            register(Profile(name, allow=allow))


def case_pegboard(case: Mapping[str, Any], data: Mapping[str, Any] | None = None) -> Pegboard:
    data = data or case_data()
    plugin = CasePlugin(case["tools"], data["groups"], data["profiles"], data["aliases"])
    return Pegboard(
        plugins=[plugin], load_entrypoints=False, layers=[ConfigLayer("project", case["config"])]
    )


def case_catalog(case: Mapping[str, Any], data: Mapping[str, Any] | None = None) -> PolicyCatalog:
    data = data or case_data()
    return PolicyCatalog(
        tools=[PolicyTool(name, tuple(aliases_for(name, data["aliases"]))) for name in case["tools"]],
        groups={k: list(v) for k, v in data["groups"].items()},
        profiles=dict(data["profiles"]),
    )


def catalog(
    tools: Iterable[str | PolicyTool],
    groups: Mapping[str, Sequence[str]] | None = None,
    profiles: Mapping[str, Sequence[str] | None] | None = None,
    **kwargs: Any,
) -> PolicyCatalog:
    return PolicyCatalog(
        tools=[t if isinstance(t, PolicyTool) else PolicyTool(t) for t in tools],
        groups=dict(groups or {}),
        profiles=dict(profiles or {}),
        **kwargs,
    )


def config(data: Mapping[str, Any]) -> PegboardConfig:
    return PegboardConfig.model_validate(dict(data))
