"""A small recorded agent run with a handoff and a failed tool call, as OTLP JSON spans.

Two turns of conversation ``flight-change`` (GenAI v1.37 attributes, one trace per turn): in
turn 1 the ``triage`` agent hands off to ``booking`` (tool ``transfer_to_booking``), whose
``change_flight`` run fails (span status ERROR with an ``exception`` event, ``ValueError``);
in turn 2 ``booking`` retries and succeeds. Times are fixed (1 ms = 1,000,000 ns), so the
durations a report shows are known: ``change_flight`` takes 250 ms in turn 1 and 120 ms in
turn 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from agent_eval.testing._otlp import export_request, span

CONVERSATION = "flight-change"
T0 = 1_767_225_600_000_000_000
MS = 1_000_000
FAILED_TOOL = "change_flight"
ERROR_TYPE = "ValueError"
ERROR_MESSAGE = "no seat on LH401 on 13 May"


def _text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    part = {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}
    return {"role": "assistant", "parts": [part]}


def _result(call_id: str, text: str) -> dict[str, Any]:
    part = {"type": "tool_call_response", "id": call_id, "response": text}
    return {"role": "tool", "parts": [part]}


def _chat(trace: str, sid: str, parent: str, at: tuple[int, int], history: list[Any],
          out: dict[str, Any], tokens: tuple[int, int]) -> dict[str, Any]:  # fmt: skip
    return span(
        trace, sid, "chat gpt-4o", kind=3, parent_span_id=parent,
        start=T0 + at[0] * MS, end=T0 + at[1] * MS,
        attributes={
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.input_tokens": tokens[0], "gen_ai.usage.output_tokens": tokens[1],
            "gen_ai.input.messages": json.dumps(history),
            "gen_ai.output.messages": json.dumps([out]),
        },
    )  # fmt: skip


def _tool(trace: str, sid: str, parent: str, at: tuple[int, int], name: str, call_id: str,
          result: str | None = None) -> dict[str, Any]:  # fmt: skip
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                  "gen_ai.tool.call.id": call_id}  # fmt: skip
    if result is not None:
        attributes["gen_ai.tool.call.result"] = result
        return span(trace, sid, f"execute_tool {name}", parent_span_id=parent,
                    start=T0 + at[0] * MS, end=T0 + at[1] * MS, attributes=attributes)  # fmt: skip
    return span(
        trace, sid, f"execute_tool {name}", parent_span_id=parent,
        start=T0 + at[0] * MS, end=T0 + at[1] * MS, attributes=attributes,
        events=[("exception", T0 + at[1] * MS,
                 {"exception.type": ERROR_TYPE, "exception.message": ERROR_MESSAGE})],
        status=(2, ERROR_MESSAGE),
    )  # fmt: skip


def _agent(
    trace: str, sid: str, parent: str | None, at: tuple[int, int], name: str
) -> dict[str, Any]:
    return span(
        trace, sid, f"invoke_agent {name}", parent_span_id=parent,
        start=T0 + at[0] * MS, end=T0 + at[1] * MS,
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name,
                    "gen_ai.conversation.id": CONVERSATION},
    )  # fmt: skip


def spans() -> list[dict[str, Any]]:
    """The run's spans (two traces)."""
    t1, t2 = "a" * 32, "b" * 32
    h: list[Any] = [_text("system", "You are an airline assistant."),
                    _text("user", "Move my flight LH401 to 13 May.")]  # fmt: skip
    handoff = _call("call_1", "transfer_to_booking", {})
    out = [
        _agent(t1, "a000000000000001", None, (0, 2000), "triage"),
        _chat(t1, "a000000000000002", "a000000000000001", (10, 400), list(h), handoff, (40, 8)),
        _tool(t1, "a000000000000003", "a000000000000001", (410, 420), "transfer_to_booking",
              "call_1", "booking"),
    ]  # fmt: skip
    h += [handoff, _result("call_1", "booking")]
    change = _call("call_2", FAILED_TOOL, {"flight": "LH401", "date": "13 May"})
    out += [
        _agent(t1, "a000000000000004", "a000000000000001", (430, 1990), "booking"),
        _chat(t1, "a000000000000005", "a000000000000004", (440, 900), list(h), change, (60, 12)),
        _tool(t1, "a000000000000006", "a000000000000004", (910, 1160), FAILED_TOOL, "call_2"),
    ]
    h += [change, _result("call_2", f"Error: {ERROR_MESSAGE}")]
    sorry = _text("assistant", "Sorry, there is no seat on 13 May; the change failed.")
    out.append(_chat(t1, "a000000000000007", "a000000000000004", (1170, 1980), list(h), sorry,
                     (90, 14)))  # fmt: skip
    h += [sorry, _text("user", "Try 14 May then.")]
    retry = _call("call_3", FAILED_TOOL, {"flight": "LH401", "date": "14 May"})
    out += [
        _agent(t2, "b000000000000001", None, (60_000, 61_500), "booking"),
        _chat(t2, "b000000000000002", "b000000000000001", (60_010, 60_500), list(h), retry,
              (120, 12)),
        _tool(t2, "b000000000000003", "b000000000000001", (60_510, 60_630), FAILED_TOOL, "call_3",
              "moved to 14 May"),
    ]  # fmt: skip
    h += [retry, _result("call_3", "moved to 14 May")]
    done = _text("assistant", "Done: LH401 is moved to 14 May.")
    out.append(_chat(t2, "b000000000000004", "b000000000000001", (60_640, 61_490), list(h), done,
                     (150, 10)))  # fmt: skip
    return out


def write(path: Path) -> Path:
    """Write the run as one OTLP JSON export request to ``path``."""
    path.write_bytes(orjson.dumps(export_request(spans(), resource={"service.name": "airline"})))
    return path
