"""The ``agent-eval`` command line (typer). One module per command group."""

from agent_eval.cli import (  # noqa: F401  (each module registers its commands on ``app``)
    analysis_cmds,
    cache_cmds,
    errors_cmds,
    export_cmds,
    formatters_cmds,
    ingest_cmds,
    judges_cmds,
    rag_cmds,
    report_cmds,
    review_cmds,
    runs_cmds,
    score_cmds,
    serve_cmds,
)
from agent_eval.cli.app import app, main

app.add_typer(cache_cmds.cache_app, name="cache")

__all__ = ["app", "main"]
