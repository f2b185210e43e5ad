"""Stored units: each answer a claim-level metric judged, with the context it was judged on.

``DIR/units.jsonl`` holds one JSON object per answer unit of the run's conversations::

    {"conversation_id": ..., "unit_id": "turn:1", "span_id": ..., "question": ...,
     "answer": ..., "contexts": [{"id": ..., "source": "retrieval", "rank": 0, "text": ...}]}

``score`` writes it when a metric scores answers (``faithfulness``, ``groundedness``), so that a
report can show each atom's quote inside the passage it came from: the passage is
``contexts[find_quote(atom.evidence, [c["text"] for c in contexts])]``
(:func:`agent_eval.metrics.evidence.find_quote`, the same normalization the metric verified the
quote with). Units without an answer are left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from agent_eval.errors import StoreError
from agent_eval.metrics.units import answer_units
from agent_eval.trace import AgentTrace

__all__ = ["UNITS_NAME", "read_units", "write_units"]

UNITS_NAME = "units.jsonl"


def _record(trace: AgentTrace) -> Iterable[dict[str, Any]]:
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
        StoreError: The file cannot be written.

    """
    path = Path(directory) / UNITS_NAME
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab" if append else "wb") as handle:
            for trace in traces:
                for record in _record(trace):
                    handle.write(orjson.dumps(record) + b"\n")
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc}") from exc
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
