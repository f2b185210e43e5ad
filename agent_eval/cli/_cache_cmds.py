"""``agent-eval cache info`` and ``agent-eval cache prune``: the judge-call cache file.

The file is the per-user cache (:func:`~agent_eval.run._judge_stack.default_cache_path`:
``$AGENT_EVAL_CACHE_PATH``, else the platform's user cache directory) unless ``--cache-path``
names another. ``prune`` deletes entries older than ``--older-than DAYS`` (or all with
``--all``) and compacts the file; it is safe while other runs use the cache.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from agent_eval.cli._analysis_options import out_console, usage_errors
from agent_eval.cli._app import app
from agent_eval.cli._help_format import HelpCommand
from agent_eval.cli._json_output import CacheInfoPayload, emit_json
from agent_eval.cli._tables import print_table
from agent_eval.errors import ConfigError
from agent_eval.run._cache import JudgeCache
from agent_eval.run._judge_stack import default_cache_path

__all__ = ["cache_app", "info", "prune"]

cache_app = typer.Typer(
    rich_markup_mode=None,
    help="Inspect or prune the judge-call cache (per user by default).",
    no_args_is_help=True,
)
app.add_typer(cache_app, name="cache")

CachePathOption = Annotated[
    Path | None,
    typer.Option(
        "--cache-path",
        help="The cache file (default: $AGENT_EVAL_CACHE_PATH, else the user cache directory).",
        show_default=False,
    ),
]


def _open(cache_path: Path | None) -> JudgeCache:
    path = cache_path or default_cache_path()
    if not path.is_file():
        raise ConfigError(f"no judge-call cache at {path}; nothing was cached there yet")
    return JudgeCache(path)


@cache_app.command(cls=HelpCommand)
def info(
    cache_path: CachePathOption = None,
    json: Annotated[
        bool, typer.Option("--json", help="Print JSON on stdout, not a table.")
    ] = False,
) -> None:
    """Show the cache file, its entries, size on disk, age range and entries per model."""
    with usage_errors(), _open(cache_path) as cache:
        stats = cache.stats()
    if json:
        payload = CacheInfoPayload(
            path=str(stats.path),
            entries=stats.entries,
            size_bytes=stats.size_bytes,
            oldest=stats.oldest,
            newest=stats.newest,
            models=stats.models,
        )
        emit_json("cache info", payload)
        return
    table = Table(title="judge-call cache", title_justify="left", show_header=False)
    table.add_column("what", no_wrap=True)
    table.add_column("value", overflow="fold")
    table.add_row("path", str(stats.path))
    table.add_row("entries", str(stats.entries))
    table.add_row("size", f"{stats.size_bytes / 1_048_576:.2f} MiB")
    table.add_row("oldest", stats.oldest or "-")
    table.add_row("newest", stats.newest or "-")
    for model, count in stats.models.items():
        table.add_row(f"model {model}", str(count))
    print_table(out_console, table)


@cache_app.command(cls=HelpCommand)
def prune(
    older_than: Annotated[
        float | None,
        typer.Option(help="Delete entries written more than DAYS ago.", metavar="DAYS"),
    ] = None,
    all_entries: Annotated[bool, typer.Option("--all", help="Delete every entry.")] = False,
    cache_path: CachePathOption = None,
) -> None:
    """Delete old entries (or all) and compact the file; safe while other runs use it."""
    with usage_errors():
        if (older_than is None) == (not all_entries):
            raise ConfigError("give --older-than DAYS or --all (one of them)")
        if older_than is not None and older_than < 0:
            raise ConfigError(f"--older-than must be >= 0 days, got {older_than:g}")
        with _open(cache_path) as cache:
            age = None if older_than is None else timedelta(days=older_than)
            deleted = cache.prune(age)
            left = len(cache)
    out_console.print(f"pruned {deleted} entries; {left} left in {cache.path}", highlight=False)
