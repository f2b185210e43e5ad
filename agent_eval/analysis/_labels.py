"""Binary labels and external verdicts keyed by ``conversation_id``, read from JSONL or CSV.

A labels file (human labels, benchmark rewards) and a predictions file (another judge's
verdicts) share one shape: one record per conversation with a ``conversation_id`` and a value.
JSON Lines: one object per line; CSV: a header row (``.csv``). A gzip'd file
(``labels.jsonl.gz``, ``labels.csv.gz``) is read decompressed, its format told by the suffix
before ``.gz`` (:mod:`agent_eval.ingest._sources`). The value column is chosen by ``field``, or
else the first present of :data:`VALUE_FIELDS`.

Accepted values (:func:`parse_binary`): ``0``/``1`` (ints, or strings), ``true``/``false``,
``pass``/``fail`` (any case), and rewards as numbers in [0, 1]. A reward counts as a success
only when it equals 1 (within 1e-6), the pass criterion of tau-bench and tau2-bench, so a
partial reward of 0.5 is a failure.

A record with a ``unit_id`` other than ``conversation`` labels that unit (key
``conversation_id/unit_id``, as :attr:`~agent_eval._result.MetricResult.subject`).
A review file written by ``agent-eval review`` (it has a ``review_of`` column) is a labels file
too: its rows whose ``label`` the reviewer left empty are skipped, not errors.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import orjson

from agent_eval._result import CONVERSATION_UNIT
from agent_eval._trace import AgentTrace
from agent_eval.errors import InputError
from agent_eval.ingest._sources import input_suffix, opened_text

__all__ = [
    "LABELS_NAME",
    "RATING_FIELDS",
    "REVIEW_MARKER",
    "VALUE_FIELDS",
    "label_paths",
    "label_value",
    "labels_from_traces",
    "parse_binary",
    "parse_rating",
    "ratings_from_traces",
    "read_binary_file",
    "read_rating_file",
    "write_labels",
]

LABELS_NAME = "labels.jsonl"
"""The labels a ``compare`` run used, kept in its output directory for ``report``."""
VALUE_FIELDS = ("label", "verdict", "prediction", "judge_verdict", "success", "reward", "score")
"""The fields a labels or verdicts row may carry its binary value in, in the order tried."""
_TRUE = frozenset({"1", "true", "pass", "passed"})
_FALSE = frozenset({"0", "false", "fail", "failed"})
_REWARD_TOLERANCE = 1e-6


def parse_binary(value: object) -> int:
    """Map one label or verdict value to 0 or 1.

    Raises:
        ValueError: The value is none of the accepted forms (message lists them).

    """
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return _parse_reward(float(value))
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return 1
        if text in _FALSE:
            return 0
        try:
            return _parse_reward(float(text))
        except ValueError:
            pass
    raise ValueError(
        f"{value!r} is not a binary value; use 0/1, true/false, pass/fail or a reward in [0, 1]"
    )


def _parse_reward(reward: float) -> int:
    if not math.isfinite(reward) or not 0.0 <= reward <= 1.0:
        raise ValueError(f"reward {reward!r} is outside [0, 1]")
    return int(reward >= 1.0 - _REWARD_TOLERANCE)


def read_binary_file(path: str | Path, *, field: str | None = None) -> dict[str, int]:
    """Read ``{conversation_id: 0|1}`` from a JSONL or CSV file.

    Args:
        path: ``.csv`` (or ``.csv.gz``) is read as CSV; anything else as JSON Lines; gzip'd
            data is decompressed.
        field: The value column; default: the first of :data:`VALUE_FIELDS` present per record.

    Raises:
        InputError: Unreadable file (or gzip data cut short or corrupt), a record without
            ``conversation_id`` or value, a value that is not binary, or a conversation id
            given twice; names the file and line.

    """
    path = Path(path)
    text = _read_text(path, "labels")
    records = _csv_records(text) if input_suffix(path) == ".csv" else _jsonl_records(text, path)
    values: dict[str, int] = {}
    first_line: dict[str, int] = {}
    for line, record in records:
        if _unlabelled_review_row(record, field):
            continue  # a review file's row the reviewer left empty: not a label
        cid, value = _record_value(record, field, path, line)
        if cid in values:
            raise InputError(
                f"conversation_id {cid!r} appears twice (first on line {first_line[cid]}); "
                "keep one record per conversation",
                path=str(path),
                line=line,
            )
        values[cid], first_line[cid] = value, line
    return values


def _read_text(path: Path, what: str) -> str:
    """The whole text of ``path`` (decompressed when gzip'd).

    Raises:
        InputError: it cannot be read, is not UTF-8, or is gzip'd and cut short or corrupt.

    """
    try:
        with opened_text(path) as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {what} file: {exc}", path=str(path)) from exc


def _jsonl_records(text: str, path: Path) -> Iterator[tuple[int, Mapping[str, object]]]:
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc}", path=str(path), line=number) from exc
        if not isinstance(record, dict):
            raise InputError(
                f"expected a JSON object per line, got {type(record).__name__}",
                path=str(path),
                line=number,
            )
        yield number, record


def _csv_records(text: str) -> Iterator[tuple[int, Mapping[str, object]]]:
    reader = csv.DictReader(io.StringIO(text))
    for row in reader:
        yield reader.line_num, row


REVIEW_MARKER = "review_of"
"""The column naming the run a review file was made from (it marks a file as a review file)."""


def _unlabelled_review_row(record: Mapping[str, object], field: str | None) -> bool:
    """A row of an ``agent-eval review`` file whose label column was left empty."""
    return REVIEW_MARKER in record and record.get(field or "label") in (None, "")


def _subject(record: Mapping[str, object]) -> str | None:
    """``conversation_id``, or ``conversation_id/unit_id`` for a turn unit (review files)."""
    cid = record.get("conversation_id")
    if cid is None or str(cid).strip() == "":
        return None
    unit = record.get("unit_id")
    if unit in (None, "", CONVERSATION_UNIT):
        return str(cid)
    return f"{cid}/{unit}"


def _record_value(
    record: Mapping[str, object], field: str | None, path: Path, line: int
) -> tuple[str, int]:
    cid = _subject(record)
    if cid is None:
        raise InputError("record has no conversation_id", path=str(path), line=line)
    names = (field,) if field else VALUE_FIELDS
    name = next((n for n in names if record.get(n) not in (None, "")), None)
    if name is None:
        raise InputError(
            f"conversation {cid!r} has no value in {', '.join(names)}; "
            "add one or choose the column with --label-field",
            path=str(path),
            line=line,
        )
    try:
        return cid, parse_binary(record[name])
    except ValueError as exc:
        raise InputError(f"{name} of {cid!r}: {exc}", path=str(path), line=line) from exc


def labels_from_traces(traces: Iterable[AgentTrace], *, field: str | None = None) -> dict[str, int]:
    """Labels carried by the traces themselves (e.g. tau-bench rewards mapped at ingest).

    Conversation labels are keyed by ``conversation_id``; per-turn labels
    (``labels["turns"]["K"]``, as RAG containers write them) by ``conversation_id/turn:K``.
    Traces and turns without the label are left out; a present but non-binary label raises.

    Raises:
        InputError: A trace's label is not binary (names the conversation id).

    """
    names = (field,) if field else VALUE_FIELDS
    labels: dict[str, int] = {}
    for trace in traces:
        for subject, found in _label_sets(trace):
            name = next((n for n in names if label_value(found, n) is not None), None)
            if name is None:
                continue
            try:
                labels[subject] = parse_binary(label_value(found, name))
            except ValueError as exc:
                raise InputError(f"conversation {subject!r}: label {exc}") from exc
    return labels


def _label_sets(trace: AgentTrace) -> Iterator[tuple[str, Mapping[str, object]]]:
    """The conversation's labels, then each turn's (``labels["turns"]``), with their subject."""
    yield trace.conversation_id, trace.labels
    turns = trace.labels.get("turns")
    if isinstance(turns, dict):
        for number, found in turns.items():
            if isinstance(found, dict):
                yield f"{trace.conversation_id}/turn:{number}", found


def write_labels(path: str | Path, labels: Mapping[str, int]) -> Path:
    """Write ``{conversation_id: 0|1}`` as JSON Lines ``{"conversation_id", "label"}``, sorted.

    Raises:
        InputError: The file cannot be written.

    """
    target = Path(path)
    lines = (
        orjson.dumps({"conversation_id": cid, "label": labels[cid]}) + b"\n"
        for cid in sorted(labels)
    )
    try:
        target.write_bytes(b"".join(lines))
    except OSError as exc:
        raise InputError(f"cannot write labels: {exc}", path=str(target)) from exc
    return target


RATING_FIELDS = ("rating", "label", "score", "faithfulness")
"""Columns tried, in order, for an ordinal rating when no field is named."""


def parse_rating(value: object) -> float:
    """One ordinal rating (``3``, ``"4"``, ``2.5``) as a finite number.

    Raises:
        ValueError: Not a number (booleans are refused: they are binary labels).

    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is a boolean, not a rating")
    try:
        rating = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{value!r} is not a number (a rating such as 1-4)") from None
    if not math.isfinite(rating):
        raise ValueError(f"{value!r} is not a finite number")
    return rating


def read_rating_file(path: str | Path, *, field: str | None = None) -> dict[str, float]:
    """Read ``{subject: rating}`` from a JSONL or CSV file of ordinal ratings.

    Each record has ``conversation_id``, optionally ``unit_id`` (``turn:K``: the subject is then
    ``conversation_id/turn:K``) and a rating in ``field`` (default: the first present of
    :data:`RATING_FIELDS`).

    Raises:
        InputError: Unreadable file (or gzip data cut short or corrupt), a record without id
            or rating, a rating that is not a number, or a subject given twice; names the file
            and line.

    """
    path = Path(path)
    text = _read_text(path, "ratings")
    records = _csv_records(text) if input_suffix(path) == ".csv" else _jsonl_records(text, path)
    ratings: dict[str, float] = {}
    names = (field,) if field else RATING_FIELDS
    for line, record in records:
        cid = record.get("conversation_id")
        if cid is None or str(cid).strip() == "":
            raise InputError("record has no conversation_id", path=str(path), line=line)
        unit = record.get("unit_id")
        subject = f"{cid}/{unit}" if unit not in (None, "", "conversation") else str(cid)
        name = next((n for n in names if record.get(n) not in (None, "")), None)
        if name is None:
            raise InputError(
                f"{subject!r} has no rating in {', '.join(names)}; choose the column with "
                "--label-field",
                path=str(path),
                line=line,
            )
        if subject in ratings:
            raise InputError(f"{subject!r} appears twice", path=str(path), line=line)
        try:
            ratings[subject] = parse_rating(record[name])
        except ValueError as exc:
            raise InputError(f"{name} of {subject!r}: {exc}", path=str(path), line=line) from exc
    return ratings


def ratings_from_traces(traces: Iterable[AgentTrace], *, field: str) -> dict[str, float]:
    """Ordinal ratings ``field`` carried by the traces (conversation or per-turn labels).

    ``field`` is a label name or a dotted path into a nested label (:func:`label_value`).

    Raises:
        InputError: A present rating is not a number (names the subject).

    """
    ratings: dict[str, float] = {}
    for trace in traces:
        for subject, found in _label_sets(trace):
            value = label_value(found, field)
            if value is None:
                continue
            try:
                ratings[subject] = parse_rating(value)
            except ValueError as exc:
                raise InputError(f"conversation {subject!r}: {field} {exc}") from exc
    return ratings


def label_value(labels: Mapping[str, object], field: str) -> object | None:
    """The label ``field`` of one label set: a key, or a dotted path into nested objects.

    ``human_ratings.faithfulness`` reads ``labels["human_ratings"]["faithfulness"]`` (how the
    MTRAG human evaluation records its ratings); a key that itself contains dots wins over the
    path. ``None`` when absent.
    """
    if labels.get(field) is not None:
        return labels[field]
    value: object = labels
    for part in field.split("."):
        if not isinstance(value, Mapping) or value.get(part) is None:
            return None
        value = value[part]
    return value


def label_paths(traces: Iterable[AgentTrace]) -> list[str]:
    """The label names the traces carry (conversation and per-turn), nested ones dotted.

    For the message naming what ``--label-field`` could be: ``["reference", "human_ratings",
    "human_ratings.faithfulness", ...]``, the names most label sets carry first (so per-item
    keys such as passage ids come last), ties in first-seen order.
    """
    seen: Counter[str] = Counter()

    def walk(prefix: str, found: Mapping[str, object], depth: int) -> None:
        for key, value in found.items():
            if not prefix and key == "turns":
                continue
            name = f"{prefix}{key}"
            seen[name] += 1
            if isinstance(value, Mapping) and depth < 2:
                walk(f"{name}.", value, depth + 1)

    for trace in traces:
        for _, found in _label_sets(trace):
            walk("", found, 0)
    return [name for name, _ in seen.most_common()]
