"""Helpers shared by the analysis and report commands: config tables, gates, JSON output.

``agent-eval.toml`` tables read here: ``[prices."<model>"]`` (see :mod:`agent_eval._costs`) and
``[gates.<name>]`` (see :mod:`agent_eval.analysis._gates`). The config file is the ``--config``
flag, else ``./agent-eval.toml`` when it exists.
"""

from __future__ import annotations

import tomllib
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from agent_eval._costs import PriceTable
from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace
from agent_eval.analysis._gates import (
    FLAG_SOURCE,
    Gate,
    GateCount,
    GateOutcome,
    evaluate_gates,
    load_gates,
    parse_gate,
)
from agent_eval.cli._app import EXIT_GATE, err_console
from agent_eval.cli._exit_codes import EXIT_NOTHING, exit_code
from agent_eval.cli._quiet import machine_stdout
from agent_eval.errors import AgentEvalError, ConfigError, StoreError
from agent_eval.run._store import load_results

__all__ = [
    "DEFAULT_CONFIG",
    "apply_gates",
    "config_path",
    "exit_nothing_scored",
    "exit_on_failed_gates",
    "gate_outcomes",
    "gates_from",
    "load_run_results",
    "out_console",
    "price_table",
    "usage_errors",
    "warn_formatter_drift",
    "write_json",
]

DEFAULT_CONFIG = Path("agent-eval.toml")
out_console = Console(highlight=False)


def config_path(given: Path | None) -> Path | None:
    """The config file to read: the given one (must exist) or ``./agent-eval.toml`` if present.

    Raises:
        ConfigError: ``given`` does not exist.

    """
    if given is not None:
        if not given.is_file():
            raise ConfigError(f"config file {given} not found; fix the --config path")
        return given
    return DEFAULT_CONFIG if DEFAULT_CONFIG.is_file() else None


def _table(path: Path | None, name: str) -> Mapping[str, Any]:
    if path is None:
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from exc
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [{name}] must be a table")
    return table


def price_table(path: Path | None) -> PriceTable:
    """The config's ``[prices]`` table over genai-prices (``agent_eval._costs.PriceTable``)."""
    return PriceTable.from_config(_table(path, "prices"))


def gates_from(
    path: Path | None, flags: Sequence[str], *, statistics: Collection[str] | None = None
) -> list[Gate]:
    """Gates from the config's ``[gates.<name>]`` tables, then from ``--gate`` flags.

    Args:
        path: The config file, or ``None``.
        flags: The ``--gate`` values.
        statistics: What the command can measure; when given, a flag naming another statistic
            is refused here, before any work.

    Raises:
        ConfigError: An invalid gate, or a flag naming a statistic not in ``statistics``.

    """
    measured = tuple(statistics or ())
    gates = [*(load_gates(path) if path else []), *(parse_gate(f, measured) for f in flags)]
    if statistics is not None:
        _refuse_unmeasured(gates, statistics)
    return gates


def _refuse_unmeasured(gates: Sequence[Gate], measured: Collection[str]) -> None:
    for gate in gates:
        if gate.source == FLAG_SOURCE and gate.statistic not in measured:
            raise ConfigError(
                f"--gate {gate.name!r} names {gate.statistic}, which this command does not "
                f"measure here; it measures: {', '.join(measured) or 'no statistic'}"
            )


def apply_gates(gates: Sequence[Gate], counts: Mapping[str, Sequence[GateCount]]) -> list[str]:
    """Evaluate the gates, print each outcome on stderr, and return the failure messages.

    :func:`gate_outcomes` does the work; this keeps only the failures' messages.

    Raises:
        typer.Exit: code 2, for a ``--gate`` flag naming a statistic not measured.

    """
    return [o.message for o in gate_outcomes(gates, counts) if not o.passed]


def gate_outcomes(
    gates: Sequence[Gate], counts: Mapping[str, Sequence[GateCount]]
) -> list[GateOutcome]:
    """Evaluate the gates, print each outcome on stderr, and return every outcome.

    A ``--gate`` flag whose statistic is not in ``counts`` is a usage error: the message names
    the statistics measured and the command exits 2. A config gate for a statistic the command
    does not measure is only noted (a config file may declare gates for several commands).

    Raises:
        typer.Exit: code 2, for a ``--gate`` flag naming a statistic not measured.

    """
    with usage_errors():
        _refuse_unmeasured(gates, list(counts))
    outcomes = evaluate_gates(gates, counts)
    for outcome in outcomes:
        style = "green" if outcome.passed else "bold red"
        err_console.print(f"[{style}]{escape(outcome.message)}[/]", highlight=False)
    for gate in gates:
        if gate.statistic not in counts:
            err_console.print(
                f"config gate {gate.name!r} ({gate.source}) not applicable: this command does "
                f"not measure {gate.statistic}",
                highlight=False,
                markup=False,
            )
    return outcomes


def exit_on_failed_gates(failures: Sequence[str]) -> None:
    """Exit with code 1 when any gate failed."""
    if failures:
        raise typer.Exit(EXIT_GATE)


def _jsonl_target(path: Path) -> Path:
    return path / "results.jsonl" if path.is_dir() else path


def _bad_row(path: Path, number: int, line: bytes, error: ValidationError) -> str:
    try:
        AgentTrace.model_validate_json(line)
    except ValidationError:
        first = error.errors()[0]
        where = ".".join(map(str, first["loc"])) or "the line"
        more = len(error.errors()) - 1
        extra = f" (and {more} more problem(s))" if more else ""
        return f"{path}:{number}: not a result row: {where}: {first['msg']}{extra}"
    return (
        f"{path}: this is an ingest output (AgentTrace lines), not a run: give a run directory "
        "or results.jsonl from `agent-eval score`"
    )


def _explain(path: Path) -> str | None:
    """One short line for the first line of a JSONL file that is not a result row."""
    from agent_eval.ingest._sources import input_suffix, opened_input

    target = _jsonl_target(path)
    if input_suffix(target) != ".jsonl" or not target.is_file():
        return None
    with opened_input(target) as handle:  # results.jsonl.gz too
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                MetricResult.model_validate_json(line)
            except ValidationError as exc:
                return _bad_row(target, number, line, exc)
    return None


def load_run_results(path: Path) -> list[MetricResult]:
    """The result rows of a run directory, ``results.db`` or ``results.jsonl``.

    Raises:
        StoreError: No results store; or a JSONL line is not a result row, said in one line
            naming file:line and the first bad field, or that the file is an ingest output.

    """
    try:
        return load_results(path)
    except StoreError as exc:
        if not isinstance(exc.__cause__, ValidationError):
            raise
        raise StoreError(_explain(path) or str(exc).splitlines()[0]) from None


def warn_formatter_drift(results: Iterable[MetricResult]) -> list[str]:
    """Warn on stderr for each formatter identity ``results`` record with two fingerprints.

    And for each criteria identity recorded with two file hashes (a criteria file changed
    under the same version). See :mod:`agent_eval.run._formatter_drift` and
    :mod:`agent_eval.run._criteria_drift`. Returns the warnings (``[]``: none).
    """
    from agent_eval.run._criteria_drift import criteria_drift
    from agent_eval.run._formatter_drift import formatter_drift

    rows = list(results)
    warnings = [
        *(d.describe() for d in formatter_drift(rows)),
        *(d.describe() for d in criteria_drift(rows)),
    ]
    for warning in warnings:
        err_console.print(
            f"[bold yellow]warning:[/] {escape(warning)}", highlight=False, soft_wrap=True
        )
    return warnings


def write_json(payload: str) -> None:
    """Write a JSON document to stdout, newline-terminated."""
    stdout = machine_stdout()  # written with --quiet too
    stdout.write(payload.rstrip("\n") + "\n")
    stdout.flush()


def exit_nothing_scored(message: str) -> NoReturn:
    """Say why nothing was scored, on stderr, and exit with code 4 (``EXIT_NOTHING``)."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_NOTHING)


@contextmanager
def usage_errors() -> Iterator[None]:
    """Turn an :class:`AgentEvalError` into its one-line message on stderr and its exit code."""
    try:
        yield
    except AgentEvalError as exc:
        err_console.print(
            f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
        )
        raise typer.Exit(exit_code(exc)) from None
