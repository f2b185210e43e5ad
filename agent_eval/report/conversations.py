"""Stored conversations: the normalized AgentTraces a run judged, kept beside its results.

``DIR/conversations.jsonl`` holds one AgentTrace JSON per line (the ``agent-trace-jsonl``
format that ``agent-eval ingest`` writes). Commands that score (``score``, ``compare``,
``stability``) write it so that ``agent-eval report`` can lay each conversation out message by
message (roles, tool calls with their results, retrievals) without the run's inputs; for a run
without it, the report reads the inputs given with ``--inputs``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from agent_eval.errors import StoreError
from agent_eval.trace import AgentTrace

__all__ = ["CONVERSATIONS_NAME", "append_conversation", "read_conversations", "write_conversations"]

CONVERSATIONS_NAME = "conversations.jsonl"


def write_conversations(directory: str | Path, traces: Iterable[AgentTrace]) -> Path:
    """Write ``traces`` to ``DIR/conversations.jsonl`` (replacing it), one JSON per line.

    Raises:
        StoreError: The file cannot be written.

    """
    return _write(directory, traces, "w")


def append_conversation(directory: str | Path, trace: AgentTrace) -> Path:
    """Add ``trace`` as one more line of ``DIR/conversations.jsonl`` (``agent-eval serve``).

    A conversation re-scored live is appended again at each revision; :func:`read_conversations`
    keeps the last line of each id, its latest revision.

    Raises:
        StoreError: The file cannot be written.

    """
    return _write(directory, [trace], "a")


def _write(directory: str | Path, traces: Iterable[AgentTrace], mode: str) -> Path:
    """``traces`` as JSON lines in ``DIR/conversations.jsonl``, opened with ``mode``."""
    path = Path(directory) / CONVERSATIONS_NAME
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open(mode, encoding="utf-8") as handle:
            for trace in traces:
                handle.write(trace.model_dump_json() + "\n")
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc}") from exc
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
