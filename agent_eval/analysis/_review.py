"""The human review loop: pick the units a person should look at, and take their labels back.

:func:`select_for_review` picks units of a run by one rule:

- ``flips``: the formatter variants of a ``compare`` run gave different verdicts;
- ``unstable``: the repeats of a ``stability`` run gave different verdicts (or some errored);
- ``errors``: a row ended ``error``;
- ``disagreements``: a verdict differs from the labels (given, or carried by the traces);
- ``sample:N``: N units drawn at random (``seed``), for an unbiased check.

:func:`review_records` turns them into one record per unit: the run and unit, why it was
picked, the verdicts, reasons and statuses of its rows (JSON objects keyed by variant:
``formatter``, or ``formatter#repeat`` for repeats), the rendering the judge saw, and empty
``label``, ``labeler``, ``labeled_at`` and ``notes`` columns. :func:`write_review` writes them
as CSV (``.csv``) or JSON Lines. The filled-in file is read back by
:func:`agent_eval.analysis._labels.read_binary_file` (so ``calibrate --labels`` and ``report
--labels`` take it: rows left unlabelled are skipped, not errors) and stored apart from the
verdicts by :meth:`agent_eval.run._store.ResultStore.add_human_labels`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from agent_eval._result import MetricResult
from agent_eval.analysis._labels import REVIEW_MARKER, parse_binary
from agent_eval.errors import ConfigError, InputError
from agent_eval.ingest._sources import input_suffix, opened_input
from agent_eval.run._store import HumanLabel

__all__ = [
    "REVIEW_COLUMNS",
    "REVIEW_MARKER",
    "ReviewItem",
    "parse_selection",
    "read_review_labels",
    "review_records",
    "select_for_review",
    "write_review",
]

REVIEW_COLUMNS = (
    REVIEW_MARKER,
    "conversation_id",
    "unit_id",
    "metric",
    "selected_because",
    "verdicts",
    "reasons",
    "statuses",
    "rendering",
    "label",
    "labeler",
    "labeled_at",
    "notes",
)
"""The columns of a review file, in order; the last four are for the reviewer."""

_RULES = ("flips", "unstable", "errors", "disagreements", "sample:N")


@dataclass(frozen=True, kw_only=True)
class ReviewItem:
    """One unit picked for review: its rows (every variant and repeat) and why."""

    subject: str
    rows: tuple[MetricResult, ...]
    because: str


def parse_selection(text: str) -> tuple[str, int | None]:
    """``"flips"`` -> ``("flips", None)``; ``"sample:20"`` -> ``("sample", 20)``.

    Raises:
        ConfigError: an unknown rule, or a sample size that is not a positive integer.

    """
    name, _, count = text.partition(":")
    if name == "sample":
        if not count.isdigit() or int(count) < 1:
            raise ConfigError(f"--select sample:N needs a positive N, got {text!r}")
        return name, int(count)
    if name not in _RULES or count:
        raise ConfigError(f"--select {text!r} is not a rule; use one of {', '.join(_RULES)}")
    return name, None


def _variant(row: MetricResult) -> str:
    return row.formatter if row.repeat == 0 else f"{row.formatter}#{row.repeat}"


def _by_subject(rows: Sequence[MetricResult]) -> dict[str, list[MetricResult]]:
    groups: dict[str, list[MetricResult]] = {}
    for row in rows:
        groups.setdefault(row.subject, []).append(row)
    return groups


def _verdicts(rows: Sequence[MetricResult]) -> set[str]:
    return {r.verdict for r in rows if r.status == "ok" and r.verdict is not None}


def select_for_review(
    rows: Sequence[MetricResult],
    rule: str,
    *,
    count: int | None = None,
    labels: Mapping[str, int] | None = None,
    seed: int = 0,
) -> list[ReviewItem]:
    """The units of ``rows`` (one run) that ``rule`` picks, in subject order.

    Raises:
        ConfigError: ``disagreements`` without labels, or a rule the rows cannot answer (e.g.
            ``flips`` on a run with one formatter).

    """
    groups = _by_subject(rows)
    if rule == "flips":
        if len({r.formatter for r in rows}) < 2:
            raise ConfigError("--select flips needs a compare run (two or more formatters)")
        picked = {s: "verdicts differ between formatters" for s, g in groups.items()
                  if len(_verdicts([r for r in g if r.repeat == 0])) > 1}  # fmt: skip
    elif rule == "unstable":
        if len({r.repeat for r in rows}) < 2:
            raise ConfigError("--select unstable needs a stability run (two or more repeats)")
        picked = {s: "verdicts differ between repeats" for s, g in groups.items()
                  if len(_verdicts(g)) > 1 or {r.status for r in g} - {"ok"}}  # fmt: skip
    elif rule == "errors":
        picked = {s: _errors(g) for s, g in groups.items() if any(r.status == "error" for r in g)}
    elif rule == "disagreements":
        picked = _disagreements(groups, labels)
    else:
        chosen = sorted(groups)
        random.Random(seed).shuffle(chosen)
        picked = {s: f"random sample (seed {seed})" for s in chosen[: count or 0]}
    return [ReviewItem(subject=s, rows=tuple(groups[s]), because=picked[s]) for s in sorted(picked)]


def _errors(group: Sequence[MetricResult]) -> str:
    kinds = sorted({r.error_type or "?" for r in group if r.status == "error"})
    return "error: " + ", ".join(kinds)


def _disagreements(
    groups: Mapping[str, list[MetricResult]], labels: Mapping[str, int] | None
) -> dict[str, str]:
    if not labels:
        raise ConfigError(
            "--select disagreements needs labels: --labels FILE, or --inputs with labelled traces"
        )
    picked = {}
    for subject, group in groups.items():
        label = labels.get(subject)
        wrong = sorted({v for v in _verdicts(group) if v in ("0", "1") and int(v) != label})
        if label is not None and wrong:
            picked[subject] = f"verdict {', '.join(wrong)} but label {label}"
    return picked


def _json(mapping: Mapping[str, Any]) -> str:
    return orjson.dumps(mapping, option=orjson.OPT_SORT_KEYS).decode()


def review_records(
    items: Sequence[ReviewItem], run_id: str, renderings: Mapping[tuple[str, str], str]
) -> list[dict[str, str]]:
    """One record per item, with the :data:`REVIEW_COLUMNS` (reviewer columns empty).

    ``renderings`` maps ``(conversation_id, formatter)`` to the text the judge saw; the first
    variant's rendering is written (the others are one ``agent-eval report`` away).
    """
    records = []
    for item in items:
        first = item.rows[0]
        rendering = next(
            (renderings[(r.conversation_id, r.formatter)] for r in item.rows
             if (r.conversation_id, r.formatter) in renderings),
            "",
        )  # fmt: skip
        records.append(
            {
                REVIEW_MARKER: run_id,
                "conversation_id": first.conversation_id,
                "unit_id": first.unit_id,
                "metric": first.metric,
                "selected_because": item.because,
                "verdicts": _json({_variant(r): r.verdict for r in item.rows}),
                "reasons": _json({_variant(r): r.reason or r.error_message for r in item.rows}),
                "statuses": _json({_variant(r): r.status for r in item.rows}),
                "rendering": rendering,
                "label": "",
                "labeler": "",
                "labeled_at": "",
                "notes": "",
            }
        )
    return records


def write_review(path: str | Path, records: Sequence[Mapping[str, str]]) -> Path:
    """Write ``records`` as CSV (``.csv``) or JSON Lines (anything else); returns the path.

    The file is written whole to a temporary name, then renamed: never half a file.
    """
    target = Path(path)
    if target.suffix.lower() == ".csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=REVIEW_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)
        data = buffer.getvalue().encode("utf-8")
    else:
        data = b"".join(orjson.dumps(dict(r)) + b"\n" for r in records)
    partial = target.with_name(target.name + ".partial")
    partial.write_bytes(data)
    partial.replace(target)
    return target


def read_review_labels(path: str | Path, *, imported_at: str) -> list[HumanLabel]:
    """The labels a reviewer filled into a review file (rows left empty are skipped).

    Raises:
        InputError: the file cannot be read (or is gzip'd and cut short or corrupt), is not a
            review file, or a label is not binary (names the file and line). A gzip'd review
            file (``review.csv.gz``) is read decompressed; ``source`` hashes the decompressed
            bytes.

    """
    target = Path(path)
    try:
        with opened_input(target) as handle:  # decompressed when gzip'd
            data = handle.read()
    except OSError as exc:
        raise InputError(f"cannot read review file: {exc.strerror}", path=str(target)) from exc
    source = f"{target}#{hashlib.sha256(data).hexdigest()}"
    labels = []
    for line, record in _review_rows(data.decode("utf-8", "replace"), target):
        if record.get("label") in (None, ""):
            continue
        try:
            label = parse_binary(record["label"])
        except ValueError as exc:
            raise InputError(f"label: {exc}", path=str(target), line=line) from exc
        labels.append(
            HumanLabel(
                run_id=str(record[REVIEW_MARKER]),
                conversation_id=str(record.get("conversation_id", "")),
                unit_id=str(record.get("unit_id") or "conversation"),
                metric=str(record.get("metric", "")),
                label=label,
                labeler=str(record.get("labeler") or ""),
                labeled_at=str(record.get("labeled_at") or ""),
                notes=str(record.get("notes") or "") or None,
                source=source,
                imported_at=imported_at,
            )
        )
    return labels


def _review_rows(text: str, path: Path) -> list[tuple[int, dict[str, Any]]]:
    if input_suffix(path) == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        rows = [(reader.line_num, dict(row)) for row in reader]
    else:
        rows = []
        for number, raw in enumerate(text.splitlines(), 1):
            if raw.strip():
                try:
                    record = orjson.loads(raw)
                except orjson.JSONDecodeError as exc:
                    raise InputError(f"invalid JSON: {exc}", path=str(path), line=number) from exc
                rows.append((number, record if isinstance(record, dict) else {}))
    for number, record in rows:
        if REVIEW_MARKER not in record or not record.get("conversation_id"):
            raise InputError(
                f"not a review file row (needs {REVIEW_MARKER} and conversation_id); "
                "write the file with agent-eval review",
                path=str(path),
                line=number,
            )
    return rows
