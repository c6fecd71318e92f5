"""Scheduled prompts: ``CronCreate``, ``CronList``, ``CronDelete``, ``ScheduleWakeup`` and ``cron``.

Jobs belong to a session and live in the session store, so they come back when the session
is resumed. While a session is open the scheduler delivers each due job's prompt through the
host's ``deliver_message`` hook (``kind="prompt"``); without that hook the tools are
unavailable. Hosts and tests reach the scheduler with ``scheduler(pb)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from pegboard import (
    ConfigSection,
    ConfigSectionRegister,
    Pegboard,
    Session,
    has_host_service,
    hookimpl,
    unavailable_without,
)
from pegboard_cron.automation import cron
from pegboard_cron.expression import CronExpression, CronExpressionError
from pegboard_cron.jobs import JOBS, Job, Run
from pegboard_cron.scheduler import SCHEDULER, Clock, Fired, ManualClock, Scheduler, WallClock, scheduler
from pegboard_cron.settings import SETTINGS_KEY, CronSettings, disabled_reason
from pegboard_cron.tools import TOOLS, cron_create, cron_delete, cron_list, schedule_wakeup

OWNER = "cron"


def availability(pegboard: Pegboard) -> Callable[[], str | None]:
    """Unavailable while scheduling is turned off or no plugin delivers prompts."""
    deliver = unavailable_without(pegboard, "deliver_message", "deliver scheduled prompts to sessions")

    def check() -> str | None:
        try:
            enabled = pegboard.settings(SETTINGS_KEY).enabled
        except Exception:
            enabled = True
        return disabled_reason(dict(pegboard.env), enabled) or deliver()

    return check


@hookimpl
def register_config_sections(register: ConfigSectionRegister) -> None:
    register(ConfigSection(SETTINGS_KEY, CronSettings, description="Scheduled prompts (CronCreate, cron)"))


@hookimpl
def pegboard_ready(pegboard: Pegboard) -> None:
    check = availability(pegboard)
    for item in (*TOOLS, cron):
        pegboard.add_tool(dataclasses.replace(item, availability=check), owner=OWNER)


@hookimpl
def session_opened(session: Session) -> None:
    if has_host_service(session.pegboard, "deliver_message") and len(session.state.map(JOBS)):
        scheduler(session.pegboard).watch(session)


@hookimpl
def pegboard_close(pegboard: Pegboard) -> None:
    found: Scheduler | None = pegboard.stash.pop(SCHEDULER, None)
    if found is not None:
        found.close()


__all__ = [
    "JOBS",
    "Clock",
    "CronExpression",
    "CronExpressionError",
    "CronSettings",
    "Fired",
    "Job",
    "ManualClock",
    "Run",
    "Scheduler",
    "WallClock",
    "cron",
    "cron_create",
    "cron_delete",
    "cron_list",
    "schedule_wakeup",
    "scheduler",
]
