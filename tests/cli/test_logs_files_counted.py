"""A logs export whose GenAI event records gave a conversation its messages is not listed as
"read but gave no conversation" (trial7 #7: openai-v2 writes the text as log records in a file
beside the spans); a logs file whose records joined no span still is.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from agent_eval.cli._score_inputs import no_conversation_lines
from agent_eval.ingest import ingest
from agent_eval.testing._otlp import export_request, log_record, span

TRACE, SPAN = "ab" * 16, "cd" * 8
SYSTEM = {"gen_ai.system": "openai"}


def _write(path: Path, request: dict[str, object]) -> str:
    path.write_bytes(orjson.dumps(request) + b"\n")
    return str(path)


def test_a_logs_file_that_gave_the_messages_counts_as_giving_the_conversation(
    tmp_path: Path,
) -> None:
    chat = span(TRACE, SPAN, "chat gpt-4o-mini", kind=3,
                attributes={"gen_ai.operation.name": "chat", **SYSTEM})  # fmt: skip
    choice = {"index": 0, "finish_reason": "stop",
              "message": {"role": "assistant", "content": "Sunny in Paris."}}  # fmt: skip
    user = {"content": "Weather in Paris?"}
    logs = [
        log_record(name, body, trace_id=TRACE, span_id=SPAN, attributes=SYSTEM)
        for name, body in (("gen_ai.user.message", user), ("gen_ai.choice", choice))
    ]
    stray = log_record("gen_ai.user.message", {"content": "hi"}, trace_id="ef" * 16,
                       span_id="12" * 8, attributes=SYSTEM)  # fmt: skip
    paths = [
        _write(tmp_path / "spans.otlp.jsonl", export_request([chat])),
        _write(tmp_path / "logs.otlp.jsonl", export_request(logs=logs)),
        _write(tmp_path / "other.logs.otlp.jsonl", export_request(logs=[stray])),
    ]
    run = ingest(paths)
    (trace,) = run
    assert [(m.role, m.content) for m in trace.messages] == [
        ("user", "Weather in Paris?"),
        ("assistant", "Sunny in Paris."),
    ]
    report = run.report
    assert [(f.path, f.conversations) for f in report.files] == [
        (paths[0], 1),
        (paths[1], 1),  # its records gave the messages
        (paths[2], 0),  # its record joined no span (log_span_not_found)
    ]
    assert report.logs_used == 2 and report.logs_ignored == {"log_span_not_found": 1}
    assert no_conversation_lines(report) == [
        "1 file(s) were read but gave no conversation (everything in them was ignored, see "
        f"above): {paths[2]}"
    ]
