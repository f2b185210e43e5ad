"""The acknowledgement log's on-disk format: segments of length-prefixed, checksummed records.

A segment file (``OUT/ack-log/NNNNNNNNNN.seg``, numbered in the order written) starts with
the line :data:`SEGMENT_MAGIC` and one JSON line ``{"run_id": ..., "segment": n}``; then come
records, each:

``b"R"`` | ``seq`` (u64) | ``meta_len`` (u32) | ``body_len`` (u32) | ``crc32`` (u32), all
little-endian, | ``meta`` (JSON: ``signal``, ``encoding``, ``content_encoding``,
``received_at``) | ``body`` (the request body exactly as received, still compressed).

``crc32`` (zlib) covers the header fields, the meta and the body, so a record cut short (a
process killed while writing it) or damaged is detected, never decoded: reading a segment
stops at the first record that is incomplete or fails its checksum, and reports its offset
(:class:`SegmentRead`). A record is acknowledged only after it was written whole and synced, so
such a tail was never acknowledged.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import orjson

from agent_eval.errors import StoreError

__all__ = [
    "SEGMENT_MAGIC",
    "SEGMENT_SUFFIX",
    "AckRecord",
    "SegmentRead",
    "encode_record",
    "read_segment",
    "segment_header",
]

SEGMENT_MAGIC = b"agent-eval ack-log 1\n"
"""First line of every segment (format version 1)."""
SEGMENT_SUFFIX = ".seg"
_HEAD = struct.Struct("<cQIII")
_TAG = b"R"


@dataclass(frozen=True, kw_only=True)
class AckRecord:
    """One acknowledged request, as received.

    Attributes:
        seq: Its sequence number (grows by one per record over the log's life).
        signal: ``traces`` or ``logs`` (the OTLP endpoint it was posted to).
        encoding: ``json`` or ``protobuf`` (its ``Content-Type``).
        content_encoding: Its ``Content-Encoding`` header (``gzip``), ``None`` when absent.
        received_at: ISO-8601 UTC time it was acknowledged.
        body: The body's bytes exactly as received.

    """

    seq: int
    signal: Literal["traces", "logs"]
    encoding: Literal["json", "protobuf"]
    content_encoding: str | None
    received_at: str
    body: bytes


def segment_header(run_id: str, number: int) -> bytes:
    """The first two lines of segment ``number`` of run ``run_id``."""
    return SEGMENT_MAGIC + orjson.dumps({"run_id": run_id, "segment": number}) + b"\n"


def encode_record(record: AckRecord) -> bytes:
    """``record`` as the bytes appended to a segment (see the module docstring)."""
    meta = orjson.dumps(
        {
            "signal": record.signal,
            "encoding": record.encoding,
            "content_encoding": record.content_encoding,
            "received_at": record.received_at,
        }
    )
    fields = (record.seq, len(meta), len(record.body))
    crc = zlib.crc32(record.body, zlib.crc32(meta, zlib.crc32(struct.pack("<QII", *fields))))
    return _HEAD.pack(_TAG, *fields, crc) + meta + record.body


@dataclass
class SegmentRead:
    """What reading one segment found.

    Attributes:
        path: The segment file.
        run_id: The run its header names.
        number: Its number.
        records: Its whole records, in order.
        end: Byte offset after the last whole record.
        torn_at: Offset of a record cut short or failing its checksum (``None``: none).

    """

    path: Path
    run_id: str
    number: int
    records: list[AckRecord]
    end: int
    torn_at: int | None = None


def read_segment(path: Path) -> SegmentRead:
    """Read every whole record of segment ``path`` (a torn tail is reported, not raised).

    Raises:
        StoreError: the file is not an acknowledgement-log segment (names it).

    """
    data = path.read_bytes()
    header_end = data.find(b"\n", len(SEGMENT_MAGIC)) + 1
    if _header_cut_short(data, header_end) and path.stem.isdigit():  # killed as it was made
        return SegmentRead(path, "", int(path.stem), [], 0, torn_at=0)
    if not data.startswith(SEGMENT_MAGIC) or header_end <= 0:
        raise StoreError(
            f"{path}: not an agent-eval acknowledgement-log segment (no {SEGMENT_MAGIC!r} "
            "header); move it out of the ack-log directory"
        )
    try:
        header = orjson.loads(data[len(SEGMENT_MAGIC) : header_end])
        run_id, number = str(header["run_id"]), int(header["segment"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        raise StoreError(f"{path}: the segment header is damaged") from None
    found = SegmentRead(path, run_id, number, [], header_end)
    for offset, record in _records(data, header_end):
        if record is None:
            found.torn_at = offset
            break
        found.records.append(record)
        found.end = offset
    return found


def _header_cut_short(data: bytes, header_end: int) -> bool:
    """Whether ``data`` is the start of a segment whose header was not written whole."""
    if len(data) < len(SEGMENT_MAGIC):
        return SEGMENT_MAGIC.startswith(data)
    return data.startswith(SEGMENT_MAGIC) and header_end <= 0


def _records(data: bytes, offset: int) -> Iterator[tuple[int, AckRecord | None]]:
    """``(offset after it, record)`` per record; ``(offset, None)`` at a torn one."""
    while offset < len(data):
        record, end = _record_at(data, offset)
        if record is None:
            yield offset, None
            return
        yield end, record
        offset = end


def _record_at(data: bytes, offset: int) -> tuple[AckRecord | None, int]:
    if len(data) - offset < _HEAD.size:
        return None, offset
    tag, seq, meta_len, body_len, crc = _HEAD.unpack_from(data, offset)
    start = offset + _HEAD.size
    end = start + meta_len + body_len
    if tag != _TAG or end > len(data):
        return None, offset
    meta, body = data[start : start + meta_len], data[start + meta_len : end]
    fields = struct.pack("<QII", seq, meta_len, body_len)
    if zlib.crc32(body, zlib.crc32(meta, zlib.crc32(fields))) != crc:
        return None, offset
    fields_of = orjson.loads(meta)
    record = AckRecord(
        seq=seq,
        signal=fields_of["signal"],
        encoding=fields_of["encoding"],
        content_encoding=fields_of["content_encoding"],
        received_at=fields_of["received_at"],
        body=body,
    )
    return record, end
