"""Profile membership of the state tools: minimal is exactly session_status; coding and messaging
include tool_result_read."""

from __future__ import annotations

from pathlib import Path

import pegboard_memory
import pegboard_profile_coding
import pegboard_profile_messaging
import pegboard_profile_minimal
import pegboard_session_status
import pegboard_tasks
import pegboard_tool_result_read
from pegboard.testing import isolated_pegboard


def enabled(tmp_path: Path, profile: str) -> set[str]:
    pb = isolated_pegboard(
        pegboard_profile_minimal, pegboard_profile_coding, pegboard_profile_messaging,
        pegboard_session_status, pegboard_tasks, pegboard_tool_result_read, pegboard_memory,
        cwd=tmp_path, env={"PEGBOARD_DATA_DIR": str(tmp_path)},
    )
    return set(pb.tools(profile=profile).enabled)


def test_minimal_is_exactly_session_status(tmp_path: Path) -> None:
    assert enabled(tmp_path, "minimal") == {"session_status"}


def test_coding_and_messaging(tmp_path: Path) -> None:
    coding = {"session_status", "memory", "memory_search", "memory_get", "tool_result_read"}
    assert enabled(tmp_path, "coding") == coding
    assert enabled(tmp_path, "messaging") == {"session_status", "tool_result_read"}
