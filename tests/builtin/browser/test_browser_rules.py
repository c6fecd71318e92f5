"""Browser(domain:...) and Browser(evaluate) rules, snapshot refs and the refused schemes: no engine needed."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import pegboard_browser
from pegboard import Pegboard
from pegboard.testing import isolated_pegboard
from pegboard_browser.engine import scheme_refusal
from pegboard_browser.snapshot import parse_ref, render
from tests.builtin.browser.site import FamilyPlugin

labels = st.from_regex(r"[a-z][a-z0-9]{0,10}", fullmatch=True)


def rules_board(tmp: Path, **rules: list[str]) -> Pegboard:
    return isolated_pegboard(pegboard_browser, FamilyPlugin(), config={"permissions": rules}, cwd=tmp)


def test_domain_rules_judge_navigations(tmp_path: Path) -> None:
    pb = rules_board(tmp_path, allow=["Browser(domain:*.example.com)"], deny=["Browser(domain:bad.example.com)"],
                     ask=["Browser(domain:docs.example.com)"])
    assert pb.check("browser", {"action": "open", "url": "https://www.example.com/"}).decision == "allow"
    assert pb.check("browser", {"action": "navigate", "url": "https://bad.example.com/x"}).decision == "deny"
    assert pb.check("browser", {"action": "navigate", "url": "https://docs.example.com/"}).decision == "ask"
    assert pb.check("browser", {"action": "navigate", "url": "https://example.org/"}).decision == "ask"
    # actions that do not navigate need no permission; their navigations are judged inside the tool
    assert pb.check("browser", {"action": "act", "kind": "click", "ref": "3"}).decision == "allow"


def test_evaluate_asks_unless_a_rule_allows_it(tmp_path: Path) -> None:
    call = {"action": "act", "kind": "evaluate", "fn": "document.title"}
    assert rules_board(tmp_path).check("browser", call).decision == "ask"
    assert rules_board(tmp_path, allow=["Browser(evaluate)"]).check("browser", call).decision == "allow"
    assert rules_board(tmp_path, deny=["Browser(evaluate)"]).check("browser", call).decision == "deny"


def test_a_misspelt_rule_never_widens(tmp_path: Path) -> None:
    pb = rules_board(tmp_path, allow=["Browser(domian:example.com)", "Browser(example.com)"])
    assert pb.check("browser", {"action": "open", "url": "https://example.com/"}).decision == "ask"


@given(sub=labels, other=labels)
def test_wildcard_domains_match_only_below_the_domain(sub: str, other: str) -> None:
    pb = rules_board(Path("."), allow=["Browser(domain:*.example.com)"])
    assert pb.check("browser", {"action": "open", "url": f"https://{sub}.example.com/"}).decision == "allow"
    decision = pb.check("browser", {"action": "open", "url": f"https://{sub}.example{other}.com/"}).decision
    assert decision == "ask"


@given(st.integers(min_value=0, max_value=9_999_999))
def test_refs_of_both_formats_name_the_same_element(n: int) -> None:
    assert parse_ref(str(n)) == parse_ref(f"e{n}") == n


@given(st.text(max_size=20))
def test_anything_else_is_not_a_ref(text: str) -> None:
    stripped = text.strip()
    is_ref = stripped.removeprefix("e").isascii() and stripped.removeprefix("e").isdigit() and \
        0 < len(stripped.removeprefix("e")) <= 7
    assert (parse_ref(text) is not None) == is_ref


def test_render_formats() -> None:
    items = [{"depth": 0, "role": "button", "name": "Send", "ref": 4},
             {"depth": 1, "role": "text", "name": "hello"}]
    assert render(items, "ai") == '- button "Send" [4]\n  - text: hello'
    assert render(items, "aria").startswith('- button "Send" [ref=e4]')


@given(st.sampled_from(["file:///etc/passwd", "FILE:/x", "chrome://settings", "javascript:alert(1)",
                        " JavaScript:void(0)", "view-source:https://x", "about:config", "data:text/html,hi",
                        "ftp://x/"]))
def test_schemes_other_than_http_are_refused(url: str) -> None:
    assert scheme_refusal(url) is not None


def test_http_and_blank_are_opened() -> None:
    assert scheme_refusal("https://example.com/") is None
    assert scheme_refusal("http://127.0.0.1:8000/") is None
    assert scheme_refusal("about:blank") is None


def test_the_engine_command_says_what_it_found_or_why_not(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    pegboard_cmd = Path(sys.executable).with_name("pegboard")
    config = tmp_path / "pegboard.json"
    config.write_text(json.dumps({"browser": {"executablePath": str(tmp_path / "no-chromium")}}))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PEGBOARD_DATA_DIR": str(tmp_path / "data")}
    out = subprocess.run([str(pegboard_cmd), "browser", "engine", "--json", "--config", str(config)],
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    info = json.loads(out.stdout)
    assert info["available"] is False and "executablePath" in info["reason"]
    explain = subprocess.run([str(pegboard_cmd), "tools", "--explain", "--config", str(config)],
                             capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    line = next(line for line in explain.stdout.splitlines() if " browser " in f" {line} ")
    assert "executablePath" in line and "disabled" in line
