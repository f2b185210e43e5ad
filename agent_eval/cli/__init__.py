"""The ``agent-eval`` command line (typer). One module per command group."""

from agent_eval.cli import (  # noqa: F401  (each module registers its commands on ``app``)
    analysis_cmds,
    errors_cmds,
    export_cmds,
    formatters_cmds,
    ingest_cmds,
    report_cmds,
    review_cmds,
    runs_cmds,
    score_cmds,
    serve_cmds,
)
from agent_eval.cli.app import app, main

__all__ = ["app", "main"]
