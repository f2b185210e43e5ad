"""BEGIN (``begin``): knowledge snippet, previous turn, generated response, attribution label.

The BEGIN benchmark (Dziri, Rashkin, Linzen, Reitter, TACL 2022; github.com/google/BEGIN-dataset)
as its TSV files: a header line ``model_name data_source knowledge message response
begin_label``, tab-separated, no quoting. One conversation per row:

- one turn: ``message`` (the previous dialogue turn) -> user message, ``response`` -> answer;
- context: ``knowledge`` (the snippet the response should be grounded in), passage id
  ``knowledge``;
- labels of turn 1: ``begin_label`` as found, and ``attributable`` = 1 for ``Fully
  attributable``, 0 for ``Not fully attributable`` (absent for ``Generic``: nothing to attribute);
- metadata: ``model_name``, ``data_source``; id ``begin/<line>``.

A row with another number of fields, or with bytes that are not UTF-8, is skipped
(``invalid_begin_row``) naming its line.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator

from pydantic import JsonValue

from agent_eval.errors import DecodeError
from agent_eval.ingest._spans import SourceLocation
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._rag_turns import Passage, RagTurn, rag_trace
from agent_eval.ingest.containers._records import not_utf8, open_text

__all__ = ["ATTRIBUTABLE", "BeginContainer"]

HEADER = ("model_name", "data_source", "knowledge", "message", "response", "begin_label")
ATTRIBUTABLE = {"Fully attributable": 1, "Not fully attributable": 0}
"""``begin_label`` -> the binary ``attributable`` label (``Generic`` has none)."""


class BeginContainer(builtin.Begin):
    """BEGIN TSV rows (knowledge, message, response, begin_label)."""

    def sniff(self, path: str, head: bytes) -> bool:
        """The header line is BEGIN's."""
        return head.split(b"\n", 1)[0].rstrip(b"\r").split(b"\t") == [h.encode() for h in HEADER]

    def read(self, path: str) -> Iterator[ContainerItem]:
        """One AgentTrace per row (a Skipped note for a malformed row).

        Raises:
            DecodeError: the header is not BEGIN's.

        """
        with open_text(path) as handle:
            rows = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            header = next(rows, None)
            if header is None or tuple(header) != HEADER:
                raise DecodeError(f"not a BEGIN TSV: the header must be {HEADER}", path=path)
            for line, row in enumerate(rows, start=2):
                if not any(row):
                    continue
                problem = not_utf8(row)
                if len(row) != len(HEADER) or problem:
                    yield Skipped(
                        reason="invalid_begin_row",
                        detail=f"line {line}: {problem}"
                        if problem
                        else f"line {line} has "
                        f"{len(row)} tab-separated fields, not {len(HEADER)} ({', '.join(HEADER)})",
                        source=SourceLocation(path, line),
                        spans=0,
                    )
                    continue
                fields = dict(zip(HEADER, row, strict=True))
                labels: dict[str, JsonValue] = {"begin_label": fields["begin_label"]}
                if fields["begin_label"] in ATTRIBUTABLE:
                    labels["attributable"] = ATTRIBUTABLE[fields["begin_label"]]
                turn = RagTurn(
                    question=fields["message"],
                    passages=[Passage(text=fields["knowledge"], id="knowledge")],
                    answer=fields["response"],
                    labels=labels,
                )
                yield rag_trace(
                    conversation_id=f"begin/{line}",
                    turns=[turn],
                    container=self.name,
                    path=path,
                    metadata={
                        "model_name": fields["model_name"],
                        "data_source": fields["data_source"],
                    },
                )
