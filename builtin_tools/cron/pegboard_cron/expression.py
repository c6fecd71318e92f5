"""Five-field cron expressions: ``minute hour day-of-month month day-of-week``.

Each field is ``*``, a value, a range ``a-b``, a step ``*/n``, ``a-b/n`` or ``a/n`` (from
``a`` to the field's end), or a comma-separated list of those. Day of week is 0-7 with 0 and
7 both Sunday. Names (``MON``, ``JAN``) and the extensions ``L``, ``W``, ``#`` and ``?`` are not
accepted. When both day fields are restricted, a day matches if either does (the classic
cron rule); a field that starts with ``*`` counts as unrestricted. Times are wall-clock times
in a time zone (``None``: the machine's local zone).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo

#: (name, lowest, highest) of each field, in order
FIELDS = (
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day of month", 1, 31),
    ("month", 1, 12),
    ("day of week", 0, 7),
)
#: how far ahead a next run is looked for: Feb 29 on a given weekday can be 28 years away
SEARCH_DAYS = 366 * 29


class CronExpressionError(ValueError):
    """An expression that is not five valid fields; the message names the field and the fix."""


def _field(text: str, name: str, low: int, high: int) -> frozenset[int]:
    values: set[int] = set()
    if not text:
        raise CronExpressionError(f"the {name} field is empty")
    for item in text.split(","):
        if not item:
            raise CronExpressionError(f"the {name} field {text!r} has an empty list item")
        body, _, step_text = item.partition("/")
        step = 1
        if step_text or item.endswith("/"):
            if not step_text.isdigit() or int(step_text) < 1:
                raise CronExpressionError(f"the {name} field has a bad step {item!r}: use */N with N of 1 or more")
            step = int(step_text)
        if body == "*":
            start, end = low, high
        else:
            first, dash, last = body.partition("-")
            if not first.isdigit() or (dash and not last.isdigit()):
                raise CronExpressionError(
                    f"the {name} field has {item!r}: use numbers {low}-{high}, ranges a-b, steps */n or lists a,b "
                    "(names such as MON or JAN and L, W, # or ? are not supported)"
                )
            start = int(first)
            end = int(last) if dash else (high if step_text else start)
            for value in (start, end):
                if not low <= value <= high:
                    raise CronExpressionError(f"the {name} field has {value}, outside {low}-{high}")
            if start > end:
                raise CronExpressionError(f"the {name} field has the backwards range {body!r}")
        values.update(range(start, end + 1, step))
    return frozenset(values)


@dataclass(frozen=True)
class CronExpression:
    """A parsed expression; :meth:`next_after` finds when it next fires."""

    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    any_day: bool
    any_weekday: bool

    @classmethod
    def parse(cls, text: str) -> CronExpression:
        if not isinstance(text, str):
            raise CronExpressionError("a cron expression is a string of five fields")
        parts = text.split()
        if len(parts) != 5:
            raise CronExpressionError(
                f"a cron expression has five fields (minute hour day-of-month month day-of-week), {text!r} has "
                f"{len(parts)}; e.g. '*/5 * * * *' is every five minutes"
            )
        sets = [_field(part, name, low, high) for part, (name, low, high) in zip(parts, FIELDS, strict=True)]
        weekdays = frozenset(d % 7 for d in sets[4])
        return cls(" ".join(parts), sets[0], sets[1], sets[2], sets[3], weekdays,
                   parts[2].startswith("*"), parts[4].startswith("*"))

    def day_matches(self, day: date) -> bool:
        in_month = day.day in self.days
        in_week = day.isoweekday() % 7 in self.weekdays
        if self.any_day or self.any_weekday:
            return in_month and in_week
        return in_month or in_week

    def matches(self, moment: datetime) -> bool:
        """Does the expression fire in the minute of ``moment`` (a wall-clock time)?"""
        return (moment.minute in self.minutes and moment.hour in self.hours and moment.month in self.months
                and self.day_matches(moment.date()))

    def next_after(self, when: float, tz: tzinfo | None = None) -> float | None:
        """The first firing strictly after the epoch time ``when``, or ``None`` if there is none
        (``0 0 31 2 *``: February never has a 31st)."""
        start = wall_time(when, tz).replace(second=0, microsecond=0) + timedelta(minutes=1)
        hours = sorted(self.hours)
        minutes = sorted(self.minutes)
        day = start.date()
        for offset in range(SEARCH_DAYS):
            if offset:
                day = day + timedelta(days=1)
            if day.month not in self.months or not self.day_matches(day):
                continue
            for hour in hours:
                if offset == 0 and hour < start.hour:
                    continue
                for minute in minutes:
                    if offset == 0 and hour == start.hour and minute < start.minute:
                        continue
                    candidate = epoch_time(datetime(day.year, day.month, day.day, hour, minute), tz)
                    if candidate > when:
                        return candidate
        return None

    def __str__(self) -> str:
        return self.text


def wall_time(when: float, tz: tzinfo | None) -> datetime:
    """The naive wall-clock time of epoch ``when`` in ``tz`` (``None``: local)."""
    if tz is None:
        return datetime.fromtimestamp(when)
    return datetime.fromtimestamp(when, tz).replace(tzinfo=None)


def epoch_time(moment: datetime, tz: tzinfo | None) -> float:
    """The epoch time of the naive wall-clock ``moment`` in ``tz`` (``None``: local)."""
    if tz is None:
        return moment.timestamp()
    return moment.replace(tzinfo=tz).timestamp()


__all__ = ["FIELDS", "CronExpression", "CronExpressionError", "epoch_time", "wall_time"]
