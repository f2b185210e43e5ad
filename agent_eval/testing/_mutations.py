"""Adversarial mutations of real input files, and a check that ingest survives them.

For fuzzing ingest (``tests/ingest/test_bad_input_fuzz.py`` in CI, ``bench/fuzz_ingest.py`` for
long runs): :func:`mutate` turns the bytes of a real trace file into a malformed variant of one
:data:`MUTATIONS` kind, and :func:`check_ingest` reads the result the way ``agent-eval ingest``
does and classifies what happened (:class:`FuzzOutcome`). The contract checked is the one of the
README's "what happens to bad input": every file ends read (conversations or per-item skips, the
span accounting balanced, every conversation writable as UTF-8 and readable back) or rejected
with a typed :class:`~agent_eval.errors.InputError`; never an untyped exception, never a safety
net (``internal_error``) firing.

The mutations are structure-aware for JSON, JSON Lines and YAML (one value of the document, or
of one line, is replaced by a hostile value), for binary OTLP (an attribute nested deeper than
the protobuf decoder goes) and byte-level for everything (truncation, flipped bytes, a one-byte
file). :func:`mutate_line` damages one line of a JSON Lines file (the first one too) and
:func:`lost_records` checks that every good record around it is still read. Standard library
only (and the PyYAML and protobuf the project depends on): no hypothesis needed at run time.
"""

from __future__ import annotations

import json
import random
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "LINE_MUTATIONS",
    "MUTATIONS",
    "FuzzOutcome",
    "Seed",
    "check_ingest",
    "is_json_lines",
    "lost_records",
    "mutate",
    "mutate_line",
    "seed_files",
]

_MARK = "\x00agent-eval-mutation\x00"
"""Placeholder a structure-aware mutation puts in the document before it is serialized."""
_YAML_MARK = "AGENTEVALMUTATION7F3A"
"""The placeholder in YAML (a plain scalar, so that it is written as it is)."""

_HOSTILE: dict[str, tuple[bytes, ...]] = {
    "deep_nesting": (
        b"[" * 1000 + b"]" * 1000,
        b'{"a":' * 300 + b"1" + b"}" * 300,
        b"[" * 5000 + b"]" * 5000,
        b"[" * 250 + b'"x"' + b"]" * 250,
    ),
    "lone_surrogate": (b'"\\ud83d"', b'"ok \\udc00 end"', b'"\\ud83d\\ud83d"'),
    "huge_integer": (
        b"9" * 5000,
        b"-" + b"1" * 4400,
        b"18446744073709551616",
        b"9" * 4301,  # one digit over Python's integer string conversion limit
        b"1" * 400,  # beyond the double range: orjson refuses it
        b"-" + b"9" * 310,
    ),
    "non_finite": (b"Infinity", b"-Infinity", b"NaN", b"1e308", b"-1e308", b"1e400"),
    "wrong_type": (b"null", b'"x"', b"[]", b"{}", b"true", b"-1", b"1.5", b'"1e308"'),
    "control_chars": (b'"\\u001b[2J\\u001b]0;pwned\\u0007 \\u009b31m"', b'"a\\u0000b"'),
}
MUTATIONS: tuple[str, ...] = (
    *_HOSTILE,
    "truncate",
    "flip_bytes",
    "one_byte",
    "invalid_utf8",
)
"""Mutation kinds: hostile values in one place of the document, or byte-level damage."""


def _nodes(document: Any, limit: int = 4000) -> list[tuple[Any, Any]]:
    """``(container, key)`` of up to ``limit`` values in ``document``, breadth first."""
    found: list[tuple[Any, Any]] = []
    queue = [document]
    while queue and len(found) < limit:
        node = queue.pop(0)
        children = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in children:
            found.append((node, key))
            if isinstance(value, dict | list):
                queue.append(value)
    return found


def _replace_value(text: bytes, payload: bytes, rng: random.Random) -> bytes | None:
    """``text`` (one JSON document) with one random value replaced by ``payload``."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(document, dict | list):
        return payload
    nodes = _nodes(document)
    if not nodes:
        return payload
    node, key = rng.choice(nodes)
    node[key] = _MARK
    encoded = json.dumps(document, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return encoded.replace(json.dumps(_MARK).encode(), payload, 1)


def _replace_yaml_value(text: bytes, payload: bytes, rng: random.Random) -> bytes | None:
    """``text`` (a YAML document of mappings and lists) with one value replaced by ``payload``.

    ``payload`` is JSON text, which YAML's flow style reads too.
    """
    import yaml

    try:
        document = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    if not isinstance(document, dict | list):
        return None
    nodes = _nodes(document)
    if not nodes:
        return None
    node, key = rng.choice(nodes)
    node[key] = _YAML_MARK
    dumped: str = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=1 << 20)
    return dumped.encode("utf-8", "surrogatepass").replace(_YAML_MARK.encode(), payload, 1)


def _deep_protobuf(data: bytes, rng: random.Random) -> bytes | None:
    """A binary OTLP request with one span given an attribute nested 17-200 levels deep."""
    from google.protobuf.message import DecodeError as ProtobufDecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    try:
        request = ExportTraceServiceRequest.FromString(data)
    except (ProtobufDecodeError, ValueError, RuntimeError):
        return None
    spans = [s for r in request.resource_spans for sc in r.scope_spans for s in sc.spans]
    if not spans:
        return None
    attribute = rng.choice(spans).attributes.add()
    attribute.key = "deep"
    value = attribute.value
    for _ in range(rng.choice((17, 31, 32, 33, 48, 60, 200))):
        value = (
            value.array_value.values.add()
            if rng.random() < 0.5
            else _kvlist_child(value.kvlist_value.values.add())
        )
    value.string_value = "x"
    serialized: bytes = request.SerializeToString()
    return serialized


def _kvlist_child(item: Any) -> Any:
    item.key = "k"
    return item.value


def _structured(data: bytes, payload: bytes, rng: random.Random) -> bytes | None:
    if data.lstrip().startswith(b"interactions:"):  # a YAML cassette
        return _replace_yaml_value(data, payload, rng)
    whole = _replace_value(data, payload, rng)
    if whole is not None:
        return whole
    lines = data.splitlines(keepends=True)  # JSON Lines: mutate one line
    usable = [i for i, line in enumerate(lines) if line.strip()]
    if not usable:
        return None
    index = rng.choice(usable)
    changed = _replace_value(lines[index], payload, rng)
    if changed is None:
        return None
    lines[index] = changed + (b"\n" if lines[index].endswith(b"\n") else b"")
    return b"".join(lines)


def _bytes_level(kind: str, data: bytes, rng: random.Random) -> bytes:
    if kind == "one_byte" or not data:
        return data[:1] or b"{"
    if kind == "truncate":
        return data[: rng.randrange(1, len(data))] if len(data) > 1 else b""
    if kind == "invalid_utf8":
        at = rng.randrange(len(data))
        return data[:at] + rng.choice((b"\xed\xa0\xbd", b"\xff", b"\xc3")) + data[at:]
    damaged = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        damaged[rng.randrange(len(damaged))] = rng.randrange(256)
    return bytes(damaged)


def mutate(data: bytes, rng: random.Random, kind: str | None = None) -> tuple[str, bytes]:
    """A malformed variant of ``data``.

    Args:
        data: The bytes of a real input file.
        rng: The source of randomness (seed it for reproducible runs).
        kind: One of :data:`MUTATIONS`, or ``None`` to draw one.

    Returns:
        ``(kind, mutated bytes)``; a structure-aware kind on a file that is not JSON falls back
        to ``"flip_bytes"`` (and says so in ``kind``).

    Raises:
        ValueError: ``kind`` is not one of :data:`MUTATIONS`.

    """
    kind = kind or rng.choice(MUTATIONS)
    if kind not in MUTATIONS:
        raise ValueError(f"unknown mutation {kind!r}; choose one of {', '.join(MUTATIONS)}")
    if kind == "deep_nesting" and data[:1] == b"\n":  # binary OTLP (field 1, length-delimited)
        deep = _deep_protobuf(data, rng)
        if deep is not None:
            return kind, deep
    if kind in _HOSTILE:
        mutated = _structured(data, rng.choice(_HOSTILE[kind]), rng)
        if mutated is not None:
            return kind, mutated
        kind = "flip_bytes"
    return kind, _bytes_level(kind, data, rng)


@dataclass(frozen=True, slots=True)
class FuzzOutcome:
    """What reading one mutated file gave.

    Attributes:
        kind: ``"read"`` (conversations and/or per-item skips, accounting balanced),
            ``"rejected"`` (a typed :class:`~agent_eval.errors.InputError` for the file),
            ``"untyped"`` (any other exception: a bug), ``"unbalanced"`` (the accounting did
            not add up: a bug), ``"internal_error"`` (a safety net fired: a bug under it) or
            ``"unwritable"`` (a conversation could not be written as UTF-8 JSON and read back).
        conversations: AgentTraces produced.
        skipped: Items skipped with a reason (spans, log records, records).
        replaced: Unencodable code points replaced at the edge.
        detail: The error or traceback for anything but ``"read"``.

    """

    kind: Literal["read", "rejected", "untyped", "unbalanced", "internal_error", "unwritable"]
    conversations: int = 0
    skipped: int = 0
    replaced: int = 0
    detail: str = ""

    @property
    def ok(self) -> bool:
        """Whether the outcome keeps the bad-input contract (read or rejected, typed)."""
        return self.kind in ("read", "rejected")


def _unwritable(traces: list[Any]) -> str | None:
    """The traceback of the first conversation that does not survive a write and read back."""
    from agent_eval._trace import AgentTrace

    for trace in traces:
        try:
            AgentTrace.model_validate_json(trace.model_dump_json().encode("utf-8"))
        except Exception:
            return traceback.format_exc()
    return None


def check_ingest(path: str | Path, format: str = "auto") -> FuzzOutcome:  # noqa: PLR0911
    """Read ``path`` with ``ingest`` and classify the outcome (see :class:`FuzzOutcome`).

    Every conversation produced is written with ``model_dump_json``, encoded as UTF-8 and
    validated back, as ``agent-eval ingest --out`` and the ``agent-trace-jsonl`` reader would.
    """
    from agent_eval.errors import InputError
    from agent_eval.ingest import ingest

    run = ingest([str(path)], format=format)
    try:
        traces = list(run)
    except InputError as exc:
        return FuzzOutcome("rejected", detail=str(exc)[:300])
    except Exception:
        return FuzzOutcome("untyped", detail=traceback.format_exc())
    report = run.report
    skipped = (
        sum(report.spans_ignored.values())
        + sum(report.logs_ignored.values())
        + sum(report.records_ignored.values())
    )
    counts = (len(traces), skipped, report.text_replaced)
    if report.internal_errors:
        details = [f.error or "" for f in report.files if f.error] + [
            s.detail for s in report.skipped if s.reason == "internal_error"
        ]
        return FuzzOutcome("internal_error", *counts, detail="\n".join(details))
    if not report.balanced:
        return FuzzOutcome("unbalanced", *counts, detail=str(report.to_json()))
    failure = _unwritable(traces)
    if failure is not None:
        return FuzzOutcome("unwritable", *counts, detail=failure)
    error = next((f.error for f in report.files if f.error), None)
    if error is not None and not traces:
        return FuzzOutcome("rejected", *counts, detail=error)
    return FuzzOutcome("read", *counts)


@dataclass(frozen=True, slots=True)
class Seed:
    """A real input file to mutate, and the container that reads it.

    Attributes:
        path: The file.
        format: The container name (``--format``) it is read with.

    """

    path: Path
    format: str


_SHARED_SEEDS = (
    ("otel/*.trace.json", "langfuse"),
    ("otel/*.attrs.json", "span-attributes"),
    ("otel/*.yaml", "openai-cassette"),
    ("otel/*.jaeger.json", "jaeger"),
    ("otel/*.tempo-otlp.json", "tempo"),
)
"""(glob under the shared data directory, container) of real exports used as they are."""

_PHOENIX_SPAN: dict[str, Any] = {
    "name": "ChatCompletion",
    "context": {"trace_id": "6b3e8a1f0c2d4e5f8a9b0c1d2e3f4a5b", "span_id": "1111111111111111"},
    "parent_id": None,
    "span_kind": "LLM",
    "start_time": "2025-01-01T00:00:00+00:00",
    "end_time": "2025-01-01T00:00:01.5+00:00",
    "status_code": "OK",
    "attributes": {
        "llm": {
            "model_name": "gpt-4o",
            "input_messages": [{"message": {"role": "user", "content": "Weather in Paris?"}}],
            "output_messages": [{"message": {"role": "assistant", "content": "Sunny."}}],
        },
        "openinference": {"span": {"kind": "LLM"}},
    },
    "events": [],
}
_READABLE_SPAN: dict[str, Any] = {
    "name": "chat gpt-4o",
    "kind": 2,
    "spanContext": {"traceId": "5b8aa5a2d2c872e8321cf37308d69df2", "spanId": "2222222222222222"},
    "startTime": [1_700_000_000, 123_000_000],
    "endTime": [1_700_000_001, 0],
    "status": {"code": 1},
    "attributes": {
        "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "Weather in Paris?",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "Sunny.",
    },
    "events": [],
    "resource": {"_attributes": {"service.name": "web"}},
    "instrumentationScope": {"name": "@traceloop/instrumentation-openai", "version": "0.11"},
}


def _phoenix_lines(count: int) -> bytes:
    """``count`` Phoenix spans of one trace as JSON Lines."""
    lines = []
    for number in range(1, count + 1):
        one = json.loads(json.dumps(_PHOENIX_SPAN))
        one["context"]["span_id"] = f"{number:016x}"
        lines.append(json.dumps(one).encode() + b"\n")
    return b"".join(lines)


def _message_lines(count: int) -> bytes:
    """``count`` chat-log records as JSON Lines (one conversation each)."""
    return b"".join(
        json.dumps(
            {
                "conversation_id": f"c{n}",
                "messages": [
                    {"role": "user", "content": f"Question {n}?"},
                    {"role": "assistant", "content": f"Answer {n}."},
                ],
            }
        ).encode()
        + b"\n"
        for n in range(count)
    )


def _hex_ids_to_base64(value: Any) -> Any:
    """OTLP/JSON (hex ids) -> proto3 JSON (base64 bytes), for ``json_format.ParseDict``."""
    import base64

    if isinstance(value, list):
        return [_hex_ids_to_base64(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        if key in ("traceId", "spanId", "parentSpanId") and isinstance(item, str) and item:
            out[key] = base64.b64encode(bytes.fromhex(item)).decode()
        else:
            out[key] = _hex_ids_to_base64(item)
    return out


def _first_records(path: Path, key: str | None, count: int) -> Any:
    document = json.loads(path.read_bytes())
    if key is None:
        return document[:count]
    return document | {key: document[key][:count]}


def seed_files(fixtures: Path, shared: Path | None, work: Path) -> list[Seed]:
    """The seed corpus: real files, and small files derived from them, one set per container.

    Args:
        fixtures: The repository's ``fixtures/otel`` (recorded by real instrumentations).
        shared: The shared public data directory (``../shared/data``), or ``None`` when absent;
            without it the Jaeger, Tempo, Langfuse, cassette, span-attribute and tau seeds are
            left out.
        work: A directory the derived files are written to.

    Returns:
        Seeds for ``otlp-json`` (the fixtures), ``otlp-proto`` (a fixture as protobuf),
        ``agent-trace-jsonl`` (the fixtures ingested), ``phoenix`` and ``openai-messages``
        (one record, and JSON Lines of three), ``otel-js`` (an array, and the recorded JSON
        Lines of ``fixtures/js`` beside ``fixtures``) and, from the shared data, the other
        containers.

    """
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    from agent_eval.ingest import ingest

    work.mkdir(parents=True, exist_ok=True)
    otlp = sorted(p for p in fixtures.glob("*.otlp.json*"))
    seeds = [Seed(p, "otlp-json") for p in otlp]
    single = next(p for p in otlp if p.suffix == ".json")
    request = json_format.ParseDict(
        _hex_ids_to_base64(json.loads(single.read_bytes())), ExportTraceServiceRequest()
    )
    derived = {
        "request.pb": (request.SerializeToString(), "otlp-proto"),
        "traces.jsonl": (
            "".join(t.model_dump_json() + "\n" for t in ingest(otlp)).encode(),
            "agent-trace-jsonl",
        ),
        "phoenix.jsonl": (json.dumps(_PHOENIX_SPAN).encode() + b"\n", "phoenix"),
        "phoenix-lines.jsonl": (_phoenix_lines(3), "phoenix"),
        "messages.jsonl": (_message_lines(3), "openai-messages"),
        "readable.json": (json.dumps([_READABLE_SPAN]).encode(), "otel-js"),
        "messages.json": (
            json.dumps(
                {
                    "conversation_id": "c1",
                    "reference": "weather",
                    "messages": [
                        {"role": "user", "content": "Weather in Paris?"},
                        {"role": "assistant", "content": "Sunny.", "usage": {"total": 3}},
                    ],
                }
            ).encode(),
            "openai-messages",
        ),
    }
    if shared is not None and shared.is_dir():
        for pattern, name in _SHARED_SEEDS:
            seeds += [Seed(p, name) for p in sorted(shared.glob(pattern))]
        tau = sorted(shared.glob("tau-bench/*.json"))
        if tau:
            derived["tau.json"] = (
                json.dumps(_first_records(tau[0], None, 2)).encode(),
                "tau-bench",
            )
        tau2 = sorted(shared.glob("tau2-bench/*.json"))
        if tau2:
            small = _first_records(tau2[-1], "simulations", 2)
            derived["tau2.json"] = (json.dumps(small).encode(), "tau2-bench")
    console = fixtures.parent / "js" / "console-spans.jsonl"
    if console.is_file():
        seeds.append(Seed(console, "otel-js"))
    for name, (data, container) in derived.items():
        (work / name).write_bytes(data)
        seeds.append(Seed(work / name, container))
    return seeds


LINE_MUTATIONS: tuple[str, ...] = ("cut_line", "garbage_line", "other_shape_line", "hostile_value")
"""How :func:`mutate_line` damages one line of a JSON Lines file."""
_GARBAGE = (b"INFO exporter: flushed 3 spans", b"\x00\x01\x02", b"}{", b"\xff\xfe not UTF-8")
_OTHER_SHAPES = (b"[1, 2]", b'"a string"', b"null", b"{}", b'{"unrelated": true}', b"42")
_NEUTRAL = b"{}"
"""What stands in for the damaged line in the baseline: a record that holds nothing."""


def is_json_lines(data: bytes) -> bool:
    """Whether ``data`` has two or more non-blank lines, each a JSON object (JSON Lines)."""
    lines = [line for line in data.splitlines() if line.strip()]
    if len(lines) < 2:  # one line is a JSON document, not JSON Lines
        return False
    try:
        return all(isinstance(json.loads(line), dict) for line in lines)
    except ValueError:
        return False


def mutate_line(
    data: bytes, rng: random.Random, kind: str | None = None
) -> tuple[str, int, bytes, bytes]:
    """One line of a JSON Lines file damaged, and the same file with that line neutral.

    Args:
        data: A JSON Lines file (:func:`is_json_lines`).
        rng: The source of randomness.
        kind: One of :data:`LINE_MUTATIONS`, or ``None`` to draw one.

    Returns:
        ``(kind, line index, mutated bytes, baseline bytes)``: in the baseline the damaged line
        is ``{}`` (a record that holds nothing, so record numbering is unchanged). The first
        line is drawn a third of the time, as it is where format detection looks.

    Raises:
        ValueError: ``kind`` is not one of :data:`LINE_MUTATIONS`.

    """
    kind = kind or rng.choice(LINE_MUTATIONS)
    if kind not in LINE_MUTATIONS:
        raise ValueError(f"unknown line mutation {kind!r}; choose one of {LINE_MUTATIONS}")
    lines = data.splitlines(keepends=True)
    usable = [i for i, line in enumerate(lines) if line.strip()]
    index = usable[0] if rng.random() < 1 / 3 else rng.choice(usable)
    line = lines[index].rstrip(b"\r\n")
    if kind == "cut_line":
        bad = line[: rng.randrange(1, max(2, len(line) - 1))]
    elif kind == "garbage_line":
        bad = rng.choice(_GARBAGE)
    elif kind == "other_shape_line":
        bad = rng.choice(_OTHER_SHAPES)
    else:
        hostile = rng.choice([p for v in _HOSTILE.values() for p in v])
        bad = _replace_value(line, hostile, rng) or line
    mutated = [*lines[:index], bad + b"\n", *lines[index + 1 :]]
    baseline = [*lines[:index], _NEUTRAL + b"\n", *lines[index + 1 :]]
    return kind, index, b"".join(mutated), b"".join(baseline)


def _record_keys(path: Path, format: str) -> set[str] | str:
    """Keys of the records a container yields for ``path``, or why it yields none."""
    from agent_eval._trace import AgentTrace
    from agent_eval.errors import InputError
    from agent_eval.ingest._pipeline import detect_container, read_items
    from agent_eval.ingest._spans import LogRecord, SpanRecord
    from agent_eval.ingest.containers._base import containers

    keys: set[str] = set()
    try:
        container = detect_container(str(path)) if format == "auto" else containers.get(format)
        for item in read_items(container, str(path)):
            if isinstance(item, SpanRecord):
                keys.add(f"span {item.trace_id} {item.span_id}")
            elif isinstance(item, LogRecord):
                keys.add(f"log {item.trace_id} {item.span_id} {item.time_unix_nano}")
            elif isinstance(item, AgentTrace):
                keys.add(f"conversation {item.conversation_id} {item.messages!r}")
    except InputError as exc:
        return f"rejected: {str(exc)[:200]}"
    except Exception:
        return "untyped: " + traceback.format_exc()
    finally:
        from agent_eval.ingest import _sources as sources

        sources.release(str(path))
    return keys


def lost_records(mutated: Path, baseline: Path, format: str) -> str | None:
    """What reading ``mutated`` loses of the good records that ``baseline`` gives.

    Both files are read with the container (``format``, or the one ``--format auto`` detects
    for each), so a bad line that changes the detected format, rejects the file or stops the
    reading shows as lost records.

    Returns:
        ``None`` when every record (span, log record, conversation) of ``baseline`` is also
        read from ``mutated``; else a sentence naming how many are lost, or the error.

    """
    expected = _record_keys(baseline, format)
    got = _record_keys(mutated, format)
    if isinstance(expected, str):
        return None  # the baseline itself is not readable: nothing to keep
    if isinstance(got, str):
        return f"{len(expected)} good records lost: {got}"
    lost = expected - got
    if lost:
        return f"{len(lost)} of {len(expected)} good records lost, e.g. {sorted(lost)[0][:160]}"
    return None
