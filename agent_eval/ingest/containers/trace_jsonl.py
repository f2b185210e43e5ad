"""AgentTrace JSON Lines: what ``agent-eval ingest --out`` writes, read back losslessly.

One :class:`~agent_eval.trace.AgentTrace` JSON object per line (``model_dump_json``). Lines are
streamed; a line that does not validate is a skipped record naming file:line and the reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import orjson
from pydantic import ValidationError

from agent_eval.errors import DecodeError
from agent_eval.ingest.containers import builtin
from agent_eval.ingest.containers.base import ContainerItem, Skipped
from agent_eval.ingest.safe_text import loads
from agent_eval.ingest.sources import open_input
from agent_eval.ingest.spans import SourceLocation
from agent_eval.trace import AgentTrace

__all__ = ["TraceJsonlContainer"]

_AGENT_TRACE_START = re.compile(
    rb'\A\s*\{\s*"schema_version"\s*:\s*\d+\s*,\s*"conversation_id"\s*:'
)
"""How ``AgentTrace.model_dump_json`` opens every line: schema version, then conversation id."""
TRACE_MAX_DEPTH = 250
"""Deepest AgentTrace line read: as deep as AgentTrace validation goes (pydantic stops a
little above 250 levels), far above the ``safe_text.MAX_NESTING`` levels ingest allows."""


class TraceJsonlContainer(builtin.TraceJsonl):
    """agent-eval's own AgentTrace JSON Lines (the output of ``agent-eval ingest``)."""

    def sniff(self, path: str, head: bytes) -> bool:
        """Whether the first line opens with ``schema_version`` then ``conversation_id``."""
        return _AGENT_TRACE_START.match(head) is not None

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield one AgentTrace per line.

        Raises:
            DecodeError: the file is empty, or its first line is not an AgentTrace (likely
                not this format at all).

        """
        seen_any = False
        with open_input(path) as stream:
            for number, line in enumerate(stream, start=1):
                if not line.strip():
                    continue
                try:
                    # orjson, then python-mode validation: pydantic's own JSON parser stops at
                    # about 200 levels, so a deep trace that was written could not be read back
                    trace = AgentTrace.model_validate(loads(line, max_depth=TRACE_MAX_DEPTH))
                except orjson.JSONDecodeError as exc:
                    if not seen_any:
                        raise DecodeError(f"not JSON: {exc}", path=path, line=number) from None
                    yield _not_json(exc, path, number)
                    continue
                except ValidationError as exc:
                    if not seen_any:
                        raise DecodeError(_explain(exc), path=path, line=number) from None
                    yield _skipped(exc, path, number)
                    continue
                seen_any = True
                yield trace
        if not seen_any:
            raise DecodeError("the file is empty; expected AgentTrace JSON Lines", path=path)


def _explain(exc: ValidationError) -> str:
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in first["loc"]) or "the line"
    return f"not an AgentTrace: {where}: {first['msg']} ({exc.error_count()} error(s))"


def _skipped(exc: ValidationError, path: str, number: int) -> Skipped:
    return Skipped(
        reason="invalid_agent_trace",
        detail=f"{_explain(exc)}; re-run `agent-eval ingest` to rewrite the file",
        source=SourceLocation(path, number),
        spans=0,
    )


def _not_json(exc: orjson.JSONDecodeError, path: str, number: int) -> Skipped:
    return Skipped(
        reason="invalid_agent_trace",
        detail=f"not JSON: {exc}; re-run `agent-eval ingest` to rewrite the file",
        source=SourceLocation(path, number),
        spans=0,
    )
