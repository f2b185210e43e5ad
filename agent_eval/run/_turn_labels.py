"""Per-turn labels attached to the conversations of a run (``--turn-labels``).

:func:`attach_turn_labels` merges the rows of a turn-labels file
(:func:`agent_eval.ingest._rag_labels.load_turn_labels`) into each conversation's
``labels["turns"]``, checking each row against the conversation's turns and passages.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import JsonValue

from agent_eval._trace import AgentTrace
from agent_eval.errors import InputError
from agent_eval.ingest._rag_labels import RELEVANCE, TurnLabels
from agent_eval.metrics._passages import passage_id
from agent_eval.metrics._units import answer_units

__all__ = ["attach_turn_labels"]


def attach_turn_labels(
    traces: Iterable[AgentTrace], rows: Iterable[TurnLabels], path: str | Path
) -> list[AgentTrace]:
    """``traces`` with each row's labels merged into ``labels["turns"]["K"]`` (row keys win).

    Raises:
        InputError: a row names a conversation that is not in the input, a turn the
            conversation does not have, or a ``relevance`` passage id that is not among that
            turn's passages (names the file and line, the conversation and the known ids).

    """
    traces = list(traces)
    by_id = {trace.conversation_id: trace for trace in traces}
    merged: dict[str, dict[str, dict[str, JsonValue]]] = {}
    for row in rows:
        trace = by_id.get(row.conversation_id)
        if trace is None:
            raise InputError(
                f"conversation {row.conversation_id!r} is not in the input",
                path=str(path),
                line=row.line,
            )
        units = answer_units(trace)
        if row.turn > len(units):
            raise InputError(
                f"conversation {row.conversation_id!r} has {len(units)} turn(s), not {row.turn}",
                path=str(path),
                line=row.line,
            )
        relevance = row.labels.get(RELEVANCE)
        if isinstance(relevance, dict):
            known = {i for c in units[row.turn - 1].contexts if (i := passage_id(c)) is not None}
            unknown = sorted(set(relevance) - known)
            if unknown:
                raise InputError(
                    f"relevance names passage id(s) {', '.join(map(repr, unknown))} that turn "
                    f"{row.turn} of {row.conversation_id!r} did not retrieve (its passages: "
                    f"{', '.join(map(repr, sorted(known))) or 'none'})",
                    path=str(path),
                    line=row.line,
                )
        merged.setdefault(row.conversation_id, {}).setdefault(str(row.turn), {}).update(row.labels)
    out = []
    for trace in traces:
        extra = merged.get(trace.conversation_id)
        if not extra:
            out.append(trace)
            continue
        existing = trace.labels.get("turns")
        turns: dict[str, JsonValue] = dict(existing) if isinstance(existing, dict) else {}
        for key, labels in extra.items():
            before = turns.get(key)
            turns[key] = {**(before if isinstance(before, dict) else {}), **labels}
        out.append(trace.model_copy(update={"labels": {**trace.labels, "turns": turns}}))
    return out
