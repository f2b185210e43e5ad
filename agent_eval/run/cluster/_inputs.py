"""Reading a run's inputs on Ray: one task per file, then the two regroupings, as Ray tasks.

The public ingest stages (:mod:`agent_eval.ingest._stages`) run as three rounds of Ray tasks,
the two regroupings being hash partitions of the stages' values (``P`` partitions: the
cluster's CPUs, or a partition per :data:`FILES_PER_PARTITION` input files when that is more)::

    read_input(file) + trace_pieces      one task per file    -> P buckets of TracePiece,
                                                                  by hash of trace id
    assemble_trace per trace id          one task per bucket  -> P buckets of TraceParts,
                                                                  by hash of group key
    assemble_conversations per key       one task per bucket  -> its conversations, sorted by
                                                                  conversation_order, streamed

and the driver merges the accounting of every stage (:func:`merge_reports`) and the sorted
streams of the partitions into ``ingest()``'s order (:func:`conversation_order`; whole
conversations of chat-log files first, in input order). The conversations are those
``ingest()`` gives for the same inputs (the stages' contract), whatever the files a trace or
a conversation is split over. A partition's conversations travel in chunks of
:data:`CHUNK` through the object store (which spills to disk), so the driver holds one chunk
per partition, not the run.

Why tasks and not Ray Data: the stages' values are Python objects, a few per trace, and Ray
Data turns every one into a row of an Arrow block and shuffles row by row. Over 2,000
conversations in 20 files, its pipeline (map, two hash groupbys, a sort) took 48-54 s on two
CPUs, where one process ingests the same files in 2.6 s (``bench/scale_ray.py``); the tasks
move a few objects per file and partition.

Inputs are local paths (files, directories, globs: each worker must see them, e.g. a shared
volume) or object-store URLs (``s3://bucket/prefix/``, ``gs://...``, ``abfs://...``, or
``file://`` for a local one): a URL names a file or a prefix whose files are read in name
order, through pyarrow's filesystems (installed with the ``ray`` extra; credentials from the
environment, as pyarrow reads them). Each URL file is copied to a temporary file on the
worker that reads it, and its accounting names the URL.
"""

from __future__ import annotations

import heapq
import os
import tempfile
import zlib
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from agent_eval._trace import AgentTrace
from agent_eval.ingest._accounting import IngestReport
from agent_eval.ingest._stages import (
    InputPart,
    TraceParts,
    TracePiece,
    assemble_conversations,
    assemble_trace,
    conversation_order,
    input_files,
    merge_reports,
    read_input,
    trace_pieces,
)

__all__ = [
    "CHUNK",
    "FILES_PER_PARTITION",
    "MAX_PARTITIONS",
    "ClusterInputs",
    "expand_inputs",
    "is_url",
    "read_on_ray",
]

FILES_PER_PARTITION = 4
"""Input files per partition of the regroupings, when that makes more than the CPUs."""

MAX_PARTITIONS = 1024
"""The most partitions of a regrouping (each file's task returns one object per partition)."""

CHUNK = 256
"""Conversations per object a partition streams to the driver."""

Rank = tuple[int, int, int]
"""Where ``ingest()`` puts a conversation (:func:`conversation_order`)."""


def is_url(path: str) -> bool:
    """Whether ``path`` is an object-store URL (``scheme://...``), not a local path."""
    scheme, sep, _ = path.partition("://")
    return bool(sep) and scheme.isalnum() and len(scheme) > 1


def expand_inputs(paths: Sequence[str]) -> list[str]:
    """The input files of ``paths``: local ones as ``ingest()`` expands them, URLs listed.

    A URL naming a prefix (a "directory") gives its files recursively, in name order.
    """
    files: list[str] = []
    local: list[str] = []
    for path in paths:
        if not is_url(path):
            local.append(path)
            continue
        files.extend(input_files(local))
        local = []
        files.extend(_list_url(path))
    return files + input_files(local) if local else files


def _list_url(url: str) -> list[str]:
    from pyarrow import fs

    filesystem, root = fs.FileSystem.from_uri(url)
    info = filesystem.get_file_info(root)
    if info.type != fs.FileType.Directory:
        return [url]
    scheme = url.split("://", 1)[0]
    found = filesystem.get_file_info(fs.FileSelector(root, recursive=True))
    names = sorted(f.path for f in found if f.type == fs.FileType.File)
    return [f"{scheme}://{name}" if scheme != "file" else f"file://{name}" for name in names]


def _read(path: str, index: int, fmt: str) -> InputPart:
    """The file's :class:`InputPart` (a URL copied to a temporary file first)."""
    if not is_url(path):
        return read_input(path, format=fmt, index=index)
    from pyarrow import fs

    filesystem, where = fs.FileSystem.from_uri(path)
    suffix = "".join(Path(where).suffixes)
    with tempfile.TemporaryDirectory() as folder:
        local = os.path.join(folder, "input" + suffix)
        with filesystem.open_input_stream(where) as source, open(local, "wb") as target:
            while chunk := source.read(1 << 20):
                target.write(chunk)
        part = read_input(local, format=fmt, index=index)
    _rename(part, local, path)
    return part


def _rename(part: InputPart, local: str, url: str) -> None:
    """Name the URL, not the temporary copy, in the part's accounting."""
    part.path = url
    for file in part.report.files:
        if file.path == local:
            file.path = url


def _partition(key: str, partitions: int) -> int:
    """The partition of ``key`` (a stable hash: Python's own differs between processes)."""
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % partitions


@dataclass
class _Head:
    """What a file gave besides its traces: its accounting and whole conversations."""

    path: str
    index: int
    report: IngestReport
    conversations: list[AgentTrace]
    orphan_choices: int
    traces: int


def _read_file(path: str, index: int, fmt: str, partitions: int) -> list[Any]:
    """Round 1 (a task per file): its head, then its trace pieces in ``partitions`` buckets."""
    part = _read(path, index, fmt)
    buckets: list[list[TracePiece]] = [[] for _ in range(partitions)]
    for piece in trace_pieces(part):
        buckets[_partition(piece.trace_id, partitions)].append(piece)
    head = _Head(
        part.path, part.index, part.report, part.conversations, part.orphan_choices,
        len(part.traces),
    )  # fmt: skip
    return [head, *buckets]


def _assemble_traces(partitions: int, *buckets: list[TracePiece]) -> list[Any]:
    """Round 2 (a task per trace partition): its traces assembled, by group key partition.

    Returns:
        The accounting of the traces (merged), then ``partitions`` buckets of
        ``(key, TraceParts)``: a trace goes to each of its group keys.

    """
    pieces: dict[str, list[TracePiece]] = defaultdict(list)
    for bucket in buckets:
        for piece in bucket:
            pieces[piece.trace_id].append(piece)
    reports: list[IngestReport] = []
    out: list[list[tuple[str, TraceParts]]] = [[] for _ in range(partitions)]
    for of_trace in pieces.values():
        parts = assemble_trace(of_trace)
        reports.append(parts.report)
        light = replace(parts, report=IngestReport())  # counted once, above
        for key in parts.keys:
            out[_partition(key, partitions)].append((key, light))
    return [merge_reports(reports), *out]


@dataclass
class _Chunk:
    """One object of a partition's stream: its accounting first, then ranked conversations."""

    report: IngestReport | None = None
    ranked: list[tuple[Rank, AgentTrace]] = field(default_factory=list)


def _assemble_groups(
    orphan_choices: dict[str, int], *buckets: list[tuple[str, TraceParts]]
) -> Iterator[_Chunk]:
    """Round 3 (a task per key partition): its groups' conversations, in ``ingest()``'s order.

    Yields the partition's accounting (merged), then its conversations ranked by
    :func:`conversation_order`, sorted, :data:`CHUNK` at a time.
    """
    groups: dict[str, list[TraceParts]] = defaultdict(list)
    for bucket in buckets:
        for key, parts in bucket:
            groups[key].append(parts)
    reports: list[IngestReport] = []
    ranked: list[tuple[Rank, AgentTrace]] = []
    for key, group in groups.items():
        report = IngestReport()
        made = assemble_conversations(group, key=key, report=report, orphan_choices=orphan_choices)
        ranked.extend((conversation_order(c, group), c) for c in made)
        reports.append(report)
    groups.clear()
    ranked.sort(key=lambda item: item[0])
    yield _Chunk(report=merge_reports(reports))
    for start in range(0, len(ranked), CHUNK):
        yield _Chunk(ranked=ranked[start : start + CHUNK])


@dataclass
class ClusterInputs:
    """The conversations of a run's inputs read on Ray, and their merged accounting.

    Attributes:
        report: Every stage's accounting merged (what ``ingest()`` reports).
        conversations: The conversations in ``ingest()``'s order (whole conversations of
            chat-log files first, file by file; then by :func:`conversation_order`).

    """

    report: IngestReport
    conversations: Iterator[AgentTrace]


def read_on_ray(
    ray: ModuleType, paths: Sequence[str], fmt: str = "auto", *, partitions: int | None = None
) -> ClusterInputs:
    """Read ``paths`` with the ingest stages as Ray tasks (see the module docstring).

    The caller joined the cluster. The conversations stream from the cluster as they are
    taken.

    Args:
        ray: The ``ray`` module, initialized.
        paths: Files, directories, globs (local) or object-store URLs.
        fmt: The input format (``auto``: each file's container detected).
        partitions: Partitions of each regrouping (default: the cluster's CPUs, or one per
            :data:`FILES_PER_PARTITION` input files when that is more, at most
            :data:`MAX_PARTITIONS`: a task of the last round holds its partition's
            conversations, so more inputs make more, smaller partitions).

    """
    files = expand_inputs(paths)
    cpus = max(int(ray.cluster_resources().get("CPU", 1)), 1)
    count = partitions or min(max(cpus, -(-len(files) // FILES_PER_PARTITION)), MAX_PARTITIONS)
    read = ray.remote(_read_file).options(num_returns=count + 1)
    outs = [read.remote(path, index, fmt, count) for index, path in enumerate(files)]
    heads: list[_Head] = ray.get([out[0] for out in outs])
    whole = [((0, h.index, n), c) for h in heads for n, c in enumerate(h.conversations)]
    reports = [h.report for h in heads]
    if not any(h.traces for h in heads):  # whole conversations only: nothing to rejoin
        return ClusterInputs(merge_reports(reports), (c for _, c in whole))
    traces = ray.remote(_assemble_traces).options(num_returns=count + 1)
    mids = [traces.remote(count, *[out[1 + j] for out in outs]) for j in range(count)]
    del outs
    groups = ray.remote(_assemble_groups).options(num_returns="streaming")
    choices = {h.path: h.orphan_choices for h in heads if h.orphan_choices}
    streams = [groups.remote(choices, *[mid[1 + k] for mid in mids]) for k in range(count)]
    reports += ray.get([mid[0] for mid in mids])
    del mids
    reports += [ray.get(next(stream)).report for stream in streams]
    parts = [_ranked(ray, stream) for stream in streams]
    merged = heapq.merge(iter(whole), *parts, key=lambda item: item[0])
    return ClusterInputs(merge_reports(reports), (c for _, c in merged))


def _ranked(ray: ModuleType, stream: Any) -> Iterator[tuple[Rank, AgentTrace]]:
    for ref in stream:
        chunk: _Chunk = ray.get(ref)
        yield from chunk.ranked
