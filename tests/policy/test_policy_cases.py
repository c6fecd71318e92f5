"""The acceptance cases (tests/cases/policy_cases.json, a copy of the shared cases), loaded as data.

Each case runs twice: through the public ``Pegboard(...).tools(...)`` API with a test plugin
that registers exactly the case's tools, groups, profiles and aliases, and straight through
the pure engine.
"""

from __future__ import annotations

from typing import Any

import pytest

from pegboard.core.policy import UNKNOWN_MARKER, PolicyResult, resolve_policy
from tests.policy.helpers_policy import CASES_FILE, case_catalog, case_data, case_pegboard, config

if not CASES_FILE.is_file():  # pragma: no cover - the copy is part of the repository
    pytest.fail(f"acceptance cases not found at {CASES_FILE}; copy them from the shared cases directory",
                pytrace=False)

CASES = case_data()["cases"]


def _check(case: dict[str, Any], result: PolicyResult) -> None:
    out = result.to_json()
    assert sorted(out["enabled"]) == sorted(case["expect_enabled"]), result.decisions
    assert sorted(d["name"] for d in out["disabled"]) == sorted(case["expect_disabled"])
    for d in out["disabled"]:
        assert d["reason"], d
    mentions = case["expect_warning_mentions"]
    unknown_warnings = [w for w in out["warnings"] if UNKNOWN_MARKER in w]
    if not mentions:
        assert unknown_warnings == [], out["warnings"]
    for entry in mentions:
        assert any(entry in w for w in unknown_warnings), (entry, out["warnings"])


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case_through_pegboard(case: dict[str, Any]) -> None:
    pb = case_pegboard(case)
    result = pb.tools(provider=case["provider"], model=case["model"], agent=case["agent"])
    _check(case, result)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case_through_engine(case: dict[str, Any]) -> None:
    result = resolve_policy(
        case_catalog(case), config(case["config"]),
        provider=case["provider"], model=case["model"], agent=case["agent"],
    )
    _check(case, result)


class _FakeEntryPoint:
    """Stands in for an installed entry point, so the CLI loads the case plugin as it would a real one."""

    def __init__(self, plugin: object) -> None:
        self.name, self.value, self.dist = "policy-case", "tests.policy:CasePlugin", None
        self._plugin = plugin

    def load(self) -> object:
        return self._plugin


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case_through_the_cli(case: dict[str, Any], tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``pegboard tools --json --config F --provider P --model M --agent A``, as the issue's "done when" says."""
    import json

    from click.testing import CliRunner

    from pegboard.core import plugins
    from pegboard.core.cli import cli
    from tests.policy.helpers_policy import CasePlugin

    data = case_data()
    plugin = CasePlugin(case["tools"], data["groups"], data["profiles"], data["aliases"])
    monkeypatch.setattr(plugins, "entry_points", lambda: [_FakeEntryPoint(plugin)])
    config_file = tmp_path / "case.json"
    config_file.write_text(json.dumps(case["config"]))
    args = ["tools", "--json", "--config", str(config_file), "--cwd", str(tmp_path)]
    for option in ("provider", "model", "agent"):
        if case[option] is not None:
            args += [f"--{option}", case[option]]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert set(out) == {"enabled", "disabled", "warnings"}
    assert sorted(out["enabled"]) == sorted(case["expect_enabled"])
    assert sorted(d["name"] for d in out["disabled"]) == sorted(case["expect_disabled"])
    unknown = [w for w in out["warnings"] if UNKNOWN_MARKER in w]
    assert bool(unknown) == bool(case["expect_warning_mentions"])
    for entry in case["expect_warning_mentions"]:
        assert any(entry in w for w in unknown)
