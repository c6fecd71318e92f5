"""The real ``pegboard`` command line, run as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def run(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "pegboard", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full_env,
        input=stdin,
        timeout=60,
    )


def run_json(*args: str, **kw: Any) -> Any:
    proc = run(*args, **kw)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_help_lists_commands_without_importing_plugins() -> None:
    proc = run("--help")
    assert proc.returncode == 0
    for name in ("plugins", "tools", "call", "check", "schema", "config", "serve", "mcp"):
        assert name in proc.stdout
    assert "(from pegboard-mcp-server)" in proc.stdout, "declared plugin commands are listed unimported"
    code = (
        "import sys; from pegboard.core.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "mods = [m for m in sys.modules if m.startswith(('pegboard_', 'pydantic', 'pluggy'))]\n"
        "print(mods)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_plugins_json_shape() -> None:
    plugins = run_json("plugins", "--json")
    read = next(p for p in plugins if p["name"] == "read")
    assert read == {
        "name": "read",
        "distribution": "pegboard-read",
        "version": "0.1.0",
        "hooks": ["register_tools"],
        "status": "loaded",
        "error": None,
    }


def test_tools_json_shape(tmp_path: Path) -> None:
    data = run_json("tools", "--json", cwd=tmp_path)
    assert set(data) == {"enabled", "disabled", "warnings"}
    assert "Read" in data["enabled"]
    assert all(set(d) == {"name", "reason"} for d in data["disabled"])


def test_call_read_json_shape(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("alpha\nbeta\n")
    data = run_json("call", "Read", "--input", json.dumps({"file_path": str(target)}), "--json", cwd=tmp_path)
    structured = data.pop("structured")
    assert set(data) == {"is_error", "content", "reason", "metadata", "session"}
    assert data["is_error"] is False and data["reason"] is None and data["session"] is None
    assert data["content"] == [{"type": "text", "text": "     1\talpha\n     2\tbeta"}]
    assert data["metadata"]["permission"]["decision"] == "allow"
    assert structured["content"] == "alpha\nbeta" and structured["total_lines"] == 2


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["call", "Nope", "--input", "{}"], "Unknown tool 'Nope'"),
        (["call", "Read", "--input", '{"file_path": 3}'], "file_path: Input should be a valid string"),
        (["call", "Read", "--input", "{oops"], "--input is not valid JSON"),
        (["schema", "--format", "klingon"], "Invalid value for '--format'"),
        (["config", "validate", "/nonexistent.toml"], "no such config file"),
    ],
)
def test_bad_input_is_a_message_and_nonzero_exit(tmp_path: Path, args: list[str], fragment: str) -> None:
    proc = run(*args, cwd=tmp_path)
    assert proc.returncode != 0
    assert fragment in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


def test_broken_config_file_is_a_message(tmp_path: Path) -> None:
    (tmp_path / ".pegboard").mkdir()
    (tmp_path / ".pegboard" / "settings.json").write_text('{"permissions": {"deny": "Bash"}}')
    proc = run("tools", "--json", cwd=tmp_path)
    assert proc.returncode == 2
    assert "permissions.deny" in proc.stderr and "settings.json" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_call_refuses_ask_without_a_tty(tmp_path: Path) -> None:
    config = tmp_path / "ask.json"
    config.write_text(json.dumps({"permissions": {"ask": ["Read"]}}))
    target = tmp_path / "f.txt"
    target.write_text("x")
    proc = run(
        "call",
        "Read",
        "--input",
        json.dumps({"file_path": str(target)}),
        "--config",
        str(config),
        "--json",
        cwd=tmp_path,
        stdin="",
    )
    data = json.loads(proc.stdout)
    assert proc.returncode == 1 and data["is_error"] and data["reason"] == "not_approved"
    proc = run(
        "call",
        "Read",
        "--input",
        json.dumps({"file_path": str(target)}),
        "--config",
        str(config),
        "--yes",
        "--json",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout


def test_input_from_stdin_and_file(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("x")
    payload = json.dumps({"file_path": str(target)})
    assert run_json("call", "Read", "--input", "-", "--json", stdin=payload, cwd=tmp_path)["is_error"] is False
    (tmp_path / "in.json").write_text(payload)
    assert run_json("call", "Read", "--input", f"@{tmp_path / 'in.json'}", "--json", cwd=tmp_path)["is_error"] is False


def test_schema_formats(tmp_path: Path) -> None:
    anthropic = run_json("schema", "--format", "anthropic", cwd=tmp_path)
    read = next(t for t in anthropic if t["name"] == "Read")
    assert read["input_schema"]["required"] == ["file_path"]
    mcp = run_json("schema", "--format", "mcp", cwd=tmp_path)
    assert next(t for t in mcp if t["name"] == "Read")["annotations"]["readOnlyHint"] is True


def test_config_show_names_the_source(tmp_path: Path) -> None:
    extra = tmp_path / "extra.toml"
    extra.write_text('[tools]\nprofile = "coding"\nsurprise = 1\n')
    data = run_json("config", "show", "--json", "--config", str(extra), cwd=tmp_path)
    assert data["config"]["tools"]["profile"] == "coding"
    assert data["origins"]["tools"]["profile"] == f"cli:{extra}"
    assert any("tools.surprise" in w for w in data["warnings"])
    human = run("config", "show", "--config", str(extra), cwd=tmp_path)
    assert "tools.profile" in human.stdout and f"cli:{extra}" in human.stdout


def test_config_validate(tmp_path: Path) -> None:
    good = tmp_path / "good.json5"
    good.write_text("{tools: {deny: ['Bash']}, other: {}}")
    proc = run("config", "validate", str(good))
    assert proc.returncode == 0 and "valid" in proc.stdout and "unknown key 'other'" in proc.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text('[permissions]\ndefaultMode = "yolo"\n')
    proc = run("config", "validate", str(bad), "--json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["valid"] is False and "permissions.defaultMode" in proc.stdout


def test_plugins_can_be_disabled_by_environment(tmp_path: Path) -> None:
    plugins = run_json("plugins", "--json", env={"PEGBOARD_DISABLE_PLUGINS": "read"})
    assert next(p for p in plugins if p["name"] == "read")["status"] == "blocked"
    tools = run_json("tools", "--json", cwd=tmp_path, env={"PEGBOARD_DISABLE_PLUGINS": "*"})
    assert tools["enabled"] == []


@pytest.fixture(scope="module")
def third_party_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pip install DIR`` of a third-party plugin and of one that fails at import, into a target dir."""
    import shutil

    target = tmp_path_factory.mktemp("site")
    sources = tmp_path_factory.mktemp("sources")
    for name in ("third_party_plugin", "broken_plugin"):
        shutil.copytree(FIXTURES / name, sources / name, ignore=shutil.ignore_patterns("*.egg-info", "build"))
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "--no-deps",
                "--no-build-isolation",
                "--target",
                str(target),
                str(sources / name),
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=300,
        )
    return target


def test_third_party_plugin_appears_and_broken_one_is_reported(third_party_site: Path, tmp_path: Path) -> None:
    env = {"PYTHONPATH": str(third_party_site)}
    plugins = {p["name"]: p for p in run_json("plugins", "--json", env=env)}
    assert plugins["shout"]["distribution"] == "acme-pegboard-shout"
    assert plugins["shout"]["version"] == "1.2.3" and plugins["shout"]["status"] == "loaded"
    assert plugins["broken"]["status"] == "failed"
    assert "acme_broken needs libfoo" in plugins["broken"]["error"]
    assert "Shout" in run_json("tools", "--json", env=env, cwd=tmp_path)["enabled"]
    schema = run_json("schema", "--format", "openai", env=env, cwd=tmp_path)
    assert any(t["function"]["name"] == "Shout" for t in schema)
    result = run_json("call", "shout", "--input", '{"text": "hi"}', "--json", env=env, cwd=tmp_path)
    assert result["content"][0]["text"] == "HI!"
    blocked = run("call", "Shout", "--input", '{"text": "a secret"}', "--json", env=env, cwd=tmp_path)
    assert blocked.returncode == 1 and json.loads(blocked.stdout)["reason"] == "hook_blocked"
    assert run("shout", "hey", env=env).stdout == "HEY!\n"
    assert run("whisper", "HEY", env=env).stdout == "hey...\n"
    human = run("plugins", env=env)
    assert "failed" in human.stdout and "Traceback" not in human.stderr


@pytest.mark.parametrize(("answer", "expect_error"), [("y", False), ("n", True)])
def test_call_asks_on_a_terminal(tmp_path: Path, answer: str, expect_error: bool) -> None:
    import pty
    import select

    config = tmp_path / "ask.json"
    config.write_text(json.dumps({"permissions": {"ask": ["Read"]}}))
    target = tmp_path / "f.txt"
    target.write_text("x")
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pegboard",
            "call",
            "Read",
            "--input",
            json.dumps({"file_path": str(target)}),
            "--config",
            str(config),
            "--json",
        ],
        stdin=slave,
        stderr=slave,
        stdout=subprocess.PIPE,
        cwd=tmp_path,
        text=True,
    )
    os.close(slave)
    seen = b""
    while b"Allow Read" not in seen:
        ready, _, _ = select.select([master], [], [], 30)
        assert ready, f"no prompt on the terminal; saw {seen!r}"
        seen += os.read(master, 1024)
    os.write(master, f"{answer}\n".encode())
    out, _ = proc.communicate(timeout=30)
    os.close(master)
    data = json.loads(out)
    assert data["is_error"] is expect_error
    assert proc.returncode == (1 if expect_error else 0)
    if expect_error:
        assert data["reason"] == "not_approved"


def test_config_validate_reports_malformed_rules_with_position(tmp_path: Path) -> None:
    config = tmp_path / "rules.json"
    config.write_text(json.dumps({"permissions": {"deny": ["Bash(git *)", "Bash(rm"]}}))
    data = run_json("config", "validate", str(config), "--json")
    assert data["valid"] is True
    (warning,) = data["warnings"]
    assert str(config) in warning and "permissions.deny[1]" in warning and "Bash(rm" in warning


def test_always_on_a_terminal_is_remembered_for_the_session(tmp_path: Path) -> None:
    import pty
    import select

    env = {**os.environ, "PEGBOARD_DATA_DIR": str(tmp_path / "data")}
    target = tmp_path / "new.txt"
    args = [sys.executable, "-m", "pegboard", "call", "Write", "--input",
            json.dumps({"file_path": str(target), "content": "hi\n"}), "--session", "remember-me", "--json"]
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, stdin=slave, stderr=slave, stdout=subprocess.PIPE, cwd=tmp_path, text=True, env=env)
    os.close(slave)
    seen = b""
    while b"[a]lways in this session" not in seen:
        ready, _, _ = select.select([master], [], [], 30)
        assert ready, f"no prompt on the terminal; saw {seen!r}"
        seen += os.read(master, 1024)
    assert f"Edit(/{target})".encode() in seen.replace(b"\r\n", b"")
    os.write(master, b"a\n")
    out, _ = proc.communicate(timeout=30)
    os.close(master)
    assert json.loads(out)["is_error"] is False and target.read_text() == "hi\n"
    again = subprocess.run(
        [*args[:6], json.dumps({"file_path": str(target), "content": "again\n"}), *args[7:]],
        capture_output=True, text=True, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, timeout=60,
    )
    data = json.loads(again.stdout)
    assert data["reason"] != "not_approved", data
    other = subprocess.run(
        [*args[:6], json.dumps({"file_path": str(target), "content": "x\n"}), "--session", "fresh", "--json"],
        capture_output=True, text=True, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, timeout=60,
    )
    assert json.loads(other.stdout)["reason"] == "not_approved"
