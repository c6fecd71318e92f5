"""The store's tables, as numbered migrations recorded in a version table.

Each migration runs once, in order, in one transaction, under an advisory lock, so replicas
starting together migrate once. A database whose version is newer than this code knows is
refused (an older Pegboard must not write a newer schema).
"""

from __future__ import annotations

from collections.abc import Sequence

#: the version table; one row per migration applied
VERSION_TABLE = "pegboard_schema_version"

#: ``pg_advisory_xact_lock`` key held while migrating (any fixed 64-bit number)
MIGRATION_LOCK = 0x70656762_00000001

MIGRATIONS: Sequence[str] = (
    # 1: sessions, slots, results
    """
    CREATE TABLE pegboard_sessions (
        id text PRIMARY KEY,
        owner text,
        created double precision NOT NULL,
        updated double precision NOT NULL,
        record jsonb NOT NULL
    );
    CREATE INDEX pegboard_sessions_updated ON pegboard_sessions (updated DESC, created DESC);
    CREATE TABLE pegboard_slots (
        session_id text NOT NULL,
        slot text NOT NULL,
        entry text NOT NULL,
        value text NOT NULL,
        PRIMARY KEY (session_id, slot, entry)
    );
    CREATE TABLE pegboard_results (
        session_id text NOT NULL,
        ref text NOT NULL,
        seq bigint NOT NULL,
        size bigint NOT NULL,
        tool text NOT NULL,
        record jsonb NOT NULL,
        text text NOT NULL,
        raw text,
        PRIMARY KEY (session_id, ref)
    );
    CREATE UNIQUE INDEX pegboard_results_ref ON pegboard_results (ref);
    CREATE INDEX pegboard_results_seq ON pegboard_results (session_id, seq);
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)

CREATE_VERSION_TABLE = f"""
CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (
    version integer PRIMARY KEY,
    applied timestamptz NOT NULL DEFAULT now()
)
"""
