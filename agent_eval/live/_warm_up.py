"""The probe conversation ``serve`` reads before it listens (its warm-up).

The first conversation a receiver scores imports and builds what reading and rendering one
needs (the convention mappers, which are loaded lazily, pydantic's validators, the formatter's
first rendering); done on the first request, that is memory the process takes after start-up
and a slower first answer. :func:`probe_requests` gives one small two-turn OTel GenAI chat
(semantic conventions v1.37 ``gen_ai.input.messages`` / ``gen_ai.output.messages``) as an
OTLP/JSON and an OTLP/protobuf request body, which
:meth:`~agent_eval.live._receiver.Receiver.warm_up` reads, assembles and renders as it would
a received one, without holding, logging, counting or scoring it.
"""

from __future__ import annotations

import base64
from typing import Any, Literal

import orjson
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agent_eval.otel._otlp_json import export_request, span

__all__ = ["PROBE_TRACE_ID", "probe_requests"]

PROBE_TRACE_ID = "a9e0" * 8
"""The probe's trace id (32 hex); it never reaches the buffer, the log or the store."""


def _text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def _request() -> dict[str, Any]:
    """An OTLP/JSON export: an agent span over two chat calls, the second replaying the first."""
    first = [_text("system", "You are a probe."), _text("user", "Say hello.")]
    second = [*first, _text("assistant", "Hello."), _text("user", "Now goodbye.")]
    root = "a9e0a9e0a9e00001"
    spans = [span(PROBE_TRACE_ID, root, "invoke_agent",
                  attributes={"gen_ai.operation.name": "invoke_agent"})]  # fmt: skip
    for n, (history, answer) in enumerate(((first, "Hello."), (second, "Goodbye.")), start=2):
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "probe",
            "gen_ai.input.messages": orjson.dumps(history).decode(),
            "gen_ai.output.messages": orjson.dumps([_text("assistant", answer)]).decode(),
        }
        spans.append(span(PROBE_TRACE_ID, f"a9e0a9e0a9e0000{n}", "chat", parent_span_id=root,
                          attributes=attributes))  # fmt: skip
    return export_request(spans, resource={"service.name": "probe"}, scope=("agent-eval", "1"))


def probe_requests() -> list[tuple[Literal["json", "protobuf"], bytes]]:
    """The probe as ``(encoding, body)``: one OTLP/JSON and one OTLP/protobuf request body."""
    request = _request()
    proto = _request()  # protobuf's JSON mapping spells bytes fields in base64, not hex
    for record in proto["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in record:
                record[key] = base64.b64encode(bytes.fromhex(record[key])).decode()
    message = ParseDict(proto, ExportTraceServiceRequest())
    return [("json", orjson.dumps(request)), ("protobuf", message.SerializeToString())]
