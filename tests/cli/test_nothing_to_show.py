"""``show`` and ``formatters diff`` exit 4 on inputs without a conversation, as ``ingest`` does.

The input is what opentelemetry-instrumentation-openai-v2 exports with content capture off
(trial7 #6): chat spans without messages, and GenAI event log records, joined to them, that
carry no text either. The reason must not say the (used) log records were "ignored ()".
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.cli._exit_codes import EXIT_NOTHING
from agent_eval.testing._otlp import export_request, log_record, span

runner = CliRunner()
TRACE, SPAN = "ab" * 16, "cd" * 8
SYSTEM = {"gen_ai.system": "openai"}
REASON = (
    "error: no conversation found: the span was ignored (no_message_content 1); the 2 log "
    "record(s) joined to those spans did not make a conversation either; the summary gives each "
    "reason"
)


def _capture_off_export(tmp_path: Path) -> list[str]:
    chat = span(TRACE, SPAN, "chat gpt-4o-mini", kind=3,
                attributes={"gen_ai.operation.name": "chat", **SYSTEM})  # fmt: skip
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather"}}
    choice = {"index": 0, "finish_reason": "tool_calls",
              "message": {"role": "assistant", "tool_calls": [call]}}  # fmt: skip
    logs = [
        log_record("gen_ai.user.message", {}, trace_id=TRACE, span_id=SPAN, attributes=SYSTEM),
        log_record("gen_ai.choice", choice, trace_id=TRACE, span_id=SPAN, attributes=SYSTEM),
    ]
    spans_file, logs_file = tmp_path / "spans.otlp.jsonl", tmp_path / "logs.otlp.jsonl"
    spans_file.write_bytes(orjson.dumps(export_request([chat])) + b"\n")
    logs_file.write_bytes(orjson.dumps(export_request(logs=logs)) + b"\n")
    return [str(spans_file), str(logs_file)]


@pytest.mark.parametrize(
    "command",
    [["ingest"], ["show"], ["show", "--raw"], ["formatters", "diff", "json@1", "transcript@1"]],
)
def test_no_conversation_exits_4_with_one_reason(tmp_path: Path, command: list[str]) -> None:
    result = runner.invoke(app, [*command, *_capture_off_export(tmp_path)])
    assert result.exit_code == EXIT_NOTHING == 4
    assert result.stdout == ""
    assert REASON in " ".join(result.stderr.split())
    assert "no_message_content: conversation 'abababababababababababababababab'" in result.stderr
