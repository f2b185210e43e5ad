"""``agent-eval serve`` as an online evaluator: several metrics, a seeded sample, filters.

Conversations reach a started receiver through real HTTP (OTLP/JSON posts and the SDK's
protobuf exporter); the receiver, its scorer and engines come from ``RunSession.start_live``
as ``serve`` builds them, the judge is the fake model server.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
import requests
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from scipy.stats import binom
from typer.testing import CliRunner

from agent_eval.cli._app import app
from agent_eval.config import ScoreConfig
from agent_eval.errors import ConfigError
from agent_eval.ingest._spans import SpanRecord
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.live._receiver import Receiver, ReceiverLimits
from agent_eval.live._scorer import LiveScorer
from agent_eval.live._selection import (
    FILTERED_OUT,
    SAMPLED_OUT,
    Condition,
    Selection,
    draw,
    parse_condition,
)
from agent_eval.run._session import RunSession
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer
from agent_eval.testing._otlp import export_request, span

from ..run.goal_script import script_goal_judge
from .agent import DONE, Live, provider, run_agent, text

JUDGED = "goal_accuracy@2"
JUDGE_FREE = "steering@1"


@contextmanager
def session_receiver(
    server: FakeModelServer,
    out: Path,
    *,
    metric: str = "goal_accuracy",
    selection: Selection | None = None,
) -> Iterator[Live]:
    """A receiver built as ``serve`` builds it (``RunSession.start_live``), in its own thread."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    cfg = ScoreConfig(
        out=out, metric=metric, judge="fake-model", base_url=server.base_url, cache="off"
    )
    session = RunSession(
        cfg,
        judge=OpenAIJudge("fake-model", base_url=server.base_url, api_key="sk-test"),
        model="fake-model",
        keep_results=True,
        keep_interrupted=False,
    )

    async def make() -> Receiver:
        engines, store, emitter = session.start_live()
        scorer = LiveScorer(engines, store, emitter, concurrency=4, directory=out)
        limits = ReceiverLimits(idle_seconds=0.3, after_root_seconds=0.1)
        receiver = Receiver(scorer, limits, out, selection=selection)
        await receiver.start("127.0.0.1", 0)
        return receiver

    receiver = asyncio.run_coroutine_threadsafe(make(), loop).result(30)
    live = Live(receiver, loop, out)
    try:
        yield live
    finally:
        live.call(receiver.stop())
        assert receiver.scorer.store is not None
        live.call(session.stop_live(receiver.scorer.store, None))
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def conversation(
    n: int, cid: str, *, resource: dict[str, Any] | None = None, agent: str = "helper"
) -> dict[str, Any]:
    """One conversation as an OTLP/JSON export request: an agent root over one chat span."""
    trace_id, root, chat = f"{n + 1:032x}", f"{2 * n + 1:016x}", f"{2 * n + 2:016x}"
    history = [text("user", f"hello from {cid}")]
    spans = [
        span(
            trace_id,
            root,
            "invoke_agent",
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": agent,
                "gen_ai.conversation.id": cid,
            },
        ),
        span(
            trace_id,
            chat,
            "chat fake-model",
            parent_span_id=root,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.conversation.id": cid,
                "gen_ai.input.messages": json.dumps(history),
                "gen_ai.output.messages": json.dumps([text("assistant", f"done {DONE}")]),
            },
        ),
    ]
    return export_request(spans, resource=resource or {"service.name": "checkout"})


def post(url: str, requests_: Sequence[dict[str, Any]]) -> None:
    body: dict[str, Any] = {"resourceSpans": [rs for r in requests_ for rs in r["resourceSpans"]]}
    reply = requests.post(
        f"{url}/v1/traces",
        data=orjson.dumps(body),
        headers={"Content-Type": "application/json"},
        timeout=30,
    )
    assert reply.status_code == 200, reply.text


def adds_up(tally: dict[str, Any]) -> bool:
    parts = tally["scored"] + tally["errored"] + sum(tally["skipped"].values())
    return bool(tally["received"] == parts + tally["pending"] + tally["unscored"])


# --- the selection itself -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("service.name=checkout", Condition("service.name", "=", ("checkout",))),
        (" service.name = a, b ", Condition("service.name", "=", ("a", "b"))),
        (
            "deployment.environment.name!=dev",
            Condition("deployment.environment.name", "!=", ("dev",)),
        ),
        ("gen_ai.agent.name", Condition("gen_ai.agent.name", "exists")),
        ("!user.id", Condition("user.id", "absent")),
    ],
)
def test_conditions_parse(given: str, expected: Condition) -> None:
    assert parse_condition(given) == expected


@pytest.mark.parametrize("bad", ["=checkout", "service.name=", "a=b,,c", "two words", ""])
def test_a_bad_condition_names_itself_and_the_forms(bad: str) -> None:
    with pytest.raises(ConfigError, match="KEY=VALUE") as caught:
        parse_condition(bad)
    assert repr(bad) in str(caught.value)


@pytest.mark.parametrize("rate", [0.0, -0.5, 1.5])
def test_a_rate_outside_zero_one_is_refused(rate: float) -> None:
    with pytest.raises(ConfigError, match=r"not a share in \(0, 1\]"):
        Selection(rate=rate)


def _span(span_id: str, attributes: dict[str, Any], resource: dict[str, Any]) -> SpanRecord:
    return SpanRecord(trace_id="a" * 32, span_id=span_id, attributes=attributes, resource=resource)


def test_a_condition_holds_on_any_span_or_resource_and_a_negation_on_none() -> None:
    spans = [
        _span("1" * 16, {"gen_ai.agent.name": "router"}, {"service.name": "checkout"}),
        _span("2" * 16, {"gen_ai.agent.name": "booker", "flags": [1, 2]}, {"beta": True}),
    ]
    holds = {
        text: parse_condition(text).holds(spans)[0]
        for text in [
            "gen_ai.agent.name=booker",  # a child span's attribute
            "service.name=checkout",  # a resource's
            "service.name=search,checkout",
            "service.name=search",
            "service.name!=search",
            "gen_ai.agent.name!=router",  # one span has it: excluded
            "flags=2",  # an element of a list
            "beta=true",  # a boolean as text
            "gen_ai.agent.name",
            "!user.id",
            "user.id",
        ]
    }
    assert holds == {
        "gen_ai.agent.name=booker": True,
        "service.name=checkout": True,
        "service.name=search,checkout": True,
        "service.name=search": False,
        "service.name!=search": True,
        "gen_ai.agent.name!=router": False,
        "flags=2": True,
        "beta=true": True,
        "gen_ai.agent.name": True,
        "!user.id": True,
        "user.id": False,
    }


def test_both_spellings_of_the_environment_key_are_one_key() -> None:
    old = [_span("1" * 16, {}, {"deployment.environment": "dev"})]
    new = [_span("1" * 16, {}, {"deployment.environment.name": "dev"})]
    for spans in (old, new):
        for key in ("deployment.environment", "deployment.environment.name"):
            assert parse_condition(f"{key}=dev").holds(spans)[0]
            assert not parse_condition(f"{key}!=dev").holds(spans)[0]


def test_the_draw_depends_on_the_id_and_the_seed_only() -> None:
    ids = [f"conv-{n}" for n in range(200)]
    first = Selection(rate=0.3, seed=11)
    second = Selection(rate=0.3, seed=11)  # another receiver, same seed
    assert [first.sampled(c) for c in ids] == [second.sampled(c) for c in ids]
    assert [Selection(rate=0.3, seed=12).sampled(c) for c in ids] != [first.sampled(c) for c in ids]
    assert all(0.0 <= draw(c, 11) < 1.0 for c in ids)
    # a larger rate keeps every conversation a smaller one chose (nested samples)
    small, large = Selection(rate=0.1, seed=11), Selection(rate=0.5, seed=11)
    assert all(large.sampled(c) for c in ids if small.sampled(c))


# --- through a started receiver -----------------------------------------------------------


def test_two_metrics_give_two_rows_per_conversation(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    out = tmp_path / "out"
    with session_receiver(fake_server, out, metric="goal_accuracy,steering") as live:
        sdk = provider(OTLPSpanExporter(endpoint=f"{live.url}/v1/traces"))
        tracer = sdk.get_tracer("agent")
        run_agent(tracer, "conv-done", [("book it", f"booked {DONE}")])
        run_agent(tracer, "conv-not", [("refund me", "sorry")])
        sdk.shutdown()
        live.wait_idle()
        tally = live.receiver.scorer.tally()
    rows = load_results(out)
    by = {(r.conversation_id, r.metric): r for r in rows}
    assert len(rows) == 4
    assert set(by) == {(c, m) for c in ("conv-done", "conv-not") for m in (JUDGED, JUDGE_FREE)}
    assert (by["conv-done", JUDGED].verdict, by["conv-not", JUDGED].verdict) == ("1", "0")
    assert {by[c, JUDGE_FREE].status for c in ("conv-done", "conv-not")} == {"ok"}
    assert by["conv-done", JUDGE_FREE].judge_model == "none"  # judge-free: no call
    assert {r.run_id for r in rows} == {rows[0].run_id}
    assert tally == {
        "received": 2,
        "scored": 2,
        "errored": 0,
        "skipped": {},
        "pending": 0,
        "unscored": 0,
    }
    judged_calls = sum(r.judge_calls for r in rows)
    assert judged_calls == len(fake_server.requests) > 0


def test_the_sample_is_seeded_per_conversation_and_its_share_is_binomial(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    rate, seed, n = 0.25, 7, 400
    ids = [f"conv-{k:03d}" for k in range(n)]
    out = tmp_path / "out"
    with session_receiver(fake_server, out, selection=Selection(rate=rate, seed=seed)) as live:
        for start in range(0, n, 100):  # four posts of 100 conversations
            post(live.url, [conversation(k, ids[k]) for k in range(start, start + 100)])
        live.wait_idle(timeout=120)
        health = requests.get(f"{live.url}/healthz", timeout=10).json()
    rows = load_results(out)
    assert len(rows) == n  # one row per conversation: judged or skipped, none lost
    judged = {r.conversation_id for r in rows if r.status == "ok"}
    skipped = {r.conversation_id: r for r in rows if r.status == "skipped"}
    assert judged | set(skipped) == set(ids) and not judged & set(skipped)
    # exactly the conversations a fresh selection with the same seed chooses
    other = Selection(rate=rate, seed=seed)
    assert judged == {c for c in ids if other.sampled(c)}
    low, high = binom.interval(1 - 1e-6, n, rate)
    assert low <= len(judged) <= high, (len(judged), low, high)
    assert {r.error_type for r in skipped.values()} == {SAMPLED_OUT}
    some = next(iter(skipped.values()))
    assert some.error_message is not None
    assert "--sample 0.25 --sample-seed 7" in some.error_message
    # what is sampled out never reaches the judge
    sent = " ".join(r.text for r in fake_server.requests)
    assert not [c for c in skipped if f"hello from {c}" in sent]
    assert all(f"hello from {c}" in sent for c in judged)
    tally = health["conversations"]
    assert tally == {
        "received": n,
        "scored": len(judged),
        "errored": 0,
        "skipped": {SAMPLED_OUT: n - len(judged)},
        "pending": 0,
        "unscored": 0,
    }
    assert adds_up(tally)


def test_a_reopened_conversation_gets_its_first_decision(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    selection = Selection(rate=0.5, seed=3)
    ids = [f"c{k}" for k in range(20)]
    kept = next(c for c in ids if selection.sampled(c))
    left = next(c for c in ids if not selection.sampled(c))
    out = tmp_path / "out"
    with session_receiver(fake_server, out, selection=selection) as live:
        sdk = provider(OTLPSpanExporter(endpoint=f"{live.url}/v1/traces"))
        tracer = sdk.get_tracer("agent")
        for turn in (("hi", "hello"), ("go on", f"done {DONE}")):  # a trace per turn
            run_agent(tracer, kept, [turn])
            run_agent(tracer, left, [turn])
            live.wait_idle()
        sdk.shutdown()
        tally = live.receiver.scorer.tally()
    rows = [(r.conversation_id, r.revision, r.status) for r in load_results(out)]
    assert sorted(rows) == sorted(
        [(kept, 0, "ok"), (kept, 1, "ok"), (left, 0, "skipped"), (left, 1, "skipped")]
    )
    assert tally["received"] == 4 and tally["skipped"] == {SAMPLED_OUT: 2}
    assert not any(left in r.text for r in fake_server.requests)


def test_filters_include_and_exclude_as_configured(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    traffic = {
        "prod-checkout": {"service.name": "checkout", "deployment.environment.name": "prod"},
        "dev-checkout": {"service.name": "checkout", "deployment.environment.name": "dev"},
        "old-dev-checkout": {"service.name": "checkout", "deployment.environment": "dev"},
        "prod-search": {"service.name": "search", "deployment.environment.name": "prod"},
        "no-env-checkout": {"service.name": "checkout"},
    }
    where = ("service.name=checkout", "deployment.environment.name!=dev", "gen_ai.agent.name")
    selection = Selection(tuple(parse_condition(w) for w in where))
    out = tmp_path / "out"
    with session_receiver(fake_server, out, metric="goal_accuracy,steering") as plain:
        plain.receiver.selection = selection
        post(
            plain.url,
            [conversation(k, cid, resource=res) for k, (cid, res) in enumerate(traffic.items())],
        )
        plain.wait_idle()
        health = requests.get(f"{plain.url}/healthz", timeout=10).json()
    rows = load_results(out)
    assert len(rows) == 2 * len(traffic)  # every conversation: a row per metric
    status = {(r.conversation_id, r.metric): (r.status, r.error_type) for r in rows}
    for metric in (JUDGED, JUDGE_FREE):
        assert status["prod-checkout", metric] == ("ok", None)
        assert status["no-env-checkout", metric] == ("ok", None)  # no env: not dev
        for cid in ("dev-checkout", "old-dev-checkout", "prod-search"):
            assert status[cid, metric] == ("skipped", FILTERED_OUT)
    messages = {r.conversation_id: r.error_message or "" for r in rows if r.metric == JUDGED}
    assert (
        "no span of this conversation or its resource has service.name = checkout"
        in (messages["prod-search"])
    )
    assert "which --where deployment.environment.name!=dev excludes" in messages["dev-checkout"]
    sent = " ".join(r.text for r in fake_server.requests)
    assert "hello from prod-checkout" in sent and "hello from no-env-checkout" in sent
    assert not any(f"hello from {c}" in sent for c in ("dev-checkout", "prod-search"))
    tally = health["conversations"]
    assert tally["scored"] == 2 and tally["skipped"] == {FILTERED_OUT: 3} and adds_up(tally)
    # runs show counts the skips with their reasons, as it does any skip
    shown = CliRunner().invoke(app, ["runs", "show", str(out), "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["usage"]["skipped"] == {FILTERED_OUT: 6}
    report = CliRunner().invoke(app, ["report", str(out), "--html", str(tmp_path / "r.html")])
    assert report.exit_code == 0, report.output


def test_a_span_attribute_filter_selects_by_agent_name(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    selection = Selection((parse_condition("gen_ai.agent.name=booker"),))
    out = tmp_path / "out"
    with session_receiver(fake_server, out, selection=selection) as live:
        post(
            live.url,
            [
                conversation(0, "by-booker", agent="booker"),
                conversation(1, "by-router", agent="router"),
            ],
        )
        live.wait_idle()
    got = Counter((r.conversation_id, r.status) for r in load_results(out))
    assert got == {("by-booker", "ok"): 1, ("by-router", "skipped"): 1}
