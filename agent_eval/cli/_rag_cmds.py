"""``agent-eval rag RUN``: the per-turn RAG view of a run, its failures and its policy.

Shows every turn, its failure classes, each reviewer's agreement with the human labels, and
the ``[rag]`` policy (gates, not weighted means).

Reads ``RUN/turns.jsonl`` (written by ``score`` for turn metrics) and the run's results. Exit
codes (:mod:`agent_eval.cli._exit_codes`, as for every command): 0 shown (and every policy gate
passed); 1 a policy gate failed; 2 a missing or invalid policy file; 3 no such run, or a run that
recorded no turns or cannot be read.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agent_eval.cli._app import EXIT_GATE, app, err_console
from agent_eval.cli._exit_codes import exit_code
from agent_eval.cli._help_format import HelpCommand
from agent_eval.cli._json_output import RagPayload, emit_json
from agent_eval.cli._tables import print_table
from agent_eval.errors import AgentEvalError, ConfigError, StoreError
from agent_eval.rag._policy import PolicyOutcome, RagPolicy, apply_policy, load_policy
from agent_eval.run._runs import find_run
from agent_eval.run._store import load_results
from agent_eval.run._turns import (
    STAGE_METRICS,
    TurnRow,
    failure_counts,
    measured_stages,
    passages_shown,
    read_turns,
    turn_rows,
)

__all__ = ["rag_cmd"]

_QUALITIES = ("faithfulness", "groundedness", "answer_relevance", "answer_correctness")
_SHOWN = 160


def _short(text: str, limit: int = _SHOWN) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _cell(row: TurnRow, name: str) -> str:
    result = row.results.get(name)
    if result is None:
        return ""
    if result.status != "ok":
        return f"{result.status}: {result.error_type}"
    shown = f"{result.score:.2f}"
    if result.verdict is not None:
        shown += f" ({result.verdict})"
    return shown


def _statement(statement: Mapping[str, Any]) -> str:
    """``  x "text" UNVERIFIED (judge: SUPPORTED); quote "..." not in the passages: reason``.

    A failing statement of a claim metric, as listed under its score (faithfulness's label
    reads ``label 0``).
    """
    label = str(statement["label"])
    shown = f"label {label}" if label.isdigit() else label  # faithfulness: 0 (not supported)
    text = f'  x "{_short(str(statement["text"]), 100)}" {shown}'
    if statement["judge_label"]:
        text += f" (judge: {statement['judge_label']})"
    if statement["evidence"]:
        found = {True: "verified", False: "not in the passages", None: "not checked"}
        text += (
            f'; quote "{_short(str(statement["evidence"]), 60)}" '
            f"{found[statement['evidence_verified']]}"
        )
    if statement["rationale"]:
        text += f": {_short(str(statement['rationale']), 100)}"
    return text


def _no_passages(row: TurnRow) -> str:
    """What stands for a turn's passages when it has none: whether a retriever ran."""
    if row.turn.retrievals:
        return "passages: none retrieved"
    return "" if row.turn.retrievals is None else "passages: none (no retriever ran)"


def _turn_table(rows: list[TurnRow]) -> Table:
    table = Table(title="turns", show_lines=True, title_justify="left")
    for column in ("turn", "question / passages / answer", "retrieval", "answer", "failures"):
        table.add_column(column, overflow="fold")
    for row in rows:
        passages = "\n".join(
            f"{p['mark']} {p['id'] or '#'}: {_short(str(p['text']), 70)}"
            for p in passages_shown(row.turn)
        ) or _no_passages(row)
        text = f"Q: {_short(row.turn.question)}\n{passages}\nA: {_short(row.turn.answer)}"
        retrieval = "\n".join(
            f"{label} {_cell(row, name)}"
            for label, name in (
                ("precision", "context_precision"),
                ("precision (llm)", "llm_context_precision"),
                ("recall", "context_recall"),
                ("recall (llm)", "llm_context_recall"),
            )
            if name in row.results
        )
        failing = row.failing_statements()
        answer = []
        for q in _QUALITIES:
            if q in row.results:
                answer.append(f"{q} {_cell(row, q)}")
                answer += [_statement(s) for s in failing if s["metric"] == q]
        if "refusal" in row.results:
            answer.append(f"refusal {_cell(row, 'refusal')}")
        wrong = row.detail("answer_correctness", "wrong_critical_facts")
        if wrong:
            answer.append("WRONG critical facts: " + "; ".join(map(str, wrong)))
        facts = row.detail("answer_correctness", "critical_facts")
        if facts:
            answer.append(f"critical facts: {facts}")
        table.add_row(
            row.turn.subject,
            escape(text),
            escape(retrieval),
            escape("\n".join(answer)),
            escape(", ".join(row.failures)),
        )
    return table


def _payload(rows: list[TurnRow], outcome: PolicyOutcome | None) -> dict[str, Any]:
    from agent_eval.rag._agreement import reviewer_agreement  # scipy/sklearn: only when run

    return {
        "turns": [
            {
                **row.turn.model_dump(mode="json"),
                "results": {
                    name: r.model_dump(
                        mode="json",
                        include={"metric", "status", "score", "verdict", "error_type", "details"},
                    )
                    for name, r in row.results.items()
                },
                "failures": row.failures,
                "failing_statements": row.failing_statements(),
            }
            for row in rows
        ],
        "failures": {stage: dict(c) for stage, c in failure_counts(rows).items()},
        "agreement": [a.__dict__ for a in reviewer_agreement(rows)],
        "policy": None if outcome is None else outcome.to_json(),
    }


@app.command("rag", cls=HelpCommand)
def rag_cmd(
    run: Annotated[str, typer.Argument(help="Run directory (or run id with --out).")],
    out: Annotated[Path | None, typer.Option(help="Where to look for a run id.")] = None,
    policy: Annotated[
        Path | None, typer.Option(help="TOML file with a [rag] policy (default ./agent-eval.toml).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Per-turn RAG report: passages (+ relevant), qualities, refusal, failures, agreement.

    Each turn's question, passages (+ relevant, - not, ? unlabelled), answer, each quality
    with its failing statements, refusal and critical facts; retrieval failures apart from
    generation failures; every reviewer's agreement with the human labels; the [rag] policy,
    turns it did not measure listed apart, exit 1 when a gate fails.
    """
    console = Console()
    try:
        found = find_run(run, out)
        records = read_turns(found.directory)
        if not records:
            raise StoreError(
                f"{found.directory} has no turns.jsonl: score turn metrics (context_precision, "
                "answer_relevance, ...) with this version first"
            )
        results = [r for r in load_results(found.directory) if r.run_id == found.run_id]
        chosen = _policy(policy)
        threshold = chosen.filter.threshold if chosen is not None else 1.0
        rows = turn_rows(records, results, faithfulness_threshold=threshold)
    except AgentEvalError as exc:
        err_console.print(
            f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
        )
        raise typer.Exit(exit_code(exc)) from exc
    outcome = apply_policy(rows, chosen) if chosen is not None else None
    if as_json:
        emit_json("rag", RagPayload.model_validate(_payload(rows, outcome)))
    else:
        print_table(console, _turn_table(rows))
        measured = measured_stages(rows)
        for stage, counts in failure_counts(rows).items():
            shown = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "none"
            if stage not in measured:  # nothing looked: "none" would claim it was fine
                shown = f"not measured (no {', '.join(STAGE_METRICS[stage])} result)"
            console.print(f"{stage} failures: {shown}", highlight=False)
        from agent_eval.rag._agreement import reviewer_agreement  # scipy/sklearn: only when run

        console.print("reviewer agreement with human labels:", highlight=False)
        for agreement in reviewer_agreement(rows):
            console.print(f"  {escape(agreement.describe())}", highlight=False)
        if outcome is None:
            console.print(
                "no [rag] policy configured: no gate applied and no weighted mean shown",
                highlight=False,
                markup=False,
            )
        else:
            for line in outcome.lines():
                console.print(escape(line), highlight=False)
    if outcome is not None and not outcome.passed:
        raise typer.Exit(EXIT_GATE)


def _policy(path: Path | None) -> RagPolicy | None:
    if path is None:
        default = Path("agent-eval.toml")
        return load_policy(default) if default.is_file() else None
    if not path.is_file():
        raise ConfigError(f"policy file {path} not found; fix the --policy path")
    chosen = load_policy(path)
    if chosen is None:
        raise ConfigError(f"{path} has no [rag] table; add one or give another --policy file")
    return chosen
