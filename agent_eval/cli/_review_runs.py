"""The work behind ``agent-eval review`` (imported when the command runs)."""

from __future__ import annotations

from pathlib import Path

from agent_eval.analysis._labels import labels_from_traces, read_binary_file
from agent_eval.analysis._review import (
    parse_selection,
    read_review_labels,
    review_records,
    select_for_review,
    write_review,
)
from agent_eval.errors import ConfigError
from agent_eval.ingest._pipeline import ingest
from agent_eval.run._artifacts import read_renderings
from agent_eval.run._engine import utc_now
from agent_eval.run._runs import find_run
from agent_eval.run._store import ResultStore

__all__ = ["import_labels", "write_review_file"]


def _labels(
    labels: Path | None, inputs: list[Path] | None, field: str | None
) -> dict[str, int] | None:
    if labels is not None:
        return read_binary_file(labels, field=field)
    if inputs:
        return labels_from_traces(ingest(inputs), field=field)
    return None


def write_review_file(
    run: str,
    run_dir: Path | None,
    *,
    select: str,
    out: Path,
    labels: Path | None,
    inputs: list[Path] | None,
    label_field: str | None,
    metric: str | None,
    seed: int,
) -> int:
    """Write the review file of ``run``; returns how many units were picked.

    Raises:
        ConfigError: an unknown rule, a rule the run cannot answer, no such run or metric.

    """
    rule, count = parse_selection(select)
    ref = find_run(run, run_dir)
    with ResultStore(ref.directory) as store:
        rows = store.results(ref.run_id)
    if metric is not None:
        rows = [r for r in rows if r.metric == metric or r.metric.partition("@")[0] == metric]
        if not rows:
            raise ConfigError(f"run {ref.run_id} has no results of metric {metric!r}")
    elif len({r.metric for r in rows}) > 1:
        have = ", ".join(sorted({r.metric for r in rows}))
        raise ConfigError(f"run {ref.run_id} has several metrics ({have}); pick one with --metric")
    truth = _labels(labels, inputs, label_field)
    items = select_for_review(rows, rule, count=count, labels=truth, seed=seed)
    records = review_records(items, ref.run_id, read_renderings(ref.directory))
    write_review(out, records)
    return len(records)


def import_labels(run: str, run_dir: Path | None, path: Path) -> int:
    """Store the labels filled into ``path`` in ``run``'s store; returns how many.

    Raises:
        InputError: the file is not a review file, or a label is not binary.
        ConfigError: no such run, or the file reviews another run.

    """
    ref = find_run(run, run_dir)
    labels = read_review_labels(path, imported_at=utc_now())
    other = sorted({h.run_id for h in labels} - {ref.run_id})
    if other:
        raise ConfigError(
            f"{path} reviews run(s) {', '.join(other)}, not {ref.run_id}; import it into that run"
        )
    with ResultStore(ref.directory) as store:
        return store.add_human_labels(labels)
