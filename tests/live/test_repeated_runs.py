"""Issue 33 item 2: two runs of one agent without a conversation id stay two conversations, live
as offline, by the one folding rule (:func:`agent_eval.ingest._folding.choose_continued`).

The agent is the two-turn one of Microsoft Agent Framework and bare clients: a trace per turn,
no conversation id, each turn's input replaying the history. Its two runs are identical, so run
2's first turn replays nothing of run 1 that run 1 did not already say: by the rule (a call
continues only a call whose transcript it strictly extends; equal candidates are matched one to
one in time order) each run is one conversation of the full length. The same spans go to
``agent-eval serve`` through the real OTel SDK OTLP/HTTP exporter and to offline ingest (the
SDK :class:`~agent_eval.ingest._sdk.Collector`, the ingest assembler), and both must give the
same conversations; a restarted ``serve --resume`` that replays them from the acknowledgement
log must fold them the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agent_eval._trace import AgentTrace
from agent_eval.ingest._sdk import Collector
from agent_eval.run._artifacts import read_conversations
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer

from ..run.goal_script import script_goal_judge
from .agent import DONE, live_receiver, provider, run_chat_turn, text
from .test_serve_kill9 import Serve

TURNS = [("book a table", "which day?"), ("friday", f"booked for friday {DONE}")]
ORDERS = {
    "one run after the other": [(0, 0), (0, 1), (1, 0), (1, 1)],
    "interleaved": [(0, 0), (1, 0), (0, 1), (1, 1)],
}
"""(run, turn) in the order they are made."""


def _runs(
    order: list[tuple[int, int]], after_each: Callable[[], None], tracer: Any
) -> list[list[str]]:
    """Make the turns in ``order``; returns each run's trace ids (32 hex), in turn order."""
    histories = [[text("system", "You are a helpful agent.")] for _ in range(2)]
    runs: list[list[str]] = [[], []]
    for run, turn in order:
        user, answer = TURNS[turn]
        runs[run].append(run_chat_turn(tracer, histories[run], user, answer))
        after_each()
    return runs


def _shape(traces: list[AgentTrace]) -> set[tuple[tuple[str, ...], int]]:
    return {(t.trace_ids, len(t.messages)) for t in traces}


def _live_latest(out: Path) -> list[AgentTrace]:
    """Each conversation as its latest revision read it (what ``report`` shows)."""
    return list(read_conversations(out).values())


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("path", ["live", "offline"])
def test_two_runs_of_an_agent_without_conversation_id_stay_two_conversations(
    path: str, order: str, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    if path == "offline":
        offline = Collector()
        sdk = provider(offline.span_exporter)
        runs = _runs(ORDERS[order], lambda: None, sdk.get_tracer("t"))
        sdk.shutdown()
        traces = list(offline.traces().collect())
    else:
        with live_receiver(fake_server, tmp_path / "out") as live:
            sdk = provider(OTLPSpanExporter(endpoint=f"{live.url}/v1/traces"))
            runs = _runs(ORDERS[order], live.wait_idle, sdk.get_tracer("t"))
            sdk.shutdown()
        traces = _live_latest(tmp_path / "out")
        rows = load_results(tmp_path / "out")
        latest = {r.conversation_id: r for r in rows}  # in order: the last is the latest
        assert {r.trace_ids for r in latest.values()} == {tuple(r) for r in runs}
        assert {r.verdict for r in latest.values()} == {"1"}  # each read whole: goal reached
    assert _shape(traces) == {(tuple(run), 5) for run in runs}


@pytest.mark.parametrize("order", ORDERS)
def test_live_and_offline_give_the_same_conversations_of_the_same_spans(
    order: str, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """One exporter feeds both: the spans are the very same."""
    script_goal_judge(fake_server)
    offline = Collector()
    with live_receiver(fake_server, tmp_path / "out") as live:
        sdk = provider(OTLPSpanExporter(endpoint=f"{live.url}/v1/traces"))
        sdk.add_span_processor(SimpleSpanProcessor(offline.span_exporter))
        _runs(ORDERS[order], live.wait_idle, sdk.get_tracer("t"))
        sdk.shutdown()
    live_traces = _live_latest(tmp_path / "out")
    offline_traces = list(offline.traces().collect())
    assert len(offline_traces) == 2
    assert _shape(live_traces) == _shape(offline_traces)
    for one in offline_traces:
        [same] = [t for t in live_traces if t.trace_ids == one.trace_ids]
        assert same.messages == one.messages


def test_a_restart_replays_two_runs_into_two_conversations(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """Acknowledged, not yet closed, kill -9: ``serve --resume`` folds the log's spans as
    offline ingest does (and as the first process would have)."""
    script_goal_judge(fake_server)
    out = tmp_path / "out"
    first = Serve(
        tmp_path, fake_server, "--out", str(out), "--idle", "3600", "--after-root", "3600"
    )
    sdk = provider(OTLPSpanExporter(endpoint=f"{first.url}/v1/traces"))
    runs = _runs(ORDERS["one run after the other"], lambda: None, sdk.get_tracer("t"))
    sdk.shutdown()
    first.kill9()
    second = Serve(
        tmp_path, fake_server, "--resume", str(out), "--idle", "0.3", "--after-root", "0.1"
    )
    second.wait_ok(2)
    second.stop()
    rows = load_results(out)
    assert sorted(r.trace_ids for r in rows) == sorted(tuple(r) for r in runs)
    assert {(r.revision, r.verdict) for r in rows} == {(0, "1")}
    assert _shape(_live_latest(out)) == {(tuple(run), 5) for run in runs}
