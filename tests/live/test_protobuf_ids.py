"""Issue 33: protobuf spans whose trace or span id has the wrong length read the same in
``agent-eval serve`` and in ``agent-eval ingest`` of the same bytes: one walker
(:func:`agent_eval.ingest.containers._otlp_proto.request_dict`) keeps the raw id bytes and the
one decoder refuses any other length, so an 11-byte id is never read as base64 in one path and
hex in the other."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._otlp_proto import OtlpProtoContainer
from agent_eval.live._payloads import decode

GOOD_TRACE, GOOD_SPAN = b"\x01" * 16, b"\x02" * 8


def _body(*spans: tuple[bytes, bytes, bytes]) -> bytes:
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for trace_id, span_id, parent in spans:
        span = scope.spans.add(trace_id=trace_id, span_id=span_id, parent_span_id=parent)
        span.name, span.start_time_unix_nano, span.end_time_unix_nano = "chat", 1, 2
    return request.SerializeToString()


def _shape(items: list[ContainerItem]) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = []
    for item in items:
        if isinstance(item, Skipped):
            out.append(("skipped", item.reason, item.trace_id, item.span_id, item.detail))
        else:
            assert isinstance(item, SpanRecord)
            out.append(("span", item.trace_id, item.span_id, item.parent_span_id))
    return out


def _both(body: bytes, tmp_path: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    live, _ = decode(body, signal="traces", encoding="protobuf", content_encoding=None,
                     max_bytes=1 << 20)  # fmt: skip
    path = tmp_path / "spans.pb"
    path.write_bytes(body)
    return _shape(live), _shape(list(OtlpProtoContainer().read(str(path))))


@pytest.mark.parametrize(
    ("trace_id", "span_id", "parent", "reason"),
    [
        (b"\x01" * 11, GOOD_SPAN, b"", "invalid_trace_id"),  # its hex is valid base64 text
        (b"\x01" * 12, GOOD_SPAN, b"", "invalid_trace_id"),
        (b"\x01" * 17, GOOD_SPAN, b"", "invalid_trace_id"),
        (GOOD_TRACE, b"\x02" * 11, b"", "invalid_span_id"),
        (GOOD_TRACE, b"\x02" * 6, b"", "invalid_span_id"),
        (GOOD_TRACE, GOOD_SPAN, b"\x03" * 11, "invalid_parent_span_id"),
        (GOOD_TRACE, GOOD_SPAN, b"", None),
        (GOOD_TRACE, GOOD_SPAN, b"\x03" * 8, None),
    ],
)
def test_an_id_of_the_wrong_length_reads_the_same_live_and_offline(
    trace_id: bytes, span_id: bytes, parent: bytes, reason: str | None, tmp_path: Path
) -> None:
    body = _body((trace_id, span_id, parent), (GOOD_TRACE, b"\x09" * 8, b""))
    live, offline = _both(body, tmp_path)
    assert live == offline
    assert live[-1] == ("span", GOOD_TRACE.hex(), "09" * 8, None)  # the other span is kept
    if reason is None:
        assert live[0][0] == "span"
    else:
        assert live[0][:2] == ("skipped", reason)
        bad = {"invalid_trace_id": trace_id, "invalid_span_id": span_id}.get(reason, parent)
        assert f"is {len(bad)} bytes; OTLP requires" in str(live[0][4])


def test_a_file_whose_spans_all_have_bad_trace_ids_is_read_as_spans(tmp_path: Path) -> None:
    """Not as a logs request (the two share their wire layout): each span is skipped with its
    reason, as ``serve`` skips it."""
    body = _body((b"\x01" * 11, GOOD_SPAN, b""), (b"\x01" * 20, b"\x05" * 8, b""))
    live, offline = _both(body, tmp_path)
    assert live == offline
    assert [s[:2] for s in live] == [("skipped", "invalid_trace_id")] * 2
    assert [s[3] for s in live] == [GOOD_SPAN.hex(), "05" * 8]
