"""Stored renderings: the text each conversation was judged on, kept beside a run's results.

``DIR/renderings.jsonl`` holds one JSON object per (conversation, formatter):
``{"conversation_id": ..., "formatter": "name@version[params]", "text": ...}``. Commands that
score (``compare``, ``stability``) write it so that ``agent-eval report`` can show each
conversation exactly as the judge saw it; for a run without it, the report re-renders the run's
inputs (``--inputs``) with the formatter each result names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import orjson

from agent_eval.errors import OutputError, StoreError
from agent_eval.formatting.registry import get_formatter
from agent_eval.tokens import count_tokens
from agent_eval.trace import AgentTrace

__all__ = [
    "RENDERINGS_NAME",
    "RenderingKey",
    "append_rendering",
    "read_renderings",
    "render_all",
    "tokens_by_formatter",
    "write_rendering_items",
    "write_renderings",
]

RENDERINGS_NAME = "renderings.jsonl"
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
    file (``score`` streams them from its :class:`~agent_eval.run.spool.TraceSpool`).

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
