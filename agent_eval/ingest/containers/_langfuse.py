"""Langfuse trace export: ``{"trace": {...}, "observations": [...]}``.

What Langfuse's public API (``GET /api/public/traces/{id}``) and the UI's JSON download give for
a trace ingested over OTLP. Each observation is one span: ``id`` (the span id), ``traceId``,
``parentObservationId``, ``name``, ``startTime``/``endTime`` (ISO 8601), ``level`` and
``statusMessage``, ``input``/``output``, and ``metadata`` (an object, or that object as a JSON
string) holding ``attributes`` (the span attributes, values often turned into strings),
``resourceAttributes`` and ``scope`` (``{name, version}``).

On ingestion Langfuse moves the attribute that carried a span's messages out of the attributes
and into ``input``/``output``. This container moves it back under the key it came from, judged by
the convention the remaining attributes show:

===========================  =========================================================
span shows                   ``input`` / ``output`` become
===========================  =========================================================
``ai.operationId`` (Vercel)   ``ai.toolCall.args``/``.result`` (tool calls),
                             ``ai.prompt.messages`` (``.do*`` provider calls) or
                             ``ai.prompt``; ``ai.response.toolCalls`` (a list),
                             ``ai.response.object`` (an object) or ``ai.response.text``
``gen_ai.operation.name``    ``gen_ai.tool.call.arguments``/``.result`` (``execute_tool``),
                             else ``gen_ai.input.messages``/``gen_ai.output.messages``
``openinference.span.kind``  ``input.value``/``output.value``
anything else                ``langfuse.observation.input``/``.output`` (kept, unread)
===========================  =========================================================

pydantic-ai's instrumentation version 1 records a call's messages as one ``events`` attribute (a
JSON list of GenAI events with ``event.name``); Langfuse splits it into ``input`` (the message
events) and ``output`` (the ``gen_ai.choice``), and both go back into ``events``.

An attribute still present is never overwritten, and when the span still carries message
attributes Langfuse copies rather than moves (flattened ``gen_ai.prompt.{i}.*``, OpenInference
``llm.input_messages.*`` / ``input.value``, pydantic-ai ``tool_arguments``), ``input``/``output``
are derived copies and go to ``langfuse.observation.*``. A system message Langfuse folded into the
input from ``gen_ai.system_instructions`` is dropped again so it is not read twice. Usage counts
written as decimal strings (``"502"``) become integers. Ids that are not OTel hex (observations
created by Langfuse's own SDKs use UUIDs) are mapped to hex: a UUID trace id by dropping its
dashes, any other id to the first 16 hex of its SHA-256, the original kept as
``langfuse.observation.id``.

Observations written by Langfuse's own SDKs (its ``@observe`` decorator, ``langfuse.openai``
wrapper, ``generation()`` calls) carry no OTel attributes at all. A ``GENERATION`` observation
whose metadata has none of the OTLP keys (``attributes``, ``resourceAttributes``, ``scope``)
is read as a GenAI ``chat`` span: its ``input`` (the Chat
Completions message list, or an object holding it under ``messages``) becomes
``gen_ai.input.messages``, its ``output`` (one assistant message object, a list, or plain text)
``gen_ai.output.messages``, ``model`` the request model, and ``usageDetails`` (else the legacy
``usage``) ``input``/``output`` counts the token usage. The observations API list
(``GET /api/public/observations``: ``{"data": [...], "meta": {...}}``) is read as well.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from agent_eval.errors import DecodeError
from agent_eval.ingest._safe_text import brief
from agent_eval.ingest._safe_text import loads as safe_json_loads
from agent_eval.ingest._spans import SourceLocation, SpanRecord
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._ids import SPAN_ID_HEX, TRACE_ID_HEX, normalize_id
from agent_eval.ingest.containers._records import load_json
from agent_eval.ingest.containers._time import to_unix_nano

__all__ = ["LangfuseContainer"]

OBSERVATION_ID = "langfuse.observation.id"
OBSERVATION_INPUT = "langfuse.observation.input"
OBSERVATION_OUTPUT = "langfuse.observation.output"
VERCEL_OPERATION_ID = "ai.operationId"
GENAI_OPERATION = "gen_ai.operation.name"
GENAI_SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
OPENINFERENCE_KIND = "openinference.span.kind"
_STILL_PRESENT = (
    "gen_ai.prompt.",
    "gen_ai.completion.",
    "llm.input_messages.",
    "llm.output_messages.",
    "input.value",
    "output.value",
    "tool_arguments",
    "tool_response",
)
"""Message attributes Langfuse leaves in place (it copies rather than moves them): when one is
present, ``input``/``output`` are derived copies and are kept only as ``langfuse.observation.*``."""
PYDANTIC_AI_EVENTS = "events"
"""pydantic-ai's instrumentation version 1 attribute: the call's GenAI events as a JSON list."""
EVENT_NAME = "event.name"
CHOICE_EVENT = "gen_ai.choice"
GENERATION = "GENERATION"
"""``type`` of a Langfuse observation that is an LLM call (Langfuse data model)."""
NATIVE_OPERATION = "chat"
_OTEL_METADATA = ("attributes", "resourceAttributes", "scope")
"""Metadata keys Langfuse writes for an observation it ingested over OTLP (none when native)."""
_LIST_KEYS = ("observations", "data")
_USAGE_KEY = re.compile(r"(^|\.)(usage|token_count)(\.|$)")
_DECIMAL = re.compile(r"-?\d+")


class LangfuseContainer(builtin.Langfuse):
    """Reads a Langfuse trace export (``{trace, observations}``) back into spans."""

    def sniff(self, path: str, head: bytes) -> bool:
        """An ``observations`` list with ``traceId``, or a ``data`` list of observations."""
        if b'"observations"' in head and b'"traceId"' in head:
            return True
        return b'"data"' in head and b'"traceId"' in head and b'"parentObservationId"' in head

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield one span per observation.

        Raises:
            DecodeError: the file is not JSON or has no ``observations`` list.

        """
        source = SourceLocation(path)
        for observation in _observations(load_json(path), path):
            yield _span(observation, source)


def _observations(document: Any, path: str) -> list[Any]:
    exports = document if isinstance(document, list) else [document]
    observations: list[Any] = []
    for export in exports:
        found = (
            next((export[k] for k in _LIST_KEYS if isinstance(export.get(k), list)), None)
            if isinstance(export, Mapping)
            else None
        )
        if found is None:
            raise DecodeError(
                'expected a Langfuse trace export {"trace": {...}, "observations": [...]} '
                'or an observations API list {"data": [...]}',
                path=path,
            )
        observations.extend(found)
    return observations


def _span(raw: Any, source: SourceLocation) -> SpanRecord | Skipped:
    if not isinstance(raw, Mapping) or not raw.get("id") or not raw.get("traceId"):
        return Skipped(
            reason="invalid_span_id",
            detail=f"observation without id/traceId: {brief(raw)}",
            source=source,
        )
    metadata = _metadata(raw.get("metadata"))
    attributes = _attributes(metadata.get("attributes"))
    span_id = _span_id(str(raw["id"]))
    if span_id != raw["id"]:
        attributes[OBSERVATION_ID] = raw["id"]
    if raw.get("type") == GENERATION and not any(k in metadata for k in _OTEL_METADATA):
        attributes.update(_native_generation(raw))
    else:
        _restore_messages(attributes, raw.get("input"), raw.get("output"))
    scope = _metadata(metadata.get("scope"))
    parent = raw.get("parentObservationId")
    return SpanRecord(
        trace_id=_trace_id(str(raw["traceId"])),
        span_id=span_id,
        parent_span_id=_span_id(str(parent)) if parent else None,
        name=str(raw.get("name") or ""),
        start_time_unix_nano=to_unix_nano(raw.get("startTime")),
        end_time_unix_nano=to_unix_nano(raw.get("endTime") or raw.get("startTime")),
        attributes=attributes,
        status_code="ERROR" if raw.get("level") == "ERROR" else "UNSET",
        status_message=str(raw.get("statusMessage") or ""),
        resource=dict(_metadata(metadata.get("resourceAttributes"))),
        scope_name=str(scope.get("name") or ""),
        scope_version=str(scope.get("version") or ""),
        source=source,
    )


def _native_generation(raw: Mapping[str, Any]) -> dict[str, Any]:
    """GenAI attributes for a GENERATION the Langfuse SDK wrote itself (no OTel attributes)."""
    attributes: dict[str, Any] = {GENAI_OPERATION: NATIVE_OPERATION}
    inp = _json(raw.get("input"))
    if isinstance(inp, Mapping) and isinstance(inp.get("messages"), list):
        inp = inp["messages"]
    if inp is not None:
        attributes["gen_ai.input.messages"] = inp
    out = _json(raw.get("output"))
    if isinstance(out, Mapping):
        out = [out]
    if out is not None:
        attributes["gen_ai.output.messages"] = out
    if raw.get("model"):
        attributes["gen_ai.request.model"] = str(raw["model"])
    usage = _metadata(raw.get("usageDetails")) or _metadata(raw.get("usage"))
    for ours, theirs in (("input_tokens", "input"), ("output_tokens", "output")):
        count = usage.get(theirs)
        if isinstance(count, int) and not isinstance(count, bool):
            attributes[f"gen_ai.usage.{ours}"] = count
    return attributes


def _metadata(value: Any) -> Mapping[str, Any]:
    if isinstance(value, str):
        try:
            value = safe_json_loads(value)
        except orjson.JSONDecodeError:
            return {}
    return value if isinstance(value, Mapping) else {}


def _attributes(value: Any) -> dict[str, Any]:
    attributes = dict(_metadata(value))
    for key, item in attributes.items():
        usage = isinstance(item, str) and len(item) < 20 and _USAGE_KEY.search(key)
        if usage and _DECIMAL.fullmatch(item):
            attributes[key] = int(item)
    return attributes


def _restore_messages(attributes: dict[str, Any], inp: Any, out: Any) -> None:
    """Put ``input``/``output`` back under the attribute Langfuse took them from."""
    events = _pydantic_ai_events(inp, out)
    if events is not None:
        if PYDANTIC_AI_EVENTS not in attributes:
            attributes[PYDANTIC_AI_EVENTS] = events
        return
    in_key, out_key = _message_keys(attributes, out)
    if inp is not None and in_key not in attributes:
        if in_key == "gen_ai.input.messages":
            inp = _without_system_instructions(inp, attributes.get(GENAI_SYSTEM_INSTRUCTIONS))
        attributes[in_key] = inp
    if out is not None and out_key not in attributes:
        attributes[out_key] = out


def _pydantic_ai_events(inp: Any, out: Any) -> list[Any] | None:
    """pydantic-ai's v1 ``events`` list, when Langfuse split it into ``input`` and ``output``.

    Langfuse gives the message events (``{"event.name": "gen_ai.user.message", ...}``) as the
    input and the ``gen_ai.choice`` event (or its message) as the output; ``None`` when the input
    is not such a list.
    """
    events = _json(inp)
    if not isinstance(events, list) or not events:
        return None
    if not all(isinstance(e, Mapping) and EVENT_NAME in e for e in events):
        return None
    events = list(events)
    output = _json(out)
    for item in output if isinstance(output, list) else [output]:
        if isinstance(item, Mapping) and EVENT_NAME in item:
            events.append(item)
        elif isinstance(item, Mapping) and item.get("role"):
            events.append({EVENT_NAME: CHOICE_EVENT, "index": 0, "message": item})
        elif isinstance(item, str) and item:
            message = {"role": "assistant", "content": item}
            events.append({EVENT_NAME: CHOICE_EVENT, "index": 0, "message": message})
    return events


def _message_keys(attributes: Mapping[str, Any], out: Any) -> tuple[str, str]:
    if any(key.startswith(_STILL_PRESENT) for key in attributes):
        return OBSERVATION_INPUT, OBSERVATION_OUTPUT
    operation = str(attributes.get(VERCEL_OPERATION_ID) or "")
    if operation:
        return _vercel_keys(operation, out)
    if GENAI_OPERATION in attributes:
        if attributes[GENAI_OPERATION] == "execute_tool":
            return "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"
        return "gen_ai.input.messages", "gen_ai.output.messages"
    if OPENINFERENCE_KIND in attributes:
        return "input.value", "output.value"
    return OBSERVATION_INPUT, OBSERVATION_OUTPUT


def _vercel_keys(operation: str, out: Any) -> tuple[str, str]:
    if operation == "ai.toolCall":
        return "ai.toolCall.args", "ai.toolCall.result"
    parsed = _json(out)
    response = (
        "ai.response.toolCalls"
        if isinstance(parsed, list)
        else "ai.response.object"
        if isinstance(parsed, Mapping)
        else "ai.response.text"
    )
    return ("ai.prompt.messages" if ".do" in operation else "ai.prompt"), response


def _without_system_instructions(inp: Any, instructions: Any) -> Any:
    messages = _json(inp)
    if not instructions or not isinstance(messages, list) or not messages:
        return inp
    head = messages[0]
    folded = isinstance(head, Mapping) and head.get("role") == "system"
    if folded and _json(head.get("parts")) == _json(instructions):
        return orjson.dumps(messages[1:]).decode() if isinstance(inp, str) else messages[1:]
    return inp


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return safe_json_loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _trace_id(value: str) -> str:
    return normalize_id(value.replace("-", ""), TRACE_ID_HEX) or _hashed(value, TRACE_ID_HEX)


def _span_id(value: str) -> str:
    return normalize_id(value, SPAN_ID_HEX) or _hashed(value, SPAN_ID_HEX)


def _hashed(value: str, length: int) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:length]
