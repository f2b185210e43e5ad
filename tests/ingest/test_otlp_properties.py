"""Property-based tests: mutated OTLP decodes, or fails with a typed error, and nothing else."""

from __future__ import annotations

import base64
import json
import tempfile
from pathlib import Path
from typing import Any

import orjson
from google.protobuf.json_format import ParseDict
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agent_eval._trace import AgentTrace
from agent_eval.errors import DecodeError
from agent_eval.ingest._pipeline import ingest
from agent_eval.ingest._spans import LogRecord, SpanRecord
from agent_eval.ingest.containers._base import Container, Skipped
from agent_eval.ingest.containers._otlp_json import OtlpJsonContainer
from agent_eval.ingest.containers._otlp_proto import OtlpProtoContainer
from agent_eval.ingest.containers._otlp_values import BadValue, decode_any_value
from agent_eval.testing._otlp import any_value, export_request, log_record, span

TRACE = "0af7651916cd43dd8448eb211c80319c"
HEX = set("0123456789abcdef")
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


HISTORY = [
    {"role": "user", "parts": [{"type": "text", "content": "hi"}]},
    {
        "role": "assistant",
        "parts": [{"type": "tool_call", "id": "c1", "name": "f", "arguments": {}}],
    },
    {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "ok"}]},
]


CHAT_ATTRIBUTES = {
    "gen_ai.operation.name": "chat",
    "gen_ai.conversation.id": "c",
    "gen_ai.input.messages": json.dumps(HISTORY),
    "gen_ai.output.messages": json.dumps(HISTORY[-1:]),
    "gen_ai.usage.input_tokens": 4,
}


def base_request() -> dict[str, Any]:
    spans = [
        span(
            TRACE,
            "b7ad6b7169203331",
            "chat",
            kind=3,
            status=(2, "x"),
            attributes={"s": "v", "i": 3, "f": 1.5, "b": True, "l": [1, "a"], "m": {"k": b"\x00"}},
            events=[("gen_ai.content.prompt", 5, {"gen_ai.prompt": "hi"})],
        ),
        span(TRACE, "00f067aa0ba902b7", "tool", parent_span_id="b7ad6b7169203331"),
        span(TRACE, "10f067aa0ba902b7", "chat 2", kind=3, parent_span_id="00f067aa0ba902b7",
             attributes=CHAT_ATTRIBUTES),
    ]  # fmt: skip
    logs = [
        log_record(
            "gen_ai.user.message", {"content": "hi"}, trace_id=TRACE, span_id="b7ad6b7169203331"
        )
    ]
    return export_request(spans, logs)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path (keys and indices) into a JSON tree, the root excluded."""
    out: list[tuple[Any, ...]] = []
    children = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, child in children:
        out.append((*prefix, key))
        out.extend(paths(child, (*prefix, key)))
    return out


BASE = base_request()
PATHS = paths(BASE)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)


def mutate(tree: Any, path: tuple[Any, ...], action: str, value: Any) -> Any:
    tree = json.loads(json.dumps(tree))
    parent = tree
    for key in path[:-1]:
        parent = parent[key]
    if action == "delete":
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return tree


def assert_typed_outcome(container: Container, data: bytes, name: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        try:
            items = list(container.read(str(path)))
        except DecodeError as exc:
            assert exc.path == str(path)
            return
    for item in items:
        assert isinstance(item, SpanRecord | LogRecord | Skipped), item
        if isinstance(item, SpanRecord):
            assert len(item.trace_id) == 32 and set(item.trace_id) <= HEX
            assert len(item.span_id) == 16 and set(item.span_id) <= HEX
            assert item.kind in (
                "UNSPECIFIED",
                "INTERNAL",
                "SERVER",
                "CLIENT",
                "PRODUCER",
                "CONSUMER",
            )
            assert item.status_code in ("UNSET", "OK", "ERROR")
            assert all(isinstance(k, str) for k in item.attributes)
        elif isinstance(item, Skipped):
            assert item.reason and item.detail and item.source is not None
            assert item.spans >= 0 and item.logs >= 0


def _dumps(tree: Any) -> bytes:
    return json.dumps(tree).encode()  # stdlib: writes NaN and big ints that orjson rejects


@SETTINGS
@given(
    path=st.sampled_from(PATHS),
    action=st.sampled_from(["replace", "delete"]),
    value=json_values,
    layout=st.sampled_from(["line", "pretty"]),
)
def test_structurally_mutated_request_decodes_or_fails_typed(
    path: tuple[Any, ...], action: str, value: Any, layout: str
) -> None:
    tree = mutate(BASE, path, action, value)
    data = _dumps(tree) + b"\n" if layout == "line" else json.dumps(tree, indent=2).encode()
    assert_typed_outcome(OtlpJsonContainer(), data, "m.json")


def proto_request() -> bytes:
    request = {"resourceSpans": json.loads(json.dumps(BASE["resourceSpans"]))}
    for item in request["resourceSpans"][0]["scopeSpans"][0]["spans"]:  # proto3 JSON ids: base64
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in item:
                item[key] = base64.b64encode(bytes.fromhex(item[key])).decode()
    return ParseDict(request, ExportTraceServiceRequest()).SerializeToString()


PROTO = proto_request()

byte_edits = st.lists(
    st.tuples(
        st.sampled_from(["flip", "cut", "insert", "truncate"]),
        st.floats(0, 1),
        st.binary(max_size=6),
    ),
    min_size=1,
    max_size=4,
)


def apply_edits(data: bytes, edits: list[tuple[str, float, bytes]]) -> bytes:
    for action, where, payload in edits:
        at = int(where * len(data))
        if action == "flip" and data:
            at = min(at, len(data) - 1)
            data = data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]
        elif action == "cut":
            data = data[:at] + data[at + 8 :]
        elif action == "insert":
            data = data[:at] + payload + data[at:]
        else:
            data = data[:at]
    return data


@SETTINGS
@given(edits=byte_edits, lines=st.integers(1, 3))
def test_byte_mutated_json_lines_decode_or_fail_typed(
    edits: list[tuple[str, float, bytes]], lines: int
) -> None:
    data = b"\n".join([orjson.dumps(BASE)] * lines)
    assert_typed_outcome(OtlpJsonContainer(), apply_edits(data, edits), "m.jsonl")


@SETTINGS
@given(edits=byte_edits)
def test_byte_mutated_protobuf_decodes_or_fails_typed(
    edits: list[tuple[str, float, bytes]],
) -> None:
    assert_typed_outcome(OtlpProtoContainer(), apply_edits(PROTO, edits), "m.pb")


scalar_attributes = st.recursive(
    st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary(max_size=16),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)


@SETTINGS
@given(value=scalar_attributes)
def test_any_value_round_trips(value: Any) -> None:
    decoded = decode_any_value(orjson.loads(orjson.dumps(any_value(value))))
    assert decoded == value


@SETTINGS
@given(value=json_values)
def test_decode_any_value_accepts_or_raises_bad_value(value: Any) -> None:
    try:
        decode_any_value(value)
    except BadValue as exc:
        assert exc.reason == "invalid_attribute" and exc.detail


@SETTINGS
@given(
    path=st.sampled_from(PATHS),
    action=st.sampled_from(["replace", "delete"]),
    value=json_values,
)
@example(path=("resourceSpans",), action="replace", value=float("inf"))  # first line not JSON
def test_mutated_request_through_the_whole_pipeline_stays_accounted(
    path: tuple[Any, ...], action: str, value: Any
) -> None:
    tree = mutate(BASE, path, action, value)
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "m.jsonl"
        file.write_bytes(_dumps(tree) + b"\n" + orjson.dumps(BASE) + b"\n")
        run = ingest(file, format="otlp-json")
        try:
            traces = list(run)
        except DecodeError as exc:  # the first line is not JSON (NaN, big ints): a file error
            assert exc.path == str(file) and exc.line == 1
            return
    assert all(isinstance(t, AgentTrace) for t in traces)
    assert run.report.balanced, run.report.to_json()
