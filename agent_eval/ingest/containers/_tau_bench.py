"""tau-bench trajectories: ``[{task_id, trial, reward, info: {task: {...}}, traj: [...]}]``.

The record layout is tau-bench's ``EnvRunResult`` as written to its results and
``historical_trajectories`` files (github.com/sierra-research/tau-bench): ``traj`` is the
OpenAI chat transcript (system policy, user, assistant with ``tool_calls``, ``tool`` results
with ``tool_call_id`` and ``name``); ``reward`` is 1 when the final database state matches the
gold actions. Mapped as:

- ``traj`` -> messages; ``info.task.instruction`` -> ``reference``;
- ``info.task.actions`` (the gold actions, ``{name, kwargs}``) -> ``reference_tool_calls``;
- a tool result reading ``"Error: ..."`` -> ``is_error`` (tau-bench's environment answers a
  tool that raised with ``f"Error: {e}"``);
- ``reward`` -> ``labels = {"reward": r, "success": 0|1}``;
- ``task_id``, ``trial``, ``info.task.user_id`` -> ``metadata``;
- conversation id ``tau-bench/<task_id>/<trial>``.

The file is a JSON array (streamed record by record), JSON Lines, or one record. A record
that does not have this shape, or a JSON Lines line that is not valid JSON, is skipped with a
reason naming its line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from agent_eval._trace import AgentTrace, Message, ToolMessage
from agent_eval.ingest._reference_calls import parse_tool_calls
from agent_eval.ingest._sources import open_input
from agent_eval.ingest._spans import SourceLocation
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._chat import chat_messages, chat_trace, success_labels
from agent_eval.ingest.containers._json_stream import BadValue, JsonStream

__all__ = ["TauBenchContainer"]

_RECORD_START = re.compile(rb'\A\s*\[?\s*\{\s*"(task_id|reward|info|traj|trial)"')


class TauBenchContainer(builtin.TauBench):
    """tau-bench result records with ``traj`` transcripts, rewards and task instructions."""

    def sniff(self, path: str, head: bytes) -> bool:
        """A record opens with a tau-bench key, and ``task_id`` and ``traj`` both appear."""
        return _RECORD_START.match(head) is not None and b'"task_id"' in head and b'"traj"' in head

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield one AgentTrace per record (or a Skipped note for a record of another shape).

        Raises:
            DecodeError: the file is not JSON, JSON Lines or a JSON array (names file and line).

        """
        with open_input(path) as stream:
            json = JsonStream(stream, path)
            records = json.array() if json.peek() == "[" else json.records()
            for record in records:
                if isinstance(record, BadValue):  # a bad JSON Lines line: the rest is read
                    yield record.skipped()
                else:
                    yield _trace(record[1], path, record[0])


def _trace(record: Any, path: str, line: int) -> AgentTrace | Skipped:
    try:
        _check(record)
        messages = tuple(_flag_error(m) for m in chat_messages(record["traj"]))
        task = _task(record)
        actions = task.get("actions")
        reference_calls = parse_tool_calls(actions) if isinstance(actions, list) else None
    except ValueError as exc:
        return _skipped(str(exc), path, line)
    instruction = task.get("instruction")
    trace = chat_trace(
        conversation_id=f"tau-bench/{record['task_id']}/{record.get('trial', 0)}",
        messages=messages,
        container="tau-bench",
        path=path,
        reference=instruction if isinstance(instruction, str) else None,
        labels=success_labels(record.get("reward")),
        metadata=_metadata(record, task),
    )
    return trace.model_copy(update={"reference_tool_calls": reference_calls})


def _flag_error(message: Message) -> Message:
    if isinstance(message, ToolMessage) and message.content.startswith("Error: "):
        return message.model_copy(update={"is_error": True})
    return message


def _check(record: Any) -> None:
    if not isinstance(record, Mapping):
        raise ValueError(f"a tau-bench record is an object, got {type(record).__name__}")
    missing = [key for key in ("task_id", "traj") if key not in record]
    if missing:
        raise ValueError(f"the record has no {' or '.join(missing)}; keys: {sorted(record)}")


def _task(record: Mapping[str, Any]) -> Mapping[str, Any]:
    info = record.get("info")
    task = info.get("task") if isinstance(info, Mapping) else None
    return task if isinstance(task, Mapping) else {}


def _metadata(record: Mapping[str, Any], task: Mapping[str, Any]) -> dict[str, Any]:
    metadata = {"task_id": record["task_id"], "trial": record.get("trial")}
    if isinstance(task.get("user_id"), str):
        metadata["user_id"] = task["user_id"]
    return metadata


def _skipped(reason: str, path: str, line: int) -> Skipped:
    return Skipped(
        reason="invalid_tau_bench_record",
        detail=f"{reason}; expected {{task_id, trial, reward, info: {{task}}, traj: [messages]}}",
        source=SourceLocation(path, line),
        spans=0,
    )
