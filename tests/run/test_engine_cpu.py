"""The engine's per-call fast paths give the same values as the code they replaced (issue 15)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_eval.run._engine import iso_milliseconds, utc_now

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _reference(nanoseconds: int) -> str:
    """What ``datetime.now(UTC).isoformat(timespec="milliseconds")`` gives at that clock."""
    moment = EPOCH + timedelta(microseconds=nanoseconds // 1000)  # the clock, truncated to us
    return moment.isoformat(timespec="milliseconds")


@pytest.mark.parametrize(
    "nanoseconds",
    [
        0,
        1_764_547_200_000_000_000,  # 2025-12-01T00:00:00.000
        1_764_547_200_999_999_999,  # the last nanosecond of a second: .999, not the next
        1_764_547_201_000_499_999,  # .000, not rounded up
        1_764_547_259_123_456_789,  # .123
        1_798_761_599_999_000_000,  # 2026-12-31T23:59:59.999
        1_798_761_600_000_000_001,  # the next year
    ],
)
def test_iso_milliseconds_matches_datetime_isoformat(nanoseconds: int) -> None:
    assert iso_milliseconds(nanoseconds) == _reference(nanoseconds)


def test_iso_milliseconds_formats_each_second_anew() -> None:
    second = 1_764_547_200_000_000_000
    assert iso_milliseconds(second + 5_000_000) == "2025-12-01T00:00:00.005+00:00"
    assert iso_milliseconds(second + 1_007_000_000) == "2025-12-01T00:00:01.007+00:00"
    assert iso_milliseconds(second + 6_000_000) == "2025-12-01T00:00:00.006+00:00"  # back


def test_utc_now_is_the_current_time() -> None:
    before = datetime.now(UTC).isoformat(timespec="milliseconds")
    now = utc_now()
    after = datetime.now(UTC).isoformat(timespec="milliseconds")
    assert before <= now <= after
    assert datetime.fromisoformat(now).tzinfo == UTC
