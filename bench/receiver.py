"""Receiver throughput: spans/s accepted by ``agent-eval serve`` against a null OTLP endpoint.

Builds ``--requests`` OTLP/HTTP protobuf export requests of ``--batch`` GenAI chat spans each
(the SDK's ``BatchSpanProcessor`` sends up to 512 per request), then POSTs them with
``--concurrency`` connections to two servers, each in a fresh process on a loopback port, in the
same run:

- baseline: a null OTLP/HTTP endpoint on the same aiohttp stack that reads each body and answers
  an empty ``ExportTraceServiceResponse`` (the transport floor of a Python OTLP receiver);
- receiver: the real ``Receiver`` (decode, validation, span buffer), with the closing policy
  pushed out of the way (``--idle 3600``), so what is measured is the accept path;
- logged: the same with ``serve``'s acknowledgement log (:mod:`agent_eval.live._ack_log`): each
  body written to a segment in a temporary directory and synced (group commit) before the 200,
  as ``agent-eval serve`` does; its ratio to ``receiver`` is the cost of durable
  acknowledgement.

Prints spans/s accepted (wall time on the client), the ratio to the baseline, and each server's
CPU seconds and peak RSS. The client shares the machine, so the absolute numbers are a floor.

    python bench/receiver.py [--requests 200] [--batch 512] [--concurrency 4] [--gzip]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import resource
import subprocess
import sys
import time
from typing import Any

import orjson


def _requests(count: int, batch: int) -> list[bytes]:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

    def kv(key: str, value: str) -> KeyValue:
        return KeyValue(key=key, value=AnyValue(string_value=value))

    bodies = []
    n = 0
    for r in range(count):
        spans = []
        for i in range(batch):
            n += 1
            history = [
                {"role": "user", "parts": [{"type": "text", "content": f"question {i} " * 8}]}
            ]
            answer = [{"role": "assistant", "parts": [{"type": "text", "content": "ok " * 20}]}]
            spans.append(
                Span(
                    trace_id=(r * batch + i // 4 + 1).to_bytes(16, "big"),
                    span_id=n.to_bytes(8, "big"),
                    parent_span_id=b"\x00" * 7 + b"\x01",
                    name="chat fake-model",
                    kind=Span.SPAN_KIND_CLIENT,
                    start_time_unix_nano=1_700_000_000_000_000_000 + n,
                    end_time_unix_nano=1_700_000_000_100_000_000 + n,
                    attributes=[
                        kv("gen_ai.operation.name", "chat"),
                        kv("gen_ai.request.model", "fake-model"),
                        kv("gen_ai.conversation.id", f"conv-{r}-{i // 4}"),
                        kv("gen_ai.input.messages", json.dumps(history)),
                        kv("gen_ai.output.messages", json.dumps(answer)),
                    ],
                )
            )
        request = ExportTraceServiceRequest(
            resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])]
        )
        bodies.append(request.SerializeToString())
    return bodies


async def _serve(kind: str) -> None:
    from aiohttp import web
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    if kind == "null":
        empty = ExportTraceServiceResponse().SerializeToString()

        async def accept(request: web.Request) -> web.Response:
            await request.read()
            return web.Response(body=empty, content_type="application/x-protobuf")

        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/traces", accept)
        runner = web.AppRunner(app, auto_decompress=False, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        port = runner.addresses[0][1]
    else:
        from agent_eval.formatting._registry import get_formatter
        from agent_eval.judges._openai_judge import OpenAIJudge
        from agent_eval.live._receiver import Receiver, ReceiverLimits
        from agent_eval.live._scorer import LiveScorer
        from agent_eval.metrics._goal_accuracy import GoalAccuracy
        from agent_eval.run._engine import Engine

        judge = OpenAIJudge("unused", base_url="http://127.0.0.1:9", api_key_env="NO_KEY")
        engine = Engine(metric=GoalAccuracy(), formatter=get_formatter("transcript@1"), judge=judge)
        limits = ReceiverLimits(
            idle_seconds=3600,
            after_root_seconds=3600,
            max_buffer_bytes=8 * 1024**3,
            max_body_bytes=64 * 1024 * 1024,
            sweep_seconds=3600,
        )
        durable = None
        if kind == "logged":
            import tempfile
            from pathlib import Path

            from agent_eval.live._ack_log import AckLog
            from agent_eval.live._durable import Durability

            log = AckLog.open(Path(tempfile.mkdtemp()) / "ack-log", max_bytes=16 * 1024**3)
            log.start("bench")
            durable = Durability(log, engine)
        receiver = Receiver(LiveScorer(engine, None), limits, durable=durable)
        port = await receiver.start("127.0.0.1", 0)
    print(port, flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps({"cpu": usage.ru_utime + usage.ru_stime, "maxrss_mib": usage.ru_maxrss / 1024}),
        flush=True,
    )


async def _post_all(port: int, bodies: list[bytes], concurrency: int, gzipped: bool) -> float:
    import aiohttp

    headers = {"Content-Type": "application/x-protobuf"}
    if gzipped:
        headers["Content-Encoding"] = "gzip"
    queue = list(reversed(bodies))
    url = f"http://127.0.0.1:{port}/v1/traces"
    async with aiohttp.ClientSession() as session:

        async def worker() -> None:
            while queue:
                body = queue.pop()
                async with session.post(url, data=body, headers=headers) as reply:
                    await reply.read()
                    if reply.status != 200:
                        raise RuntimeError(f"status {reply.status}: {await reply.text()}")

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - start


def _measure(kind: str, bodies: list[bytes], args: argparse.Namespace) -> dict[str, Any]:
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", kind],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    port = int(server.stdout.readline())
    wall = asyncio.run(_post_all(port, bodies, args.concurrency, args.gzip))
    server.stdin.write("stop\n")
    server.stdin.flush()
    stats = json.loads(server.stdout.readline())
    server.wait(30)
    return {"wall": wall, **stats}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--gzip", action="store_true")
    parser.add_argument("--serve", choices=["null", "receiver", "logged"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(_serve(args.serve))
        return
    bodies = _requests(args.requests, args.batch)
    if args.gzip:
        bodies = [gzip.compress(b, 1) for b in bodies]
    spans = args.requests * args.batch
    size = sum(map(len, bodies)) / 1024 / 1024
    print(f"{spans} spans in {args.requests} requests, {size:.1f} MiB", flush=True)
    results = {kind: _measure(kind, bodies, args) for kind in ("null", "receiver", "logged")}
    base = results["null"]
    for kind, r in results.items():
        rate = spans / r["wall"]
        print(
            f"{kind:>9}: {rate:>10,.0f} spans/s accepted  {r['wall']:6.2f} s wall  "
            f"x{r['wall'] / base['wall']:5.2f} of baseline  server cpu {r['cpu']:5.2f} s "
            f"({spans / max(r['cpu'], 1e-9):,.0f} spans/cpu-s)  peak RSS {r['maxrss_mib']:.0f} MiB",
            flush=True,
        )
    print(orjson.dumps({k: {**v, "spans": spans} for k, v in results.items()}).decode())


if __name__ == "__main__":
    main()
