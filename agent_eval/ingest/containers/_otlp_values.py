"""Decoding of OTLP JSON values shared by every OTLP-shaped container (OTLP/JSON, Tempo...).

Follows the OTLP 1.x JSON encoding (opentelemetry-proto, ``docs/specification.md``, "JSON
Protobuf Encoding"): trace and span ids are hex strings, 64-bit integers may be strings, enums
are integers, and ``AnyValue`` is an object with one of ``stringValue``, ``boolValue``,
``intValue``, ``doubleValue``, ``arrayValue``, ``kvlistValue`` or ``bytesValue`` (base64).
Generic protobuf-to-JSON converters deviate from it, and we read their output too: base64 ids
(the proto3 canonical mapping of ``bytes``), enum names (``SPAN_KIND_CLIENT``,
``STATUS_CODE_ERROR``) and snake_case keys (``preserving_proto_field_name``).

Everything here works on plain dicts (as ``orjson.loads`` returns them) and raises
:class:`BadValue` with a machine reason and a human detail; containers turn that into a
:class:`~agent_eval.ingest.containers._base.Skipped` item naming file, line, trace and span.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable, Mapping
from typing import Any

from agent_eval.ingest._safe_text import brief
from agent_eval.ingest._spans import AttributeValue

__all__ = [
    "BadValue",
    "decode_any_value",
    "decode_attributes",
    "decode_id",
    "decode_kind",
    "decode_status",
    "decode_uint64",
    "field",
]

TRACE_ID_BYTES = 16
SPAN_ID_BYTES = 8
_HEX = frozenset("0123456789abcdefABCDEF")
_ZEROS = {TRACE_ID_BYTES: "0" * 32, SPAN_ID_BYTES: "0" * 16}

SPAN_KINDS = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
"""OTLP ``Span.SpanKind`` values by number."""
STATUS_CODES = ("UNSET", "OK", "ERROR")
"""OTLP ``Status.StatusCode`` values by number."""
MAX_VALUE_DEPTH = 16
"""Deepest nesting of ``arrayValue``/``kvlistValue`` read (each level is three JSON levels)."""


class BadValue(ValueError):
    """A value that breaks the OTLP data model.

    Args:
        reason: A short machine reason (``"invalid_span_id"``, ``"invalid_attribute"``...).
        detail: The bad value and the fix, in a sentence.

    """

    def __init__(self, reason: str, detail: str) -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(detail)


def field(obj: Mapping[str, Any], camel: str, snake: str) -> Any:
    """``obj[camel]``, else ``obj[snake]``, else ``None`` (both key styles occur)."""
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def _short(value: object, limit: int = 80) -> str:
    return brief(value, limit)


def decode_id(value: object, size: int, what: str, *, optional: bool = False) -> str | None:
    """Decode a trace id (``size`` 16) or span id (8) from hex or base64 to lowercase hex.

    A ``bytes`` value is a protobuf message's raw id (the walker of
    :mod:`~agent_eval.ingest.containers._otlp_proto_dict`): exactly ``size`` bytes or refused.

    ``what`` names the field (``"trace_id"``, ``"span_id"``, ``"parent_span_id"``) in the
    reason (``"invalid_" + what``). Returns ``None`` for an absent, empty or all-zero id when
    ``optional`` (the parent of a root span, the span of a log record).

    Raises:
        BadValue: not a string, wrong length, not hex/base64, or absent/all zeros when required.

    """
    canonical = type(value) is str and len(value) == 2 * size and _HEX.issuperset(value)
    if canonical and value != _ZEROS[size]:  # the common case, first
        return str(value).lower()
    return _decode_id_slow(value, size, what, optional)


def _bytes_id(value: bytes, size: int, what: str, optional: bool) -> str | None:
    """A raw (protobuf) id: ``size`` bytes, else refused; never read as hex or base64 text."""
    if len(value) != size:
        raise BadValue(
            f"invalid_{what}",
            f"{what.replace('_', ' ')} 0x{value[:32].hex()} is {len(value)} bytes; OTLP "
            f"requires {size} (the exporter wrote a malformed id)",
        )
    if not value.strip(b"\0"):
        if optional:
            return None
        raise BadValue(
            f"invalid_{what}",
            f"{what.replace('_', ' ')} is all zeros, which OTLP defines as invalid",
        )
    return value.hex()


def _decode_id_slow(value: object, size: int, what: str, optional: bool) -> str | None:
    label = what.replace("_", " ")
    if value is None or value == "":
        if optional:
            return None
        raise BadValue(f"invalid_{what}", f"{label} is missing")
    if type(value) is bytes:  # a protobuf message's raw id: only its length tells
        return _bytes_id(value, size, what, optional)
    if type(value) is not str:
        raise BadValue(f"invalid_{what}", f"{label} {_short(value)} is not a string")
    if len(value) == 2 * size and _HEX.issuperset(value):
        hex_id: str | None = value.lower()
    else:
        hex_id = _base64_id(value, size)
    if hex_id is None:
        raise BadValue(
            f"invalid_{what}",
            f"{label} {_short(value)} is neither {2 * size} hex characters "
            f"nor base64 of {size} bytes",
        )
    if hex_id == _ZEROS[size]:
        if optional:
            return None
        raise BadValue(f"invalid_{what}", f"{label} is all zeros, which OTLP defines as invalid")
    return hex_id


def _base64_id(value: str, size: int) -> str | None:
    padded = value + "=" * (-len(value) % 4)
    if len(padded) != 4 * math.ceil(size / 3):
        return None
    try:  # the standard and the URL-safe alphabet both occur
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw.hex() if len(raw) == size else None


def decode_uint64(value: object, what: str, reason: str = "invalid_time") -> int:
    """An OTLP (u)int64 written as a JSON number or a decimal string; absent means 0.

    Raises:
        BadValue: anything else (floats, booleans, non-numeric strings, negatives).

    """
    if value is None:
        return 0
    if type(value) is int and value >= 0:
        return value
    if type(value) is str and value.isascii() and value.isdigit() and int(value[:21]) < 2**64:
        return int(value)
    raise BadValue(reason, f"{what} {_short(value)} is not an unsigned 64-bit integer")


def _enum(value: object, names: tuple[str, ...], prefix: str, what: str) -> str:
    if type(value) is int and 0 <= value < len(names):
        return names[value]
    if type(value) is str:
        name = value.upper().removeprefix(prefix)
        if name in names:
            return name
        if value.isdigit() and len(value) < 4 and int(value) < len(names):
            return names[int(value)]
    raise BadValue(
        f"invalid_{what}",
        f"{what.replace('_', ' ')} {_short(value)} is not one of 0-{len(names) - 1} "
        f"or {', '.join(prefix + n for n in names)}",
    )


def decode_kind(value: object) -> str:
    """Span kind as a name (``"CLIENT"``...), from an int, ``SPAN_KIND_CLIENT`` or ``CLIENT``."""
    return "UNSPECIFIED" if value is None else _enum(value, SPAN_KINDS, "SPAN_KIND_", "span_kind")


def decode_status(status: object) -> tuple[str, str]:
    """``(code name, message)`` from an OTLP ``Status`` object (absent: ``("UNSET", "")``).

    Raises:
        BadValue: not an object, an unknown code, or a message that is not a string.

    """
    if status is None:
        return "UNSET", ""
    if not isinstance(status, dict):
        raise BadValue("invalid_status", f"status {_short(status)} is not an object")
    code = status.get("code")
    code_name = "UNSET" if code is None else _enum(code, STATUS_CODES, "STATUS_CODE_", "status")
    message = status.get("message", "")
    if type(message) is not str:
        raise BadValue("invalid_status", f"status message {_short(message)} is not a string")
    return code_name, message


def _double(value: object) -> float:
    if type(value) is float or type(value) is int:
        return float(value)
    if value in ("NaN", "Infinity", "-Infinity"):
        return float(str(value).replace("Infinity", "inf"))
    if type(value) is str:
        try:
            return float(value)
        except ValueError:
            pass
    raise BadValue("invalid_attribute", f"doubleValue {_short(value)} is not a number")


def _int(value: object) -> int:
    if type(value) is str and value.isascii() and value.lstrip("-").isdigit() and len(value) < 21:
        value = int(value)
    if type(value) is int and -(2**63) <= value < 2**64:  # int64 (uint64 from some exporters)
        return value
    raise BadValue("invalid_attribute", f"intValue {_short(value)} is not a 64-bit integer")


def _string(value: object) -> str:
    if type(value) is str:
        return value
    raise BadValue("invalid_attribute", f"stringValue {_short(value)} is not a string")


def _bool(value: object) -> bool:
    if type(value) is bool:
        return value
    raise BadValue("invalid_attribute", f"boolValue {_short(value)} is not true or false")


def _bytes(value: object) -> bytes:
    if type(value) is str:
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            pass
    raise BadValue("invalid_attribute", f"bytesValue {_short(value)} is not base64")


def _values_of(value: object, what: str) -> list[Any]:
    values = value.get("values", []) if isinstance(value, dict) else None
    if not isinstance(values, list):
        raise BadValue("invalid_attribute", f"{what} {_short(value)} has no list of values")
    return values


def _array(value: object, depth: int = 0) -> list[AttributeValue]:
    return [decode_any_value(item, depth + 1) for item in _values_of(value, "arrayValue")]


def _kvlist(value: object, depth: int = 0) -> dict[str, AttributeValue]:
    return decode_attributes(_values_of(value, "kvlistValue"), depth + 1)


_DECODERS: dict[str, Callable[[Any], AttributeValue]] = {}
for _camel, _snake, _fn in (
    ("stringValue", "string_value", _string),
    ("boolValue", "bool_value", _bool),
    ("intValue", "int_value", _int),
    ("doubleValue", "double_value", _double),
    ("arrayValue", "array_value", _array),
    ("kvlistValue", "kvlist_value", _kvlist),
    ("bytesValue", "bytes_value", _bytes),
):
    _DECODERS[_camel] = _DECODERS[_snake] = _fn


def decode_any_value(value: object, depth: int = 0) -> AttributeValue:
    """Decode one OTLP ``AnyValue`` object; ``{}`` (no value set) decodes to ``None``.

    ``depth`` is how many array/kvlist values enclose this one (at most
    :data:`MAX_VALUE_DEPTH`).

    Raises:
        BadValue: not an object, an unknown or doubled value kind, a value of the wrong type,
            or arrays/kvlists nested deeper than :data:`MAX_VALUE_DEPTH`.

    """
    if depth > MAX_VALUE_DEPTH:
        raise BadValue(
            "invalid_attribute", f"array/kvlist values nest deeper than {MAX_VALUE_DEPTH} levels"
        )
    if not isinstance(value, dict):
        raise BadValue("invalid_attribute", f"value {_short(value)} is not an AnyValue object")
    if len(value) != 1:
        if not value:
            return None
        raise BadValue("invalid_attribute", f"value {_short(value)} sets more than one kind")
    ((kind, inner),) = value.items()
    decoder = _DECODERS.get(kind)
    if decoder is None:
        raise BadValue(
            "invalid_attribute",
            f"value kind {kind!r} is not one of stringValue, boolValue, intValue, doubleValue, "
            "arrayValue, kvlistValue, bytesValue",
        )
    if decoder is _array or decoder is _kvlist:
        return decoder(inner, depth)
    return decoder(inner)


def decode_attributes(items: object, depth: int = 0) -> dict[str, AttributeValue]:
    """Decode an OTLP ``KeyValue`` list into a dict (later duplicates win); absent means ``{}``.

    Raises:
        BadValue: ``reason`` ``"invalid_attribute"``, naming the key.

    """
    if items is None:
        return {}
    if type(items) is not list:
        raise BadValue("invalid_attribute", f"attributes {_short(items)} are not a list")
    out: dict[str, AttributeValue] = {}
    for item in items:
        key = item.get("key") if type(item) is dict else None
        if type(key) is not str:
            raise BadValue("invalid_attribute", f"attribute {_short(item)} has no string key")
        value = item.get("value")
        # The common cases, a plain string or a decimal int64 string, without a call.
        if type(value) is dict and len(value) == 1:
            inner = value.get("stringValue")
            if type(inner) is str:
                out[key] = inner
                continue
            inner = value.get("intValue")
            if type(inner) is str and inner.isdigit() and inner.isascii() and len(inner) < 19:
                out[key] = int(inner)
                continue
        try:
            out[key] = None if value is None else decode_any_value(value, depth)
        except BadValue as exc:
            raise BadValue(exc.reason, f"attribute {key!r}: {exc.detail}") from None
    return out
