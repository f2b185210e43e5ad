"""The run directory: every file name, writer and reader of a run's directory, in one place.

A run directory (``--out DIR``, else ``runs/RUN_ID``) holds the files of :data:`RUN_FILES`:
``results.db`` and ``results.jsonl`` (the rows; :class:`~agent_eval.run._store.ResultStore`),
``conversations.jsonl``, ``renderings.jsonl`` and ``units.jsonl`` (what the judge saw; written
and read here), ``turns.jsonl`` (:mod:`agent_eval.run._turns`), ``decompositions.db``
(:mod:`agent_eval.metrics._decomposition`), ``unscored.jsonl`` (:mod:`agent_eval.live._unscored`),
``ack-log/`` (``serve``'s acknowledgement log, :mod:`agent_eval.live._ack_log`),
``labels.jsonl`` (:mod:`agent_eval.analysis._labels`), ``evaluation-events.otlp.jsonl``
(:mod:`agent_eval.otel._events`) and, with ``--cache-path`` there, ``judge-cache.db``.

The names are defined here once (:data:`RUN_FILES`); the writers and readers of the run's
views of its conversations (``conversations.jsonl``, ``renderings.jsonl``, ``units.jsonl``) are
defined here, and the others are re-exported from the module that owns their format.
``docs/run-directory.md`` has the same table for users.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from agent_eval._tokens import count_tokens
from agent_eval._trace import AgentTrace
from agent_eval.errors import OutputError, StoreError
from agent_eval.formatting._registry import get_formatter
from agent_eval.metrics._decomposition import DECOMPOSITIONS_FILENAME
from agent_eval.metrics._units import answer_units
from agent_eval.run._cache import CACHE_FILENAME
from agent_eval.run._judge_stack import DEFAULT_RUNS_DIR
from agent_eval.run._store import DB_NAME, JSONL_NAME, LOCK_NAME
from agent_eval.run._turns import TURNS_NAME, read_turns, write_turns

__all__ = [
    "ACK_LOG_DIR",
    "CACHE_FILENAME",
    "CONVERSATIONS_NAME",
    "DB_NAME",
    "DECOMPOSITIONS_FILENAME",
    "EVENTS_FILE_NAME",
    "JSONL_NAME",
    "LABELS_NAME",
    "LOCK_NAME",
    "RENDERINGS_NAME",
    "RUN_FILES",
    "TURNS_NAME",
    "UNITS_NAME",
    "UNSCORED_NAME",
    "RenderingKey",
    "append_conversation",
    "append_rendering",
    "decompositions_path",
    "read_conversations",
    "read_renderings",
    "read_turns",
    "read_units",
    "render_all",
    "tokens_by_formatter",
    "write_conversations",
    "write_rendering_items",
    "write_renderings",
    "write_turns",
    "write_units",
]

CONVERSATIONS_NAME = "conversations.jsonl"
"""The run directory's conversations file: one scored AgentTrace a line (docs/run-directory.md)."""
RENDERINGS_NAME = "renderings.jsonl"
"""The run directory's renderings file: what the judge saw, one rendering a line."""
UNITS_NAME = "units.jsonl"
UNSCORED_NAME = "unscored.jsonl"
ACK_LOG_DIR = "ack-log"
LABELS_NAME = "labels.jsonl"
EVENTS_FILE_NAME = "evaluation-events.otlp.jsonl"

RUN_FILES: Mapping[str, str] = {
    DB_NAME: "the runs table and one row per unit, metric, formatter, judge and repeat",
    JSONL_NAME: "the same rows as JSON lines",
    LOCK_NAME: "the lock of the run writing the directory",
    CONVERSATIONS_NAME: "one AgentTrace per line: what was judged",
    RENDERINGS_NAME: "the text the judge saw, per conversation and formatter",
    UNITS_NAME: "per answer unit: question, answer and the contexts its atoms quote",
    TURNS_NAME: "the per-turn RAG view (agent-eval rag)",
    DECOMPOSITIONS_FILENAME: "the claim-level metrics' pinned statement splits",
    UNSCORED_NAME: "serve: conversations the judge did not finish at shutdown",
    ACK_LOG_DIR: "serve: request bodies acknowledged and not yet scored (segments, revisions)",
    LABELS_NAME: "human labels (calibrate, review)",
    EVENTS_FILE_NAME: "--events-file: each row as an OTel evaluation event",
    CACHE_FILENAME: "the judge-call cache, when --cache-path puts it in the run",
}
"""Every file a run directory may hold, by name, with what it holds."""


def decompositions_path(out: Path | None) -> Path:
    """``OUT/decompositions.db``, or ``runs/decompositions.db`` without an output directory."""
    return (out if out is not None else DEFAULT_RUNS_DIR) / DECOMPOSITIONS_FILENAME


# -- conversations.jsonl ---------------------------------------------------------------------


def write_conversations(directory: str | Path, traces: Iterable[AgentTrace]) -> Path:
    """Write ``traces`` to ``DIR/conversations.jsonl`` (replacing it), one JSON per line.

    Raises:
        OutputError: The file cannot be written (a StoreError).

    """
    return _write_conversations(directory, traces, "w")


def append_conversation(directory: str | Path, trace: AgentTrace) -> Path:
    """Add ``trace`` as one more line of ``DIR/conversations.jsonl`` (``agent-eval serve``).

    A conversation re-scored live is appended again at each revision; :func:`read_conversations`
    keeps the last line of each id, its latest revision.

    Raises:
        OutputError: The file cannot be written (a StoreError).

    """
    return _write_conversations(directory, [trace], "a")


def _write_conversations(directory: str | Path, traces: Iterable[AgentTrace], mode: str) -> Path:
    """``traces`` as JSON lines in ``DIR/conversations.jsonl``, opened with ``mode``."""
    path = Path(directory) / CONVERSATIONS_NAME
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open(mode, encoding="utf-8") as handle:
            for trace in traces:
                handle.write(trace.model_dump_json() + "\n")
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc}") from exc
    return path


def read_conversations(
    directory: str | Path, wanted: Iterable[str] | None = None
) -> dict[str, AgentTrace]:
    """Read ``DIR/conversations.jsonl`` as ``{conversation_id: AgentTrace}``; empty if absent.

    An id on several lines (live revisions) keeps its last line.

    Args:
        directory: The run directory.
        wanted: Keep only these conversation ids (default: all).

    Raises:
        StoreError: A line is not an AgentTrace (names the file and line).

    """
    path = Path(directory) / CONVERSATIONS_NAME
    keep = None if wanted is None else set(wanted)
    out: dict[str, AgentTrace] = {}
    if not path.is_file():
        return out
    try:
        with path.open("rb") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    trace = AgentTrace.model_validate_json(line)
                except ValidationError as exc:
                    raise StoreError(f"{path}:{number}: not an AgentTrace ({exc})") from exc
                if keep is None or trace.conversation_id in keep:
                    out[trace.conversation_id] = trace
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc}") from exc
    return out


# -- renderings.jsonl -------------------------------------------------------------------------

RenderingKey = tuple[str, str]
"""``(conversation_id, formatter identity)``."""


def render_all(traces: Iterable[AgentTrace], formatters: Iterable[str]) -> dict[RenderingKey, str]:
    """Render every trace with every formatter identity (``name@version[params]``).

    Raises:
        ConfigError / UnknownPluginError: A formatter identity is malformed or unknown.

    """
    built = {identity: get_formatter(identity) for identity in formatters}
    return {
        (trace.conversation_id, identity): formatter.render(trace)
        for trace in traces
        for identity, formatter in built.items()
    }


def write_renderings(directory: str | Path, renderings: Mapping[RenderingKey, str]) -> Path:
    """Write ``renderings`` to ``DIR/renderings.jsonl`` (replacing it), sorted by key.

    Raises:
        OutputError: The file cannot be written.

    """
    return write_rendering_items(directory, sorted(renderings.items()))


def write_rendering_items(directory: str | Path, items: Iterable[tuple[RenderingKey, str]]) -> Path:
    """Write ``items`` to ``DIR/renderings.jsonl`` (replacing it), streaming, in their order.

    Each item is ``((conversation_id, formatter), text)``; one record at a time is in memory.

    :func:`write_renderings` gives them sorted by key; so must a caller that wants the same
    file (``score`` streams them from its :class:`~agent_eval.run._spool.TraceSpool`).

    Raises:
        OutputError: The file cannot be written.

    """
    path = Path(directory) / RENDERINGS_NAME
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as handle:
            for (cid, fmt), text in items:
                record = {"conversation_id": cid, "formatter": fmt, "text": text}
                handle.write(orjson.dumps(record) + b"\n")
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc}") from exc
    return path


def append_rendering(
    directory: str | Path, conversation_id: str, formatter: str, text: str
) -> Path:
    """Add one rendering record to ``DIR/renderings.jsonl`` (``agent-eval serve``).

    A conversation re-scored live is appended again at each revision; :func:`read_renderings`
    keeps the last record of each key, the latest revision's text.

    Raises:
        OutputError: The file cannot be written.

    """
    path = Path(directory) / RENDERINGS_NAME
    record = {"conversation_id": conversation_id, "formatter": formatter, "text": text}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab") as handle:
            handle.write(orjson.dumps(record) + b"\n")
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc}") from exc
    return path


def read_renderings(directory: str | Path) -> dict[RenderingKey, str]:
    """Read ``DIR/renderings.jsonl``; empty when the file does not exist.

    A key on several lines (live revisions) keeps its last line.

    Raises:
        StoreError: A line is not a rendering record (names file and line).

    """
    path = Path(directory) / RENDERINGS_NAME
    if not path.is_file():
        return {}
    out: dict[RenderingKey, str] = {}
    with path.open("rb") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = orjson.loads(line)
                out[(str(record["conversation_id"]), str(record["formatter"]))] = str(
                    record["text"]
                )
            except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
                raise StoreError(f"{path}:{number}: not a rendering record ({exc})") from exc
    return out


def tokens_by_formatter(
    renderings: Mapping[RenderingKey, str], conversation_ids: Iterable[str] | None = None
) -> dict[str, int]:
    """o200k token totals of the renderings per formatter identity.

    Args:
        renderings: ``{(conversation_id, formatter): text}``.
        conversation_ids: Count only these conversations (default: all).

    """
    wanted = None if conversation_ids is None else set(conversation_ids)
    totals: dict[str, int] = {}
    for (cid, formatter), text in renderings.items():
        if wanted is None or cid in wanted:
            totals[formatter] = totals.get(formatter, 0) + count_tokens(text)
    return totals


# -- units.jsonl -------------------------------------------------------------------------------


def _unit_records(trace: AgentTrace) -> Iterable[dict[str, Any]]:
    for unit in answer_units(trace):
        if not unit.answer.strip():
            continue
        yield {
            "conversation_id": trace.conversation_id,
            "unit_id": unit.id,
            "span_id": unit.span_id,
            "question": unit.question,
            "answer": unit.answer,
            "contexts": [
                {"id": c.id, "source": c.source, "rank": c.rank, "text": c.text}
                for c in unit.contexts
            ],
        }


def write_units(
    directory: str | Path, traces: Iterable[AgentTrace], *, append: bool = False
) -> Path:
    """Write ``DIR/units.jsonl`` for ``traces`` (every answer unit, in order).

    With ``append`` the records are added to the file (``agent-eval serve``, once per
    revision); :func:`read_units` keeps the last record of each unit.

    Raises:
        OutputError: The file cannot be written (a StoreError).

    """
    path = Path(directory) / UNITS_NAME
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab" if append else "wb") as handle:
            for trace in traces:
                for record in _unit_records(trace):
                    handle.write(orjson.dumps(record) + b"\n")
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc}") from exc
    return path


def read_units(directory: str | Path) -> dict[tuple[str, str], dict[str, Any]]:
    """``{(conversation_id, unit_id): record}`` from ``DIR/units.jsonl`` (empty when absent).

    Raises:
        StoreError: A line is not a JSON object (names the file and line).

    """
    path = Path(directory) / UNITS_NAME
    if not path.is_file():
        return {}
    units: dict[tuple[str, str], dict[str, Any]] = {}
    for number, line in enumerate(path.read_bytes().splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise StoreError(f"{path}:{number}: not JSON ({exc})") from exc
        if not isinstance(record, dict):
            raise StoreError(f"{path}:{number}: expected a JSON object")
        units[(str(record["conversation_id"]), str(record["unit_id"]))] = record
    return units
