"""Reading a run's inputs on Ray: one task per file, then the two regroupings, with Ray Data.

The public ingest stages (:mod:`agent_eval.ingest._stages`) run as a Ray Data pipeline::

    input files -> map(read_input)                      one row per file
      -> flat_map(trace_pieces)                         one row per (file, trace id)
      -> groupby(trace id).map_groups(assemble_trace)   one row per (trace, group key)
      -> groupby(key).map_groups(assemble_conversations) one row per group

and the driver merges the accounting of every stage (:func:`merge_reports`) and takes the
conversations in the order of their first span over the inputs (the order one process reads
them). The conversations are those ``ingest()`` gives for the same inputs (the stages'
contract), whatever the files a trace or a conversation is split over.

Inputs are local paths (files, directories, globs: each worker must see them, e.g. a shared
volume) or object-store URLs (``s3://bucket/prefix/``, ``gs://...``, ``abfs://...``, or
``file://`` for a local one): a URL names a file or a prefix whose files are read in name
order, through pyarrow's filesystems (installed with Ray Data; credentials from the
environment, as pyarrow reads them). Each URL file is copied to a temporary file on the
worker that reads it, and its rows name the URL.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from agent_eval._trace import AgentTrace
from agent_eval.ingest._accounting import IngestReport
from agent_eval.ingest._stages import (
    InputPart,
    TraceParts,
    assemble_conversations,
    assemble_trace,
    input_files,
    merge_reports,
    read_input,
    trace_pieces,
)

__all__ = ["ClusterInputs", "expand_inputs", "is_url", "read_on_ray"]

_NO_KEY = "\x00no-group"
"""The group of traces that belong to none (log records only): their accounting travels."""


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


def _read(row: dict[str, Any], fmt: str) -> dict[str, Any]:
    """Stage 1 (a task per file): the file's :class:`InputPart` (a URL copied first)."""
    path, index = str(row["path"]), int(row["index"])
    if not is_url(path):
        return {"part": read_input(path, format=fmt, index=index)}
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
    return {"part": part}


def _rename(part: InputPart, local: str, url: str) -> None:
    """Name the URL, not the temporary copy, in the part's accounting."""
    part.path = url
    for file in part.report.files:
        if file.path == local:
            file.path = url


def _pieces(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"trace_id": p.trace_id, "piece": p} for p in trace_pieces(row["part"])]


def _trace(batch: dict[str, Any]) -> dict[str, list[Any]]:
    """Stage 2 (a task per trace id): one row per group key of the assembled trace."""
    parts: TraceParts = assemble_trace(list(batch["piece"]))
    keys = list(parts.keys) or [_NO_KEY]
    return {
        "key": keys,
        "seq": [parts.seq] * len(keys),
        "parts": [_Trace(parts if parts.keys else None, None) for _ in keys[1:]]
        + [_Trace(parts if parts.keys else None, parts.report)],
    }


@dataclass
class _Trace:
    """One trace's parts for one group key; its accounting on one of its rows only."""

    parts: TraceParts | None
    report: IngestReport | None


def _group(batch: dict[str, Any], orphan_choices: dict[str, int]) -> dict[str, list[Any]]:
    """Stage 3 (a task per group key): the group's conversations and accounting."""
    key = str(batch["key"][0])
    reports = [t.report for t in batch["parts"] if t.report is not None]
    parts = [t.parts for t in batch["parts"] if t.parts is not None]
    conversations: list[AgentTrace] = []
    if key != _NO_KEY and parts:
        report = IngestReport()
        conversations = assemble_conversations(
            parts, key=key, report=report, orphan_choices=orphan_choices
        )
        reports.append(report)
    seqs = [int(s) for s in batch["seq"] if int(s) >= 0]
    return {"seq": [min(seqs, default=-1)], "group": [_Group(conversations, reports)]}


@dataclass
class _Group:
    """What one group key gave: one value per row (a list would become an array column)."""

    conversations: list[AgentTrace]
    reports: list[IngestReport]


@dataclass
class ClusterInputs:
    """The conversations of a run's inputs read on Ray, and their merged accounting.

    Attributes:
        report: Every stage's accounting merged (what ``ingest()`` reports).
        conversations: The conversations, in the order of their first span over the inputs
            (whole conversations of chat-log files first, file by file).

    """

    report: IngestReport
    conversations: Iterator[AgentTrace]


def read_on_ray(ray: ModuleType, paths: Sequence[str], fmt: str = "auto") -> ClusterInputs:
    """Read ``paths`` with the ingest stages as a Ray Data pipeline (see the module docstring).

    The caller joined the cluster. The conversations stream from the cluster as they are
    taken.
    """
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False  # the CLI prints the accounting itself
    shuffle = max(int(ray.cluster_resources().get("CPU", 1)), 1)  # few, small partitions
    files = expand_inputs(paths)
    rows = [{"path": path, "index": index} for index, path in enumerate(files)]
    read = ray.data.from_items(rows, override_num_blocks=max(len(rows), 1))
    parts = read.map(_read, fn_kwargs={"fmt": fmt}).materialize()
    first = [row["part"] for row in parts.iter_rows()]
    first.sort(key=lambda part: part.index)
    choices = {p.path: p.orphan_choices for p in first if p.orphan_choices}
    whole = [c for part in first for c in part.conversations]
    if not any(part.traces for part in first):  # whole conversations only: nothing to rejoin
        return ClusterInputs(
            report=merge_reports(p.report for p in first), conversations=iter(whole)
        )
    groups = (
        parts.flat_map(_pieces)
        .groupby("trace_id", num_partitions=shuffle)
        .map_groups(_trace, batch_format="numpy")
        .groupby("key", num_partitions=shuffle)
        .map_groups(_group, batch_format="numpy", fn_kwargs={"orphan_choices": choices})
        .materialize()
    )
    reports = [p.report for p in first]
    for row in groups.select_columns(["group"]).iter_rows():
        reports.extend(row["group"].reports)
    return ClusterInputs(
        report=merge_reports(reports),
        conversations=_in_order(whole, groups),
    )


def _in_order(whole: list[AgentTrace], groups: Any) -> Iterator[AgentTrace]:
    yield from whole
    for row in groups.sort("seq").iter_rows():
        yield from row["group"].conversations
