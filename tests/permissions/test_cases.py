"""The shared acceptance cases, driven through ``Pegboard.check`` and through ``pegboard check``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pegboard.core.app import Pegboard
from pegboard.core.config import ConfigLayer
from tests.permissions.support import HOME, permission_cases

CASES = permission_cases()


def _accepted(case: dict[str, Any], decision: str) -> bool:
    if decision == case["expect"]:
        return True
    return case["expect"] == "deny" and bool(case.get("tolerate_ask")) and decision == "ask"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case_through_python_api(case: dict[str, Any]) -> None:
    """With the built-in tools installed: their own declarations (family, subjects) give the answers."""
    cwd = Path(case["cwd"])
    layer = ConfigLayer("project", {"permissions": case["rules"]}, path=cwd / ".pegboard/settings.json", root=cwd)
    pb = Pegboard(layers=[layer], cwd=cwd, env={"HOME": str(HOME), "PATH": "/usr/bin:/bin"})
    try:
        assert pb.tool(case["tool"]) is not None or case["tool"].startswith("mcp__"), "a built-in tool"
        d = pb.check(case["tool"], case["input"], mode=case["mode"], additional_dirs=case["additional_dirs"],
                     home=HOME)
    finally:
        pb.close()
    assert _accepted(case, d.decision), f"{case['id']}: expected {case['expect']}, got {d.decision}: {d.reason}"
    if d.decision != "allow" or d.rule is not None:
        assert d.reason
    if d.rule is not None:
        assert d.source == str(cwd / ".pegboard/settings.json")


def test_every_case_never_allows_what_it_should_not() -> None:
    for case in CASES:
        cwd = Path(case["cwd"])
        layer = ConfigLayer("project", {"permissions": case["rules"]}, path=cwd / ".pegboard/settings.json",
                            root=cwd)
        pb = Pegboard(plugins=[], load_entrypoints=False, layers=[layer], cwd=cwd)
        d = pb.check(case["tool"], case["input"], mode=case["mode"], additional_dirs=case["additional_dirs"],
                     home=HOME)
        if case["expect"] != "allow":
            assert d.decision != "allow", case["id"]


@pytest.mark.parametrize("case", [c for c in CASES if not c["cwd"].startswith("C:")][:12],
                         ids=lambda c: c["id"])
def test_case_through_cli(case: dict[str, Any], tmp_path: Path) -> None:
    from pegboard.core.cli import cli

    config = tmp_path / "settings.json"
    config.write_text(json.dumps({"permissions": case["rules"]}), "utf-8")
    args = ["check", case["tool"], "--input", json.dumps(case["input"]), "--config", str(config),
            "--cwd", case["cwd"], "--mode", case["mode"], "--home", str(HOME), "--json"]
    for d in case["additional_dirs"]:
        args += ["--add-dir", d]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert set(out) == {"decision", "rule", "source", "reason"}
    assert _accepted(case, out["decision"]), f"{case['id']}: {out}"


def test_an_engine_asked_again_gives_the_same_answers() -> None:
    """Engines keep some decisions (input-blind tools, reads by resolved path): every case
    asked twice of one engine, in order and then again, gets its first answer."""
    from pegboard.core.permissions.engine import PermissionEngine
    from tests.permissions.support import installed_tools

    find = installed_tools()
    for case in CASES:
        cwd = Path(case["cwd"])
        layer = ConfigLayer("project", {"permissions": case["rules"]}, path=cwd / ".pegboard/settings.json", root=cwd)
        e = PermissionEngine([layer], cwd=cwd, additional_dirs=[Path(d) for d in case["additional_dirs"]],
                             mode=case["mode"], home=HOME, tools=find)
        tool = find(case["tool"])
        first = e.check(case["tool"], case["input"], tool)
        assert e.check(case["tool"], case["input"], tool) == first, case["id"]
        assert e.check(case["tool"], dict(case["input"]), tool) == first, case["id"]
