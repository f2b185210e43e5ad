"""Split inputs for the ingest stages' equivalence tests, and the stages run as an engine would.

:func:`decode` reads real inputs (the project's fixtures, the shared OTel exports) into their
span and log records; :func:`write_split` writes records to several OTLP/JSON Lines files (one
export request per record, :mod:`agent_eval.testing._otlp`), as a Collector writing several files
would; the split functions say which record goes to which file (by trace, by span, at random
with copies). :func:`run_stages` runs the stages in any task order, every value pickled between
stages as an engine moves it between processes; :func:`assert_same_as_ingest` compares the
result with ``ingest()`` of the same files.
"""

from __future__ import annotations

import json
import pickle
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from agent_eval._trace import AgentTrace
from agent_eval.errors import InputError
from agent_eval.ingest import (
    IngestReport,
    LogRecord,
    SpanRecord,
    assemble_conversations,
    assemble_trace,
    conversation_order,
    detect_container,
    ingest,
    input_files,
    merge_reports,
    read_input,
    trace_pieces,
)
from agent_eval.ingest._accounting import MAX_DETAILS
from agent_eval.ingest._pipeline import read_items
from agent_eval.testing._otlp import export_request, log_record, span

T = TypeVar("T")
Record = SpanRecord | LogRecord
Split = Callable[[list[Record], random.Random], list[list[Record]]]

KINDS = {"UNSPECIFIED": 0, "INTERNAL": 1, "SERVER": 2, "CLIENT": 3, "PRODUCER": 4, "CONSUMER": 5}
STATUS = {"UNSET": 0, "OK": 1, "ERROR": 2}


def decode(paths: Sequence[str | Path]) -> list[Record]:
    """The span and log records of ``paths`` (each file's container detected), in input order.

    Files no container reads are passed over (the shared exports hold chat-ML renderings).
    """
    out: list[Record] = []
    for path in input_files(paths):
        try:
            container = detect_container(path)
        except InputError:
            continue
        items = read_items(container, path)
        out += [item for item in items if isinstance(item, SpanRecord | LogRecord)]
    return out


def _line(record: Record) -> dict[str, Any]:
    """One export request holding ``record`` with its resource and scope."""
    if isinstance(record, LogRecord):
        log = log_record(
            record.event_name, record.body, trace_id=record.trace_id, span_id=record.span_id,
            time=record.time_unix_nano, attributes=record.attributes,
        )  # fmt: skip
        return export_request(logs=[log], resource=record.resource or {"r": 0})
    otlp = span(
        record.trace_id, record.span_id, record.name, parent_span_id=record.parent_span_id,
        kind=KINDS.get(record.kind, 1), start=record.start_time_unix_nano,
        end=record.end_time_unix_nano, attributes=record.attributes,
        events=[(e.name, e.time_unix_nano, e.attributes) for e in record.events],
        status=(STATUS.get(record.status_code, 0), record.status_message),
    )  # fmt: skip
    return export_request(
        [otlp],
        resource=record.resource or {"r": 0},
        scope=(record.scope_name, record.scope_version),
    )


def write_split(folder: Path, files: list[list[Record]], stem: str = "part") -> list[Path]:
    """Write each list of records as one OTLP/JSON Lines file; the paths in order."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for n, records in enumerate(files):
        path = folder / f"{stem}-{n:02d}.otlp.jsonl"
        path.write_text("".join(json.dumps(_line(r)) + "\n" for r in records))
        paths.append(path)
    return paths


def by_trace(records: list[Record], rng: random.Random, n: int = 3) -> list[list[Record]]:
    """Each trace whole in one of ``n`` files (a conversation's traces spread over files)."""
    where: dict[str | None, int] = {}
    files: list[list[Record]] = [[] for _ in range(n)]
    for record in records:
        files[where.setdefault(record.trace_id, rng.randrange(n))].append(record)
    return files


def by_span(records: list[Record], rng: random.Random, n: int = 4) -> list[list[Record]]:
    """Each record in a random one of ``n`` files (traces split over files, logs apart)."""
    files: list[list[Record]] = [[] for _ in range(n)]
    for record in records:
        files[rng.randrange(n)].append(record)
    return files


def logs_apart(records: list[Record], rng: random.Random) -> list[list[Record]]:
    """Spans in one file, log records in another (a Collector's traces and logs exports)."""
    return [
        [r for r in records if isinstance(r, SpanRecord)],
        [r for r in records if isinstance(r, LogRecord)],
    ]


def shuffled_with_copies(
    records: list[Record], rng: random.Random, n: int = 3, copies: float = 0.2
) -> list[list[Record]]:
    """Random files, records out of order within a file, some written to two files."""
    files = by_span(records, rng, n)
    for record in records:
        if rng.random() < copies:
            files[rng.randrange(n)].append(record)
    for file in files:
        rng.shuffle(file)
    return files


def with_lost_spans(
    records: list[Record], rng: random.Random, lost: float = 0.15
) -> list[list[Record]]:
    """Random files without some records (a Collector that dropped them): orphan spans."""
    return by_span([r for r in records if rng.random() >= lost], rng)


SPLITS: dict[str, Split] = {
    "by-trace": by_trace,
    "by-span": by_span,
    "logs-apart": logs_apart,
    "shuffled-with-copies": shuffled_with_copies,
    "with-lost-spans": with_lost_spans,
}


def _moved(value: T) -> T:
    """``value`` as another process receives it (pickled and read back)."""
    return pickle.loads(pickle.dumps(value))


def run_stages(
    paths: Sequence[str | Path], rng: random.Random, *, global_choices: bool = True
) -> tuple[list[AgentTrace], IngestReport]:
    """The stages over ``paths`` in a random task order, every value moved between stages."""
    files = input_files(paths)
    tasks = list(range(len(files)))
    rng.shuffle(tasks)
    parts = {i: _moved(read_input(files[i], index=i)) for i in tasks}
    pieces = [piece for i in tasks for piece in trace_pieces(parts[i])]
    rng.shuffle(pieces)
    by_trace_id: dict[str, list[Any]] = defaultdict(list)
    for piece in pieces:
        by_trace_id[piece.trace_id].append(_moved(piece))
    groups = list(by_trace_id.values())
    rng.shuffle(groups)
    traces = [_moved(assemble_trace(group)) for group in groups]
    by_key: dict[str, list[Any]] = defaultdict(list)
    for parts_of_trace in traces:
        for key in parts_of_trace.keys:
            by_key[key].append(_moved(parts_of_trace))
    keys = list(by_key)
    rng.shuffle(keys)
    choices = {p.path: p.orphan_choices for p in parts.values()} if global_choices else None
    ranked = [((0, i, n), c) for i in parts for n, c in enumerate(parts[i].conversations)]
    reports = [parts[i].report for i in sorted(parts)] + [t.report for t in traces]
    for key in keys:
        report = IngestReport()
        group = by_key[key]
        rng.shuffle(group)
        got = assemble_conversations(group, key=key, report=report, orphan_choices=choices)
        ranked += [(conversation_order(c, group), c) for c in got]
        reports.append(_moved(report))
    ranked.sort(key=lambda item: item[0])
    return [c for _, c in ranked], merge_reports(reports)


def _skipped(report: IngestReport) -> list[str]:
    return sorted(json.dumps(s, sort_keys=True) for s in report.to_json()["skipped"])


def assert_same_as_ingest(
    paths: Sequence[str | Path], rng: random.Random, *, global_choices: bool = True
) -> list[AgentTrace]:
    """The stages give ``ingest(paths)``'s conversations (every field) and accounting."""
    got, report = run_stages(paths, rng, global_choices=global_choices)
    return assert_same_result(paths, got, report)


def assert_same_result(
    paths: Sequence[str | Path], got: list[AgentTrace], report: IngestReport
) -> list[AgentTrace]:
    """``got`` and ``report`` are ``ingest(paths)``'s conversations (every field, in its
    order) and accounting (the skipped items' details too, when all are kept)."""
    run = ingest(paths)
    expected = run.collect()

    def dumped(traces: list[AgentTrace]) -> list[str]:
        return [t.model_dump_json() for t in traces]

    assert dumped(got) == dumped(expected)  # in ingest()'s order (conversation_order)
    want, have = run.report.to_json(), report.to_json()
    assert {**have, "skipped": None} == {**want, "skipped": None}
    assert report.records_json() == run.report.records_json()
    assert report.inputs == run.report.inputs
    total = sum(report.spans_ignored.values()) + sum(report.logs_ignored.values())
    if total + sum(report.records_ignored.values()) < MAX_DETAILS:
        assert _skipped(report) == _skipped(run.report)  # all kept: the same items
    else:
        assert len(have["skipped"]) == len(want["skipped"])
    return got
