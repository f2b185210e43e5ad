"""Timestamps of span exports as Unix nanoseconds (private)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

__all__ = ["to_unix_nano"]

_MAX_UNIX_NANO = 2**64
"""Unix nanoseconds are unsigned 64-bit in OTLP; larger numbers are not times."""
_EPOCH_SCALES = ((1e17, 1), (1e14, 1_000), (1e11, 1_000_000))
"""(smallest value, factor to ns) for epoch numbers in ns, µs and ms; smaller ones are seconds."""


def to_unix_nano(value: Any) -> int:
    """Unix nanoseconds from an ISO 8601 string or an epoch number; 0 when unreadable.

    ISO strings without an offset are taken as UTC. Epoch numbers may be s, ms, µs or ns: the unit
    is inferred from the magnitude (valid for any time after 1973).
    """
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return 0
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    scale = next((s for threshold, s in _EPOCH_SCALES if value >= threshold), 1_000_000_000)
    nanos = value * scale
    if not 0 <= nanos < _MAX_UNIX_NANO:  # False for NaN too; no float() of a 400-digit int
        return 0  # NaN, inf, 1e308 (as an OTel JS endTime), or before 1970: unreadable
    return int(nanos)
