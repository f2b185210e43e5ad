"""Property-based: mutated exports decode to spans and Skipped notes, or fail with DecodeError.

Each export container gets a valid document with one field replaced by an arbitrary JSON value
(wrong type, null, nested junk). Whatever the mutation, reading never raises anything but the
typed :class:`~agent_eval.errors.DecodeError`, and every item is a span or a ``Skipped`` note.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_eval.errors import DecodeError
from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.containers._base import Container, Skipped
from agent_eval.ingest.containers._jaeger import JaegerContainer
from agent_eval.ingest.containers._langfuse import LangfuseContainer
from agent_eval.ingest.containers._phoenix import PhoenixContainer
from agent_eval.ingest.containers._python_console import PythonConsoleContainer
from agent_eval.ingest.containers._readable_span import ReadableSpanContainer
from agent_eval.ingest.containers._tempo import TempoContainer

T, S = "3e289017fe03ffd7c4145316d2eb3d0d", "6c728e555894414d"

DOCUMENTS: dict[str, tuple[Container, Any]] = {
    "jaeger": (
        JaegerContainer(),
        {
            "data": [
                {
                    "traceID": T,
                    "processes": {
                        "p1": {
                            "serviceName": "s",
                            "tags": [{"key": "k", "type": "string", "value": "v"}],
                        }
                    },
                    "spans": [
                        {
                            "traceID": T,
                            "spanID": S,
                            "operationName": "op",
                            "startTime": 1,
                            "duration": 2,
                            "processID": "p1",
                            "references": [{"refType": "CHILD_OF", "traceID": T, "spanID": S}],
                            "tags": [{"key": "span.kind", "type": "string", "value": "client"}],
                            "logs": [{"timestamp": 1, "fields": [{"key": "event", "value": "x"}]}],
                        }
                    ],
                }
            ]
        },
    ),
    "tempo": (
        TempoContainer(),
        {
            "batches": [
                {
                    "resource": {
                        "attributes": [{"key": "service.name", "value": {"stringValue": "s"}}]
                    },
                    "instrumentationLibrarySpans": [
                        {
                            "instrumentationLibrary": {"name": "n"},
                            "spans": [
                                {
                                    "traceId": T,
                                    "spanId": S,
                                    "name": "n",
                                    "kind": "SPAN_KIND_CLIENT",
                                    "startTimeUnixNano": 1.5e18,
                                    "attributes": [{"key": "a", "value": {"intValue": 3}}],
                                    "events": [{"name": "e", "timeUnixNano": "1"}],
                                    "status": {"code": 2},
                                }
                            ],
                        }
                    ],
                }
            ]
        },
    ),
    "langfuse": (
        LangfuseContainer(),
        {
            "trace": {"id": T},
            "observations": [
                {
                    "id": S,
                    "traceId": T,
                    "name": "chat",
                    "startTime": "2025-01-01T00:00:00Z",
                    "input": "[]",
                    "output": "[]",
                    "level": "ERROR",
                    "metadata": {
                        "attributes": {
                            "gen_ai.operation.name": "chat",
                            "gen_ai.usage.input_tokens": "3",
                        },
                        "resourceAttributes": {},
                        "scope": {"name": "x"},
                    },
                }
            ],
        },
    ),
    "phoenix": (
        PhoenixContainer(),
        [
            {
                "name": "n",
                "context": {"trace_id": T, "span_id": S},
                "parent_id": None,
                "span_kind": "LLM",
                "start_time": "2025-01-01T00:00:00+00:00",
                "attributes": {"llm": {"input_messages": [{"message": {"role": "user"}}]}},
                "events": [{"name": "e", "timestamp": 1, "attributes": {}}],
            }
        ],
    ),
    "otel-js": (
        ReadableSpanContainer(),
        [
            {
                "name": "n",
                "kind": 2,
                "spanContext": {"traceId": T, "spanId": S},
                "parentSpanContext": {"spanId": S},
                "startTime": [1, 2],
                "endTime": [3, 4],
                "status": {"code": 2},
                "attributes": {"a": 1},
                "events": [{"name": "e", "time": [1, 2]}],
                "resource": {"attributes": {}},
                "instrumentationScope": {"name": "x"},
            }
        ],
    ),
    "otel-python-console": (
        PythonConsoleContainer(),
        {
            "name": "n",
            "context": {"trace_id": "0x" + T, "span_id": "0x" + S, "trace_state": "[]"},
            "kind": "SpanKind.CLIENT",
            "parent_id": None,
            "start_time": "2025-01-01T00:00:00.000001Z",
            "end_time": "2025-01-01T00:00:01.000001Z",
            "status": {"status_code": "ERROR", "description": "boom"},
            "attributes": {"a": [1, 2]},
            "events": [{"name": "e", "timestamp": "2025-01-01T00:00:00Z", "attributes": {}}],
            "links": [],
            "resource": {"attributes": {"service.name": "s"}, "schema_url": ""},
        },
    ),
    "tempo-v2": (
        TempoContainer(),
        {
            "trace": {
                "resourceSpans": [
                    {
                        "resource": {"attributes": []},
                        "scopeSpans": [
                            {
                                "scope": {"name": "x"},
                                "spans": [
                                    {
                                        "traceId": T,
                                        "spanId": S,
                                        "name": "n",
                                        "kind": "SPAN_KIND_CLIENT",
                                        "startTimeUnixNano": "1",
                                        "endTimeUnixNano": "2",
                                        "attributes": [],
                                    }
                                ],
                            }
                        ],
                    }
                ]
            },
            "metrics": {"inspectedBytes": "10"},
        },
    ),
    "langfuse-native": (
        LangfuseContainer(),
        {
            "data": [
                {
                    "id": S,
                    "traceId": T,
                    "type": "GENERATION",
                    "parentObservationId": None,
                    "startTime": "2025-01-01T00:00:00Z",
                    "model": "m",
                    "input": {"messages": [{"role": "user", "content": "hi"}]},
                    "output": {"role": "assistant", "content": "yo"},
                    "usageDetails": {"input": 1, "output": 2},
                    "usage": {"input": 1, "output": 2, "unit": "TOKENS"},
                    "metadata": {"k": "v"},
                }
            ],
            "meta": {"page": 1},
        },
    ),
}

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats()
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, child in items:
        out += paths(child, (*prefix, key))
    return out


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = replaced(value[path[0]], path[1:], new)
    return copy


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(DOCUMENTS)), choice=st.integers(min_value=0), new=JSON)
def test_a_mutated_export_never_raises_an_untyped_error(name: str, choice: int, new: Any) -> None:
    container, document = DOCUMENTS[name]
    where = paths(document)
    mutated = replaced(document, where[choice % len(where)], new)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "export.json"
        path.write_bytes(orjson.dumps(mutated, option=orjson.OPT_NON_STR_KEYS))
        try:
            items = list(container.read(str(path)))
        except DecodeError:
            return
    assert all(isinstance(item, SpanRecord | Skipped) for item in items)


def test_the_unmutated_documents_give_one_span_each() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for name, (container, document) in DOCUMENTS.items():
            path = Path(tmp) / f"{name}.json"
            path.write_bytes(orjson.dumps(document))
            (span,) = container.read(str(path))
            assert isinstance(span, SpanRecord), name
            assert (span.trace_id, span.span_id) == (T, S)
