"""A scripted claim-level judge for the fake model server: decompositions and labels by text.

:class:`ClaimScript` answers the requests of ``faithfulness@1`` and ``groundedness@1`` the way a
judge would, from two tables: the statements of each answer, and the label (and quote) of each
statement. It reads the request's own text (the answer after the last ``Answer:``; the numbered
statements or claims after the last ``Statements:`` / ``Claims:``; the single ``Statement:``), so
the real client, prompts and parsing all run (the ``@2`` prompts show the question and answer as
quoted lines, ``| text``, which :func:`quoted_after` reads back)::

    script = ClaimScript(
        statements={"You can return it within 14 days, and shipping is free.": [
            "You can return the item within 14 days.", "Return shipping is free."]},
        labels={"You can return the item within 14 days.":
                ("SUPPORTED", "within 14 calendar days of receipt")},
    )
    script.install(server)

A statement without a label is UNSUPPORTED; an answer without statements decomposes into its
sentences. Faithfulness verdicts are ``"1"`` for SUPPORTED, else ``"0"``. Rules are added with
``times=None`` after any rules already on the server, so a test can put faults or bad replies
first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_eval.testing._recording import RecordedRequest
from agent_eval.testing._replies import Reply, Structured, Usage

__all__ = ["ClaimScript", "first_user_text", "numbered_items", "quoted_after"]

_NUMBERED = re.compile(r"^(\d+)\. (.*)$")
_SENTENCES = re.compile(r"(?<=[.!?])\s+")


def first_user_text(request: RecordedRequest) -> str:
    """The first user message's text (the case; later user messages are re-asks)."""
    for message in request.messages:
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return ""


def numbered_items(text: str, heading: str) -> list[str]:
    """The ``N. item`` lines after the last ``heading`` line of ``text``."""
    _, _, tail = text.rpartition(f"\n{heading}\n")
    items = []
    for line in tail.splitlines():
        found = _NUMBERED.match(line)
        if found:
            items.append(found.group(2))
    return items


def quoted_after(text: str, heading: str) -> str | None:
    """The quoted lines (``| x``, ``|! x``, ``|``) after the last ``heading`` line, unquoted.

    ``None`` when the last ``heading`` line is not followed by a quoted line (a ``@1`` prompt).
    """
    _, found, tail = text.rpartition(f"\n{heading}\n")
    lines = []
    for line in tail.split("\n") if found else ():
        if not line.startswith("|"):
            break
        lines.append(line[3:] if line.startswith("|! ") else line[2:])
    return "\n".join(lines) if lines else None


def _answer(text: str) -> str:
    quoted = quoted_after(text, "Answer:")
    return quoted.strip() if quoted is not None else text.rpartition("\nAnswer: ")[2].strip()


@dataclass
class ClaimScript:
    """Decompositions and labels for the claim-level metrics' requests.

    Attributes:
        statements: Answer text -> its statements (claims), in order.
        labels: Statement -> ``(label, quote)``; label SUPPORTED / CONTRADICTED / UNSUPPORTED,
            quote the evidence sent (``None`` sends ``"none"``).
        rationale: The reason/rationale text sent with every verdict.
        supported_count: Added to groundedness replies as ``supported_count`` when not ``None``
            (``"list"`` sends the true count of the list).
        usage: The usage every reply reports (:data:`~agent_eval.testing.NO_USAGE`: none);
            the fake server's estimate when ``None``.

    """

    statements: Mapping[str, Sequence[str]] = field(default_factory=dict)
    labels: Mapping[str, tuple[str, str | None]] = field(default_factory=dict)
    rationale: str = "scripted"
    supported_count: int | str | None = "list"
    usage: Usage | None = None

    def decompose(self, request: RecordedRequest) -> Reply:
        """Reply to a decomposition request (``Statements`` or ``Claims``)."""
        answer = _answer(first_user_text(request))
        atoms = self.statements.get(answer)
        if atoms is None:
            atoms = [s for s in _SENTENCES.split(answer) if s.strip()]
        key = "claims" if request.schema_name == "Claims" else "statements"
        return Structured({key: list(atoms)}, usage=self.usage)

    def label(self, statement: str) -> tuple[str, str | None]:
        """The scripted label and quote of ``statement``."""
        return self.labels.get(statement, ("UNSUPPORTED", None))

    def verdicts(self, request: RecordedRequest) -> Reply:
        """Reply to a faithfulness verify request (all statements)."""
        items = numbered_items(first_user_text(request), "Statements:")
        verdicts = [
            {"statement": s, "reason": self.rationale, "verdict": self._verdict(s)} for s in items
        ]
        return Structured({"verdicts": verdicts}, usage=self.usage)

    def verdict(self, request: RecordedRequest) -> Reply:
        """Reply to a per-statement faithfulness request."""
        statement = first_user_text(request).rpartition("\nStatement: ")[2].strip()
        return Structured(
            {"reason": self.rationale, "verdict": self._verdict(statement)}, usage=self.usage
        )

    def judgements(self, request: RecordedRequest) -> Reply:
        """Reply to a groundedness verify request."""
        claims = []
        for claim in numbered_items(first_user_text(request), "Claims:"):
            label, quote = self.label(claim)
            claims.append(
                {
                    "claim": claim,
                    "label": label,
                    "evidence": quote if quote is not None else "none",
                    "rationale": self.rationale,
                }
            )
        data: dict[str, Any] = {"claims": claims}
        if self.supported_count == "list":
            data["supported_count"] = sum(c["label"] == "SUPPORTED" for c in claims)
        elif self.supported_count is not None:
            data["supported_count"] = self.supported_count
        return Structured(data, usage=self.usage)

    def _verdict(self, statement: str) -> str:
        return "1" if self.label(statement)[0] == "SUPPORTED" else "0"

    def install(self, server: Any) -> None:
        """Add one rule per request kind to ``server`` (a FakeModelServer)."""
        server.add_rule(self.decompose, schema="Statements")
        server.add_rule(self.decompose, schema="Claims")
        server.add_rule(self.verdicts, schema="StatementVerdicts")
        server.add_rule(self.verdict, schema="StatementVerdict")
        server.add_rule(self.judgements, schema="ClaimJudgements")
