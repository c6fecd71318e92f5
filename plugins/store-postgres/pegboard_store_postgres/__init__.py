"""PostgreSQL session store: ``sessions.store = "postgres"`` and a DSN, and every ``pegboard serve``
worker or replica pointed at that database shares its sessions.

The DSN comes from user or managed config (``sessions.postgres.dsn``), the command line, or
the environment (``PEGBOARD_POSTGRES_DSN``), never from a project's config file: a cloned
repository must not choose where session data (results, approvals) is sent, nor carry a
database password. A DSN found in a project file is ignored with a warning.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from pegboard import NEUTRAL, ConfigSection, ConfigSectionRegister, Pegboard, SessionStoreError, Widens, hookimpl

if TYPE_CHECKING:  # the store (psycopg, asyncio) is imported when a session store is wanted, not at start-up
    from pegboard_store_postgres.store import PostgresSessionStore

STORE_NAME = "postgres"
SETTINGS_KEY = "sessions.postgres"
DSN_ENV = "PEGBOARD_POSTGRES_DSN"
PROJECT_SCOPES = ("project", "project-local")


class PostgresSettings(BaseModel):
    """``sessions.postgres``: where the store connects and how it behaves under load."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    dsn: Annotated[str | None, Widens.when_set("sends every session's data to this database")] = None
    min_connections: Annotated[int, NEUTRAL] = Field(default=1, ge=1, le=1000)
    max_connections: Annotated[int, NEUTRAL] = Field(default=8, ge=1, le=1000)
    connect_timeout: Annotated[float, NEUTRAL] = Field(default=10.0, gt=0, le=600)
    statement_timeout: Annotated[float, NEUTRAL] = Field(default=30.0, gt=0, le=3600)
    serialization_retries: Annotated[int, NEUTRAL] = Field(default=100, ge=1, le=100_000)


def _project_dsn_files(pegboard: Pegboard) -> list[str]:
    found = []
    for layer in pegboard.layers:
        section = layer.data.get("sessions") if isinstance(layer.data, dict) else None
        postgres = section.get("postgres") if isinstance(section, dict) else None
        if layer.scope in PROJECT_SCOPES and isinstance(postgres, dict) and postgres.get("dsn"):
            found.append(str(layer.path or layer.scope))
    return found


def _dsn(pegboard: Pegboard) -> str:
    """The DSN from the highest non-project scope that sets one, else the environment."""
    order = ("default", "user", "cli", "code", "managed")
    best: tuple[int, str] | None = None
    for layer in pegboard.layers:
        if layer.scope not in order:
            continue
        section: Any = layer.data.get("sessions") if isinstance(layer.data, dict) else None
        postgres = section.get("postgres") if isinstance(section, dict) else None
        dsn = postgres.get("dsn") if isinstance(postgres, dict) else None
        if isinstance(dsn, str) and dsn.strip():
            rank = order.index(layer.scope)
            if best is None or rank >= best[0]:
                best = (rank, dsn.strip())
    if best is not None:
        return best[1]
    env = {**os.environ, **pegboard.env}
    if env.get(DSN_ENV, "").strip():
        return env[DSN_ENV].strip()
    raise SessionStoreError(
        f'sessions.store is "{STORE_NAME}" but no DSN is set; set sessions.postgres.dsn in your user config '
        f"or {DSN_ENV} in the environment (a project's config may not set it)"
    )


def open_store(pegboard: Pegboard) -> PostgresSessionStore:
    """The store ``pegboard``'s config asks for (raises ``SessionStoreError`` saying what is missing)."""
    for path in _project_dsn_files(pegboard):
        pegboard.warnings.append(
            f"{path}: sessions.postgres.dsn is ignored: a project's config may not choose the session database; "
            f"set it in your user config or {DSN_ENV}"
        )
    from pegboard_store_postgres.store import PostgresSessionStore

    settings: PostgresSettings = pegboard.settings(SETTINGS_KEY)
    store = PostgresSessionStore(
        _dsn(pegboard),
        min_connections=settings.min_connections,
        max_connections=settings.max_connections,
        connect_timeout=settings.connect_timeout,
        statement_timeout=settings.statement_timeout,
        serialization_retries=settings.serialization_retries,
    )
    pegboard.warnings.extend(store.notices)
    return store


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(ConfigSection(SETTINGS_KEY, PostgresSettings, description="The PostgreSQL session store"))


@hookimpl
def session_store(pegboard: Pegboard) -> PostgresSessionStore | None:
    if pegboard.config.sessions.store != STORE_NAME:
        return None
    return open_store(pegboard)


def __getattr__(name: str) -> Any:
    if name in ("PostgresSessionStore", "describe_dsn"):
        from pegboard_store_postgres import store

        return getattr(store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DSN_ENV",
    "SETTINGS_KEY",
    "STORE_NAME",
    "PostgresSessionStore",
    "PostgresSettings",
    "describe_dsn",
    "open_store",
]
