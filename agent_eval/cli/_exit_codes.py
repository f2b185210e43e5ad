"""The exit codes of every ``agent-eval`` command, and the code of each kind of error.

One table, the same for every command (the "Exit codes" table of docs/errors.md is this one):

== ========================================================================================
0  done: something was ingested / scored / compared, and every declared gate passed
1  a gate failed (``--fail-under``, ``--gate``, ``[gates.*]``; ``formatters lock --check``)
2  a usage or configuration error (a bad flag, no judge configured, an unset key variable)
3  input unreadable: no input could be read at all (missing paths, no file recognised, every
   file undecodable), or a named input file (references, labels, run) is unusable
4  nothing scored: the inputs were read but gave no conversation (``ingest``, ``show``,
   ``formatters diff``), or no conversation was scored (``score``: every one errored or was
   skipped, or one metric scored none and errored while others scored; ``compare``: no
   conversation scored under two variants; ``stability``: none scored twice)
5  output not written: the output file or directory cannot be written (disk full,
   permissions), or another ``agent-eval`` run holds its lock
== ========================================================================================

Ctrl-C exits 130 and SIGTERM 143 (:func:`agent_eval.cli._app.main`), after a clean stop.
Typer's own usage errors (an unknown flag) exit 2 as well.
"""

from __future__ import annotations

from agent_eval.errors import (
    AgentEvalError,
    InputError,
    NoConversationError,
    OutputError,
    StoreError,
)

__all__ = [
    "EXIT_GATE",
    "EXIT_INPUT",
    "EXIT_NOTHING",
    "EXIT_OK",
    "EXIT_OUTPUT",
    "EXIT_USAGE",
    "exit_code",
]

EXIT_OK = 0
EXIT_GATE = 1
EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_NOTHING = 4
EXIT_OUTPUT = 5


def exit_code(exc: AgentEvalError) -> int:
    """The exit code for an error a command reports (see the module's table).

    Input 3 (4 when the input was read but held no conversation), output 5, everything else 2.
    """
    if isinstance(exc, NoConversationError):
        return EXIT_NOTHING
    if isinstance(exc, InputError):
        return EXIT_INPUT
    if isinstance(exc, OutputError):
        return EXIT_OUTPUT
    if isinstance(exc, StoreError):  # a run, results file or cache that cannot be read
        return EXIT_INPUT
    return EXIT_USAGE
