"""ExpertQA (``expertqa``): expert questions, system answers split into claims, expert labels.

The long-form QA files of ExpertQA (Malaviya et al., NAACL 2024; github.com/chaitanyamalaviya/
ExpertQA, ``data/lfqa/*.jsonl``): one JSON object per line, an expert's ``question`` and
``answers`` holding one system's answer (``{system: {answer_string, claims, revised_answer_string,
usefulness, ...}}``). Each claim has its ``claim_string``, its cited ``evidence`` (``"[n] URL"``,
a blank line, the passage text) and the expert's ``support`` (Complete / Partial / Incomplete /
Missing / N/A) and ``correctness``. Mapped, one conversation per line and answer:

- one turn: question -> user message, ``answer_string`` -> answer, ``revised_answer_string``
  (the expert-corrected answer) -> reference;
- context: every evidence passage the answer's claims cite, once each, in order of first
  citation (id ``"[n] URL"``; metadata ``url`` and ``citation`` n);
- labels of turn 1: ``claims`` = ``[{"text", "label", "support", "correctness", "evidence"}]``
  with ``label`` 1 when ``support == "Complete"`` and 0 otherwise (the authors' own binarisation,
  ``modeling/auto_attribution/compute_human_correlation.py``), ``None`` when the expert gave no
  support label; ``evidence`` lists the ids the claim cites; and ``usefulness``;
- metadata: ``system``, ``field``, ``question_type``; id ``expertqa/<line>/<system>``.

The labels judge each claim against *its own* evidence; the unit's context is all the answer's
evidence, so a claim labelled unsupported by its citation may still be supported by another
passage (worth knowing when reading agreement numbers).

In the ingest accounting (``records: used + skipped = read``) a record is one answer (the
published files hold one per line); a line that is no record at all counts as one skipped.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import JsonValue

from agent_eval._trace import AgentTrace
from agent_eval.ingest._spans import SourceLocation
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._rag_turns import Passage, RagTurn, rag_trace
from agent_eval.ingest.containers._records import read_records

__all__ = ["ExpertQAContainer", "support_label"]

SUPPORTED = "Complete"


def support_label(support: object) -> int | None:
    """1 for ``Complete`` support, 0 for any other value, ``None`` when there is none."""
    if not isinstance(support, str) or not support.strip():
        return None
    return int(support.strip() == SUPPORTED)


class ExpertQAContainer(builtin.ExpertQA):
    """ExpertQA long-form QA records (question, answers{system: claims with evidence})."""

    def sniff(self, path: str, head: bytes) -> bool:
        """The first line is an object with ``question`` and ``answers`` holding ``claims``."""
        first = head.split(b"\n", 1)[0]
        return (
            first.lstrip().startswith(b'{"question"')
            and b'"answers"' in first
            and b'"claim_string"' in head
        )

    def read(self, path: str) -> Iterator[ContainerItem]:
        """One AgentTrace per line and answer (a Skipped note for a line of another shape).

        Raises:
            DecodeError: the first line is not JSON.

        """
        for item in read_records(path, list_keys=(), spans_per_record=0):
            if isinstance(item, Skipped):
                yield item
                continue
            line, record = item
            yield from _traces(record, path, line or 1)


def _traces(record: Any, path: str, line: int) -> Iterator[AgentTrace | Skipped]:
    if not isinstance(record, Mapping) or not isinstance(record.get("question"), str):
        yield _skipped("the record is not an object with a question", path, line)
        return
    answers = record.get("answers")
    if not isinstance(answers, Mapping) or not answers:
        yield _skipped("the record has no answers object", path, line)
        return
    for system, answer in answers.items():
        if not isinstance(answer, Mapping) or not isinstance(answer.get("answer_string"), str):
            yield _skipped(f"answers.{system} has no answer_string", path, line)
            continue
        yield _trace(record, str(system), answer, path, line)


def _trace(
    record: Mapping[str, Any], system: str, answer: Mapping[str, Any], path: str, line: int
) -> AgentTrace:
    passages: dict[str, Passage] = {}
    claims: list[JsonValue] = []
    for claim in answer.get("claims") or ():
        if not isinstance(claim, Mapping):
            continue
        cited: list[JsonValue] = []
        for evidence in claim.get("evidence") or ():
            if isinstance(evidence, str) and evidence.strip():
                passage = _passage(evidence)
                passages.setdefault(passage.id or passage.text, passage)
                cited.append(passage.id)
        claims.append(
            {
                "text": str(claim.get("claim_string") or ""),
                "label": support_label(claim.get("support")),
                "support": claim.get("support"),
                "correctness": claim.get("correctness"),
                "evidence": cited,
            }
        )
    found = record.get("metadata")
    metadata: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    revised = answer.get("revised_answer_string")
    labels: dict[str, JsonValue] = {"claims": claims}
    if isinstance(answer.get("usefulness"), str):
        labels["usefulness"] = answer["usefulness"]
    turn = RagTurn(
        question=record["question"],
        passages=list(passages.values()),
        answer=answer["answer_string"],
        reference=revised if isinstance(revised, str) and revised.strip() else None,
        labels=labels,
    )
    return rag_trace(
        conversation_id=f"expertqa/{line}/{system}",
        turns=[turn],
        container=ExpertQAContainer.name,
        path=path,
        metadata={
            "system": system,
            "field": metadata.get("field"),
            "question_type": metadata.get("question_type"),
        },
    )


def _passage(evidence: str) -> Passage:
    """``[n] URL``, a blank line, the passage text -> a passage with id ``[n] URL``."""
    head, sep, text = evidence.partition("\n\n")
    if not sep:
        return Passage(text=evidence.strip())
    citation, _, url = head.strip().partition(" ")
    metadata: dict[str, JsonValue] = {"url": url.strip(), "citation": citation.strip("[]")}
    return Passage(text=text.strip(), id=head.strip(), metadata=metadata)


def _skipped(reason: str, path: str, line: int) -> Skipped:
    return Skipped(
        reason="invalid_expertqa_record",
        detail=f"line {line}: {reason}; expected {{question, answers: {{system: {{answer_string, "
        "claims: [{claim_string, evidence, support}]}}}}}",
        source=SourceLocation(path, line),
        spans=0,
    )
