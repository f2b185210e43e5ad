"""One look for every command's ``--help``: upper-case metavars, no Python type names.

Typer prints an argument as ``PATH... <list[str]>`` and in the usage line as ``{PATH...}...``,
and an option without a metavar as ``--resume <str>`` or ``--out <path>``, beside options that
name their value (``--references FILE``). :class:`HelpCommand`, given as ``cls=`` to every
``@app.command``, prints instead:

- the usage line ``agent-eval score [OPTIONS] [PATH...]`` (optional arguments in brackets,
  required ones bare, ``...`` once for an argument that takes several values);
- arguments by their metavar, else their name in upper case, with no type after it;
- each option's own metavar, else one from :data:`OPTION_METAVARS` (by option name), else one
  from the type typer would show: ``N`` (integer), ``X`` (number), ``PATH`` (path), ``TEXT``.

Names are never broken at their hyphens (``openai-messages``, ``ragas-pretty@1``,
``--max-judge-tokens``): click wraps help text with :class:`textwrap.TextWrapper`, which breaks
a word after a hyphen, so a name split over two lines could not be copied. Every hyphen
between two word characters is written as U+2011 (non-breaking hyphen, which the wrapper
does not break at, and of the same width) and turned back into ``-`` in the finished text.

An unknown option is suggested only names that look like it once the ``--`` both share is set
aside (click's fuzzy match counts it, and offered ``--out`` for ``--bogus``).

Only click's public ``Command`` hooks are overridden (``collect_usage_pieces``,
``format_help``, ``format_options``, ``get_help``, ``parse_args``) and the formatter used
through its public methods (``write_text``, ``write_dl``, ``section``); only public
parameter attributes and methods are used (``metavar``, ``nargs``, ``required``,
``get_help_record``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from typing import Any

from typer.core import TyperCommand

__all__ = ["NON_BREAKING_HYPHEN", "OPTION_METAVARS", "HelpCommand", "option_metavar"]

OPTION_METAVARS: dict[str, str] = {
    "resume": "RUN",
    "retry_errors": "RUN",
    "compare": "RUN",
    "run_dir": "DIR",
    "out": "DIR",
    "html": "FILE",
    "config": "FILE",
    "policy": "FILE",
    "labels": "FILE",
    "predictions": "FILE",
    "tool_references": "FILE",
    "turn_labels": "FILE",
    "lock": "FILE",
    "cache_path": "FILE",
    "import_": "FILE",
    "inputs": "PATH",
    "formatter_path": "PATH",
    "label_field": "FIELD",
    "prediction_field": "FIELD",
    "metric": "SPEC",
    "formatter": "NAME@V",
    "formatters": "LIST",
    "conversation": "ID",
    "format": "NAME",
    "kind": "KIND",
    "select": "WHAT",
    "judge": "MODEL",
    "endpoint": "URL",
    "base_url": "URL",
    "otlp_endpoint": "URL",
    "api_key_env": "VAR",
    "host": "HOST",
    "title": "TEXT",
    "repeats": "K",
    "timeout": "SECONDS",
    "idle": "SECONDS",
    "after_root": "SECONDS",
    "shutdown_timeout": "SECONDS",
    "max_buffer_mb": "MIB",
    "max_body_mb": "MIB",
}
"""Metavars of options that give none, by parameter name (the value a person types)."""

NON_BREAKING_HYPHEN = "\u2011"
"""What a hyphen inside a word is while help text is wrapped (never a line break)."""
_WORD_HYPHEN = re.compile(r"(?<=\w)-(?=\w)")

SUGGESTION_CUTOFF = 0.6
"""Least :class:`difflib.SequenceMatcher` ratio, of the names without their dashes, for an
option to be suggested for an unknown one (difflib's own default cutoff)."""

_BY_TYPE = {"int": "N", "int range": "N", "float": "X", "float range": "X", "path": "PATH"}
_TYPE_SHOWN = re.compile(r" <([^>]*)>")


def option_metavar(param: Any, shown: str) -> str:
    """The metavar of option ``param``: its own, else by name, else by the type typer shows.

    ``shown`` is the option's column as typer prints it (``--timeout <float>``); the type in
    angle brackets picks ``N``, ``X``, ``PATH`` (also for a list of paths) or ``TEXT``.
    """
    if param.metavar:
        return str(param.metavar)
    if param.name in OPTION_METAVARS:
        return OPTION_METAVARS[param.name]
    found = _TYPE_SHOWN.search(shown)
    label = found.group(1).lower() if found else ""
    if label.startswith("list[") and label.endswith("]"):
        label = label[5:-1]
    return _BY_TYPE.get(label, "TEXT")


def _unbreakable(text: str) -> str:
    """``text`` with each hyphen inside a word made non-breaking (for the wrapper)."""
    return _WORD_HYPHEN.sub(NON_BREAKING_HYPHEN, text)


class _KeepWords:
    """A click help formatter that wraps text without breaking a word at its hyphens.

    Delegates to the formatter it wraps; only ``write_text`` and ``write_dl`` (the wrapped
    parts: the command's description, each option's help) change what they are given.
    """

    def __init__(self, formatter: Any) -> None:
        self._formatter = formatter

    def __getattr__(self, name: str) -> Any:
        return getattr(self._formatter, name)

    def write_text(self, text: str) -> None:
        """The formatter's ``write_text``, hyphens inside words non-breaking."""
        self._formatter.write_text(_unbreakable(text))

    def write_dl(self, rows: Iterable[Sequence[str]], *args: Any, **kwargs: Any) -> None:
        """The formatter's ``write_dl``, hyphens inside the help column's words non-breaking."""
        kept = [(first, _unbreakable(second)) for first, second in rows]
        self._formatter.write_dl(kept, *args, **kwargs)


def _like(unknown: str, possibilities: Iterable[str]) -> list[str]:
    """The ``possibilities`` that look like option ``unknown``, compared without dashes."""
    bare = unknown.lstrip("-")
    return [
        name
        for name in possibilities
        if difflib.SequenceMatcher(None, bare, name.lstrip("-")).ratio() >= SUGGESTION_CUTOFF
    ]


def _argument_name(param: Any) -> str:
    name = str(param.metavar or param.name.upper())
    return name + "..." if param.nargs != 1 and not name.endswith("...") else name


class HelpCommand(TyperCommand):
    """A typer command whose ``--help`` uses upper-case metavars and no Python type names."""

    def get_params(self, ctx: Any) -> list[Any]:
        """Click's parameters with ``--quiet`` / ``-q`` before ``--help`` (every command has it)."""
        from agent_eval.cli._quiet import quiet_option

        params = list(super().get_params(ctx))
        quiet = quiet_option()
        if quiet not in params:
            params.insert(
                len(params) - 1 if params and params[-1].name == "help" else len(params), quiet
            )
        return params

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """``[OPTIONS]``, then each argument: ``NAME``, ``PATH...``, or ``[PATH...]``."""
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = _argument_name(param)
                pieces.append(name if param.required else f"[{name}]")
        return pieces

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Click's parsing; an unknown option's suggestions kept to names that look like it.

        Click's ``NoSuchOption`` is told by its public ``option_name`` and ``possibilities``.
        """
        try:
            return list(super().parse_args(ctx, args))
        except Exception as exc:
            unknown = getattr(exc, "option_name", None)
            possibilities = getattr(exc, "possibilities", None)
            if isinstance(unknown, str) and possibilities:
                exc.possibilities = _like(unknown, possibilities)  # type: ignore[attr-defined]
            raise

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """Click's help sections, written so that no word breaks at a hyphen."""
        keeping: Any = _KeepWords(formatter)  # a stand-in for click's HelpFormatter
        super().format_help(ctx, keeping)

    def get_help(self, ctx: Any) -> str:
        """The help text, its non-breaking hyphens written as ``-`` again."""
        return str(super().get_help(ctx)).replace(NON_BREAKING_HYPHEN, "-")

    def format_options(self, ctx: Any, formatter: Any) -> None:
        """The ``Arguments`` and ``Options`` sections, each value named in upper case."""
        arguments: list[tuple[str, str]] = []
        options: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "option" and not param.metavar and " <" in record[0]:
                param.metavar = option_metavar(param, record[0])  # then shown as it is
                record = param.get_help_record(ctx) or record
            if param.param_type_name == "argument":
                arguments.append((_argument_name(param), record[1]))
            else:
                options.append(record)
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
