"""Trace and span id normalisation shared by the export containers (private).

Exports write ids in several ways: lowercase or uppercase hex, hex without leading zeros
(Jaeger's 64-bit trace ids), or base64 of the raw bytes (protobuf-to-JSON converters, some
Tempo versions). Everything past ingest sees lowercase hex of the OTLP length: 32 characters for
a trace id, 16 for a span id (OTLP trace spec, ``TraceId``/``SpanId``).
"""

from __future__ import annotations

import base64
import binascii
import re

__all__ = ["SPAN_ID_HEX", "TRACE_ID_HEX", "normalize_id"]

TRACE_ID_HEX = 32
"""Length of a trace id in hex characters (16 bytes)."""
SPAN_ID_HEX = 16
"""Length of a span id in hex characters (8 bytes)."""

_HEX = re.compile(r"[0-9a-fA-F]+")


def normalize_id(value: object, length: int) -> str | None:
    """Return ``value`` as lowercase hex of ``length`` characters, or ``None`` when it is no id.

    Accepts hex of at most ``length`` characters (left-padded with zeros, as Jaeger drops them)
    and base64 of exactly ``length // 2`` bytes. An all-zero id is invalid in OTLP and gives
    ``None``, as does anything else (empty, wrong length, not a string).
    """
    if not isinstance(value, str) or not value:
        return None
    hex_id: str | None
    if _HEX.fullmatch(value) and len(value) <= length:
        hex_id = value.lower().rjust(length, "0")
    else:
        hex_id = _from_base64(value, length // 2)
    return None if hex_id is None or hex_id.strip("0") == "" else hex_id


def _from_base64(value: str, size: int) -> str | None:
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw.hex() if len(raw) == size else None
