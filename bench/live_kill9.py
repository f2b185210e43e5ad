"""kill -9 of ``agent-eval serve`` mid-traffic, then ``serve --resume``: acknowledged vs scored.

An agent instrumented with the real OpenTelemetry SDK (``SimpleSpanProcessor`` + the OTLP/HTTP
protobuf exporter: each span is one export, and an export that got HTTP 200 is acknowledged)
sends ``--conversations`` two-turn conversations (an ``invoke_agent`` root over two ``chat``
spans, ``gen_ai.conversation.id`` set) to ``agent-eval serve --out OUT`` judging with the fake
OpenAI-compatible server (``--judge-latency`` seconds per call, so scoring is under way when the
kill comes). At a random time (seeded, ``--seed``) within the sending, serve gets SIGKILL; the
agent keeps going until it has sent everything (exports to a dead port fail: not acknowledged).
Then ``agent-eval serve --resume OUT`` starts, scores what the log holds, and is stopped with
SIGTERM once idle.

Prints, for the run: conversations whose every span was acknowledged, those partly
acknowledged (the kill fell inside them), those with rows, the acknowledged ones without a row
(lost), and rows written twice (a (conversation, revision) key with more than one line in
``results.jsonl``, plus rows ``results.db`` superseded). Both serves run in fresh processes.

    python bench/live_kill9.py [--conversations 200] [--seed 7] [--judge-latency 0.05]
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
from _live_serve import start_serve, wait_idle


def _agent(
    url: str, count: int, acked: Counter[str], spans: Counter[str], stop: threading.Event
) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class Counting(SpanExporter):
        def __init__(self) -> None:
            self.inner = OTLPSpanExporter(endpoint=url, timeout=2)

        def export(self, batch: Sequence[ReadableSpan]) -> SpanExportResult:
            result = self.inner.export(batch)
            for span in batch:
                cid = str((span.attributes or {}).get("gen_ai.conversation.id"))
                spans[cid] += 1
                acked[cid] += result is SpanExportResult.SUCCESS
            return result

        def shutdown(self) -> None:
            self.inner.shutdown()

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(Counting()))
    tracer = provider.get_tracer("bench-agent")
    for n in range(count):
        if stop.is_set():  # serve was killed: exports to its port are not acknowledged
            break
        cid = f"conv-{n:05d}"
        history = [{"role": "user", "parts": [{"type": "text", "content": f"task {n}"}]}]
        root = {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": cid}
        with tracer.start_as_current_span("invoke_agent bench", attributes=root):
            for turn in range(2):
                answer = [
                    {"role": "assistant", "parts": [{"type": "text", "content": f"ok {turn}"}]}
                ]
                chat = {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "fake-model",
                    "gen_ai.conversation.id": cid,
                    "gen_ai.input.messages": json.dumps(history),
                    "gen_ai.output.messages": json.dumps(answer),
                }
                with tracer.start_as_current_span("chat fake-model", attributes=chat):
                    pass
                history += [
                    *answer,
                    {"role": "user", "parts": [{"type": "text", "content": "more"}]},
                ]
    provider.shutdown()


def _rows(out: Path) -> tuple[set[str], int, int]:
    """Conversations with rows, rows written twice (JSONL), rows superseded (SQLite)."""
    from agent_eval.run._store import load_superseded

    lines = (
        (out / "results.jsonl").read_bytes().splitlines()
        if (out / "results.jsonl").exists()
        else []
    )
    keys = Counter(
        (r["conversation_id"], r["unit_id"], r["revision"]) for r in map(orjson.loads, lines)
    )
    twice = sum(n - 1 for n in keys.values())
    return {k[0] for k in keys}, twice, len(load_superseded(out))


def run(args: argparse.Namespace) -> dict[str, Any]:
    from agent_eval.testing import FakeModelServer, Structured

    rng = random.Random(args.seed)
    with FakeModelServer(latency=args.judge_latency) as judge, tempfile.TemporaryDirectory() as t:
        judge.add_rule(Structured({"user_goal": "g", "end_state": "e"}), schema="GoalAndOutcome")
        judge.add_rule(Structured({"reason": "r", "verdict": "1"}), schema="OutcomeComparison")
        tmp, out = Path(t), Path(t) / "out"
        first, port = start_serve(tmp, judge.base_url, "--out", str(out), idle=1, after_root=0.2)
        acked: Counter[str] = Counter()
        spans: Counter[str] = Counter()
        url = f"http://127.0.0.1:{port}/v1/traces"
        stop = threading.Event()
        sender = threading.Thread(target=_agent, args=(url, args.conversations, acked, spans, stop))
        started = time.monotonic()
        sender.start()
        time.sleep(rng.uniform(0.5, args.kill_within))
        first.send_signal(signal.SIGKILL)
        first.wait()
        killed_at = time.monotonic() - started
        stop.set()
        sender.join()
        log_files = sorted(p.name for p in (out / "ack-log").glob("*"))
        second, port = start_serve(
            tmp, judge.base_url, "--resume", str(out), idle=1, after_root=0.2
        )
        wait_idle(port, poll=0.2)
        second.send_signal(signal.SIGTERM)
        stdout, _ = second.communicate(timeout=120)
        summary = json.loads(stdout.strip().splitlines()[-1])
        whole = {c for c, n in acked.items() if n == spans[c] == 3}
        partly = {c for c, n in acked.items() if 0 < n < 3}
        scored, twice, superseded = _rows(out)
        return {
            "seed": args.seed,
            "killed_at_s": round(killed_at, 2),
            "conversations_started": len(spans),
            "acknowledged": len(whole),
            "partly_acknowledged": len(partly),
            "scored": len(scored),
            "acknowledged_lost": len(whole - scored),
            "partly_acknowledged_without_row": len(partly - scored),
            "rows_written_twice": twice,
            "rows_superseded": superseded,
            "log_at_kill": log_files,
            "replayed_records": summary["ack_log"]["replayed_records"],
            "already_scored_on_replay": summary["ack_log"]["already_scored"],
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--judge-latency", type=float, default=0.05)
    parser.add_argument("--kill-within", type=float, default=6.0, help="kill in [0.5, this] s")
    args = parser.parse_args()
    result = run(args)
    print(
        f"seed {result['seed']}: kill -9 at {result['killed_at_s']} s; "
        f"{result['acknowledged']} conversations acknowledged whole "
        f"(+{result['partly_acknowledged']} partly), {result['scored']} with rows after "
        f"--resume; lost {result['acknowledged_lost']}; rows written twice "
        f"{result['rows_written_twice']}, superseded {result['rows_superseded']}",
        flush=True,
    )
    print(orjson.dumps(result).decode())


if __name__ == "__main__":
    main()
