"""Five-field cron expressions: parsing, errors, and next runs checked against a minute-by-minute scan."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pegboard_cron import CronExpression, CronExpressionError

UTC_TZ = UTC


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def show(when: float | None) -> str | None:
    return None if when is None else datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%d %H:%M %a")


@pytest.mark.parametrize(
    ("expr", "after", "expected"),
    [
        ("*/5 * * * *", "2026-03-02T10:03:10", "2026-03-02 10:05 Mon"),
        ("*/5 * * * *", "2026-03-02T10:05:00", "2026-03-02 10:10 Mon"),
        ("30 9 * * 1-5", "2026-03-06T10:00", "2026-03-09 09:30 Mon"),
        ("0 0 1 * *", "2026-12-15T00:00", "2027-01-01 00:00 Fri"),
        ("0 12 29 2 *", "2026-01-01T00:00", "2028-02-29 12:00 Tue"),
        ("0 0 13 * 5", "2026-03-01T00:00", "2026-03-06 00:00 Fri"),
        ("0 0 * * 7", "2026-03-02T00:00", "2026-03-08 00:00 Sun"),
        ("15 14 1 * 0", "2026-03-02T00:00", "2026-03-08 14:15 Sun"),
        ("5/20 * * * *", "2026-03-02T10:06", "2026-03-02 10:25 Mon"),
        ("0 8-18/4 * * *", "2026-03-02T13:00", "2026-03-02 16:00 Mon"),
        ("0,30 * * * *", "2026-03-02T10:29:59", "2026-03-02 10:30 Mon"),
    ],
)
def test_next_after(expr: str, after: str, expected: str) -> None:
    assert show(CronExpression.parse(expr).next_after(at(after), UTC_TZ)) == expected


def test_an_impossible_date_never_fires() -> None:
    assert CronExpression.parse("0 0 31 2 *").next_after(at("2026-01-01T00:00"), UTC_TZ) is None


def test_a_time_zone_moves_the_wall_clock() -> None:
    plus2 = timezone(timedelta(hours=2))
    nxt = CronExpression.parse("0 9 * * *").next_after(at("2026-03-02T06:00"), plus2)
    assert show(nxt) == "2026-03-02 07:00 Mon"


@pytest.mark.parametrize(
    ("expr", "says"),
    [
        ("* * * *", "five fields"),
        ("* * * * * *", "five fields"),
        ("60 * * * *", "minute field has 60"),
        ("* 24 * * *", "hour field has 24"),
        ("* * 0 * *", "day of month field has 0"),
        ("* * * 13 *", "month field has 13"),
        ("* * * * 8", "day of week field has 8"),
        ("*/0 * * * *", "bad step"),
        ("5-1 * * * *", "backwards range"),
        ("* * * JAN *", "names such as MON or JAN"),
        ("* * L * *", "L, W"),
        ("1,,2 * * * *", "empty list item"),
        ("*/ * * * *", "bad step"),
    ],
)
def test_errors_name_the_field_and_the_fix(expr: str, says: str) -> None:
    with pytest.raises(CronExpressionError, match=says):
        CronExpression.parse(expr)


def brute_next(expr: CronExpression, after: float, limit_days: int) -> float | None:
    """Minute by minute, skipping days on which no minute can match (checked at noon)."""
    moment = datetime.fromtimestamp(after, UTC).replace(second=0, microsecond=0, tzinfo=None)
    end = moment + timedelta(days=limit_days)
    while moment < end:
        moment += timedelta(minutes=1)
        noon = moment.replace(hour=12, minute=min(expr.minutes))
        if not expr.matches(noon.replace(hour=min(expr.hours))):
            moment = moment.replace(hour=23, minute=59)
            continue
        if expr.matches(moment):
            return moment.replace(tzinfo=UTC).timestamp()
    return None


def field(low: int, high: int) -> st.SearchStrategy[str]:
    value = st.integers(low, high)
    item = st.one_of(
        st.just("*"),
        value.map(str),
        st.tuples(value, value).map(lambda p: f"{min(p)}-{max(p)}"),
        st.integers(1, high - low + 1).map(lambda n: f"*/{n}"),
        st.tuples(value, st.integers(1, 10)).map(lambda p: f"{p[0]}/{p[1]}"),
    )
    return st.lists(item, min_size=1, max_size=3).map(",".join)


EXPRESSIONS = st.tuples(field(0, 59), field(0, 23), field(1, 31), st.just("*") | field(1, 12), field(0, 7)).map(
    " ".join
)
AFTER = st.integers(int(at("2026-01-01T00:00")), int(at("2030-12-31T00:00"))).map(float)


@settings(deadline=None)
@given(EXPRESSIONS, AFTER)
def test_next_after_is_the_first_matching_minute(text: str, after: float) -> None:
    expr = CronExpression.parse(text)
    horizon = 400
    expected = brute_next(expr, after, horizon)
    got = expr.next_after(after, UTC_TZ)
    if expected is not None:
        assert got == expected, (text, show(after))
    else:
        assert got is None or got - after > (horizon - 1) * 86400


@given(EXPRESSIONS)
def test_parsing_is_stable(text: str) -> None:
    once = CronExpression.parse(text)
    assert CronExpression.parse(str(once)) == once


@given(st.text(max_size=40))
def test_anything_else_is_a_clear_error_or_an_expression(text: str) -> None:
    try:
        CronExpression.parse(text)
    except CronExpressionError as exc:
        assert str(exc)


def test_daylight_saving_changes_fire_once_a_day() -> None:
    from zoneinfo import ZoneInfo

    berlin = ZoneInfo("Europe/Berlin")
    daily = CronExpression.parse("30 2 * * *")
    # 2026-03-29 02:30 does not exist in Berlin (clocks jump from 02:00 to 03:00): it fires an hour on
    spring = daily.next_after(datetime(2026, 3, 29, 0, 0, tzinfo=berlin).timestamp(), berlin)
    assert spring is not None and datetime.fromtimestamp(spring, berlin).strftime("%d %H:%M") == "29 03:30"
    # 2026-10-25 02:30 happens twice (03:00 goes back to 02:00): it fires at the first one only
    first = daily.next_after(datetime(2026, 10, 25, 0, 0, tzinfo=berlin).timestamp(), berlin)
    assert first is not None
    following = daily.next_after(first, berlin)
    assert following is not None and following - first == 25 * 3600
