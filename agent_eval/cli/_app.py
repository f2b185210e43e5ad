"""The typer application every ``agent-eval`` sub-command registers on, and the entry point.

Exit codes (one table for every command, :mod:`agent_eval.cli._exit_codes`): 0 done; 1 a gate
failed; 2 a usage or configuration error; 3 input unreadable; 4 nothing scored (or no
conversation found); 5 output not written. The message names the file, id or value and the
fix. No command ends in a bare traceback for an error agent-eval anticipates.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
from types import FrameType
from typing import TYPE_CHECKING, Any

import typer

from agent_eval.cli._commands import LazyGroup
from agent_eval.cli._exit_codes import EXIT_GATE, EXIT_OK, EXIT_OUTPUT, EXIT_USAGE, exit_code
from agent_eval.cli._quiet import quiet_callback
from agent_eval.cli._startup import pause_collector, resume_collector, thaw
from agent_eval.errors import AgentEvalError

if TYPE_CHECKING:
    from rich.console import Console

    err_console: Console
    """The stderr console every command prints its messages on (made on first use)."""

__all__ = [
    "EXIT_GATE",
    "EXIT_USAGE",
    "app",
    "err_console",
    "interrupt_exit_code",
    "interrupt_message",
    "main",
]

app = typer.Typer(
    name="agent-eval",
    cls=LazyGroup,  # each command's module is imported when that command is used
    help="Score recorded LLM-agent conversations (OpenTelemetry spans) with LLM judges.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, pwsh)
    rich_markup_mode=None,  # plain help: flags shown as flags (rich help shows "<bool>")
)
"""The ``agent-eval`` Typer application; its commands register when they are first used."""


def error_console() -> Console:
    """The stderr console of every command (``err_console``), made on first use.

    ``--help`` and a command line typer rejects print nothing through it, so they import no
    rich (about a quarter of ``agent-eval --help``).
    """
    console = globals().get("err_console")
    if console is None:
        from rich.console import Console

        console = globals()["err_console"] = Console(stderr=True)
    return console


def _printed_as_is(text: str) -> bool:
    r"""Whether ``Console.print(escape(text), highlight=False, soft_wrap=True)`` prints ``text``.

    True for printable ASCII (no tab, newline or other control character, which rich expands
    or strips) with no ``[`` or ``\`` (markup and its escapes) and no two colons in one word
    (an emoji code such as ``:smile:``), outside Jupyter (where rich displays instead of
    writing), Windows (whose legacy console rich writes through the console API) and a
    ``sys.stderr`` rich redirects (a live display's proxy, which rich writes around).
    """
    if not (text.isascii() and text.isprintable()) or "[" in text or "\\" in text:
        return False
    if any(word.count(":") > 1 for word in text.split(" ")):
        return False
    if sys.platform == "win32" or sys.stderr is None or hasattr(sys.stderr, "rich_proxied_file"):
        return False
    import builtins

    return not hasattr(builtins, "get_ipython") and not os.environ.get("DATABRICKS_RUNTIME_VERSION")


def print_plain(text: str, console: Console | None = None) -> None:
    """Print ``text``, plain text taken literally (no markup), and a newline on the stderr console.

    What ``console.print(rich.markup.escape(text), highlight=False, soft_wrap=True)`` prints,
    on ``console`` or (``None``) the stderr console :func:`error_console`. While that console
    has not been made, a line rich prints unchanged (:func:`_printed_as_is`, the summary lines
    of a clean ``ingest``) is written to ``sys.stderr`` as is, so that the command imports no
    rich (about a tenth of a small ``ingest``'s start-up); every other line goes through rich.
    """
    if console is None and "err_console" not in globals() and _printed_as_is(text):
        sys.stderr.write(text + "\n")
        sys.stderr.flush()  # rich flushes after every print
        return
    from rich.markup import escape

    (console or error_console()).print(escape(text), highlight=False, soft_wrap=True)


def __getattr__(name: str) -> Any:
    """``err_console`` (PEP 562): made on first use, then an ordinary module attribute."""
    if name == "err_console":
        return error_console()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


DEBUG_ENV = "AGENT_EVAL_DEBUG"
"""Set (to anything) to log at DEBUG on stderr: tracebacks of internal errors, HTTP requests."""


def _debug_logging() -> None:
    """DEBUG logging on stderr, every line passed through :class:`RedactingFilter`."""
    import logging  # only with AGENT_EVAL_DEBUG: a command imports no logging otherwise

    from agent_eval._redaction import RedactingFilter

    handler = logging.StreamHandler()
    handler.addFilter(RedactingFilter())
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG, handlers=[handler], force=True)


def _show_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"agent-eval {version('otel-agent-eval')}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        help="Print the version and exit.",
        callback=_show_version,
        is_eager=True,
    ),
    quiet: bool = typer.Option(
        False,
        "--quiet",
        "-q",
        help="Print only errors, whatever the command (as its own -q).",
        callback=quiet_callback,
        expose_value=False,
    ),
) -> None:
    """Score recorded LLM-agent conversations (OpenTelemetry spans) with LLM judges."""
    resume_collector()  # paused by main() while the CLI started (agent_eval.cli._startup)


def _stdout_identity() -> tuple[int, int] | None:
    """(device, inode) of what file descriptor 1 is, or ``None`` when it cannot be told."""
    try:
        found = os.fstat(1)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _stdout_reader_gone(before: tuple[int, int] | None) -> bool:
    """Whether the reader of stdout went away during the command (``| head``).

    Rich's ``Console.on_broken_pipe`` then points stdout at the null device; typer keeps the
    pipe (and wraps ``sys.stdout``), whose ``poll`` reports POLLERR. Both then exit 1, which in
    this CLI means "a gate failed".
    """
    try:
        poller = select.poll()
        poller.register(1, select.POLLOUT)
        if any(events & select.POLLERR for _, events in poller.poll(0)):
            return True
    except (OSError, ValueError, AttributeError):  # no poll() (Windows)
        pass
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    now = _stdout_identity()
    return now == (null.st_dev, null.st_ino) and before != now


EXIT_INTERRUPTED = 128 + signal.SIGINT
"""Ctrl-C (SIGINT): the shell's 130. A ``score`` run keeps every result it finished."""
EXIT_TERMINATED = 128 + signal.SIGTERM
"""SIGTERM (a CI job cancelled, a container stopped): the shell's 143, after the same clean stop."""


class _Terminate:
    """SIGTERM handler: stop as Ctrl-C does, so a run commits what it finished before it exits.

    Without it SIGTERM ends the process at once and ``score`` loses the results of its last
    batch (at most 0.2 s; ``--resume`` scores them again). The handler calls whatever handles
    SIGINT at that moment: asyncio's (which cancels the running task, whose ``finally`` blocks
    commit the results) or Python's default (``KeyboardInterrupt``).
    """

    received = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.received = True
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:  # SIGINT ignored or not set from Python: fall back to an interrupt
            raise KeyboardInterrupt


def _handle_sigterm() -> _Terminate | None:
    """Install :class:`_Terminate` unless something else already handles SIGTERM."""
    global _sigterm  # noqa: PLW0603  (one handler per process, asked by interrupt_exit_code)
    try:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return None
        terminate = _Terminate()
        signal.signal(signal.SIGTERM, terminate)
    except ValueError:  # not the main thread: leave signals to whoever embeds the CLI
        return None
    _sigterm = terminate
    return terminate


_sigterm: _Terminate | None = None


def _terminated() -> bool:
    return _sigterm is not None and _sigterm.received


def interrupt_exit_code() -> int:
    """The exit code of a command stopped by an interrupt: 143 after SIGTERM, else 130."""
    return EXIT_TERMINATED if _terminated() else EXIT_INTERRUPTED


def interrupt_message() -> str:
    """What stopped the command, in words: SIGTERM or Ctrl-C (SIGINT)."""
    return "stopped by SIGTERM" if _terminated() else "interrupted by Ctrl-C (SIGINT)"


INTERRUPTED_TYPE = "Interrupted"
"""``error.type`` of the ``--json`` document of a command stopped by Ctrl-C or SIGTERM."""


_JSON_FAILURES = range(EXIT_USAGE, EXIT_OUTPUT + 1)
"""Exit codes for which a ``--json`` command with no document yet prints the error document."""


def _json_command(args: list[str]) -> str | None:
    """The command (``"score"``, ``"runs list"``) of a command line asking for ``--json``.

    ``None`` without ``--json`` (before any ``--``); ``""`` when no command can be told.
    """
    words = args[: args.index("--")] if "--" in args else args
    if "--json" not in words:
        return None
    import typer.main

    path: list[str] = []
    command: Any = typer.main.get_command(app)
    for word in (w for w in words if not w.startswith("-")):
        if not hasattr(command, "list_commands"):  # a command, not a group: the path is whole
            break
        try:  # looked up as the CLI does (lazily)
            command = command.get_command(None, word)
        except Exception:  # the error document must never fail: the command stays unnamed
            break
        if command is None:
            break
        path.append(word)
    return " ".join(path)


def _failure(exc: BaseException) -> tuple[str, str] | None:
    """``(message, type)`` of the error behind an exit, ``None`` when there is none.

    The first agent-eval or click usage error in the chain of causes and contexts (a command
    prints its error on stderr, then raises ``typer.Exit`` from it).

    A usage error is click's ``ClickException`` (``typer.BadParameter``, an unknown option),
    told by its ``format_message`` and ``exit_code`` (recent typer releases vendor click).
    """
    seen: set[int] = set()
    found: BaseException | None = exc
    while found is not None and id(found) not in seen:
        seen.add(id(found))
        if isinstance(found, AgentEvalError):
            return str(found), type(found).__name__
        format_message = getattr(found, "format_message", None)
        if callable(format_message) and isinstance(getattr(found, "exit_code", None), int):
            return str(format_message()), type(found).__name__
        found = found.__cause__ or found.__context__
    return None


def _documents_written() -> int:
    """Documents written so far by ``emit_json`` (0 when its module is not even imported)."""
    module = sys.modules.get("agent_eval.cli._json_output")
    return 0 if module is None else int(module.documents_written())


def _json_failure(args: list[str], code: object, exc: BaseException, before: int) -> None:
    """With ``--json``, print the error document of a failure (exit 2-5) that printed none.

    :class:`~agent_eval.cli._json_output.ErrorPayload`; stderr keeps the human message.
    ``before``: the documents written before the command started.
    """
    if not isinstance(code, int) or code not in _JSON_FAILURES:
        return
    command = _json_command(args)
    if command is None or _documents_written() > before:
        return
    from agent_eval.cli._json_output import emit_error

    message, kind = _failure(exc) or (f"exit {code}; the reason is on stderr", "Exit")
    with contextlib.suppress(OSError):  # stdout is gone (| head): stderr has the message
        emit_error(command, code, message, kind)


def _json_interrupted(args: list[str], before: int) -> None:
    """With ``--json``, the error document of a command an interrupt stopped (none printed).

    ``score`` prints its own (the counts so far); any other command gets this one.
    """
    command = _json_command(args)
    if command is None or _documents_written() > before:
        return
    from agent_eval.cli._json_output import emit_error

    with contextlib.suppress(OSError):
        emit_error(command, interrupt_exit_code(), interrupt_message(), INTERRUPTED_TYPE)


def main() -> None:
    """Run the CLI; turn agent-eval errors into a one-line message and their exit code.

    With ``--json``, a failure (exit 2-5) that printed no document prints the error document
    on stdout (:class:`~agent_eval.cli._json_output.ErrorPayload`: ``exit_code``, ``error``
    message and type), the message on stderr as well. When the reader of stdout goes away
    (``| head``) any command stops quietly with exit 0, instead of the 1 that rich and typer
    give (1 is "a gate failed"). Ctrl-C exits 130 and SIGTERM 143, both after the same clean
    stop (a run's finished results are committed); with ``--json`` the document then says so
    (``error.type`` :data:`INTERRUPTED_TYPE`; ``score``'s carries the counts so far).
    """
    if os.environ.get(DEBUG_ENV):
        _debug_logging()
    before = _stdout_identity()
    terminate = _handle_sigterm()
    args, documents = sys.argv[1:], _documents_written()
    pause_collector(then_freeze=True)  # until the command runs (the root callback resumes it)
    try:
        app()
    except AgentEvalError as exc:
        from rich.markup import escape

        error_console().print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        _json_failure(args, exit_code(exc), exc, documents)
        sys.exit(exit_code(exc))
    except SystemExit as exc:
        if exc.code == EXIT_GATE and _stdout_reader_gone(before):
            sys.exit(EXIT_OK)
        if exc.code == EXIT_INTERRUPTED or (terminate is not None and terminate.received):
            _json_interrupted(args, documents)
            sys.exit(interrupt_exit_code())
        _json_failure(args, exc.code, exc, documents)
        raise
    except KeyboardInterrupt:  # raised past typer (standalone mode turns it into exit 130)
        _json_interrupted(args, documents)
        sys.exit(interrupt_exit_code())
    finally:
        resume_collector()  # a usage error or --help ends the command before the callback
        thaw()
