"""Scheduled jobs and their runs, kept in the session store (one record per job).

Every tool of this distribution reads and writes the same slot, so a job made with
``CronCreate`` is listed by ``cron list`` and the other way round. A job's schedule is a cron
expression, a one-shot time, or a fixed interval; ``next_run`` is the epoch time it is due.
"""

from __future__ import annotations

import secrets
from datetime import datetime, tzinfo
from typing import Literal

from pydantic import BaseModel, Field

from pegboard import MapKey, SessionState
from pegboard_cron.expression import CronExpression

#: the run history kept per job (``cron runs``)
MAX_RUNS_KEPT = 20
#: a run that starts this much later than it was due is reported as late
LATE_AFTER = 60.0
#: the id of the one pending ScheduleWakeup of a session
WAKEUP_ID = "wakeup"

Kind = Literal["cron", "at", "every"]
Source = Literal["CronCreate", "ScheduleWakeup", "cron"]
RunStatus = Literal["delivered", "not_delivered", "error"]


class Run(BaseModel):
    """One firing: when it was due, when it ran, whether late, and what delivery said."""

    due: float
    ran: float
    late: bool = False
    status: RunStatus = "delivered"
    error: str | None = None


class Job(BaseModel):
    id: str
    kind: Kind
    prompt: str
    source: Source = "CronCreate"
    expr: str | None = None
    at: float | None = None
    every: float | None = None
    anchor: float | None = None
    tz: str | None = None
    recurring: bool = True
    name: str | None = None
    description: str | None = None
    payload_kind: Literal["prompt", "systemEvent", "agentTurn"] = "prompt"
    enabled: bool = True
    delete_after_run: bool = False
    created: float
    expires: float | None = None
    next_run: float | None = None
    last_run: float | None = None
    runs: list[Run] = Field(default_factory=list)
    reason: str | None = None

    def zone(self, default: tzinfo | None = None) -> tzinfo | None:
        """The job's own time zone, else ``default`` (the scheduler's; ``None``: local)."""
        return zone(self.tz) if self.tz else default

    def following(self, after: float, default_tz: tzinfo | None = None) -> float | None:
        """When the job is due next after epoch time ``after`` (``None``: never again)."""
        if self.kind == "cron" and self.expr:
            return CronExpression.parse(self.expr).next_after(after, self.zone(default_tz))
        if self.kind == "every" and self.every:
            anchor = self.created if self.anchor is None else self.anchor
            if after < anchor:
                return anchor
            return anchor + (int((after - anchor) // self.every) + 1) * self.every
        if self.kind == "at" and self.at is not None:
            return self.at if self.at > after else None
        return None

    def schedule_text(self, default_tz: tzinfo | None = None) -> str:
        if self.kind == "cron":
            return f"cron {self.expr}" + (f" ({self.tz})" if self.tz else "")
        if self.kind == "every":
            return f"every {format_seconds(self.every or 0)}"
        return f"once at {iso(self.at, self.zone(default_tz))}"

    def public(self, default_tz: tzinfo | None = None) -> dict[str, object]:
        """The job as tools report it (times as ISO 8601 and epoch milliseconds)."""
        tz = self.zone(default_tz)
        return {
            "id": self.id,
            "name": self.name,
            "source": self.source,
            "schedule": self.schedule_text(default_tz),
            "cron": self.expr,
            "prompt": self.prompt,
            "recurring": self.recurring,
            "enabled": self.enabled,
            "nextRun": iso(self.next_run, tz),
            "nextRunAtMs": ms(self.next_run),
            "lastRun": iso(self.last_run, tz),
            "expiresAt": iso(self.expires, tz),
            "runCount": len(self.runs),
        }


JOBS: MapKey[Job] = MapKey("pegboard-cron-jobs", Job, persist=True)


def new_job_id(state: SessionState) -> str:
    """A short id (8 hex characters) not yet used in this session."""
    taken = set(state.map(JOBS).keys())
    while True:
        candidate = secrets.token_hex(4)
        if candidate not in taken:
            return candidate


def zone(name: str | None) -> tzinfo | None:
    if not name:
        return None
    from zoneinfo import ZoneInfo

    return ZoneInfo(name)


def valid_zone(name: str) -> str | None:
    """Why ``name`` is not an IANA time zone, or ``None`` when it is one."""
    try:
        zone(name)
    except Exception:
        return f"unknown time zone {name!r}: use an IANA name such as 'Europe/Berlin' or 'UTC'"
    return None


def iso(when: float | None, tz: tzinfo | None = None) -> str | None:
    if when is None:
        return None
    return datetime.fromtimestamp(when, tz).isoformat(timespec="seconds") if tz else \
        datetime.fromtimestamp(when).astimezone().isoformat(timespec="seconds")


def ms(when: float | None) -> int | None:
    return None if when is None else int(when * 1000)


def format_seconds(seconds: float) -> str:
    seconds = int(seconds)
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} seconds"


def parse_time(text: str, tz: tzinfo | None = None) -> float | None:
    """Epoch time of an ISO 8601 date-time (``2026-12-01T09:30``, with or without an offset;
    without one it is wall-clock time in ``tz``), or ``None`` when ``text`` is not one."""
    from pegboard_cron.expression import epoch_time

    cleaned = text.strip()
    if cleaned.endswith(("Z", "z")):
        cleaned = cleaned[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(cleaned)
    except ValueError:
        return None
    if "T" not in cleaned and " " not in cleaned:
        return None
    if moment.tzinfo is not None:
        return moment.timestamp()
    return epoch_time(moment, tz)


__all__ = [
    "JOBS",
    "LATE_AFTER",
    "MAX_RUNS_KEPT",
    "WAKEUP_ID",
    "Job",
    "Run",
    "RunStatus",
    "format_seconds",
    "iso",
    "ms",
    "new_job_id",
    "parse_time",
    "valid_zone",
    "zone",
]
