"""The PostgreSQL store beyond the contract: migrations, selection by config, refusals, errors,
retention, and updates from several processes at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

import pegboard_store_postgres
from pegboard import Pegboard, SessionRecord, SessionStoreError, StoredResult
from pegboard.core.config import ConfigLayer
from pegboard_store_postgres import DSN_ENV, PostgresSessionStore, describe_dsn
from pegboard_store_postgres.schema import SCHEMA_VERSION, VERSION_TABLE
from tests.store_postgres.pgserver import PgServer, free_port


@pytest.fixture
def dsn(pg_server: PgServer, tmp_path: Path) -> str:
    return pg_server.fresh_database(str(tmp_path))


def board(tmp_path: Path, *layers: tuple[str, dict[str, Any]], env: dict[str, str] | None = None) -> Pegboard:
    return Pegboard(
        plugins=[pegboard_store_postgres],
        load_entrypoints=False,
        layers=[ConfigLayer(scope, data, path=None, root=tmp_path) for scope, data in layers],  # type: ignore[arg-type]
        cwd=tmp_path,
        env={"PEGBOARD_DATA_DIR": str(tmp_path / "data"), **(env or {})},
    )


def test_the_schema_is_migrated_once_and_versioned(dsn: str) -> None:
    first = PostgresSessionStore(dsn)
    second = PostgresSessionStore(dsn)
    try:
        assert first.schema_version == SCHEMA_VERSION and second.schema_version == SCHEMA_VERSION
        assert first.notices and not second.notices
        with psycopg.connect(dsn) as conn:
            rows = conn.execute(f"SELECT version FROM {VERSION_TABLE} ORDER BY version").fetchall()
        assert [r[0] for r in rows] == list(range(1, SCHEMA_VERSION + 1))
    finally:
        first.close()
        second.close()


def test_a_newer_schema_is_refused(dsn: str) -> None:
    PostgresSessionStore(dsn).close()
    with psycopg.connect(dsn) as conn:
        conn.execute(f"INSERT INTO {VERSION_TABLE} (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    with pytest.raises(SessionStoreError, match=r"newer than this Pegboard knows.*upgrade pegboard-store-postgres"):
        PostgresSessionStore(dsn)


def test_an_unreachable_server_is_an_error_naming_it_without_the_password() -> None:
    dsn = f"postgresql://someone:hunter2@127.0.0.1:{free_port()}/db"
    with pytest.raises(SessionStoreError) as caught:
        PostgresSessionStore(dsn, connect_timeout=1)
    text = str(caught.value)
    assert "hunter2" not in text and "someone@127.0.0.1" in text and "server is up" in text
    assert "hunter2" not in describe_dsn(dsn)


def test_sessions_store_postgres_with_the_dsn_from_the_environment(dsn: str, tmp_path: Path) -> None:
    pb = board(tmp_path, ("user", {"sessions": {"store": "postgres"}}), env={DSN_ENV: dsn})
    try:
        store = pb.session_store
        assert isinstance(store, PostgresSessionStore)
    finally:
        pb.close()


def test_the_dsn_from_user_config_wins_over_the_environment(dsn: str, tmp_path: Path) -> None:
    user = {"sessions": {"store": "postgres", "postgres": {"dsn": dsn, "maxConnections": 2}}}
    pb = board(tmp_path, ("user", user), env={DSN_ENV: "postgresql://nobody@127.0.0.1:1/none"})
    try:
        assert isinstance(pb.session_store, PostgresSessionStore)
    finally:
        pb.close()


def test_a_dsn_in_a_project_file_is_refused(dsn: str, tmp_path: Path) -> None:
    project = {"sessions": {"postgres": {"dsn": dsn}}}
    pb = board(tmp_path, ("user", {"sessions": {"store": "postgres"}}), ("project", project))
    with pytest.raises(SessionStoreError, match=r"no DSN is set.*PEGBOARD_POSTGRES_DSN"):
        pb.session_store  # noqa: B018
    assert any("a project's config may not choose the session database" in w for w in pb.warnings)


def test_a_store_name_no_plugin_supplies_is_an_error_not_sqlite(tmp_path: Path) -> None:
    pb = board(tmp_path, ("user", {"sessions": {"store": "postgress"}}))
    with pytest.raises(SessionStoreError, match="'postgress' but that store cannot be opened"):
        pb.session_store  # noqa: B018
    assert not (tmp_path / "data" / "sessions.sqlite3").exists()


def test_prune_removes_only_old_sessions_in_one_statement(dsn: str) -> None:
    now = [1000.0]
    store = PostgresSessionStore(dsn, clock=lambda: now[0])
    try:
        store.create(SessionRecord(id="old"))
        store.put("old", "slot", "1")
        store.put_result("old", StoredResult(ref="tr_old", tool="T", text="x"))
        store.create(SessionRecord(id="open"))
        now[0] = 5000.0
        store.create(SessionRecord(id="new"))
        assert store.prune(2000.0, keep=["open"]) == ["old"]
        assert store.load("old") is None and store.get("old", "slot") is None and store.find_result("tr_old") is None
        assert {r.id for r in store.sessions()} == {"open", "new"}
    finally:
        store.close()


def test_pegboard_prunes_through_the_store(dsn: str, tmp_path: Path) -> None:
    pb = board(tmp_path, ("user", {"sessions": {"store": "postgres", "retentionDays": 1}}), env={DSN_ENV: dsn})
    try:
        store = pb.session_store
        store.create(SessionRecord(id="stale", created=1.0))
        with psycopg.connect(dsn) as conn:
            conn.execute("UPDATE pegboard_sessions SET updated = 1 WHERE id = 'stale'")
        assert pb.prune_sessions() == ["stale"]
    finally:
        pb.close()


COUNTER_SCRIPT = """
import sys
from pegboard_store_postgres import PostgresSessionStore
store = PostgresSessionStore(sys.argv[1])
for _ in range(int(sys.argv[2])):
    store.update("shared", "counter", lambda raw: str(int(raw or "0") + 1))
store.close()
"""


def test_updates_from_several_processes_lose_nothing(dsn: str) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", COUNTER_SCRIPT, dsn, "40"]) for _ in range(3)]
    assert [p.wait(120) for p in procs] == [0, 0, 0]
    store = PostgresSessionStore(dsn)
    try:
        assert store.get("shared", "counter") == "120"
    finally:
        store.close()


def test_results_past_the_quota_are_dropped_oldest_first_and_survive_reopening(dsn: str) -> None:
    store = PostgresSessionStore(dsn)
    try:
        store.create(SessionRecord(id="s"))
        for i in range(4):
            store.put_result("s", StoredResult(ref=f"tr_{i}", tool="Bash", text="y" * 1000, storage_kind="artifact",
                                               meta={"path": "/spill", "bytes": 1000}), quota=2500)
    finally:
        store.close()
    again = PostgresSessionStore(dsn)
    try:
        kept = again.results("s")
        assert [r.ref for r in kept] == ["tr_2", "tr_3"]
        assert kept[0].storage_kind == "artifact" and kept[0].meta == {"path": "/spill", "bytes": 1000}
    finally:
        again.close()
