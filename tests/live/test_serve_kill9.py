"""``agent-eval serve`` killed with SIGKILL and started again: every conversation it acknowledged
(HTTP 200 to the real OTel SDK exporter) ends up with exactly one row per revision, none lost,
none written twice; a record cut short by the kill is cut off; the log's bound answers 503."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
import requests
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from agent_eval.live._ack_log import ACK_LOG_DIR
from agent_eval.run._store import JSONL_NAME, ResultStore, load_superseded
from agent_eval.testing import FakeModelServer, Hang, RecordedRequest, Structured

from ..run.goal_script import REVIEW_MARKER, script_goal_judge
from .agent import DONE, provider, run_agent

CLI = "from agent_eval.cli import main; main()"
SLOW = "SLOW-MARKER"


class Recording(SpanExporter):
    """The OTLP/HTTP exporter, remembering which conversations' spans were all acknowledged."""

    def __init__(self, url: str) -> None:
        self.inner = OTLPSpanExporter(endpoint=url, timeout=10)
        self.failed: set[str] = set()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        result = self.inner.export(spans)
        if result is not SpanExportResult.SUCCESS:
            ids = ((s.attributes or {}).get("gen_ai.conversation.id") for s in spans)
            self.failed.update(str(cid) for cid in ids)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()


class Serve:
    """One ``agent-eval serve`` process on a free port."""

    def __init__(self, tmp: Path, server: FakeModelServer, *flags: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
        env["AGENT_EVAL_CACHE_PATH"] = str(tmp / "judge-cache.db")
        self.process = subprocess.Popen(
            [sys.executable, "-c", CLI, "serve", "--port", "0", "--judge", "fake-model",
             "--base-url", server.base_url, *flags],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp,
        )  # fmt: skip
        self.lines: list[str] = []
        self.port = self._banner()
        self.url = f"http://127.0.0.1:{self.port}"
        self._drain = threading.Thread(target=self._read_rest, daemon=True)
        self._drain.start()

    def _banner(self) -> int:
        assert self.process.stderr is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            self.lines.append(line)
            found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
            if found:
                return int(found.group(1))
            if not line and self.process.poll() is not None:
                break
        raise AssertionError("serve did not start:\n" + "".join(self.lines))

    def _read_rest(self) -> None:  # a full stderr pipe would block the server
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    def health(self) -> dict[str, Any]:
        return dict(requests.get(f"{self.url}/healthz", timeout=10).json())

    def wait_ok(self, count: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.health()["results"].get("ok", 0) >= count:
                return
            time.sleep(0.05)
        raise AssertionError(f"not {count} ok rows: {self.health()}")

    def send(self, conversations: dict[str, list[tuple[str, str]]]) -> set[str]:
        """Export each conversation with the SDK; returns those whose every span got a 200."""
        exporter = Recording(f"{self.url}/v1/traces")
        sdk = provider(exporter)
        for cid, turns in conversations.items():
            run_agent(sdk.get_tracer("agent"), cid, turns)
        sdk.shutdown()
        return set(conversations) - exporter.failed

    def kill9(self) -> None:
        self.process.kill()  # SIGKILL: no handler runs, nothing is flushed
        self.process.wait(30)

    def stop(self) -> dict[str, Any]:
        self.process.send_signal(signal.SIGTERM)
        stdout, _ = self.process.communicate(timeout=90)
        self._drain.join(10)
        assert self.process.returncode == 0, "".join(self.lines)
        return dict(json.loads(stdout.strip().splitlines()[-1]))

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)


def _rows(out: Path) -> Counter[tuple[str, int]]:
    """(conversation, revision) of every line of results.jsonl (a duplicate counts twice)."""
    lines = (out / JSONL_NAME).read_bytes().splitlines()
    return Counter((row["conversation_id"], row["revision"]) for row in map(orjson.loads, lines))


@pytest.fixture
def hang() -> threading.Event:
    """While set, stage 2 of a conversation holding :data:`SLOW` never answers."""
    return threading.Event()


@pytest.fixture
def judge(fake_server: FakeModelServer, hang: threading.Event) -> FakeModelServer:
    def slow(body: Any) -> bool:
        stage = body.get("tool_choice", {}).get("function", {}).get("name")
        return hang.is_set() and stage == "OutcomeComparison" and SLOW in json.dumps(body)

    def infer_slow(request: RecordedRequest) -> Structured:  # stage 2 then names SLOW too
        reached = DONE in request.text.rsplit(REVIEW_MARKER, 1)[-1]
        end_state = f"goal reached {SLOW}" if reached else f"nothing done {SLOW}"
        return Structured({"user_goal": "get it done", "end_state": end_state})

    fake_server.add_rule(Hang(120), match=slow)
    fake_server.add_rule(infer_slow, schema="GoalAndOutcome", contains=SLOW)
    script_goal_judge(fake_server)
    return fake_server


FAST = ["--idle", "0.5", "--after-root", "0.2"]
NEVER = ["--idle", "600", "--after-root", "600"]


def test_kill9_right_after_the_acknowledgements_loses_no_conversation(
    judge: FakeModelServer, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    first = Serve(tmp_path, judge, "--out", str(out), *NEVER)  # nothing closes before the kill
    try:
        sent = {f"ack-{n}": [("go", f"gone {DONE}")] for n in range(5)}
        acknowledged = first.send(sent)
        assert acknowledged == set(sent)
        first.kill9()
    finally:
        first.close()
    assert list((out / ACK_LOG_DIR).glob("*.seg"))
    assert not (out / JSONL_NAME).exists() or not _rows(out)
    second = Serve(tmp_path, judge, "--resume", str(out), *FAST)
    try:
        second.wait_ok(5)
        summary = second.stop()
    finally:
        second.close()
    assert _rows(out) == Counter({(cid, 0): 1 for cid in sent})
    assert summary["ack_log"]["replayed_records"] > 0
    assert any("continuing run" in line for line in second.lines)
    with ResultStore(out) as store:
        (run,) = store.runs()  # the same run, continued
    assert len(run.record["resumes"]) == 1
    assert not (out / ACK_LOG_DIR).exists()  # everything scored: the log compacted away


def test_kill9_mid_scoring_scores_each_conversation_once_and_the_cache_answers(
    judge: FakeModelServer, hang: threading.Event, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    hang.set()
    first = Serve(tmp_path, judge, "--out", str(out), *FAST)
    try:
        sent = {
            "fast-1": [("go", f"gone {DONE}")],
            "fast-2": [("go", "nothing")],
            "slow-1": [(f"go {SLOW}", f"gone {DONE}")],
            "slow-2": [(f"go {SLOW}", "nothing")],
        }
        assert first.send(sent) == set(sent)
        first.wait_ok(2)
        deadline = time.monotonic() + 60  # both slow ones are in their second judge call
        while len(judge.requests) < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(judge.requests) == 8
        first.kill9()
    finally:
        first.close()
    hang.clear()
    before = len(judge.requests)
    second = Serve(tmp_path, judge, "--out", str(out), *FAST)  # a plain start: it continues
    try:
        second.wait_ok(2)
        second.stop()
    finally:
        second.close()
    assert _rows(out) == Counter({(cid, 0): 1 for cid in sent})
    assert load_superseded(out) == []
    again = judge.requests[before:]
    assert len(again) == 2  # the slow ones' second calls; their first came from the cache
    assert all(SLOW in json.dumps(r.body) for r in again)
    notice = next(line for line in second.lines if "not yet scored" in line)
    assert "as serve --resume" in notice


def test_a_revision_acknowledged_before_the_kill_is_scored_as_the_next_revision(
    judge: FakeModelServer, hang: threading.Event, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    hang.set()
    first = Serve(tmp_path, judge, "--out", str(out), *FAST)
    try:
        first.send({"conv-r": [("book it", f"booked {DONE}")]})
        first.wait_ok(1)  # revision 0 scored
        first.send({"conv-r": [(f"and a taxi {SLOW}", "no taxi")]})  # its next turn: a new trace
        deadline = time.monotonic() + 60
        while len(judge.requests) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(judge.requests) == 4  # revision 1 is in its second judge call
        first.kill9()
    finally:
        first.close()
    hang.clear()
    second = Serve(tmp_path, judge, "--resume", str(out), *FAST)
    try:
        second.wait_ok(1)
        second.stop()
    finally:
        second.close()
    assert _rows(out) == Counter({("conv-r", 0): 1, ("conv-r", 1): 1})
    rows = [orjson.loads(line) for line in (out / JSONL_NAME).read_bytes().splitlines()]
    (revised,) = (row for row in rows if row["revision"] == 1)
    assert "after serve restarted" in revised["note"]


def test_a_record_torn_by_the_kill_is_cut_off_and_the_rest_is_scored(
    judge: FakeModelServer, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    first = Serve(tmp_path, judge, "--out", str(out), *NEVER)
    try:
        sent = {f"torn-{n}": [("go", f"gone {DONE}")] for n in range(3)}
        assert first.send(sent) == set(sent)
        first.kill9()
    finally:
        first.close()
    (segment,) = sorted((out / ACK_LOG_DIR).glob("*.seg"))
    with segment.open("ab") as handle:  # what a kill during write(2) leaves: half a record
        handle.write(b"R" + (99).to_bytes(8, "little") + b"\x10\x00")
    second = Serve(tmp_path, judge, "--resume", str(out), *FAST)
    try:
        second.wait_ok(3)
        summary = second.stop()
    finally:
        second.close()
    assert summary["ack_log"]["torn_records"] == 1
    assert any("cut short at byte" in line for line in second.lines)
    assert _rows(out) == Counter({(cid, 0): 1 for cid in sent})


def test_a_full_log_answers_503_and_keeps_what_it_acknowledged(
    judge: FakeModelServer, hang: threading.Event, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    first = Serve(tmp_path, judge, "--out", str(out), "--max-log-mb", "1", *NEVER)
    padding = "p" * 200_000
    statuses = []
    try:
        for n in range(12):
            span = {
                "traceId": f"{n + 1:032x}", "spanId": f"{n + 1:016x}", "name": "chat",
                "startTimeUnixNano": "1", "endTimeUnixNano": "2",
                "attributes": [{"key": "pad", "value": {"stringValue": padding}}],
            }  # fmt: skip
            body = orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
            reply = requests.post(
                f"{first.url}/v1/traces", data=body,
                headers={"Content-Type": "application/json"}, timeout=10,
            )  # fmt: skip
            statuses.append(reply.status_code)
        health = first.health()
    finally:
        first.close()
    assert statuses[:4] == [200] * 4 and statuses[-1] == 503
    assert health["counters"]["refused_log_full"] == statuses.count(503)
    size = sum(p.stat().st_size for p in (out / ACK_LOG_DIR).glob("*.seg"))
    assert size <= 1024 * 1024


def test_a_conversation_a_clean_stop_left_unscored_is_scored_by_the_next_start(
    judge: FakeModelServer, hang: threading.Event, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    hang.set()
    first = Serve(tmp_path, judge, "--out", str(out), "--shutdown-timeout", "0.5", *FAST)
    try:
        first.send({"kept": [(f"go {SLOW}", f"gone {DONE}")]})
        deadline = time.monotonic() + 60
        while len(judge.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        summary = first.stop()
    finally:
        first.close()
    assert summary["unscored"] == 1 and (out / "unscored.jsonl").exists()
    assert summary["ack_log"]["unscored_traces"] == 1  # still in the log
    hang.clear()
    second = Serve(tmp_path, judge, "--out", str(out), *FAST)
    try:
        second.wait_ok(1)
        second.stop()
    finally:
        second.close()
    assert _rows(out) == Counter({("kept", 0): 1})
    assert not (out / ACK_LOG_DIR).exists()
