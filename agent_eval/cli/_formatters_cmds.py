"""agent-eval CLI: ``formatters list | diff | lock`` and ``show``.

- ``formatters list [--json]``: every registered release with its parameters, fingerprint (first
  12 hex), lock status, description and the o200k token count of its probe-set renderings.
- ``formatters diff A B PATH...``: per conversation, a unified diff of two renderings and their
  token counts.
- ``formatters lock [--check [--strict]]``: add lock entries for new versions / verify the lock
  (exit 1 on a changed released version: "bump the version"); ``--check`` lists the registered
  identities the lock does not cover (a plugin's), ``--strict`` fails on them.
- ``show PATH... [--formatter NAME@V] [--raw]``: a readable view, or the exact judge input.

Unknown formatters, bad parameters and unreadable inputs exit 2 with a message listing what
exists.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from agent_eval._terminal_text import escape_control, escape_trace
from agent_eval._tokens import count_tokens
from agent_eval._trace import AgentTrace
from agent_eval.cli._analysis_options import usage_errors
from agent_eval.cli._app import EXIT_GATE, app, err_console
from agent_eval.cli._conversation_view import conversation_view
from agent_eval.cli._formatter_options import (
    Conversation,
    FormatterPath,
    InputFormat,
    load_formatter_paths,
    read_traces,
)
from agent_eval.cli._help_format import HelpCommand
from agent_eval.cli._json_output import emit_json
from agent_eval.cli._tables import print_table
from agent_eval.errors import ConfigError, FormatterLockError
from agent_eval.formatting import (
    PROBE_SET_VERSION,
    Formatter,
    fingerprint,
    formatters,
    get_formatter,
    probe_renderings,
    update_lock,
    verify_lock,
)
from agent_eval.formatting._identity import describe_params
from agent_eval.formatting._lock import LockFile, read_lock
from agent_eval.formatting._registry import FormatterClass

__all__ = ["DEFAULT_RAW_FORMATTER", "formatters_app"]

DEFAULT_RAW_FORMATTER = "transcript@1"
"""What ``show --raw`` renders with when no ``--formatter`` is given."""

formatters_app = typer.Typer(
    rich_markup_mode=None,
    name="formatters",
    help="Versioned formatters: list them, diff two renderings, lock their fingerprints.",
    no_args_is_help=True,
)
app.add_typer(formatters_app, name="formatters")
console = Console(highlight=False)


def _row(cls: FormatterClass, lock: LockFile) -> dict[str, Any]:
    formatter = cls()
    digest = fingerprint(formatter)
    status = "not locked"
    if cls.release() in lock.fingerprints:
        same = lock.fingerprints[cls.release()] == fingerprint(formatter, lock.probe_set)
        status = "locked" if same else "CHANGED: bump the version"
    return {
        "formatter": cls.release(),
        "parameters": describe_params(cls.Params),
        "fingerprint": digest,
        "lock": status,
        "description": cls.description,
        "probe_set_tokens": sum(count_tokens(text) for _, text in probe_renderings(formatter)),
    }


@formatters_app.command("list", cls=HelpCommand)
def list_formatters(
    json_output: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    formatter_path: FormatterPath = None,
) -> None:
    """List every registered formatter version with its fingerprint and probe-set tokens."""
    with usage_errors():
        load_formatter_paths(formatter_path)
        lock = read_lock()
        rows = [_row(cls, lock) for _, cls in formatters]
    if json_output:
        document = {"probe_set": PROBE_SET_VERSION, "formatters": rows, "broken": formatters.broken}
        emit_json("formatters list", document)
        return
    table = Table(title=f"formatters (probe set {PROBE_SET_VERSION})")
    for column in ("formatter", "fingerprint", "lock", "probe tokens"):
        table.add_column(column, no_wrap=True)
    table.add_column("description · parameters")
    for row in rows:
        about = Text(row["description"])
        about.append("".join(f"\n  {p}" for p in row["parameters"]), style="dim")
        cells = [row["formatter"], row["fingerprint"][:12], row["lock"]]
        table.add_row(*(Text(cell) for cell in cells), Text(str(row["probe_set_tokens"])), about)
    print_table(console, table)
    for name, problem in formatters.broken.items():
        err_console.print(f"broken formatter {escape(name)}: {escape(problem)}", highlight=False)


def _print_diff(first: Formatter[Any], second: Formatter[Any], trace: AgentTrace) -> bool:
    left, right = first.render(trace), second.render(trace)
    tokens = f"{count_tokens(left)} vs {count_tokens(right)} tokens"
    same = left == right
    state = "identical" if same else "differ"
    console.print(Text(f"conversation {trace.conversation_id}: {state} ({tokens})", style="bold"))
    lines = difflib.unified_diff(
        left.splitlines(), right.splitlines(), first.identity, second.identity, lineterm=""
    )
    for line in lines:
        style = {"+": "green", "-": "red", "@": "cyan"}.get(line[:1])
        console.print(Text(line, style=style or ""), soft_wrap=True)
    return not same


@formatters_app.command("diff", cls=HelpCommand)
def diff(
    first: Annotated[str, typer.Argument(help="A formatter, NAME@VERSION[params].")],
    second: Annotated[str, typer.Argument(help="Another formatter.")],
    paths: Annotated[list[str], typer.Argument(help="Input files, directories or globs.")],
    *,
    conversation: Conversation = None,
    fmt: InputFormat = "auto",
    formatter_path: FormatterPath = None,
) -> None:
    """Show where two formatters' renderings of the same conversations differ."""
    with usage_errors():
        load_formatter_paths(formatter_path)
        a, b = get_formatter(first), get_formatter(second)
        results = [_print_diff(a, b, trace) for trace in read_traces(paths, fmt, conversation)]
    noun = "conversation" if len(results) == 1 else "conversations"
    console.print(Text(f"{len(results)} {noun}, {sum(results)} rendered differently"))


@formatters_app.command("lock", cls=HelpCommand)
def lock(
    check: Annotated[bool, typer.Option("--check", help="Verify only; exit 1 on drift.")] = False,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="With --check: exit 1 also for registered formatters this lock does not cover "
            "(a plugin's, which --check only lists).",
        ),
    ] = False,
    lock_path: Annotated[Path | None, typer.Option("--lock", help="Lock file to use.")] = None,
    formatter_path: FormatterPath = None,
) -> None:
    """Add lock entries for new formatter versions, or verify the lock with --check.

    A lock covers the formatters of the package it sits in (the built-in lock: the built-in
    formatters); --check also lists the registered formatters it does not cover (a plugin's,
    changed without a version bump unnoticed unless its package ships its own lock), and
    --strict fails on them.
    """
    with usage_errors():
        if strict and not check:
            raise ConfigError("--strict applies to --check")
        load_formatter_paths(formatter_path)
        report = verify_lock(lock_path)
    for problem in report.problems():
        err_console.print(f"[bold red]error:[/] {escape(problem)}", highlight=False)
    if not report.frozen_ok:
        raise typer.Exit(EXIT_GATE)
    if check:
        for identity in report.unlocked:
            err_console.print(
                f"not locked: {escape(identity)}; run `agent-eval formatters lock`", highlight=False
            )
        for uncovered in report.uncovered:
            label = "[bold red]error:[/]" if strict else "[bold yellow]warning:[/]"
            err_console.print(f"{label} {escape(uncovered.describe())}", highlight=False)
        if report.unlocked or (strict and report.uncovered):
            raise typer.Exit(EXIT_GATE)
        n = len(report.uncovered)
        more = (
            f"; {n} registered {'identity' if n == 1 else 'identities'} not covered by it "
            "(listed on stderr; --strict fails on them)"
            if n
            else ""
        )
        console.print(f"lock OK: {len(report.fingerprints)} formatter identities match{more}")
        return
    try:
        added = update_lock(lock_path)
    except FormatterLockError as exc:  # pragma: no cover - verified just above
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(EXIT_GATE) from None
    lines = [f"locked {identity}" for identity in added] or ["lock is up to date"]
    console.print(Text("\n".join(lines)))


def _write_raw(formatter: Formatter[Any], traces: Iterator[AgentTrace]) -> None:
    first = next(traces, None)
    if first is None:
        raise ConfigError("the input holds no conversation")
    second = next(traces, None)
    if second is not None:
        raise ConfigError(
            "--raw prints one conversation and the input holds several (e.g. "
            f"{first.conversation_id!r}, {second.conversation_id!r}); choose one with "
            "--conversation ID"
        )
    text = formatter.render(first)
    if sys.stdout.isatty():  # exact bytes for a pipe or file; never obeyed by a terminal
        text = escape_control(text)
    data = text.encode("utf-8", "surrogatepass")
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _judge_view(formatter: Formatter[Any], digest: str, trace: AgentTrace) -> Panel:
    text = escape_control(formatter.render(trace))  # the terminal shows control codes
    title = f"{trace.conversation_id} · {formatter.identity}#{digest[:12]} · "
    return Panel(Text(text), title=Text(title + f"{count_tokens(text)} tokens"), title_align="left")


@app.command("show", cls=HelpCommand)
def show(
    paths: Annotated[list[str], typer.Argument(help="Input files, directories or globs.")],
    *,
    formatter: Annotated[
        str | None,
        typer.Option("--formatter", help="Render as a judge sees it, e.g. transcript@1."),
    ] = None,
    conversation: Conversation = None,
    raw: Annotated[
        bool,
        typer.Option(
            "--raw",
            help=f"Print only the rendered string ({DEFAULT_RAW_FORMATTER} "
            "unless --formatter is given).",
        ),
    ] = False,
    fmt: InputFormat = "auto",
    formatter_path: FormatterPath = None,
) -> None:
    """Show conversations: readable in the terminal, or exactly as a formatter renders them."""
    with usage_errors():
        load_formatter_paths(formatter_path)
        chosen = get_formatter(formatter or DEFAULT_RAW_FORMATTER) if formatter or raw else None
        traces = read_traces(paths, fmt, conversation)
        if raw and chosen is not None:
            _write_raw(chosen, traces)
            return
        digest = fingerprint(chosen) if chosen is not None else ""
        for trace in traces:
            view = (
                conversation_view(escape_trace(trace))
                if chosen is None
                else _judge_view(chosen, digest, trace)
            )
            console.print(view)
