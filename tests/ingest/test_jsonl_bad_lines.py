"""One bad line in a JSON Lines (or concatenated JSON, CSV/TSV) file costs only that line.

For every container that reads line- or value-streamed files: a line that does not parse in the
middle, or a write cut off on the last line, is one skipped item naming file:line, and every
other record comes through exactly as it does from the file without the bad line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from typer.testing import CliRunner

from agent_eval._trace import AgentTrace
from agent_eval.cli import app
from agent_eval.ingest import IngestReport, ingest

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()
BAD_MIDDLE = "{bad json"
CHAT = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def chat_records() -> list[str]:
    return [json.dumps({"conversation_id": c, "messages": CHAT}) for c in "abc"]


def tau_bench_records() -> list[str]:
    return [
        json.dumps(
            {
                "task_id": n,
                "trial": 0,
                "reward": 1.0,
                "info": {"task": {"instruction": "help", "actions": []}},
                "traj": CHAT,
            }
        )
        for n in range(3)
    ]


def mtrag_un_records() -> list[str]:
    return [
        json.dumps(
            {
                "task_id": f"conv{n}<::>1",
                "input": [{"speaker": "user", "text": f"question {n}"}],
                "contexts": [{"document_id": "d", "text": "passage"}],
                "targets": [{"text": f"answer {n}"}],
                "answerability": ["ANSWERABLE"],
            }
        )
        for n in range(3)
    ]


def rag_records() -> list[str]:
    return [
        json.dumps({"id": f"r{n}", "question": "q", "contexts": ["p"], "answer": f"a{n}"})
        for n in range(3)
    ]


def expertqa_records() -> list[str]:
    return [
        json.dumps(
            {
                "question": f"question {n}",
                "answers": {
                    "sys": {
                        "answer_string": f"answer {n}",
                        "claims": [{"claim_string": "c", "evidence": [], "support": "Complete"}],
                    }
                },
            }
        )
        for n in range(3)
    ]


def agent_trace_records() -> list[str]:
    run = ingest([str(REPO / "fixtures" / "otel" / "openai-agents-openinference.otlp.json")])
    traces = [trace.model_dump_json() for trace in run]
    return traces if len(traces) > 1 else traces * 3


def fixture_lines(name: str) -> Callable[[], list[str]]:
    def lines() -> list[str]:
        return (REPO / "fixtures" / name).read_text().splitlines()

    return lines


def python_console_values() -> list[str]:
    """Real ``ReadableSpan.to_json()`` output, as ``ConsoleSpanExporter`` writes it."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("t")
    for n in range(3):
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": f"hi {n}"}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": f"hello {n}"}]}]
            ),
        }
        with tracer.start_as_current_span("chat m", attributes=attributes):
            pass
    return [span.to_json() for span in exporter.get_finished_spans()]


# container name, the records (one per line, or one value each), bad line as a span or record
KINDS: dict[str, tuple[Callable[[], list[str]], str]] = {
    "openai-messages": (chat_records, "records"),
    "tau-bench": (tau_bench_records, "records"),
    "mtrag-un": (mtrag_un_records, "records"),
    "rag-jsonl": (rag_records, "records"),
    "expertqa": (expertqa_records, "records"),
    "agent-trace-jsonl": (agent_trace_records, "records"),
    "otel-python-console": (python_console_values, "records"),
    "otel-js": (fixture_lines("js/console-spans.jsonl"), "spans"),
    "otlp-json": (fixture_lines("otel/openai-v2-events.otlp.jsonl"), "records"),
}

WHOLE = {"openai-messages", "tau-bench", "mtrag-un", "rag-jsonl", "expertqa", "agent-trace-jsonl"}
"""The containers of whole conversations (one record per line): the others yield spans."""


def run(path: Path, fmt: str) -> tuple[list[AgentTrace], IngestReport]:
    result = ingest([str(path)], format=fmt)
    traces = list(result)
    return traces, result.report


def content(traces: list[AgentTrace]) -> list[list[str]]:
    return sorted([str(m.content) for m in t.messages] for t in traces)


def bad_line_number(values: list[str], before: int) -> int:
    """The 1-based line the bad value starts on when inserted before ``values[before]``."""
    return 1 + sum(v.count("\n") + 1 for v in values[:before])


@pytest.mark.parametrize("where", ["middle", "last"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_bad_line_is_skipped_naming_it_and_the_rest_is_kept(
    tmp_path: Path, kind: str, where: str
) -> None:
    make, counted_as = KINDS[kind]
    values = make()
    assert len(values) >= 2
    clean = tmp_path / "clean.jsonl"
    clean.write_text("\n".join(values) + "\n")
    expected, clean_report = run(clean, kind)
    assert expected and not clean_report.skipped

    if where == "middle":
        at = len(values) // 2 or 1
        bad, text = BAD_MIDDLE, "\n".join([*values[:at], BAD_MIDDLE, *values[at:]]) + "\n"
    else:  # a writer killed mid-line, in the middle of a two-byte UTF-8 character
        at = len(values)
        cut = values[0][: len(values[0]) // 2]
        bad, text = cut, "\n".join(values) + "\n" + cut
        text_bytes = text.encode() + "é".encode()[:1]
    line = bad_line_number(values, at)
    path = tmp_path / f"{kind}.jsonl"
    if where == "last":
        path.write_bytes(text_bytes)
    else:
        path.write_text(text)
    assert bad

    traces, report = run(path, kind)

    assert content(traces) == content(expected)
    (skipped,) = report.skipped
    assert skipped.source is not None and str(skipped.source) == f"{path}:{line}"
    assert report.balanced
    extra = {"spans": 0, "logs": 0, "records": 0}
    extra[counted_as] = 1
    assert sum(report.records_ignored.values()) == extra["records"]
    assert report.spans_read - clean_report.spans_read == extra["spans"]
    assert report.logs_read - clean_report.logs_read == extra["logs"]
    assert report.conversations == clean_report.conversations
    # a file of whole conversations accounts for its records: 1 per line, used or skipped
    records = len(values) + 1 if counted_as == "records" and kind in WHOLE else 0
    assert (report.records_read, report.records_used) == (records, records and len(values))
    assert report.record_skips == (report.records_ignored if records else {})


@pytest.mark.parametrize(
    ("kind", "header", "row", "bad"),
    [
        (
            "begin",
            "model_name\tdata_source\tknowledge\tmessage\tresponse\tbegin_label",
            "m\twow\tParis is in France.\tWhere is Paris?\tIn France.\tFully attributable",
            "m\twow\tParis is in",
        ),
        (
            "faithdial-audit",
            "knowledge,history,gpt2,begin_label,vrm_label",
            "Paris is in France.,Where is Paris?,In France.,entailment,Disclosure",
            "Paris is in France.,Where",
        ),
        (  # a stray quote opens a field that would swallow the rows after it
            "faithdial-audit",
            "knowledge,history,gpt2,begin_label,vrm_label",
            "Paris is in France.,Where is Paris?,In France.,entailment,Disclosure",
            '"Paris is in France.,Where',
        ),
    ],
)
@pytest.mark.parametrize("where", ["middle", "last"])
def test_a_bad_row_is_skipped_naming_it_and_the_rest_is_kept(
    tmp_path: Path, kind: str, header: str, row: str, bad: str, where: str
) -> None:
    lines = [header, row, row, row]
    at = 2 if where == "middle" else len(lines)
    lines.insert(at, bad)
    path = tmp_path / f"{kind}.txt"
    path.write_text("\n".join(lines) + ("\n" if where == "middle" else ""))
    traces, report = run(path, kind)
    assert len(traces) == 3
    (skipped,) = report.skipped
    assert skipped.source is not None and skipped.source.line == at + 1
    assert sum(report.records_ignored.values()) == 1 and report.spans_read == 0


@pytest.mark.parametrize(
    ("kind", "header", "row"),
    [
        (
            "begin",
            "model_name\tdata_source\tknowledge\tmessage\tresponse\tbegin_label",
            "m\tw\tk\tq\ta\tGeneric",
        ),
        ("faithdial-audit", "knowledge,history,gpt2,begin_label,vrm_label", "k,q,a,generic,x"),
    ],
)
def test_a_row_that_is_not_utf8_costs_only_that_row(
    tmp_path: Path, kind: str, header: str, row: str
) -> None:
    path = tmp_path / "rows.txt"
    bad = row.replace("q", "q\xff").encode("latin-1")
    path.write_bytes(b"\n".join([header.encode(), row.encode(), bad, row.encode()]) + b"\n")
    traces, report = run(path, kind)
    assert len(traces) == 2
    (skipped,) = report.skipped
    assert skipped.source is not None and skipped.source.line == 3
    assert "byte 0xff is not UTF-8" in skipped.detail


def test_cli_ingest_score_and_show_keep_the_good_chat_records(tmp_path: Path) -> None:
    """The trial's repro: 3 openai-messages records, line 2 ``{bad json``."""
    path = tmp_path / "mid.jsonl"
    records = chat_records()
    path.write_text("\n".join([records[0], BAD_MIDDLE, records[2]]) + "\n")
    out = tmp_path / "o.jsonl"
    result = runner.invoke(app, ["ingest", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    ids = [AgentTrace.model_validate_json(line).conversation_id for line in out.open()]
    assert ids == ["a", "c"]
    assert "records: 2 used + 1 skipped = 3 read\n  skipped: invalid_json 1\n" in result.stderr
    assert f"{path}:2: invalid_json: line 2 is not valid JSON" in result.stderr
    shown = runner.invoke(app, ["show", str(path), "--conversation", "c"])
    assert shown.exit_code == 0, shown.output
    assert "hello" in shown.stdout
    # show says what it could not read, as ingest does (trial6: it said nothing)
    assert f"{path}:2: invalid_json: line 2 is not valid JSON" in shown.stderr
    assert f"{path}:2" not in shown.stdout
    scored = runner.invoke(
        app,
        ["score", str(path), "--metric", "loops", "--out", str(tmp_path / "run"), "--json"],
    )
    # exit 4: loops skips a chat without tool calls, but both records reach scoring
    assert scored.exit_code == 4, scored.output
    assert json.loads(scored.stdout)["metrics"][0]["units"] == 2
    rows = [json.loads(r) for r in (tmp_path / "run" / "results.jsonl").open()]
    assert sorted(r["conversation_id"] for r in rows) == ["a", "c"]


def test_rag_jsonl_bad_line_is_a_skipped_record_not_a_span(tmp_path: Path) -> None:
    path = tmp_path / "rag.jsonl"
    records = rag_records()
    path.write_text("\n".join([records[0], BAD_MIDDLE, records[1]]) + "\n")
    result = runner.invoke(app, ["ingest", str(path)])
    assert result.exit_code == 0, result.output
    assert "spans: 0 used + 0 ignored = 0 read" in result.stderr
    assert "records: 2 used + 1 skipped = 3 read\n  skipped: invalid_json 1\n" in result.stderr
