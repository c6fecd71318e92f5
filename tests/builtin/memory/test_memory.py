"""memory: entries of USER.md / MEMORY.md, the secret refusal, two writers; memory_get."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pegboard_memory
from pegboard import Pegboard
from pegboard.testing import check_tool, isolated_pegboard

SECRET_ENV = "a-long-secret-value-0123456789"


def board(tmp_path: Path, config: dict[str, Any] | None = None) -> Pegboard:
    env = {"PEGBOARD_DATA_DIR": str(tmp_path / "data"), "HOME": str(tmp_path / "home"), "DB_PASSWORD": SECRET_ENV}
    return isolated_pegboard(pegboard_memory, cwd=tmp_path / "proj", env=env, config=config)


def test_conform() -> None:
    check_tool(pegboard_memory.memory, {"action": "add", "content": "Uses tabs"})
    check_tool(pegboard_memory.memory_search, {"query": "tabs"})
    check_tool(pegboard_memory.memory_get, {"path": "MEMORY.md", "from": 2, "lines": 3})


async def test_round_trip_in_both_scopes(tmp_path: Path) -> None:
    pb = board(tmp_path)
    add = await pb.call("memory", {"action": "add", "content": "The project uses  tabs,\nnot spaces"})
    assert not add.is_error and add.structured is not None
    assert add.structured["entries"] == ["The project uses tabs, not spaces"]
    project_file = tmp_path / "proj" / ".pegboard" / "memory" / "MEMORY.md"
    assert project_file.read_text() == "# MEMORY\n\n- The project uses tabs, not spaces\n"
    again = await pb.call("memory", {"action": "add", "content": "The project uses tabs, not spaces"})
    assert "nothing changed" in again.text
    await pb.call("memory", {"action": "add", "content": "Tests run with pytest -n 2"})
    await pb.call("memory", {"action": "replace", "old_text": "tabs", "content": "The project uses 4 spaces"})
    await pb.call("memory", {"action": "remove", "old_text": "pytest"})
    assert pegboard_memory.entries(project_file.read_text()) == ["The project uses 4 spaces"]
    user = await pb.call("memory", {"action": "add", "target": "user", "scope": "user", "content": "Prefers German"})
    assert not user.is_error
    assert (tmp_path / "data" / "memory" / "USER.md").read_text().endswith("- Prefers German\n")
    got = await pb.call("memory_get", {"path": "USER.md", "scope": "user"})
    assert got.text == "# USER\n\n- Prefers German"
    ranged = await pb.call("memory_get", {"path": ".pegboard/memory/MEMORY.md", "from": 3, "lines": 1})
    assert ranged.text == "- The project uses 4 spaces" and ranged.structured is not None
    assert ranged.structured["totalLines"] == 3
    assert not any(p.name.endswith(".tmp") for p in project_file.parent.iterdir())


async def test_refusals(tmp_path: Path) -> None:
    pb = board(tmp_path, config={"tools": {"memory": {"maxChars": 200}}})
    await pb.call("memory", {"action": "add", "content": "alpha one"})
    await pb.call("memory", {"action": "add", "content": "alpha two"})
    ambiguous = await pb.call("memory", {"action": "remove", "old_text": "alpha"})
    assert ambiguous.metadata["error_kind"] == "ambiguous" and "alpha two" in ambiguous.text
    missing = await pb.call("memory", {"action": "replace", "old_text": "beta", "content": "x"})
    assert missing.metadata["error_kind"] == "no_match"
    no_content = await pb.call("memory", {"action": "add"})
    assert no_content.is_error and "needs content" in no_content.text
    too_long = await pb.call("memory", {"action": "add", "content": "z" * 300})
    assert too_long.metadata["error_kind"] == "too_long"
    outside = await pb.call("memory_get", {"path": str(tmp_path / "proj" / "secrets.txt")})
    assert outside.metadata["error_kind"] == "not_memory"


async def test_secrets_are_refused(tmp_path: Path) -> None:
    pb = board(tmp_path)
    for text in (
        "the key is sk-ant-" + "x1y2z3" * 5,
        "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----",
        f"db password {SECRET_ENV}",
        "token ghp_" + "b" * 36,
    ):
        refused = await pb.call("memory", {"action": "add", "content": text})
        assert refused.is_error and refused.metadata["error_kind"] == "secret_refused", text
        assert "looks like a secret" in refused.text and SECRET_ENV not in refused.text
    assert not (tmp_path / "proj" / ".pegboard" / "memory" / "MEMORY.md").exists()


WRITER = textwrap.dedent(
    """
    import sys
    import pegboard_memory
    from pegboard.testing import isolated_pegboard

    pb = isolated_pegboard(pegboard_memory, cwd=sys.argv[1], env={"PEGBOARD_DATA_DIR": sys.argv[2]})
    for i in range(20):
        r = pb.call_sync("memory", {"action": "add", "content": f"{sys.argv[3]} fact {i}"})
        assert not r.is_error, r.text
    """
)


def test_two_processes_lose_no_entry(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path / "proj"), str(tmp_path / "data"), name])
        for name in ("left", "right")
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    text = (tmp_path / "proj" / ".pegboard" / "memory" / "MEMORY.md").read_text()
    expected = sorted(f"{n} fact {i}" for n in ("left", "right") for i in range(20))
    assert sorted(pegboard_memory.entries(text)) == expected
