"""tau2-bench results: ``{timestamp, info, tasks, simulations}``.

The layout is tau2-bench's ``Results`` model (github.com/sierra-research/tau2-bench,
``src/tau2/data_model/simulation.py``): ``tasks[]`` with ``user_scenario.instructions`` (a
string, or ``reason_for_call`` / ``known_info`` / ``unknown_info`` / ``task_instructions``),
and ``simulations[]`` with ``messages`` (assistant ``tool_calls`` of ``{id, name, arguments}``,
``tool`` results whose ``id`` is the call id), ``reward_info.reward``, ``task_id`` and ``trial``.
Mapped as:

- ``messages`` -> messages (a tool result's tool name from the call it answers; ``reasoning``
  kept; the user simulator's own tool calls kept as opaque ``tool_call`` parts);
- the task's user instructions (joined by ``task_id``) -> ``reference``;
- the task's expected actions (``evaluation_criteria.actions`` requested by the assistant;
  the user's own actions left out; ``compare_args``, when given, keeps only those arguments)
  -> ``reference_tool_calls``; a tool message's ``error`` -> ``is_error``;
- ``reward_info.reward`` -> ``labels = {"reward": r, "success": 0|1}``;
- conversation id: the simulation ``id``; task id, trial, domain, termination reason -> metadata;
- assistant ``usage`` summed into the agent model's usage (``info.agent_info.llm``).

``tasks`` precede ``simulations`` in tau2-bench's files; the simulations are streamed one by
one. A simulation of another shape is skipped with a reason naming its line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from agent_eval._trace import AgentTrace, ModelUsage, ToolCall
from agent_eval.errors import DecodeError
from agent_eval.ingest._reference_calls import parse_tool_calls
from agent_eval.ingest._sources import open_input
from agent_eval.ingest._spans import SourceLocation
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._chat import chat_messages, chat_trace, success_labels
from agent_eval.ingest.containers._json_stream import JsonStream
from agent_eval.ingest.conventions._values import as_int

__all__ = ["Tau2BenchContainer"]

_OBJECT_START = re.compile(rb'\A\s*\{\s*"(timestamp|info|tasks|simulations)"')
_INSTRUCTION_FIELDS = (
    ("reason_for_call", "Reason for call"),
    ("known_info", "Known info"),
    ("unknown_info", "Unknown info"),
    ("task_instructions", "Task instructions"),
)


class Tau2BenchContainer(builtin.Tau2Bench):
    """tau2-bench simulation results, joined to their tasks for references."""

    def sniff(self, path: str, head: bytes) -> bool:
        """An object opening with a results key whose ``info`` names the agent and user."""
        return (
            _OBJECT_START.match(head) is not None
            and b'"agent_info"' in head
            and b'"user_info"' in head
            and (b'"tasks"' in head or b'"simulations"' in head)
        )

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield one AgentTrace per simulation (or a Skipped note for one of another shape).

        Raises:
            DecodeError: the file is not a JSON object, or its JSON is invalid (names the line).

        """
        tasks: dict[str, Mapping[str, Any]] = {}
        info: Mapping[str, Any] = {}
        with open_input(path) as stream:
            json = JsonStream(stream, path)
            if json.peek() != "{":
                raise DecodeError("a tau2-bench results file is a JSON object", path=path, line=1)
            for key in json.members():
                if key == "simulations" and json.peek() == "[":
                    for line, simulation in json.array():
                        yield _trace(simulation, tasks, info, path, line)
                    continue
                value = json.value()
                if key == "tasks" and isinstance(value, list):
                    tasks = {str(t.get("id")): t for t in value if isinstance(t, Mapping)}
                elif key == "info" and isinstance(value, Mapping):
                    info = value


def _trace(
    simulation: Any,
    tasks: Mapping[str, Mapping[str, Any]],
    info: Mapping[str, Any],
    path: str,
    line: int,
) -> AgentTrace | Skipped:
    try:
        if not isinstance(simulation, Mapping) or "messages" not in simulation:
            raise ValueError("a simulation is an object with 'messages'")
        messages = chat_messages(simulation["messages"])
    except ValueError as exc:
        return _skipped(str(exc), path, line)
    task_id = str(simulation.get("task_id"))
    reward_info = simulation.get("reward_info")
    model = _agent_model(info)
    try:
        reference_calls = _expected_actions(tasks.get(task_id))
    except ValueError as exc:
        return _skipped(f"task {task_id}: {exc}", path, line)
    trace = chat_trace(
        conversation_id=str(
            simulation.get("id") or f"tau2-bench/{task_id}/{simulation.get('trial', 0)}"
        ),
        messages=messages,
        container="tau2-bench",
        path=path,
        reference=_reference(tasks.get(task_id)),
        labels=success_labels(
            reward_info.get("reward") if isinstance(reward_info, Mapping) else None
        ),
        metadata=_metadata(simulation, info),
        usage=_usage(simulation["messages"], model) if model else (),
    )
    return trace.model_copy(update={"reference_tool_calls": reference_calls})


def _expected_actions(task: Mapping[str, Any] | None) -> tuple[ToolCall, ...] | None:
    """The assistant's expected actions of ``task``, or ``None`` when it lists none."""
    criteria = task.get("evaluation_criteria") if task else None
    actions = criteria.get("actions") if isinstance(criteria, Mapping) else None
    if not isinstance(actions, list):
        return None
    kept = []
    for action in actions:
        if isinstance(action, Mapping) and action.get("requestor", "assistant") != "assistant":
            continue
        kept.append(_compared_arguments(action))
    return parse_tool_calls(kept)


def _compared_arguments(action: Any) -> Any:
    """``action`` with only its ``compare_args`` arguments, when it names them."""
    keys = action.get("compare_args") if isinstance(action, Mapping) else None
    arguments = action.get("arguments") if isinstance(action, Mapping) else None
    if not isinstance(keys, list) or not isinstance(arguments, Mapping):
        return action
    return {**action, "arguments": {k: arguments[k] for k in keys if k in arguments}}


def _reference(task: Mapping[str, Any] | None) -> str | None:
    scenario = task.get("user_scenario") if task else None
    instructions = scenario.get("instructions") if isinstance(scenario, Mapping) else None
    if isinstance(instructions, str):
        return instructions
    if not isinstance(instructions, Mapping):
        return None
    sections = [
        f"{label}: {instructions[key]}"
        for key, label in _INSTRUCTION_FIELDS
        if isinstance(instructions.get(key), str) and instructions[key].strip()
    ]
    return "\n".join(sections) or None


def _agent_model(info: Mapping[str, Any]) -> str | None:
    agent = info.get("agent_info")
    model = agent.get("llm") if isinstance(agent, Mapping) else None
    return model if isinstance(model, str) else None


def _usage(messages: list[Any], model: str) -> tuple[ModelUsage, ...]:
    calls = inputs = outputs = 0
    for message in messages:
        usage = message.get("usage") if message.get("role") == "assistant" else None
        if isinstance(usage, Mapping):
            calls += 1
            inputs += _token_count(usage.get("prompt_tokens"))
            outputs += _token_count(usage.get("completion_tokens"))
    return (
        (ModelUsage(model=model, input_tokens=inputs, output_tokens=outputs, calls=calls),)
        if calls
        else ()
    )


def _metadata(simulation: Mapping[str, Any], info: Mapping[str, Any]) -> dict[str, Any]:
    environment = info.get("environment_info")
    domain = environment.get("domain_name") if isinstance(environment, Mapping) else None
    metadata = {
        "simulation_id": simulation.get("id"),
        "task_id": simulation.get("task_id"),
        "trial": simulation.get("trial"),
        "termination_reason": simulation.get("termination_reason"),
        "domain": domain,
    }
    return {key: value for key, value in metadata.items() if isinstance(value, str | int | float)}


def _skipped(reason: str, path: str, line: int) -> Skipped:
    return Skipped(
        reason="invalid_tau2_bench_simulation",
        detail=f"{reason}; expected {{id, task_id, messages: [...], reward_info: {{reward}}}}",
        source=SourceLocation(path, line),
        spans=0,
    )


def _token_count(value: Any) -> int:
    """A usage field as a token count; anything else (``Infinity``, ``"n/a"``, -1) counts 0."""
    count = as_int(value) if not isinstance(value, float) or math.isfinite(value) else None
    return count if count is not None and count >= 0 else 0
