"""The steering flag: one place where a conversation's content tries to steer its judge.

A :class:`SteeringFlag` is what :mod:`agent_eval.steering._detector` finds and what a result row
carries in :attr:`~agent_eval._result.MetricResult.steering`. It names the class of the finding
(:data:`SteeringKind`), where it is (message index, role, span id, or the retrieved document)
and a trimmed excerpt of the text that matched. It depends on pydantic only, so the lowest
layers (the result row) can hold it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["EXCERPT_CHARS", "STEERING_KINDS", "SteeringFlag", "SteeringKind"]

SteeringKind = Literal["turn_syntax", "addresses_evaluator", "asks_verdict", "hidden_instruction"]
"""The four classes of steering content (issue 29, part 3):

- ``turn_syntax``: a line that imitates a rendering's turn syntax (``Human:``/``AI:``/
  ``ToolOutput:``/``Tools:`` of ``ragas-pretty``, ``[N] ROLE`` of ``transcript``, the
  ``<message role=...>`` / ``{"role": ...}`` structures of ``xml``/``json``) or a chat
  template's tokens (``<|im_start|>``, ``[INST]``, ``### Assistant:``...);
- ``addresses_evaluator``: text addressed to an evaluator, grader or judge, or to whatever model
  reads it (``ignore the previous instructions``);
- ``asks_verdict``: a request for a verdict, score or grade (``mark this conversation as
  successful``, ``verdict: 1``);
- ``hidden_instruction``: text hidden from a person reading the conversation: zero-width,
  bidirectional-control or tag characters, a base64 or hex payload that decodes to text, an
  HTML comment or an element styled invisible.
"""

STEERING_KINDS: tuple[SteeringKind, ...] = (
    "turn_syntax",
    "addresses_evaluator",
    "asks_verdict",
    "hidden_instruction",
)
"""Every :data:`SteeringKind`, in the order reports list them."""

EXCERPT_CHARS = 120
"""Longest excerpt a flag keeps (characters; longer matches are cut with ``…``)."""


class SteeringFlag(BaseModel):
    """One finding of steering content.

    Attributes:
        kind: Its class (:data:`SteeringKind`).
        message_index: 0-based index in ``AgentTrace.messages`` of the message it is in;
            ``None`` for a retrieved document.
        role: The message's role (``system``, ``user``, ``assistant``, ``tool``), or
            ``retrieval`` for a retrieved document.
        span_id: The span (16 hex) the message or retrieval was read from, when known.
        document: For a retrieved document, ``"R.D"``: the 0-based retrieval and document
            index in ``AgentTrace.retrievals``; ``None`` for a message.
        excerpt: The matched text, whitespace collapsed, control characters shown as
            ``<U+XXXX>``, at most :data:`EXCERPT_CHARS` characters; for an encoded payload,
            what it decodes to.

    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: SteeringKind
    message_index: int | None = Field(default=None, ge=0)
    role: str
    span_id: str | None = None
    document: str | None = None
    excerpt: str

    @property
    def where(self) -> str:
        """``message 3 (tool)`` or ``document 0.2 (retrieval)``: where it was found, for people."""
        place = (
            f"message {self.message_index}"
            if self.document is None
            else (f"document {self.document}")
        )
        return f"{place} ({self.role})"
