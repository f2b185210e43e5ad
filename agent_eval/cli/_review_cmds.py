"""``agent-eval review RUN``: write the units a person should look at; take their labels back.

``--select flips|unstable|errors|disagreements|sample:N --out review.csv`` (or ``.jsonl``)
writes one row per picked unit with the rendering the judge saw, the verdicts and reasons, and
empty ``label``/``labeler``/``labeled_at``/``notes`` columns (:mod:`agent_eval.analysis._review`).
The filled-in file is a labels file for ``calibrate --labels`` and ``report --labels``;
``--import FILE`` stores its labels in the run's ``results.db`` (table ``human_labels``), apart
from the verdicts, which it never changes. Exit codes (:mod:`agent_eval.cli._exit_codes`): 0; 2
a usage error; 3 an input error; 4 the selection picked nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agent_eval.cli._analysis_options import out_console, usage_errors
from agent_eval.cli._app import app
from agent_eval.cli._exit_codes import EXIT_NOTHING
from agent_eval.cli._help_format import HelpCommand
from agent_eval.errors import ConfigError

__all__ = ["review"]


@app.command(cls=HelpCommand)
def review(  # noqa: PLR0917  (one parameter per CLI option)
    run: Annotated[str, typer.Argument(help="A run directory (its latest run) or a run id.")],
    select: Annotated[
        str | None,
        typer.Option(help="flips | unstable | errors | disagreements | sample:N."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="The review file to write: .csv or .jsonl.")
    ] = None,
    run_dir: Annotated[
        Path | None, typer.Option("--run-dir", help="The output directory holding a run id.")
    ] = None,
    labels: Annotated[
        Path | None, typer.Option("--labels", help="Labels, for --select disagreements.")
    ] = None,
    inputs: Annotated[
        list[Path] | None,
        typer.Option("--inputs", help="Traces carrying labels, for --select disagreements."),
    ] = None,
    label_field: Annotated[
        str | None, typer.Option("--label-field", help="Column holding the label.")
    ] = None,
    metric: Annotated[str | None, typer.Option("--metric", help="Only this metric.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of --select sample:N.")] = 0,
    import_file: Annotated[
        Path | None,
        typer.Option("--import", help="Store the labels of a filled-in review file in RUN."),
    ] = None,
) -> None:
    """Pick units for a person to label (--select ... --out FILE), or --import their labels."""
    with usage_errors():
        from agent_eval.cli import _review_runs as review_runs

        if import_file is not None:
            if select is not None:
                raise ConfigError("give --select (write a review file) or --import, not both")
            count = review_runs.import_labels(run, run_dir, import_file)
            out_console.print(f"stored {count} human label(s) from {import_file} in {run}")
            return
        if select is None or out is None:
            raise ConfigError("give --select RULE and --out FILE (or --import FILE)")
        picked = review_runs.write_review_file(
            run, run_dir, select=select, out=out, labels=labels, inputs=inputs,
            label_field=label_field, metric=metric, seed=seed,
        )  # fmt: skip
    out_console.print(f"wrote {picked} unit(s) to review to {out}", soft_wrap=True)
    if picked == 0:
        raise typer.Exit(EXIT_NOTHING)
