"""Soak of ``agent-eval serve``: real OTel SDK exports at a fixed rate for a fixed time, RSS read.

``--threads`` agents, each with its own ``TracerProvider``, ``BatchSpanProcessor`` and OTLP/HTTP
protobuf exporter (counting the spans each export got HTTP 200 for), start ``--rate``
conversations per second in total for ``--seconds`` against ``agent-eval serve --out OUT`` judging
with the fake OpenAI-compatible server. Every other conversation carries a conversation id (one
trace, an ``invoke_agent`` root over three ``chat`` spans replaying the history); the others are
bare two-turn agents (a trace per turn, no conversation id, each turn replaying the history, as
Microsoft Agent Framework and bare clients do), folded by the receiver. Every message is unique,
padded to ``--message-bytes``.

RSS of the serve process (``/proc/PID/status`` ``VmRSS``) is read every ``--sample-seconds``:
once at idle after start-up (the baseline the bound is measured above), then through the soak;
the slope (MB/min) is a least-squares fit over the samples after ``--warmup`` seconds.

Prints per serve: spans sent/accepted (acknowledged by HTTP 200)/scored (read by the receiver
into a scored conversation), conversations sent/ok rows, RSS idle / after warm-up / end / peak,
the slope, and ``--max-buffer-mb``; with ``--baseline-src DIR`` the same soak for
``--baseline-seconds`` first runs against the package in DIR (another checkout, e.g. main),
and the ratios of this checkout's growth and slope to it are printed. With ``--kill9`` a
kill -9 + ``serve --resume`` phase follows (``bench/live_kill9.py``): acknowledged vs scored.

    python bench/live_soak.py [--seconds 600] [--rate 5] [--threads 4] [--max-buffer-mb 32]
        [--baseline-src /work/main --baseline-seconds 180] [--kill9]
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _live_serve import health, start_serve, wait_idle


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


class _Agent:
    """One exporter thread's agent: conversations at its share of the rate."""

    def __init__(self, url: str, index: int, pad: int, sent: Counter[str]) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            SpanExporter,
            SpanExportResult,
        )

        lock = threading.Lock()

        class Counting(SpanExporter):
            def __init__(self) -> None:
                self.inner = OTLPSpanExporter(endpoint=url, timeout=10)

            def export(self, batch: Sequence[ReadableSpan]) -> SpanExportResult:
                result = self.inner.export(batch)
                with lock:
                    sent["spans_sent"] += len(batch)
                    if result is SpanExportResult.SUCCESS:
                        sent["spans_acknowledged"] += len(batch)
                return result

            def shutdown(self) -> None:
                self.inner.shutdown()

        resource = Resource.create({"service.name": f"soak-agent-{index}"})
        self.provider = TracerProvider(resource=resource)
        self.provider.add_span_processor(BatchSpanProcessor(Counting(), schedule_delay_millis=500))
        self.tracer = self.provider.get_tracer("soak")
        self.index, self.pad, self.sent, self.lock = index, pad, sent, lock

    def _chat(self, history: list[dict[str, Any]], answer: str, cid: str | None) -> None:
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "fake-model",
            "gen_ai.input.messages": json.dumps(history),
            "gen_ai.output.messages": json.dumps([_text("assistant", answer)]),
        }
        if cid is not None:
            attributes["gen_ai.conversation.id"] = cid
        with self.tracer.start_as_current_span("chat fake-model", attributes=attributes):
            pass
        history.append(_text("assistant", answer))

    def conversation(self, n: int) -> None:
        tag = f"a{self.index}-{n}"
        filler = "x" * self.pad
        history = [_text("system", "You are a soak agent."), _text("user", f"task {tag} {filler}")]
        root = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "soak"}
        if n % 2 == 0:  # one trace, a conversation id
            cid = f"soak-{tag}"
            with self.tracer.start_as_current_span(
                "invoke_agent soak", attributes={**root, "gen_ai.conversation.id": cid}
            ):
                for turn in range(3):
                    self._chat(history, f"step {turn} of {tag} {filler}", cid)
                    history.append(_text("user", f"more {turn} {tag}"))
        else:  # a bare two-turn agent: a trace per turn, no conversation id
            for turn in range(2):
                with self.tracer.start_as_current_span("invoke_agent soak", attributes=root):
                    self._chat(history, f"turn {turn} of {tag} {filler} ZEBRA-DONE", None)
                history.append(_text("user", f"next {turn} {tag}"))
        with self.lock:
            self.sent["conversations_sent"] += 1

    def run(self, rate: float, until: float, stop: threading.Event) -> None:
        n, start = 0, time.monotonic()
        while not stop.is_set() and time.monotonic() < until:
            self.conversation(n)
            n += 1
            time.sleep(max(0.0, start + n / rate - time.monotonic()))
        self.provider.shutdown()


def _slope(samples: list[tuple[float, float]]) -> float:
    """MB per minute, least squares over ``(seconds, MB)``."""
    if len(samples) < 2:
        return 0.0
    n = len(samples)
    mt = sum(t for t, _ in samples) / n
    mr = sum(r for _, r in samples) / n
    var = sum((t - mt) ** 2 for t, _ in samples)
    cov = sum((t - mt) * (r - mr) for t, r in samples)
    return 60 * cov / var if var else 0.0


def soak(args: argparse.Namespace, seconds: float, src: str | None) -> dict[str, Any]:
    """One soak against the package in ``src`` (``None``: this checkout)."""
    from agent_eval.testing import FakeModelServer, Structured

    with FakeModelServer(latency=0.02) as judge, tempfile.TemporaryDirectory() as t:
        judge.add_rule(Structured({"user_goal": "g", "end_state": "e"}), schema="GoalAndOutcome")
        judge.add_rule(Structured({"reason": "r", "verdict": "1"}), schema="OutcomeComparison")
        tmp = Path(t)
        flags = ("--out", str(tmp / "out"), "--max-buffer-mb", str(args.max_buffer_mb))
        process, port = start_serve(tmp, judge.base_url, *flags, idle=2, after_root=0.5, src=src)
        time.sleep(2)
        idle_rss = _rss_mb(process.pid)
        sent: Counter[str] = Counter()
        url = f"http://127.0.0.1:{port}/v1/traces"
        stop = threading.Event()
        started = time.monotonic()
        until = started + seconds
        agents = [_Agent(url, i, args.message_bytes, sent) for i in range(args.threads)]
        threads = [
            threading.Thread(target=a.run, args=(args.rate / args.threads, until, stop))
            for a in agents
        ]
        for thread in threads:
            thread.start()
        samples: list[tuple[float, float]] = []
        try:
            while time.monotonic() < until:
                time.sleep(args.sample_seconds)
                samples.append((time.monotonic() - started, _rss_mb(process.pid)))
        finally:
            stop.set()
            for thread in threads:
                thread.join()
        wait_idle(port, poll=0.3)
        final = health(port)
        end_rss = _rss_mb(process.pid)
        process.send_signal(signal.SIGTERM)
        stdout, _ = process.communicate(timeout=300)
        summary = json.loads(stdout.strip().splitlines()[-1])
        after = [(t, r) for t, r in samples if t >= args.warmup]
        warm = after[0][1] if after else idle_rss
        evicted = final.get("evicted_conversations")
        return {
            "code": src or "this checkout",
            "seconds": seconds,
            "spans_sent": sent["spans_sent"],
            "spans_acknowledged": sent["spans_acknowledged"],
            "spans_accepted": summary["spans_accepted"],
            "conversations_sent": sent["conversations_sent"],
            "conversations_scored": summary["conversations"],
            "results": summary["results"],
            "rss_idle_mb": round(idle_rss, 1),
            "rss_after_warmup_mb": round(warm, 1),
            "rss_end_mb": round(end_rss, 1),
            "rss_peak_mb": round(max((r for _, r in samples), default=idle_rss), 1),
            "rss_above_idle_end_mb": round(end_rss - idle_rss, 1),
            "slope_mb_per_min": round(_slope(after), 2),
            "slope_last_half_mb_per_min": round(
                _slope([x for x in after if x[0] >= seconds / 2]), 2
            ),
            "rss_by_minute_mb": [
                round(r, 1) for t, r in samples if int(t) % 60 < args.sample_seconds
            ],
            "samples_after_warmup": len(after),
            "max_buffer_mb": args.max_buffer_mb,
            "held_bytes_end": final["held_bytes"],
            "evicted_conversations_on_disk": evicted,
            "ack_log_indexed_traces_end": final.get("ack_log", {}).get("indexed_traces"),
            "journal_conversations_end": final.get("ack_log", {}).get("journal_conversations"),
        }


def _line(r: dict[str, Any]) -> str:
    return (
        f"{r['code']}, {r['seconds']:g} s: spans sent {r['spans_sent']} / acknowledged "
        f"{r['spans_acknowledged']} / accepted {r['spans_accepted']}; conversations sent "
        f"{r['conversations_sent']}, results {r['results']}; RSS idle {r['rss_idle_mb']} MB, "
        f"after warm-up {r['rss_after_warmup_mb']} MB, end {r['rss_end_mb']} MB "
        f"(peak {r['rss_peak_mb']}, end - idle {r['rss_above_idle_end_mb']} MB), slope "
        f"{r['slope_mb_per_min']} MB/min over {r['samples_after_warmup']} samples (second half "
        f"{r['slope_last_half_mb_per_min']}); by minute {r['rss_by_minute_mb']}; evicted to disk "
        f"{r['evicted_conversations_on_disk']}; held {r['held_bytes_end']} bytes, ack-log index "
        f"{r['ack_log_indexed_traces_end']} traces, journal {r['journal_conversations_end']} "
        f"conversations at the end; bound --max-buffer-mb {r['max_buffer_mb']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--rate", type=float, default=5.0, help="conversations/s, all threads")
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--message-bytes", type=int, default=2000)
    parser.add_argument("--max-buffer-mb", type=float, default=32)
    parser.add_argument("--warmup", type=float, default=60)
    parser.add_argument("--sample-seconds", type=float, default=5)
    parser.add_argument("--baseline-src", help="another checkout to soak first (e.g. main)")
    parser.add_argument("--baseline-seconds", type=float, default=180)
    parser.add_argument("--kill9", action="store_true", help="then a kill -9 + --resume phase")
    args = parser.parse_args()
    results = []
    if args.baseline_src:
        results.append(soak(args, args.baseline_seconds, args.baseline_src))
        print(_line(results[-1]), flush=True)
    results.append(soak(args, args.seconds, None))
    print(_line(results[-1]), flush=True)
    if len(results) == 2:
        base, this = results
        print(
            f"ratio this/baseline: slope {this['slope_mb_per_min']} / "
            f"{base['slope_mb_per_min']} MB/min; RSS end - idle "
            f"{this['rss_above_idle_end_mb']} / {base['rss_above_idle_end_mb']} MB",
            flush=True,
        )
    if args.kill9:
        sys.path.insert(0, str(Path(__file__).parent))
        import live_kill9

        kill = live_kill9.run(
            argparse.Namespace(conversations=300, seed=7, judge_latency=0.05, kill_within=6.0)
        )
        print(
            f"kill -9 at {kill['killed_at_s']} s: {kill['acknowledged']} conversations "
            f"acknowledged, {kill['scored']} scored after --resume, lost "
            f"{kill['acknowledged_lost']}, rows written twice {kill['rows_written_twice']}",
            flush=True,
        )
        results.append(kill)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
