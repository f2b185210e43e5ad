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

Only click's public ``Command`` hooks are overridden (``collect_usage_pieces``,
``format_options``), and only public parameter attributes and methods used (``metavar``,
``nargs``, ``required``, ``get_help_record``).
"""

from __future__ import annotations

import re
from typing import Any

from typer.core import TyperCommand

__all__ = ["OPTION_METAVARS", "HelpCommand", "option_metavar"]

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


def _argument_name(param: Any) -> str:
    name = str(param.metavar or param.name.upper())
    return name + "..." if param.nargs != 1 and not name.endswith("...") else name


class HelpCommand(TyperCommand):
    """A typer command whose ``--help`` uses upper-case metavars and no Python type names."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """``[OPTIONS]``, then each argument: ``NAME``, ``PATH...``, or ``[PATH...]``."""
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = _argument_name(param)
                pieces.append(name if param.required else f"[{name}]")
        return pieces

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
