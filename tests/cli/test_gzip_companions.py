"""gzip'd companion files work wherever the plain file does (s6-inputs "left", s7-gz item 1).

Beside the spans (a directory walk): ``labels.jsonl.gz``, ``references.csv.gz``... are
recognised by their decompressed first record and listed as companions, and a gzip'd logs export
gives its span the messages. Named by a flag: ``--references``, ``--tool-references``,
``--turn-labels``, ``calibrate --predictions/--labels``, ``review --import`` read ``.gz`` as
the plain file, the format told by the suffix before ``.gz``. Real gzip'd files, through the CLI.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from agent_eval._references import load_references
from agent_eval._result import MetricResult
from agent_eval.analysis._labels import read_binary_file, read_rating_file
from agent_eval.cli import app
from agent_eval.errors import InputError
from agent_eval.run._store import ResultStore, load_results
from agent_eval.testing._otlp import export_request, log_record, span

from ..metrics.trajectory_cases import calls, conversation
from ..run.goal_script import trace
from .test_score_cli import cell, traces_file

REPO = Path(__file__).resolve().parents[2]
TRACE, SPAN = "ab" * 16, "cd" * 8
SYSTEM = {"gen_ai.system": "openai"}
runner = CliRunner()


@pytest.fixture(autouse=True)
def _env(judge_env_cleared: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)


def gz(path: Path, text: str) -> Path:
    """Write ``text`` gzip'd (stdlib gzip, as ``gzip FILE`` does) to ``path``; returns it."""
    path.write_bytes(gzip.compress(text.encode()))
    return path


def test_gzipd_companions_in_a_directory_are_listed_as_companions(tmp_path: Path) -> None:
    folder = tmp_path / "ci"
    folder.mkdir()
    traces_file(folder / "traces.jsonl", trace("a", done=True))
    gz(folder / "labels.jsonl.gz", '{"conversation_id": "a", "label": 1}\n')
    gz(folder / "references.csv.gz", "conversation_id,reference\na,book a table\n")
    gz(folder / "verdicts.jsonl.gz", '{"conversation_id": "a", "verdict": "1"}\n')
    gz(folder / "tools.jsonl.gz", '{"conversation_id": "a", "tool_calls": []}\n')
    gz(folder / "turns.jsonl.gz", '{"conversation_id": "a", "turn": 1, "reference": "x"}\n')
    result = runner.invoke(app, ["ingest", str(folder), "--json", "--out", "t.jsonl"])
    assert result.exit_code == 0, result.output
    files = {Path(f["path"]).name: f for f in json.loads(result.stdout)["files"]}
    notes = {name: f.get("note") for name, f in files.items()}
    assert notes == {
        "labels.jsonl.gz": "not a trace file: labels (use --labels)",
        "references.csv.gz": "not a trace file: references (use --references)",
        "tools.jsonl.gz": "not a trace file: tool-call references (use --tool-references)",
        "traces.jsonl": None,
        "turns.jsonl.gz": "not a trace file: turn labels (use --turn-labels)",
        "verdicts.jsonl.gz": "not a trace file: verdicts (use calibrate --predictions)",
    }
    assert files["traces.jsonl"]["conversations"] == 1
    text = runner.invoke(app, ["ingest", str(folder), "--out", "t.jsonl"])
    assert text.exit_code == 0, text.output
    flat = " ".join(text.stderr.split())
    assert f"skipped {folder / 'labels.jsonl.gz'}: not a trace file: labels (use --labels)" in flat
    assert "not recognised" not in flat and "error" not in flat


def test_a_damaged_gzip_companion_is_offered_to_the_containers_which_name_the_damage(
    tmp_path: Path,
) -> None:
    """A gzip cut short before its first record is not called a companion: it is read as any
    input, so the damage is an error naming the file (never silently skipped)."""
    folder = tmp_path / "ci"
    folder.mkdir()
    traces_file(folder / "traces.jsonl", trace("a", done=True))
    whole = gzip.compress(b'{"conversation_id": "a", "label": 1}\n' * 50)
    (folder / "labels.jsonl.gz").write_bytes(whole[:12])  # the header and little else
    result = runner.invoke(app, ["ingest", str(folder), "--json", "--out", "t.jsonl"])
    assert result.exit_code == 0, result.output
    files = {Path(f["path"]).name: f for f in json.loads(result.stdout)["files"]}
    assert files["labels.jsonl.gz"].get("note") is None
    assert files["labels.jsonl.gz"]["error"]  # named, counted: not lost


def test_a_gzipd_logs_export_beside_its_spans_gives_the_messages(tmp_path: Path) -> None:
    """openai-v2 writes the text as log records in a file beside the spans; gzip'd
    (``logs.otlp.jsonl.gz``), it joins its span as the plain file does."""
    folder = tmp_path / "otel"
    folder.mkdir()
    chat = span(TRACE, SPAN, "chat gpt-4o-mini", kind=3,
                attributes={"gen_ai.operation.name": "chat", **SYSTEM})  # fmt: skip
    choice = {"index": 0, "finish_reason": "stop",
              "message": {"role": "assistant", "content": "Sunny in Paris."}}  # fmt: skip
    logs = [
        log_record(name, body, trace_id=TRACE, span_id=SPAN, attributes=SYSTEM)
        for name, body in (("gen_ai.user.message", {"content": "Weather in Paris?"}),
                           ("gen_ai.choice", choice))
    ]  # fmt: skip
    (folder / "spans.otlp.jsonl").write_bytes(orjson.dumps(export_request([chat])) + b"\n")
    gz(folder / "logs.otlp.jsonl.gz", orjson.dumps(export_request(logs=logs)).decode() + "\n")
    result = runner.invoke(app, ["ingest", str(folder), "--json", "--out", "t.jsonl"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["logs"]["read"] == summary["logs"]["used"] == 2
    files = {Path(f["path"]).name: f["conversations"] for f in summary["files"]}
    assert files == {"logs.otlp.jsonl.gz": 1, "spans.otlp.jsonl": 1}
    (line,) = Path("t.jsonl").read_bytes().splitlines()
    messages = [(m["role"], m["content"]) for m in orjson.loads(line)["messages"]]
    assert messages == [("user", "Weather in Paris?"), ("assistant", "Sunny in Paris.")]


def test_score_reads_gzipd_references_as_the_plain_file(tmp_path: Path) -> None:
    inputs = traces_file(tmp_path / "t.jsonl", trace("a", done=True), trace("b", done=True))
    plain = tmp_path / "refs.csv"
    plain.write_text("conversation_id,reference\nb,y\nzz,w\n")
    packed = gz(tmp_path / "refs.csv.gz", plain.read_text())
    jsonl = gz(tmp_path / "refs.jsonl.gz", '{"conversation_id": "a", "reference": "x"}\n')
    args = (str(inputs), "--dry-run", "--judge", "m", "--with-reference", "--references")
    for path, to_score in ((plain, "1"), (packed, "1"), (jsonl, "1")):
        result = runner.invoke(app, ["score", *args, str(path)])
        assert result.exit_code == 0, result.output
        assert "references: 1 of " in result.stderr and "warning" not in result.stderr
        assert cell(result.stdout, "to score") == to_score
    assert load_references(packed) == load_references(plain) == {"b": "y", "zz": "w"}


def test_score_reads_gzipd_tool_references(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    made = calls(("a", {"x": 1}), ("b", {}))
    rows = [conversation(made, None, cid="c1"), conversation(made, None, cid="c2")]
    traces.write_text("".join(t.model_dump_json() + "\n" for t in rows))
    refs = gz(
        tmp_path / "refs.jsonl.gz",
        '{"conversation_id": "c1", "tool_calls": [{"name": "a", "arguments": {"x": 1}}]}\n',
    )
    out = tmp_path / "out"
    metric = "tool_call_accuracy[order=superset]"
    result = runner.invoke(app, ["score", str(traces), "--tool-references", str(refs),
                                 "--metric", metric, "--out", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "references: 1 of 1 id(s)" in result.stderr
    by_id = {r.conversation_id: r for r in load_results(out)}
    assert (by_id["c1"].status, by_id["c1"].score) == ("ok", 1.0)
    assert (by_id["c2"].status, by_id["c2"].error_type) == ("skipped", "missing_reference")


def test_score_reads_gzipd_turn_labels_as_the_plain_file(tmp_path: Path) -> None:
    plain = REPO / "fixtures" / "rag-turn-labels.jsonl"
    packed = gz(tmp_path / "rag-turn-labels.jsonl.gz", plain.read_text())
    scores = {}
    for name, labels in (("plain", plain), ("gzip", packed)):
        result = runner.invoke(app, ["score", str(REPO / "fixtures" / "rag"), "--metric",
                                     "context_precision", "--turn-labels", str(labels),
                                     "--out", f"runs/{name}"])  # fmt: skip
        assert result.exit_code == 0, result.output
        scores[name] = {(r.subject, r.status, r.score) for r in load_results(f"runs/{name}")}
    assert scores["gzip"] == scores["plain"]
    assert any(status == "ok" for _, status, _ in scores["gzip"])


def test_calibrate_reads_gzipd_predictions_and_labels(tmp_path: Path) -> None:
    predictions = gz(tmp_path / "p.jsonl.gz", "".join(
        json.dumps({"conversation_id": c, "verdict": v}) + "\n"
        for c, v in (("a", "pass"), ("b", "fail"), ("c", "pass"), ("d", "pass"))
    ))  # fmt: skip
    labels = gz(tmp_path / "l.csv.gz", "conversation_id,reward\na,1\nb,0\nc,0\nd,1.0\n")
    args = ["calibrate", "--predictions", str(predictions), "--labels", str(labels), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["n"], summary["n_agree"]) == (4, 3)  # c: verdict pass, reward 0
    assert summary["confusion"] == [[1, 1], [0, 2]]


def test_review_import_reads_a_gzipd_review_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    made = conversation(calls(("a", {"x": 1}), ("b", {})), None, cid="c1")
    inputs = traces_file(tmp_path / "t.jsonl", made)
    scored = runner.invoke(app, ["score", str(inputs), "--metric", "loops", "--out", str(out)])
    assert scored.exit_code == 0, scored.output
    (row,) = load_results(out)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=["review_of", "conversation_id", "unit_id",
                                                "metric", "label", "labeler", "labeled_at",
                                                "notes"])  # fmt: skip
    writer.writeheader()
    writer.writerow({"review_of": row.run_id, "conversation_id": "c1", "unit_id": row.unit_id,
                     "metric": row.metric, "label": "0", "labeler": "ana",
                     "labeled_at": "2026-12-01T10:00:00Z", "notes": ""})  # fmt: skip
    review = gz(tmp_path / "review.csv.gz", buffer.getvalue())
    result = runner.invoke(app, ["review", str(out), "--import", str(review)])
    assert result.exit_code == 0, result.output
    assert "stored 1 human label(s)" in result.stdout
    with ResultStore(out) as store:
        (label,) = store.human_labels()
    assert (label.conversation_id, label.label, label.labeler) == ("c1", 0, "ana")


def test_gzipd_label_and_rating_files_read_as_the_plain_ones(tmp_path: Path) -> None:
    text = "conversation_id,label\na,1\nb,0\n"
    (tmp_path / "l.csv").write_text(text)
    assert read_binary_file(gz(tmp_path / "l.csv.gz", text)) == read_binary_file(
        tmp_path / "l.csv"
    ) == {"a": 1, "b": 0}  # fmt: skip
    ratings = gz(tmp_path / "r.jsonl.gz", '{"conversation_id": "a", "rating": 3}\n')
    assert read_rating_file(ratings) == {"a": 3.0}


def test_a_damaged_gzipd_labels_file_is_an_input_error_naming_it(tmp_path: Path) -> None:
    whole = gzip.compress("".join(f"{{\"conversation_id\": \"c{i}\", \"label\": 1}}\n"
                                  for i in range(400)).encode())  # fmt: skip
    cut = tmp_path / "labels.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(InputError) as raised:
        read_binary_file(cut)
    assert raised.value.path == str(cut)
    assert "the gzip data ends early" in str(raised.value)
    assert "what was read before it is kept" not in str(raised.value)  # the loader stops
    rows = "".join(f"c{i},goal {i}\n" for i in range(400))
    corrupt = bytearray(gzip.compress(f"conversation_id,reference\n{rows}".encode()))
    corrupt[-8] ^= 0xFF  # the CRC-32 trailer (RFC 1952 section 2.3.1)
    bad = tmp_path / "bad.csv.gz"
    bad.write_bytes(bytes(corrupt))
    with pytest.raises(InputError, match=r"the gzip data is corrupt .*gzip -t .*bad\.csv\.gz"):
        load_references(bad)


def test_a_gzipd_results_jsonl_is_a_companion_that_calibrate_reads(
    tmp_path: Path, make_result: Callable[..., MetricResult]
) -> None:
    """The companion note says to give a run's ``results.jsonl`` to ``report`` or
    ``calibrate``: gzip'd, they read it too (it was "not a results database")."""
    rows = [make_result("a", "1"), make_result("b", "0"), make_result("c", "1")]
    text = "".join(r.model_dump_json() + "\n" for r in rows)
    folder = tmp_path / "ci"
    folder.mkdir()
    traces_file(folder / "traces.jsonl", trace("a", done=True))
    results = gz(folder / "results.jsonl.gz", text)
    listed = runner.invoke(app, ["ingest", str(folder), "--json", "--out", "t.jsonl"])
    assert listed.exit_code == 0, listed.output
    notes = {Path(f["path"]).name: f.get("note") for f in json.loads(listed.stdout)["files"]}
    assert notes["results.jsonl.gz"] == (
        "not a trace file: result rows of a run (use agent-eval report or calibrate)"
    )
    labels = gz(tmp_path / "labels.csv.gz", "conversation_id,label\na,1\nb,1\nc,1\n")
    result = runner.invoke(app, ["calibrate", str(results), "--labels", str(labels), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["n"], summary["n_agree"]) == (3, 2)
    assert load_results(results) == sorted(rows, key=lambda r: r.conversation_id)
