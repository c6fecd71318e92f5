"""The PostgreSQL store passes the contract every store must pass, unchanged, on a real server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pegboard.testing import SessionStoreContract
from pegboard_store_postgres import PostgresSessionStore
from tests.store_postgres.pgserver import PgServer


class TestPostgresStoreContract(SessionStoreContract):
    @pytest.fixture(autouse=True)
    def _server(self, pg_server: PgServer) -> Iterator[None]:
        self.server = pg_server
        self.opened: list[PostgresSessionStore] = []
        yield
        for store in self.opened:
            store.close()

    def make_store(self, tmp_path: Path) -> PostgresSessionStore:
        store = PostgresSessionStore(self.server.fresh_database(str(tmp_path)))
        self.opened.append(store)
        return store
