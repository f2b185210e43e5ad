"""FaithDial's hallucination audit (``faithdial-audit``): WoW responses with BEGIN labels.

The human annotations of Dziri et al., "On the Origin of Hallucinations in Conversational
Models" (NAACL 2022), in the FaithDial repository (github.com/McGill-NLP/FaithDial,
``data-audit/<MODEL>/<model>_processed_wow.csv``): CSV with the header ``knowledge, history,
<model>, begin_label, vrm_label`` (the third column is named after the model: ``ctrl``,
``doha``, ``gpt2``). One conversation per row:

- one turn: ``history`` (the previous user utterance; may be empty) -> user message, the model's
  response -> answer;
- context: ``knowledge``, passage id ``knowledge``;
- labels of turn 1: ``begin_label`` and ``vrm_label`` as found, and ``faithful`` = 1 for
  ``entailment`` and ``entailment,uncooperative`` (supported by the knowledge, whether or not it
  cooperates), 0 for ``hallucination`` and ``entailment,hallucination`` (partly hallucinated),
  absent for ``generic`` (nothing to attribute);
- metadata: ``model``; id ``faithdial-audit/<model>/<line>``.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import IO

from pydantic import JsonValue

from agent_eval.errors import DecodeError
from agent_eval.ingest._spans import SourceLocation
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._rag_turns import Passage, RagTurn, rag_trace
from agent_eval.ingest.containers._records import not_utf8, open_text

__all__ = ["FAITHFUL", "FaithDialAuditContainer"]

FAITHFUL = {
    "entailment": 1,
    "entailment,uncooperative": 1,
    "hallucination": 0,
    "entailment,hallucination": 0,
}
"""``begin_label`` -> the binary ``faithful`` label (``generic`` has none)."""
HEADER_END = ["begin_label", "vrm_label"]


class FaithDialAuditContainer(builtin.FaithDialAudit):
    """FaithDial data-audit CSVs (knowledge, history, response, begin_label, vrm_label)."""

    def sniff(self, path: str, head: bytes) -> bool:
        """The header line is ``knowledge,history,<model>,begin_label,vrm_label``."""
        fields = head.split(b"\n", 1)[0].rstrip(b"\r").split(b",")
        return (
            len(fields) == 5
            and fields[:2] == [b"knowledge", b"history"]
            and (fields[3:] == [b"begin_label", b"vrm_label"])
        )

    def read(self, path: str) -> Iterator[ContainerItem]:
        """One AgentTrace per row (a Skipped note for a malformed row).

        Raises:
            DecodeError: the header is not the audit's.

        """
        with open_text(path) as handle:
            rows = _Rows(handle)
            header = next(rows, (0, ""))[1]
            if isinstance(header, str) or len(header) != 5 or header[3:] != HEADER_END:
                raise DecodeError(
                    "not a FaithDial audit CSV: the header must be knowledge,history,<model>,"
                    "begin_label,vrm_label",
                    path=path,
                )
            model = header[2]
            for line, row in rows:
                if isinstance(row, str) or not any(row):
                    if isinstance(row, str):
                        yield _bad_row(path, line, row)
                    continue
                problem = not_utf8(row)
                if len(row) != 5 or problem:
                    yield _bad_row(
                        path,
                        line,
                        f"record ending on line {line}: {problem}"
                        if problem
                        else f"record ending on line {line} has {len(row)} fields, not 5",
                    )
                    continue
                knowledge, history, response, begin_label, vrm_label = row
                labels: dict[str, JsonValue] = {"begin_label": begin_label, "vrm_label": vrm_label}
                if begin_label in FAITHFUL:
                    labels["faithful"] = FAITHFUL[begin_label]
                turn = RagTurn(
                    question=history,
                    passages=[Passage(text=knowledge, id="knowledge")],
                    answer=response,
                    labels=labels,
                )
                yield rag_trace(
                    conversation_id=f"faithdial-audit/{model}/{line}",
                    turns=[turn],
                    container=self.name,
                    path=path,
                    metadata={"model": model},
                )


def _bad_row(path: str, line: int, detail: str) -> Skipped:
    return Skipped(
        reason="invalid_faithdial_row",
        detail=detail,
        source=SourceLocation(path, line),
        spans=0,
    )


class _Rows:
    """``(last line, row)`` per CSV record, one bad line costing only itself.

    A record over several lines that is not a 5-field row (a stray ``"`` opened a quoted field
    that swallowed the rows after it), or that the csv module refuses (a field over its size
    limit), is ``(first line, reason)``: its first line is skipped and the lines after it are
    read again as rows of their own.
    """

    def __init__(self, handle: IO[str]) -> None:
        self._lines = enumerate(handle, start=1)
        self._replay: list[tuple[int, str]] = []
        self._taken: list[tuple[int, str]] = []
        self._reader = csv.reader(self._source())

    def _source(self) -> Iterator[str]:
        while True:
            item = self._replay.pop(0) if self._replay else next(self._lines, None)
            if item is None:
                return
            self._taken.append(item)
            yield item[1]

    def __iter__(self) -> _Rows:
        return self

    def __next__(self) -> tuple[int, list[str] | str]:
        self._taken = []
        try:
            row: list[str] | str = next(self._reader)
        except csv.Error as exc:
            row = f"{exc}"
        if not self._taken:
            raise StopIteration
        first, last = self._taken[0][0], self._taken[-1][0]
        if isinstance(row, str) or (len(row) != 5 and last > first):
            self._replay[:0] = self._taken[1:]
            self._reader = csv.reader(self._source())
            reason = row if isinstance(row, str) else "an unmatched quote"
            return first, f"line {first} is not a CSV row of 5 fields ({reason}); fix the line"
        return last, row
