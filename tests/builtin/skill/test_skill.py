"""Skill: discovery, front matter, instructions, trusted allowed-tools, Skill(name) rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import pegboard_bash
import pegboard_skill as skills
import pegboard_write
from pegboard import Pegboard, hookimpl
from pegboard.core.projecttrust import set_trusted
from pegboard.testing import check_tool, isolated_pegboard

DEPLOY = """---
name: deploy
description: Deploy the app to staging
allowed-tools: Write, Bash(echo *)
---
Run the deploy script, then check the health page.
"""


def make_skill(root: Path, name: str, text: str) -> Path:
    directory = root / name
    directory.mkdir(parents=True)
    (directory / "SKILL.md").write_text(text)
    return directory


class PluginSkills:
    def __init__(self, directory: Path, trusted: bool = True) -> None:
        self.directory = directory
        self.trusted = trusted

    @hookimpl
    def register_skills(self, register: Any) -> None:
        register(self.directory, trusted=self.trusted)


def board(tmp_path: Path, *plugins: object, trusted: bool = False, config: dict[str, Any] | None = None) -> Pegboard:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    env = {"PEGBOARD_CONFIG_DIR": str(tmp_path / "user"), "PEGBOARD_DATA_DIR": str(tmp_path / "data")}
    if trusted:
        set_trusted(project, env=env)
    plugs = (skills, pegboard_write, pegboard_bash, *plugins)
    return isolated_pegboard(*plugs, cwd=project, env=env, config=config)


def test_conforms() -> None:
    check_tool(skills.skill_tool, {"skill": "deploy", "args": "now"})


async def test_loads_instructions_and_lists_skills_in_its_description(tmp_path: Path) -> None:
    make_skill(tmp_path / "project/.pegboard/skills", "deploy", DEPLOY)
    make_skill(tmp_path / "user/skills", "notes", "---\ndescription: Take notes\n---\nWrite notes down.\n")
    pb = board(tmp_path, config={"permissions": {"allow": ["Skill"]}})
    tool = pb.tool("Skill")
    assert tool is not None and "- deploy: Deploy the app to staging" in tool.description
    assert "- notes: Take notes" in tool.description
    async with pb.session(persist=False) as s:
        result = await s.call("Skill", {"skill": "notes", "args": "today"})
        missing = await s.call("Skill", {"skill": "nope"})
    assert not result.is_error, result.text
    assert "Write notes down." in result.text and "ARGUMENTS: today" in result.text
    assert result.structured is not None and result.structured["source"] == "user"
    assert missing.is_error and missing.metadata["error_kind"] == "not_found" and "deploy" in missing.text


async def test_trusted_skill_pre_approves_its_allowed_tools_but_deny_still_wins(tmp_path: Path) -> None:
    make_skill(tmp_path / "project/.pegboard/skills", "deploy", DEPLOY)
    config = {"permissions": {"allow": ["Skill(deploy)"], "deny": ["Bash(echo secret*)"]}}
    pb = board(tmp_path, trusted=True, config=config)
    target = tmp_path / "project" / "out.txt"
    async with pb.session(persist=False) as s:
        before = await s.call("Write", {"file_path": str(target), "content": "x"})
        assert before.is_error and not target.exists()
        loaded = await s.call("Skill", {"skill": "deploy"})
        assert loaded.structured is not None and loaded.structured["granted"] == ["Write", "Bash(echo *)"]
        written = await s.call("Write", {"file_path": str(target), "content": "x"})
        assert not written.is_error, written.text
        echoed = await s.call("Bash", {"command": "echo hi"})
        assert not echoed.is_error and "hi" in echoed.text
        denied = await s.call("Bash", {"command": "echo secret"})
        assert denied.is_error and denied.reason == "denied"
        other = await s.call("Bash", {"command": "touch other.txt"})
        assert other.is_error
        skills.end_skill(s, "deploy")
        again = await s.call("Write", {"file_path": str(target), "content": "y"})
        assert again.is_error and target.read_text() == "x"


async def test_untrusted_project_skill_grants_nothing(tmp_path: Path) -> None:
    make_skill(tmp_path / "project/.pegboard/skills", "deploy", DEPLOY)
    pb = board(tmp_path, trusted=False, config={"permissions": {"allow": ["Skill"]}})
    async with pb.session(persist=False) as s:
        loaded = await s.call("Skill", {"skill": "deploy"})
        assert loaded.structured is not None and loaded.structured["granted"] == []
        assert "not granted" in loaded.text
        write = await s.call("Write", {"file_path": str(tmp_path / "project/x"), "content": "x"})
        assert write.is_error


async def test_plugin_skills_and_skill_rules(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    make_skill(extra, "review-pr", "---\nname: review-pr\ndescription: Review\n---\nReview it.\n")
    make_skill(extra, "deploy-prod", "---\ndescription: Prod\n---\nCareful.\n")
    config = {"permissions": {"allow": ["Skill(review-pr *)"], "deny": ["Skill(deploy*)"]}}
    pb = board(tmp_path, PluginSkills(extra), config=config)
    async with pb.session(persist=False) as s:
        ok = await s.call("Skill", {"skill": "review-pr", "args": "42"})
        blocked = await s.call("Skill", {"skill": "deploy-prod"})
    assert not ok.is_error and ok.structured is not None and ok.structured["source"] == "plugin"
    assert blocked.is_error and blocked.reason == "denied"


def test_without_skills_the_tool_is_unavailable_and_bad_skills_warn(tmp_path: Path) -> None:
    make_skill(tmp_path / "project/.pegboard/skills", "broken", "no front matter")
    pb = board(tmp_path)
    disabled = {d.name: d.reason for d in pb.tools().disabled}
    assert "no skills" in disabled["Skill"]
    assert any("broken" in w for w in pb.warnings)


def test_skill_rules_match_the_name_and_its_arguments(tmp_path: Path) -> None:
    from pegboard import ConfigLayer, Pegboard

    rules = {"allow": ["Skill(deploy)", "Skill(review *)"], "deny": ["Skill(dep*-prod)"]}
    pb = Pegboard(cwd=tmp_path, layers=[ConfigLayer("code", {"permissions": rules}, root=tmp_path)])
    decide = {call: pb.check("Skill", dict(call)).decision for call in (
        (("skill", "deploy"),), (("skill", "deploy"), ("args", "x")), (("skill", "review"), ("args", "pr 12")),
        (("skill", "deploy-prod"),), (("skill", "DEPLOY-PROD"),), (("skill", "other"),))}
    assert list(decide.values()) == ["allow", "ask", "allow", "deny", "deny", "ask"]


@given(st.lists(st.from_regex(r"[A-Za-z]{1,6}(\([a-z *]{0,8}\))?", fullmatch=True), min_size=1, max_size=4))
def test_split_list_round_trips(items: list[str]) -> None:
    assert skills.split_list(", ".join(items)) == items


@given(st.text(max_size=200))
def test_parser_never_crashes_on_arbitrary_text(text: str) -> None:
    try:
        meta, body = skills.parse_skill_md(text)
    except skills.SkillFormatError:
        return
    assert isinstance(meta, dict) and isinstance(body, str)
    assert all(isinstance(value, str | list) for value in meta.values())  # a value, or a list of items
    assert body == body.strip()
