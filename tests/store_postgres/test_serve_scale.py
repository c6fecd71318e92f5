"""``pegboard serve --http`` at scale: workers on one port and replicas on two ports share sessions
through one PostgreSQL; a client whose requests land on different processes sees one session."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import cast

import mcp_types as types
import psycopg
import pytest
from mcp import Client

from tests.mcp.conftest import http_serving, serve_env
from tests.store_postgres.pgserver import PgServer

SUPPORT = Path(__file__).parent / "support"


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


@pytest.fixture
def scale_env(pg_server: PgServer, tmp_path: Path) -> dict[str, str]:
    """Every served process: the store is postgres (user config), the DSN from the environment."""
    user_dir = Path(os.environ["PEGBOARD_CONFIG_DIR"])
    user_dir.mkdir(parents=True, exist_ok=True)
    (user_dir / "settings.json").write_text(json.dumps({"sessions": {"store": "postgres"}}), encoding="utf-8")
    base = serve_env()
    return {
        "PYTHONPATH": os.pathsep.join([str(SUPPORT), base["PYTHONPATH"]]),
        "PEGBOARD_POSTGRES_DSN": pg_server.fresh_database(str(tmp_path)),
        "PEGBOARD_DATA_DIR": str(tmp_path / "data"),
    }


def args(cwd: Path, *extra: str) -> list[str]:
    return ["serve", "--plugin", "pegboard_pg_servetools", "--cwd", str(cwd), *extra]


async def count(url: str, name: str) -> tuple[int, int]:
    """One call on a fresh connection (a new client), naming the session: (count, pid)."""
    meta = cast(types.RequestParamsMeta, {"io.pegboard/session": name})
    async with Client(url, mode="auto") as client:
        result = await client.call_tool("CountHere", {}, meta=meta)
    assert not result.is_error, text_of(result)
    value, pid = text_of(result).split()
    return int(value), int(pid)


async def test_requests_of_one_session_hit_different_workers(scale_env: dict[str, str], tmp_path: Path) -> None:
    with http_serving(args(tmp_path, "--workers", "2"), tmp_path, env=scale_env) as server:
        seen: list[tuple[int, int]] = []
        for _ in range(40):
            seen.append(await count(server.url, "conversation-workers-0001"))
            if len({pid for _, pid in seen}) >= 2 and len(seen) >= 6:
                break
        other = await count(server.url, "conversation-workers-0002")
    assert [n for n, _ in seen] == list(range(1, len(seen) + 1))
    assert len({pid for _, pid in seen}) == 2, "every request was served by one worker"
    assert other[0] == 1


async def test_a_client_switching_replicas_sees_one_session(scale_env: dict[str, str], tmp_path: Path) -> None:
    # each replica has a data directory of its own, as on two hosts: only the database is shared
    first = {**scale_env, "PEGBOARD_DATA_DIR": str(tmp_path / "data-one")}
    second = {**scale_env, "PEGBOARD_DATA_DIR": str(tmp_path / "data-two")}
    with http_serving(args(tmp_path), tmp_path, env=first) as one, \
            http_serving(args(tmp_path), tmp_path, env=second) as two:
        seen = [await count(server.url, "conversation-replicas-01") for server in (one, two, one, two, two, one)]
    assert [n for n, _ in seen] == [1, 2, 3, 4, 5, 6]
    assert seen[0][1] != seen[1][1]
    with psycopg.connect(scale_env["PEGBOARD_POSTGRES_DSN"]) as conn:
        stored = conn.execute("SELECT count(*) FROM pegboard_sessions WHERE id LIKE 'mcp-%'").fetchone()
    assert stored == (1,)
