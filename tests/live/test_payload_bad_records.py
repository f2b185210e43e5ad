"""The live receiver decodes with the file containers' decoders: one bad span costs itself.

Issue 32: a protobuf body with one attribute nested past the decoder's limit, or a JSON body
with one number past the double range, was refused whole (HTTP 400, every span lost).
"""

from __future__ import annotations

import orjson

from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.containers._base import Skipped
from agent_eval.live._payloads import decode
from agent_eval.testing._otlp import export_request, span

from ..ingest.test_bad_records import T, deep_request


def test_a_protobuf_body_with_one_deep_span_keeps_the_others() -> None:
    items, _ = decode(
        deep_request(60), signal="traces", encoding="protobuf", content_encoding=None,
        max_bytes=10**7,
    )  # fmt: skip
    assert [i.span_id for i in items if isinstance(i, SpanRecord)] == ["01" * 8, "03" * 8]
    assert [(i.reason, i.span_id) for i in items if isinstance(i, Skipped)] == [
        ("invalid_span", "02" * 8)
    ]


def test_a_json_body_with_a_huge_number_in_one_span_keeps_the_others() -> None:
    good = span(trace_id=T, span_id="1" * 16, name="chat", attributes={"n": 1})
    bad = span(trace_id=T, span_id="2" * 16, name="chat", attributes={"n": 1})
    body = orjson.dumps(export_request([good, bad]))
    at = body.rindex(b'"intValue":"1"')
    body = body[:at] + b'"intValue":' + b"9" * 400 + body[at + len(b'"intValue":"1"') :]
    items, _ = decode(
        body, signal="traces", encoding="json", content_encoding=None, max_bytes=10**7
    )
    assert [i.span_id for i in items if isinstance(i, SpanRecord)] == ["1" * 16]
    assert [(i.reason, i.span_id) for i in items if isinstance(i, Skipped)] == [
        ("invalid_attribute", "2" * 16)
    ]
