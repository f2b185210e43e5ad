"""``agent-eval serve``'s receiver against the real OTel SDK exporters (protobuf and JSON).

Spans come from an SDK ``TracerProvider`` exporting with ``OTLPSpanExporter`` (HTTP protobuf,
``opentelemetry-exporter-otlp-proto-http``; HTTP JSON, ``opentelemetry-exporter-otlp-json-http``)
to a receiver on a free loopback port; the judge is the fake model server, scripted so a
conversation containing ``ZEBRA-DONE`` reaches its goal.
"""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import orjson
import pytest
import requests
from opentelemetry.exporter.otlp.common.http import Compression as JsonCompression
from opentelemetry.exporter.otlp.json.http.trace_exporter import (
    OTLPSpanExporter as JsonSpanExporter,
)
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context
from typer.testing import CliRunner

from agent_eval._trace import AgentTrace
from agent_eval.cli._app import app
from agent_eval.ingest import ingest
from agent_eval.ingest._sdk import Collector
from agent_eval.live._receiver import UNSCORED_NAME, ReceiverLimits
from agent_eval.run._artifacts import read_conversations, read_renderings
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer, Hang

from ..run.goal_script import REVIEW_MARKER, script_goal_judge
from .agent import DONE, live_receiver, provider, run_agent, run_chat_turn, text

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures/otel"


def exporter(kind: str, url: str) -> SpanExporter:
    endpoint = f"{url}/v1/traces"
    if kind == "protobuf":
        return OTLPSpanExporter(endpoint=endpoint)
    if kind == "protobuf+gzip":
        return OTLPSpanExporter(endpoint=endpoint, compression=Compression.Gzip)
    return JsonSpanExporter(endpoint=endpoint, compression=JsonCompression.GZIP)


@pytest.mark.parametrize("kind", ["protobuf", "protobuf+gzip", "json+gzip"])
def test_sdk_exporter_spans_become_scored_conversations(
    kind: str, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    with live_receiver(fake_server, tmp_path / "out") as live:
        sdk = provider(exporter(kind, live.url))
        tracer = sdk.get_tracer("test-agent")
        run_agent(tracer, "conv-done", [("book it", "ok"), ("now?", f"yes {DONE}")])
        run_agent(tracer, "conv-not", [("refund me", "sorry, I cannot")])
        sdk.shutdown()
        live.wait_idle()
        counters = dict(live.receiver.counters)
        report = live.receiver.report
        held = live.receiver.scorer.engine.renderings
        # a scored conversation's rendering is written and let go (a long serve stays bounded)
        assert (len(held), held.renders) == (0, 2)
    rows = {r.conversation_id: r for r in load_results(tmp_path / "out")}
    assert {k: (r.status, r.verdict, r.revision) for k, r in rows.items()} == {
        "conv-done": ("ok", "1", 0),
        "conv-not": ("ok", "0", 0),
    }
    assert counters["spans_accepted"] == 5  # two roots + three chat spans
    assert counters.get("items_rejected", 0) == 0
    assert counters["http_200"] == 5  # SimpleSpanProcessor: one request per span
    assert report.spans_used + sum(report.spans_ignored.values()) == 5
    # the renderings the judge saw hold the conversation in order
    # the conversation part of each stage-1 prompt (the prompt's own example says "book it" too,
    # so matching the whole text took conv-not's request whenever it arrived first)
    reviewed = [r.text.rsplit(REVIEW_MARKER, 1)[-1] for r in fake_server.requests]
    stage1 = [text for text in reviewed if "book it" in text]
    assert stage1 and stage1[0].index("book it") < stage1[0].index(DONE)


def test_spans_and_log_events_read_like_the_recorded_file(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """The openai-v2 fixture (spans + GenAI log events), POSTed line by line as OTLP/JSON,
    assembles into exactly the conversations ``ingest`` reads from the file."""
    script_goal_judge(fake_server)
    path = FIXTURES / "openai-v2-events.otlp.jsonl"
    expected = {t.conversation_id: t for t in ingest(path).collect()}
    seen: list[AgentTrace] = []
    with live_receiver(fake_server, tmp_path / "out") as live:
        original = live.receiver.scorer.submit
        live.receiver.scorer.submit = lambda job: (seen.append(job.trace), original(job))[1]  # type: ignore[method-assign]
        for line in path.read_bytes().splitlines():
            signal = "traces" if b'"resourceSpans"' in line[:40] else "logs"
            reply = requests.post(
                f"{live.url}/v1/{signal}",
                data=line,
                headers={"Content-Type": "application/json"},
                timeout=10,
            )
            assert reply.status_code == 200, reply.text
            assert reply.json() == {}  # no partial_success: everything was usable
        live.wait_idle()
    assert {t.conversation_id: t.messages for t in seen} == {
        k: t.messages for k, t in expected.items()
    }
    assert len(load_results(tmp_path / "out")) == len(expected) == 5


def test_bad_requests_are_refused_and_counted_never_a_crash(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    limits = ReceiverLimits(idle_seconds=0.3, after_root_seconds=0.1, max_body_bytes=4096)
    with live_receiver(fake_server, tmp_path / "out", limits) as live:
        url = f"{live.url}/v1/traces"

        def post(body: bytes, content_type: str, **headers: str) -> requests.Response:
            return requests.post(
                url, data=body, headers={"Content-Type": content_type, **headers}, timeout=10
            )

        proto = "application/x-protobuf"
        assert post(b"\xff\xff\xff", proto).status_code == 400
        assert post(b"{not json", "application/json").status_code == 400
        assert post(b"[1, 2]", "application/json").status_code == 400
        assert post(b"\x1f\x8b garbage", proto, **{"Content-Encoding": "gzip"}).status_code == 400
        assert post(b"{}", "text/plain").status_code == 415
        assert post(b"{}", "application/json", **{"Content-Encoding": "br"}).status_code == 415
        assert post(b"x" * 5000, proto).status_code == 413
        bomb = gzip.compress(b'{"resourceSpans": []}' + b" " * 100_000)
        assert len(bomb) < 4096
        assert post(bomb, "application/json", **{"Content-Encoding": "gzip"}).status_code == 413
        # a request with one bad span: 200 with partial_success naming it
        bad_span = {"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "no ids"}]}]}]}
        reply = post(orjson.dumps(bad_span), "application/json")
        assert reply.status_code == 200
        assert reply.json()["partialSuccess"]["rejectedSpans"] == "1"
        health = requests.get(f"{live.url}/healthz", timeout=10)
        # still serving after all that
        sdk = provider(OTLPSpanExporter(endpoint=url))
        run_agent(sdk.get_tracer("t"), "after-junk", [("hi", "hello")])
        sdk.shutdown()
        live.wait_idle()
    assert health.status_code == 200
    counters = health.json()["counters"]
    assert counters["http_400"] == 4 and counters["refused_malformed"] == 4
    assert counters["http_415"] == 2 and counters["http_413"] == 2
    assert counters["items_rejected"] == 1
    assert [r.conversation_id for r in load_results(tmp_path / "out")] == ["after-junk"]


def test_a_full_buffer_answers_503_with_retry_after(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    limits = ReceiverLimits(idle_seconds=3600, after_root_seconds=3600, max_buffer_bytes=3000)
    with live_receiver(fake_server, tmp_path / "out", limits) as live:
        url = f"{live.url}/v1/traces"
        statuses = []
        for n in range(10):
            body = orjson.dumps(_request(n))
            reply = requests.post(
                url, data=body, headers={"Content-Type": "application/json"}, timeout=10
            )
            statuses.append((reply.status_code, reply.headers.get("Retry-After")))
        assert (503, "5") in statuses and statuses[0] == (200, None)
        assert live.receiver.buffer.held_bytes <= limits.max_buffer_bytes
        assert statuses.count((503, "5")) == live.receiver.counters["refused_memory_full"]


def _request(n: int) -> dict[str, object]:
    span = {
        "traceId": f"{n + 1:032x}",
        "spanId": f"{n + 1:016x}",
        "name": "chat",
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "padding", "value": {"stringValue": "p" * 500}},
        ],
    }
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


def test_late_spans_are_rescored_as_a_new_row_with_a_note(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    with live_receiver(fake_server, tmp_path / "out") as live:
        sdk = provider(OTLPSpanExporter(endpoint=f"{live.url}/v1/traces"))
        tracer = sdk.get_tracer("t")
        run_agent(tracer, "conv", [("please do it", "working on it")])
        live.wait_idle()
        first = load_results(tmp_path / "out")
        # the next turn is a new trace of the same conversation
        run_agent(tracer, "conv", [("and?", f"finished {DONE}")])
        live.wait_idle()
        # a late span of the first trace (same trace id, after it was scored)
        old = first[0].trace_ids[0]
        parent = SpanContext(int(old, 16), 0xABC, is_remote=True, trace_flags=TraceFlags(1))
        with tracer.start_as_current_span(
            "late tool", context=set_span_in_context(NonRecordingSpan(parent))
        ):
            pass
        live.wait_idle()
        sdk.shutdown()
    rows = load_results(tmp_path / "out")
    assert [(r.revision, r.verdict) for r in first] == [(0, "0")]
    assert [(r.conversation_id, r.revision, r.verdict) for r in rows] == [
        ("conv", 0, "0"),
        ("conv", 1, "1"),  # both turns read: the goal is reached in the second
        ("conv", 2, "1"),
    ]
    assert rows[0].note is None
    assert rows[1].note is not None and "re-scored (revision 1)" in rows[1].note
    assert "2 span(s) arrived after revision 0" in rows[1].note
    assert rows[2].note is not None and "1 span(s) arrived after revision 1" in rows[2].note
    assert len(rows[1].trace_ids) == 2


def test_a_trace_per_turn_without_conversation_id_is_rescored_as_one_conversation(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """trial7 #1: a chat with a trace per ``Runner.run`` and no conversation id, its turns
    seconds apart, is one conversation re-scored per turn (revision 0, 1, 2 under the first
    trace's id), as offline ingest of the same spans folds it into one."""
    script_goal_judge(fake_server)
    offline = Collector()
    with live_receiver(fake_server, tmp_path / "out") as live:
        sdk = provider(OTLPSpanExporter(endpoint=f"{live.url}/v1/traces"))
        sdk.add_span_processor(SimpleSpanProcessor(offline.span_exporter))
        tracer = sdk.get_tracer("t")
        history = [text("system", "You are a helpful agent.")]
        trace_ids = []
        for user, answer in [("hi", "hello"), ("book it", "booking"), ("done?", f"yes {DONE}")]:
            trace_ids.append(run_chat_turn(tracer, history, user, answer))
            live.wait_idle()  # each turn closes and is scored before the next one starts
        sdk.shutdown()
    rows = load_results(tmp_path / "out")
    first = trace_ids[0]
    assert [(r.conversation_id, r.revision, r.verdict) for r in rows] == [
        (first, 0, "0"),
        (first, 1, "0"),
        (first, 2, "1"),  # the whole chat read: the goal is reached in turn 3
    ]
    assert rows[0].trace_ids == (first,)
    assert rows[2].trace_ids == tuple(trace_ids)
    assert rows[2].note is not None and "re-scored (revision 2)" in rows[2].note
    assert f"trace {trace_ids[2]} has no conversation id and its input replays" in rows[2].note
    [folded] = offline.traces().collect()
    assert folded.trace_ids == tuple(trace_ids)
    last = [r.text for r in fake_server.requests if "done?" in r.text][-1]
    for message in folded.messages:  # the last revision's rendering holds the whole chat
        assert message.content in last
    # trial7 #2: the run keeps what the judge saw, so `report` needs no --inputs, and reports
    # each conversation at its latest revision (revisions are not stability repeats)
    stored = read_conversations(tmp_path / "out")
    assert list(stored) == [first] and stored[first].messages == folded.messages
    [(key, rendering)] = read_renderings(tmp_path / "out").items()
    assert key == (first, "transcript@1") and "done?" in rendering and "book it" in rendering
    html_path = tmp_path / "live.html"
    result = CliRunner().invoke(app, ["report", str(tmp_path / "out"), "--html", str(html_path)])
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and "1 results" in result.output
    html = html_path.read_text()
    assert "pass --inputs" not in html
    assert 'Repeats per conversation and variant</th><td class="num" colspan="2">1<' in html


def test_shutdown_scores_what_it_holds_and_persists_what_the_judge_cannot_finish(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    fake_server.add_rule(Hang(30), contains="STUCK")  # rules are tried in order: first
    script_goal_judge(fake_server)
    limits = ReceiverLimits(
        idle_seconds=3600, after_root_seconds=3600, shutdown_timeout=1.0, max_backlog=1
    )
    with live_receiver(fake_server, tmp_path / "out", limits) as live:
        url = f"{live.url}/v1/traces"
        sdk = provider(OTLPSpanExporter(endpoint=url))
        run_agent(sdk.get_tracer("t"), "stuck", [("STUCK here", "hm")])
        sdk.shutdown()
        assert live.close_now() == 1
        time.sleep(0.3)  # the judge call hangs: backlog 1 = the limit
        refused = requests.post(
            url, data=b"{}", headers={"Content-Type": "application/json"}, timeout=10
        )
        assert (refused.status_code, refused.headers["Retry-After"]) == (429, "5")
        sdk2 = provider(OTLPSpanExporter(endpoint=url))
        live.receiver.limits = ReceiverLimits(
            idle_seconds=3600, after_root_seconds=3600, shutdown_timeout=1.0, max_backlog=10
        )
        run_agent(sdk2.get_tracer("t"), "held", [("hello", f"done {DONE}")])
        sdk2.shutdown()
        assert live.receiver.buffer.pending  # held, not yet closed
    # leaving the context stopped the receiver: "held" was scored, "stuck" persisted
    rows = {r.conversation_id: r for r in load_results(tmp_path / "out")}
    assert {k: r.verdict for k, r in rows.items()} == {"held": "1"}
    unscored = [
        AgentTrace.model_validate_json(line)
        for line in (tmp_path / "out" / UNSCORED_NAME).read_bytes().splitlines()
    ]
    assert [t.conversation_id for t in unscored] == ["stuck"]
    assert "STUCK here" in unscored[0].messages[1].content


def test_accepted_spans_that_make_no_conversation_say_why(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    # fresh-user trial: two spans accepted, 0 conversations, and nothing said why
    plain = {
        "traceId": f"{7:032x}",
        "spanId": f"{7:016x}",
        "name": "GET /health",
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
    }
    body = orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [plain]}]}]})
    with live_receiver(fake_server, tmp_path / "out") as live:
        reply = requests.post(
            f"{live.url}/v1/traces",
            data=body,
            headers={"Content-Type": "application/json"},
            timeout=10,
        )
        assert reply.status_code == 200
        live.wait_idle()
        health = requests.get(f"{live.url}/healthz", timeout=10).json()
        summary = live.receiver.summary()
    assert health["counters"]["spans_accepted"] == 1
    assert health["conversations"]["received"] == 0
    assert health["ingest"]["spans_used"] == 0
    assert health["ingest"]["spans_ignored"] == {"no_genai_content": 1}
    assert summary["ingest"] == health["ingest"]


def test_the_warm_up_reads_the_probe_and_leaves_nothing_behind(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """serve's warm-up (issue 33 item 3): the probe is decoded (JSON and protobuf), assembled
    and rendered as a received conversation would be, and is neither held, counted nor
    scored; ingest's read caches and the engine's renderings are empty afterwards."""
    from agent_eval.ingest.conventions import _history_cache as history_cache
    from agent_eval.ingest.conventions._messages import _read_message_json
    from agent_eval.live._warm_up import PROBE_TRACE_ID

    script_goal_judge(fake_server)
    with live_receiver(fake_server, tmp_path / "out") as live:
        receiver = live.receiver
        before, renderings = dict(receiver.counters), receiver.scorer.engine.renderings

        async def warm() -> int:
            return receiver.warm_up()

        assert live.call(warm()) == 2  # one conversation from each encoding
        assert renderings.renders == 2  # each rendered, then forgotten
        assert dict(receiver.counters) == before and receiver.report.spans_used == 0
        assert not receiver.buffer.pending and not receiver.buffer.retained
        assert receiver.scorer.conversations["received"] == 0
        assert PROBE_TRACE_ID not in history_cache._scoped
        assert _read_message_json.cache_info().currsize == 0
        assert len(renderings) == 0
    assert load_results(tmp_path / "out") == []


def test_evaluation_events_name_each_conversations_span_and_keep_no_target(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    # serve --otlp-endpoint kept every scored conversation's span target for good (one entry
    # per conversation in a long-running serve); the target is read when the event is made
    from agent_eval.otel._events import CountingExporter, EvaluationEvents, OtlpJsonFileExporter

    script_goal_judge(fake_server)
    path = tmp_path / "events.jsonl"
    events = EvaluationEvents([CountingExporter(OtlpJsonFileExporter(path), "file")])
    with live_receiver(fake_server, tmp_path / "out", events=events) as live:
        sdk = provider(exporter("proto", live.url))
        tracer = sdk.get_tracer("test-agent")
        run_agent(tracer, "conv-done", [("book it", f"yes {DONE}")])
        run_agent(tracer, "conv-not", [("refund me", "sorry, I cannot")])
        sdk.shutdown()
        live.wait_idle()
        assert live.receiver.scorer.events is events and events.targets == {}
    assert events.close().emitted == 2
    rows = {r.conversation_id: r for r in load_results(tmp_path / "out")}
    records = [
        record
        for line in path.read_bytes().splitlines()
        for resource in orjson.loads(line)["resourceLogs"]
        for scope in resource["scopeLogs"]
        for record in scope["logRecords"]
    ]
    traces = sorted(record["traceId"] for record in records)
    assert traces == sorted(r.trace_ids[-1] for r in rows.values())  # each its own span
    assert all(record.get("spanId") for record in records)
