"""span-attributes container: one flat attribute map -> one span; never claims export files."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
import pytest

from agent_eval.errors import DecodeError
from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.containers._span_attributes import SpanAttributesContainer

container = SpanAttributesContainer()
ATTRS = {
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": "m",
    "gen_ai.usage.input_tokens": 3,
}


def test_reads_one_span_with_content_derived_ids(tmp_path: Path) -> None:
    path = tmp_path / "chat_span.attrs.json"
    data = orjson.dumps(ATTRS)
    path.write_bytes(data)
    [span] = list(container.read(str(path)))
    assert isinstance(span, SpanRecord)
    digest = hashlib.sha256(data).hexdigest()
    assert (span.trace_id, span.span_id) == (digest[:32], digest[32:48])
    assert span.name == "chat_span"
    assert dict(span.attributes) == ATTRS
    assert span.parent_span_id is None
    [again] = list(container.read(str(path)))
    assert again.span_id == span.span_id


@pytest.mark.parametrize(
    "head",
    [
        b'{"resourceSpans": [{"scopeSpans": []}]}',
        b'{"data": [{"traceID": "abc", "spans": []}]}',
        b'{"batches": [{"resource": {}}]}',
        b'{"trace": {"id": "x"}, "observations": []}',
        b'[{"name": "span", "context": {"trace_id": "1"}}]',
        b'{"input.value": "x", "traceId": "0af7651916cd43dd8448eb211c80319c"}',
        b'{"role": "user", "content": "hi"}',
    ],
)
def test_sniff_rejects_export_files(head: bytes) -> None:
    assert not container.sniff("x.json", head)


def test_sniff_accepts_attribute_maps() -> None:
    assert container.sniff("x.json", orjson.dumps(ATTRS))
    assert container.sniff("x.json", b'\n  {"openinference.span.kind": "LLM"}')
    assert container.sniff("x.json", b'{"input": "{}", "gen_ai.tool.name": "t"}')


def test_sniff_rejects_every_other_shared_file(shared_data: Path) -> None:
    for path in sorted((shared_data / "otel").iterdir()):
        head = path.read_bytes()[: 64 * 1024]
        assert container.sniff(str(path), head) == path.name.endswith(".attrs.json"), path.name


@pytest.mark.parametrize(
    ("data", "message"),
    [(b'{"gen_ai.x": ', "not valid JSON"), (b"[1, 2]", "got list"), (b"{}", "non-empty")],
)
def test_bad_files_raise_decode_error_naming_the_file(
    tmp_path: Path, data: bytes, message: str
) -> None:
    path = tmp_path / "bad.attrs.json"
    path.write_bytes(data)
    with pytest.raises(DecodeError, match=message) as info:
        list(container.read(str(path)))
    assert info.value.path == str(path)
