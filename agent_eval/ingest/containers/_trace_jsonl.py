"""AgentTrace JSON Lines: what ``agent-eval ingest --out`` writes, read back losslessly.

One :class:`~agent_eval._trace.AgentTrace` JSON object per line (``model_dump_json``). Lines are
streamed; a line that does not validate is a skipped record naming file:line and the reason,
the first line too when a later one is an AgentTrace.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import IO

import orjson
from pydantic import ValidationError

from agent_eval._trace import AgentTrace
from agent_eval.errors import DecodeError
from agent_eval.ingest._safe_text import loads
from agent_eval.ingest._sources import open_input
from agent_eval.ingest._spans import SourceLocation
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._leading import hold_leading_bad

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
        """Yield one AgentTrace per line (a bad line, the first included, costs only itself).

        Raises:
            DecodeError: the file is empty, or no line is an AgentTrace (within
                :data:`~agent_eval.ingest.containers._leading.MAX_LEADING_BAD` lines: likely
                not this format at all); names the first line and why.

        """
        seen_any = False
        with open_input(path) as stream:
            for item in hold_leading_bad(
                _lines(stream, path),
                lambda i: isinstance(i, Skipped),
                lambda first: _not_this_format(first, path),
            ):
                seen_any = True
                yield item
        if not seen_any:
            raise DecodeError("the file is empty; expected AgentTrace JSON Lines", path=path)


def _lines(stream: IO[bytes], path: str) -> Iterator[AgentTrace | Skipped]:
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            # orjson, then python-mode validation: pydantic's own JSON parser stops at
            # about 200 levels, so a deep trace that was written could not be read back
            yield AgentTrace.model_validate(loads(line, max_depth=TRACE_MAX_DEPTH))
        except orjson.JSONDecodeError as exc:
            yield _not_json(exc, path, number)
        except ValidationError as exc:
            yield _skipped(exc, path, number)


def _not_this_format(item: AgentTrace | Skipped, path: str) -> DecodeError:
    """The error for a file whose first lines are no AgentTrace: the first one's reason."""
    if not isinstance(item, Skipped):
        return DecodeError("not AgentTrace JSON Lines", path=path)
    line = item.source.line if item.source else None
    return DecodeError(item.detail.split("; re-run")[0], path=path, line=line)


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
