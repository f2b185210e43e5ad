"""Reference tool calls: what the agent was expected to call, from data, files or spans.

A reference is an ordered list of calls, each a tool name and its arguments (a JSON value,
usually an object), read into :class:`~agent_eval._trace.ToolCall` s on
``AgentTrace.reference_tool_calls``. Accepted call shapes (:func:`parse_tool_calls`):

- ``{"name": ..., "arguments": {...}}`` (tau2-bench actions, our own);
- ``{"name": ..., "kwargs": {...}}`` (tau-bench ``info.task.actions``);
- ``{"function": {"name": ..., "arguments": "<JSON text>" | {...}}}`` (OpenAI tool calls).

A reference file (:func:`load_reference_calls`, ``score --tool-references FILE``) holds one row
per conversation: JSON Lines ``{"conversation_id": "...", "tool_calls": [...]}``, or CSV with
``conversation_id`` and ``tool_calls`` (the list as JSON text) columns; gzip'd (``.jsonl.gz``,
``.csv.gz``) it is read decompressed, its format taken from the suffix before ``.gz``. A
reference in a file takes precedence over the one a trace carries. ``[]`` is a reference too:
no tool should be called.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import orjson
from pydantic import JsonValue

from agent_eval._trace import AgentTrace, ToolCall
from agent_eval.errors import InputError
from agent_eval.ingest._sources import input_suffix, opened_input, opened_text

__all__ = ["load_reference_calls", "parse_tool_calls", "with_reference_calls"]

_SHAPES = (
    '{"name", "arguments"}, {"name", "kwargs"} (tau-bench) or '
    '{"function": {"name", "arguments"}} (OpenAI)'
)


def parse_tool_calls(value: object) -> tuple[ToolCall, ...]:
    """The reference calls in ``value``, a JSON list of calls (or JSON text of one).

    Arguments given as JSON text are parsed; text that is not JSON is kept as
    ``raw_arguments`` (it then matches no call whose arguments are compared).

    Raises:
        ValueError: ``value`` is not a list of calls of an accepted shape (names the index).

    """
    if isinstance(value, str | bytes):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"the tool calls are not valid JSON: {exc}") from None
    if not isinstance(value, list):
        raise ValueError(f"tool calls must be a JSON list, got {type(value).__name__}")
    return tuple(_call(item, index) for index, item in enumerate(value))


def _call(item: object, index: int) -> ToolCall:
    if not isinstance(item, Mapping):
        raise ValueError(f"tool call [{index}] is not an object; expected {_SHAPES}")
    source: Mapping[str, object] = item
    function = item.get("function")
    if isinstance(function, Mapping):
        source = function
    name = source.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"tool call [{index}] has no name; expected {_SHAPES}")
    arguments = source.get("arguments", source.get("kwargs"))
    call_id = item.get("id")
    identifier = call_id if isinstance(call_id, str) else None
    if isinstance(arguments, str):
        try:
            parsed: JsonValue = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return ToolCall(id=identifier, name=name, raw_arguments=arguments)
        return ToolCall(id=identifier, name=name, arguments=parsed)
    return ToolCall(id=identifier, name=name, arguments=_json(arguments))


def _json(value: object) -> JsonValue:
    """``value`` as a JSON value (it came from a JSON decoder; anything else is refused)."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list):
        return [_json(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    raise ValueError(f"arguments hold a {type(value).__name__}, not a JSON value")


def _row(record: object, path: Path, line: int) -> tuple[str, tuple[ToolCall, ...]]:
    if not isinstance(record, Mapping) or not isinstance(record.get("conversation_id"), str):
        raise InputError(
            'expected {"conversation_id": "<id>", "tool_calls": [...]}', path=str(path), line=line
        )
    conversation_id = record["conversation_id"]
    if not conversation_id.strip():
        raise InputError("empty conversation_id", path=str(path), line=line)
    if "tool_calls" not in record:
        raise InputError(
            f"the row has no tool_calls; keys: {sorted(record)}", path=str(path), line=line
        )
    try:
        return conversation_id, parse_tool_calls(record["tool_calls"])
    except ValueError as exc:
        raise InputError(str(exc), path=str(path), line=line) from None


def _jsonl(path: Path) -> Iterator[tuple[str, tuple[ToolCall, ...]]]:
    with opened_input(path) as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise InputError(f"not valid JSON: {exc}", path=str(path), line=number) from None
            yield _row(record, path, number)


def _csv(path: Path) -> Iterator[tuple[str, tuple[ToolCall, ...]]]:
    with opened_text(path) as handle:
        reader = csv.DictReader(handle)
        missing = [
            f for f in ("conversation_id", "tool_calls") if f not in (reader.fieldnames or [])
        ]
        if missing:
            raise InputError(
                f"the CSV header lacks {', '.join(missing)}; it needs conversation_id,tool_calls",
                path=str(path),
                line=1,
            )
        for row in reader:
            yield _row(row, path, reader.line_num)


def load_reference_calls(path: str | Path) -> dict[str, tuple[ToolCall, ...]]:
    """Read a tool-call reference file into ``{conversation_id: calls}``.

    Raises:
        InputError: the file is missing or of an unknown suffix, a row is malformed (names the
            line and what to write), one conversation has two different references, or the
            file is gzip'd and cut short or corrupt.

    """
    source = Path(path)
    if not source.is_file():
        raise InputError("tool-call reference file not found", path=str(source))
    suffix = input_suffix(source)
    if suffix not in (".jsonl", ".ndjson", ".json", ".csv"):
        raise InputError(
            f"unknown reference file type {suffix!r}; use .jsonl or .csv (gzip'd: .jsonl.gz, "
            ".csv.gz)",
            path=str(source),
        )
    references: dict[str, tuple[ToolCall, ...]] = {}
    for conversation_id, calls in _csv(source) if suffix == ".csv" else _jsonl(source):
        if references.setdefault(conversation_id, calls) != calls:
            raise InputError(
                f"conversation {conversation_id!r} has two different tool-call references",
                path=str(source),
            )
    return references


def with_reference_calls(
    traces: Iterable[AgentTrace], references: Mapping[str, tuple[ToolCall, ...]]
) -> Iterator[AgentTrace]:
    """``traces`` with ``reference_tool_calls`` from ``references`` where it names them."""
    for trace in traces:
        calls = references.get(trace.conversation_id)
        yield trace if calls is None else trace.model_copy(update={"reference_tool_calls": calls})
