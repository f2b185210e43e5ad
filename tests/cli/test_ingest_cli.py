"""``agent-eval ingest``: JSON Lines out, the accounting summary, --json, errors exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from agent_eval._trace import AgentTrace
from agent_eval.cli import app
from agent_eval.ingest import containers
from agent_eval.testing._otlp import export_request, span

TRACE = "0af7651916cd43dd8448eb211c80319c"
runner = CliRunner()


def otlp_file(tmp_path: Path) -> Path:
    messages = [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
    reply = [{"role": "assistant", "parts": [{"type": "text", "content": "hello"}]}]
    chat = span(TRACE, "a000000000000001", "chat m", kind=3, attributes={
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(messages),
        "gen_ai.output.messages": json.dumps(reply),
    })  # fmt: skip
    http = span(
        TRACE, "a000000000000002", "POST /v1/chat", kind=3, parent_span_id="a000000000000001"
    )
    bad = span(TRACE, "zzzz", "broken")
    path = tmp_path / "spans.json"
    path.write_bytes(orjson.dumps(export_request([chat, http, bad])))
    return path


def test_writes_traces_to_out_and_the_accounting_to_stderr(tmp_path: Path) -> None:
    out = tmp_path / "runs" / "traces.jsonl"
    result = runner.invoke(app, ["ingest", str(otlp_file(tmp_path)), "--out", str(out)])
    assert result.exit_code == 0, result.output
    (line,) = out.read_text().splitlines()
    trace = AgentTrace.model_validate_json(line)
    assert [m.content for m in trace.messages] == ["hi", "hello"]
    assert result.stdout == ""
    err = result.stderr
    assert "1 file(s): 3 spans, 0 log records -> 1 conversation" in err
    assert "spans: 1 used + 2 ignored = 3 read" in err
    assert "invalid_span_id 1" in err and "skipped:" in err and "'zzzz'" in err


def test_stdout_by_default_and_json_summary(tmp_path: Path) -> None:
    path = otlp_file(tmp_path)
    result = runner.invoke(app, ["ingest", str(path)])
    assert result.exit_code == 0
    assert AgentTrace.model_validate_json(result.stdout.strip()).conversation_id == TRACE
    result = runner.invoke(app, ["ingest", str(path), "--json", "--out", str(tmp_path / "o.jsonl")])
    summary = json.loads(result.stdout)
    assert summary["spans"] == {"read": 3, "used": 1, "ignored": summary["spans"]["ignored"]}
    assert sum(summary["spans"]["ignored"].values()) == 2 and summary["balanced"] is True
    assert summary["files"][0]["container"] == "otlp-json"
    assert summary["files"][0]["conventions"] == ["genai"]
    assert (tmp_path / "o.jsonl").read_text().count("\n") == 1


def test_out_dash_is_stdout_and_refused_with_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = otlp_file(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["ingest", str(path), "--out", "-"])
    assert result.exit_code == 0, result.output
    assert AgentTrace.model_validate_json(result.stdout.strip()).conversation_id == TRACE
    assert "spans: 1 used + 2 ignored = 3 read" in result.stderr
    assert not (tmp_path / "-").exists()
    result = runner.invoke(app, ["ingest", str(path), "--json", "-o", "-"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "--out - writes the traces to stdout, where --json prints the summary" in (result.stderr)
    assert not (tmp_path / "-").exists()
    help_text = runner.invoke(app, ["ingest", "--help"]).stdout
    assert "--out" in help_text and "FILE" in help_text and "DIR" not in help_text
    assert "'-' or none: stdout" in " ".join(help_text.split())


def test_input_errors_exit_2_with_the_file_named(tmp_path: Path) -> None:
    bad = tmp_path / "trunc.json"
    bad.write_bytes(b'{"resourceSpans": [')
    result = runner.invoke(app, ["ingest", str(bad)])
    assert result.exit_code == 3 and "trunc.json" in result.stderr and "line 1" in result.stderr
    assert "Traceback" not in result.output
    result = runner.invoke(app, ["ingest", str(tmp_path / "none.json")])
    assert result.exit_code == 3 and "no such file" in result.stderr
    result = runner.invoke(app, ["ingest", str(bad), "--format", "nope"])
    assert result.exit_code == 2 and "otlp-json" in result.stderr


def test_partial_failure_still_writes_the_good_files(tmp_path: Path) -> None:
    (tmp_path / "junk.dat").write_bytes(b"\x00junk")
    result = runner.invoke(app, ["ingest", str(otlp_file(tmp_path)), str(tmp_path / "junk.dat")])
    assert result.exit_code == 0
    assert "2 file(s), 1 not recognised:" in result.stderr
    assert f"not recognised: {tmp_path / 'junk.dat'} (no container recognises it;" in result.stderr
    assert "error:" not in result.stderr
    names = ", ".join(sorted(containers.names()))
    assert f"known formats (--format NAME): {names}\n" in result.stderr
    assert result.stdout.count("\n") == 1


def test_one_wording_for_unknown_formats_sorted(tmp_path: Path) -> None:
    (tmp_path / "junk.dat").write_bytes(b"\x00junk")
    result = runner.invoke(app, ["ingest", str(tmp_path / "junk.dat")])
    assert result.exit_code == 3
    names = ", ".join(sorted(containers.names()))
    assert f"; known formats (--format NAME): {names}\n" in result.stderr


def test_directory_with_companion_files_is_not_alarming(tmp_path: Path) -> None:
    otlp_file(tmp_path)
    (tmp_path / "labels.jsonl").write_text('{"conversation_id": "c", "label": 1}\n')
    (tmp_path / "references.jsonl").write_text('{"conversation_id": "c", "reference": "x"}\n')
    (tmp_path / "expected.json").write_text('{\n "files": []\n}\n')
    result = runner.invoke(app, ["ingest", str(tmp_path), "-o", str(tmp_path.parent / "o.jsonl")])
    assert result.exit_code == 0, result.output
    err = result.stderr
    assert "4 file(s), 1 not recognised, 2 not trace file(s): 3 spans" in err
    assert f"skipped {tmp_path / 'labels.jsonl'}: not a trace file: labels (use --labels)" in err
    assert "references.jsonl: not a trace file: references (use --references)" in err
    assert f"not recognised: {tmp_path / 'expected.json'} (no container" in err
    assert "error" not in err


def test_console_script_exits_3_without_a_traceback(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("agent-eval")
    proc = subprocess.run(
        [str(script), "ingest", str(tmp_path / "x.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 3 and "x.json" in proc.stderr and "Traceback" not in proc.stderr


def test_closed_stdout_pipe_ends_quietly(tmp_path: Path) -> None:
    spans = [
        span(f"{n + 1:032x}", f"{n + 1:016x}", "chat", kind=3, attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [
                {"type": "text", "content": f"question {n}"}]}]),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                {"type": "text", "content": f"answer {n}"}]}]),
        })
        for n in range(2000)
    ]  # fmt: skip
    path = tmp_path / "many.json"
    path.write_bytes(orjson.dumps(export_request(spans)))
    script = Path(sys.executable).with_name("agent-eval")
    with subprocess.Popen(
        [str(script), "ingest", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline().startswith(b'{"schema_version"')
        proc.stdout.close()  # like `| head -1`
        stderr = proc.stderr.read()
    assert proc.returncode == 0 and b"Traceback" not in stderr


def test_no_conversation_exits_1_saying_why(tmp_path: Path) -> None:
    path = tmp_path / "badspanid.json"
    path.write_bytes(orjson.dumps(export_request([span(TRACE, "zzzz", "a"), span(TRACE, "", "b")])))
    result = runner.invoke(app, ["ingest", str(path)])
    assert result.exit_code == 4, result.output
    assert "no conversation found: all 2 spans were ignored (invalid_span_id 2)" in result.stderr
    assert result.stdout == ""
    result = runner.invoke(app, ["ingest", str(path), "--json"])
    assert result.exit_code == 4 and json.loads(result.stdout)["conversations"] == 0


def test_wrong_forced_format_exits_1_with_the_skipped_records(tmp_path: Path) -> None:
    path = otlp_file(tmp_path)
    result = runner.invoke(app, ["ingest", str(path), "--format", "tau-bench"])
    assert result.exit_code == 4, result.output
    reason = "no conversation found: 1 record(s) were skipped (invalid_tau_bench_record 1)"
    assert reason in result.stderr


def test_print_summary_writes_to_the_given_console(tmp_path: Path) -> None:
    from rich.console import Console

    from agent_eval.cli._ingest_cmds import print_summary
    from agent_eval.ingest import ingest

    run = ingest(otlp_file(tmp_path))
    run.collect()
    console = Console(record=True, width=200)
    print_summary(run.report, console)
    assert "spans: 1 used + 2 ignored = 3 read" in console.export_text()


CHAT = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def _ingest(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from agent_eval.cli import main; main()", "ingest", *args],
        capture_output=True, text=True, cwd=cwd, timeout=120, check=False,
    )  # fmt: skip


def test_a_chat_log_accounts_for_every_record_used_or_skipped(tmp_path: Path) -> None:
    """trial6 #9: 5 lines, line 3 bad and line 5 cut off: 3 used + 2 skipped = 5 read."""
    good = [json.dumps({"conversation_id": c, "messages": CHAT}) for c in "abc"]
    lines = [good[0], good[1], '{"conversation_id": "x" "messages": []}', good[2], good[0][:40]]
    (tmp_path / "chat.jsonl").write_text("\n".join(lines) + "\n")
    text = _ingest("chat.jsonl", "--out", "t.jsonl", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "records: 3 used + 2 skipped = 5 read\n  skipped: invalid_json 2\n" in text.stderr
    assert "chat.jsonl:3: invalid_json" in text.stderr
    assert "chat.jsonl:5: invalid_json" in text.stderr
    assert len((tmp_path / "t.jsonl").read_text().splitlines()) == 3
    done = _ingest("chat.jsonl", "--out", "t.jsonl", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    records = document["records"]
    assert records == {"read": 5, "used": 3, "skipped": {"invalid_json": 2}}
    assert records["used"] + sum(records["skipped"].values()) == records["read"]
    assert records["used"] == document["conversations"] and document["balanced"] is True
    assert sorted(s["source"] for s in document["skipped"]) == ["chat.jsonl:3", "chat.jsonl:5"]


def test_a_cassette_counts_its_interactions_as_records(tmp_path: Path) -> None:
    """Several interactions make one conversation: records are interactions, not conversations."""
    import yaml

    fixture = Path(__file__).parents[2] / "fixtures" / "cassettes" / "openai-vcr-gzip.yaml"
    cassette = yaml.safe_load(fixture.read_text())
    refused = {**cassette["interactions"][0]}
    refused["response"] = {**refused["response"], "status": {"code": 500, "message": "error"}}
    cassette["interactions"].append(refused)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cassette))
    done = _ingest("c.yaml", "--json", "--out", "t.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["conversations"] == 1
    assert document["records"] == {"read": 5, "used": 4, "skipped": {"http_error_response": 1}}


def test_a_bad_line_of_a_span_file_is_no_conversation_record(tmp_path: Path) -> None:
    """An OTLP JSON Lines line that does not parse held spans of unknown number: it is listed as
    ``records skipped``, and no ``records:`` line claims the file's records were counted."""
    fixture = Path(__file__).parents[2] / "fixtures" / "otel" / "openai-v2-events.otlp.jsonl"
    lines = fixture.read_text().splitlines()
    (tmp_path / "s.otlp.jsonl").write_text("\n".join([*lines, "{bad json"]) + "\n")
    done = _ingest("s.otlp.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "records skipped: invalid_json 1\n" in done.stderr
    assert "records:" not in done.stderr
