"""``score --json`` carries the input accounting ``ingest --json`` has (trial8 #6).

Before, the document had the metrics and plans only: a CI job parsing it could not see that a
file was unreadable, not recognised, or gave nothing (its spans all ignored); and with nothing
scorable the error document said only ``no conversations found in DIR``, not why.
The inputs are a directory a CI job would hand over: a good AgentTrace JSONL file, an OTLP
export recorded with content capture off (every span ``no_genai_content``), a JSON Lines
file whose last line was cut off, and a CSV no container recognises.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
from typer.testing import CliRunner

from agent_eval._trace import AgentTrace, AssistantMessage, ToolCall, ToolMessage, UserMessage
from agent_eval.cli import app
from agent_eval.testing._otlp import export_request, span

TRACE, SPAN = "ab" * 16, "cd" * 8


def _good(path: Path) -> None:
    call = ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"})
    trace = AgentTrace(
        conversation_id="good",
        messages=(
            UserMessage(content="Weather in Paris?"),
            AssistantMessage(tool_calls=(call,)),
            ToolMessage(content="18C", tool_call_id="c1", tool_name="get_weather"),
            AssistantMessage(content="18C in Paris."),
        ),
    )
    path.write_text(trace.model_dump_json() + "\n")


def _bad_inputs(folder: Path) -> None:
    folder.mkdir()
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.system": "openai"}
    chat = span(TRACE, SPAN, "chat gpt-4o-mini", kind=3, attributes=attributes)
    (folder / "nocontent.otlp.jsonl").write_bytes(orjson.dumps(export_request([chat])) + b"\n")
    (folder / "table.csv").write_text("a,b\n1,2\n")


def test_score_json_has_the_ingest_accounting(tmp_path: Path) -> None:
    folder = tmp_path / "ci"
    _bad_inputs(folder)
    _good(folder / "good.jsonl")
    cut = folder / "cut.jsonl"  # a second line cut off by a write that did not finish
    cut.write_text((folder / "good.jsonl").read_text().replace('"good"', '"cut"') + '{"conv')
    args = ["score", str(folder), "--metric", "tool_errors", "--out", str(tmp_path / "o"), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    inputs = json.loads(result.stdout)["inputs"]
    files = {Path(f["path"]).name: f for f in inputs["files"]}
    assert set(files) == {"cut.jsonl", "good.jsonl", "nocontent.otlp.jsonl", "table.csv"}
    assert files["good.jsonl"]["conversations"] == 1 and files["good.jsonl"]["error"] is None
    assert files["cut.jsonl"]["conversations"] == 1
    assert files["nocontent.otlp.jsonl"]["conversations"] == 0
    assert files["nocontent.otlp.jsonl"]["spans_read"] == 1
    assert "no container recognises" in files["table.csv"]["error"]
    assert inputs["spans"] == {"read": 1, "used": 0, "ignored": {"no_genai_content": 1}}
    assert inputs["records_ignored"] == {"invalid_agent_trace": 1}
    assert inputs["conversations"] == 2 and inputs["balanced"] is True
    (skipped,) = inputs["skipped"]
    assert (skipped["reason"], skipped["source"]) == ("invalid_agent_trace", f"{cut}:2")
    assert json.loads(result.stdout)["metrics"][0]["units"] == 2


def test_no_conversation_error_document_says_why(tmp_path: Path) -> None:
    folder = tmp_path / "ci-bad"
    _bad_inputs(folder)
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    done = subprocess.run(
        [sys.executable, "-c", "from agent_eval.cli import main; main()", "score", str(folder),
         "--metric", "tool_errors", "--out", str(tmp_path / "o"), "--json"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 4, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    error = document["error"]
    assert error["type"] == "NoConversationError"
    assert error["message"] == (
        f"no conversation found in {folder}: 1 of 2 file(s) could not be read; the span was "
        "ignored (no_genai_content 1); the summary gives each reason"
    )
    assert error["message"] in " ".join(done.stderr.split())
