"""A PostgreSQL server shared by this directory's tests, started once and stopped after."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.store_postgres.pgserver import PgServer, find_bin_dir, start_server


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    if find_bin_dir() is None:
        pytest.skip("PostgreSQL is not installed (Debian package postgresql; python3 dev.py setup installs it)")
    server = start_server()
    try:
        yield server
    finally:
        server.stop()
