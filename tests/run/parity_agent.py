"""A deterministic instrumented agent for the front-door parity test.

It emits the same spans in every process that runs it: ids from a counter, times fixed, one
``invoke_agent`` root with one ``chat`` span (GenAI conventions) per conversation. It imports
only the OpenTelemetry SDK, so a pytester session can run a copy of this file as its own module.
"""

from __future__ import annotations

import json
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.id_generator import IdGenerator

CONVERSATIONS = [
    ("p0", "Book a table for two.", "Booked for 8pm. ZEBRA-DONE"),
    ("p1", "Refund order A-1042.", "Sorry, I cannot help with refunds."),
    ("p2", "Move my flight to Friday.", "Moved to Friday 9am. ZEBRA-DONE"),
    ("p3", "Cancel my subscription.", "I did nothing."),
]
"""(conversation id, user turn, agent answer): ZEBRA-DONE marks a reached goal for the judge."""

SCOPE = "parity-agent"
T0 = 1_750_000_000_000_000_000
"""The first conversation's start, in ns since the epoch; each next one starts a second later."""


class CountingIds(IdGenerator):
    """Trace and span ids 1, 2, 3...: the same ids in every process."""

    def __init__(self) -> None:
        self.traces = self.spans = 0

    def generate_trace_id(self) -> int:
        self.traces += 1
        return 0xA9E7 << 64 | self.traces

    def generate_span_id(self) -> int:
        self.spans += 1
        return 0x5A9 << 32 | self.spans


def new_provider() -> TracerProvider:
    """A tracer provider with counting ids and a fixed resource."""
    return TracerProvider(
        resource=Resource({"service.name": "parity-agent"}), id_generator=CountingIds()
    )


def _text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def run_all(tracer: trace.Tracer) -> None:
    """Emit every conversation of :data:`CONVERSATIONS`, in order."""
    for index, (conversation_id, user, answer) in enumerate(CONVERSATIONS):
        start = T0 + index * 1_000_000_000
        common = {"gen_ai.conversation.id": conversation_id}
        root = tracer.start_span(
            "invoke_agent helper",
            start_time=start,
            attributes={"gen_ai.operation.name": "invoke_agent", **common},
        )
        chat = tracer.start_span(
            "chat fake-model",
            context=trace.set_span_in_context(root),
            start_time=start + 1_000_000,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "fake-model",
                "gen_ai.input.messages": json.dumps([_text("user", user)]),
                "gen_ai.output.messages": json.dumps([_text("assistant", answer)]),
                **common,
            },
        )
        chat.end(end_time=start + 400_000_000)
        root.end(end_time=start + 500_000_000)
