"""Ingest throughput: OTLP/JSON decode and the whole pipeline against ``orjson.loads``.

Generates a Collector-style OTLP/JSON Lines file of realistic GenAI agent spans (v1.37
``gen_ai.input.messages`` replaying the growing history on every chat span, tool calls with
``execute_tool`` spans, an ``invoke_agent`` root and an HTTP client span per call), then measures,
each in a fresh process (best of ``--repeats``; the pipeline ``--pipeline-repeats``), in CPU
time so that other load on the machine does not skew the ratios:

- baseline: ``orjson.loads`` of every line (the floor for any Python JSON ingest);
- python floor: ``orjson.loads`` of every line plus one Python pass that visits every span and
  builds one plain dict of its attributes, key -> the AnyValue's inner value (no models, no
  checks): the least work any pure-Python ingest of these lines must do, so its ratio says how
  far below it a pure-Python pipeline could get at all;
- message floor: the python floor plus what any ingest that reads the conversation must add:
  ``orjson.loads`` of each span's JSON-string message attributes (``gen_ai.input.messages``,
  ``gen_ai.output.messages``), the replayed history read once (an input that extends its
  trace's previous input, text-wise, has only its new elements parsed, as
  :mod:`agent_eval.ingest.conventions._history_cache` does), one plain tuple per message part
  (role, part type, text) and the spans grouped by trace id (no models, no checks, no ids or
  times decoded): the least work any pure-Python ingest that reads the messages must do;
- decode: the ``otlp-json`` container, bytes -> SpanRecords;
- pipeline: ``ingest()`` end to end, bytes -> AgentTraces (decode + conventions + assembly);

and prints spans/s, each ratio to the baseline and to the python floor, and the peak RSS of
each process. Each child first ingests the file's first line, untimed: what the first call
imports (and compiles, when no bytecode is cached) is not ingest CPU.

    python bench/ingest.py [--spans 200000] [--turns 6] [--inflight 40] [--repeats 3]
        [--pipeline-repeats 1] [--profile]

``--turns`` sets the conversation length (each turn: a chat, an HTTP and a tool span); long
conversations show how ingest scales with the replayed history.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agent_eval.testing._otlp import export_request, span

BATCH = 512
"""Spans per line, like the Collector's batch processor default (8192 is its max)."""
SENTENCE = (
    "the flight to paris was rebooked because the customer asked for an aisle seat and a refund"
)
WORDS = SENTENCE.split()
MESSAGE_ATTRIBUTES = ("gen_ai.input.messages", "gen_ai.output.messages")
"""The JSON-string message attributes of GenAI semantic conventions v1.37 the generator writes."""
HISTORY_ATTRIBUTE = "gen_ai.input.messages"
"""The one that replays the conversation so far on every chat span."""


def _text(seed: int, words: int) -> str:
    return " ".join(WORDS[(seed * 7 + i) % len(WORDS)] for i in range(words))


def _conversation(conv: int, turns: int) -> list[dict[str, Any]]:
    """One conversation as one trace: root, and per turn a chat, an HTTP and a tool span."""
    trace_id = f"{conv + 1:032x}"
    root_id = f"{conv + 1:08x}00000000"
    t0 = 1_700_000_000_000_000_000 + conv * 10**12
    spans = [
        span(
            trace_id,
            root_id,
            "invoke_agent support",
            start=t0,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "support",
                "gen_ai.conversation.id": f"conv-{conv}",
            },
        )
    ]
    history: list[dict[str, Any]] = [
        {"role": "system", "parts": [{"type": "text", "content": _text(conv, 30)}]}
    ]
    for turn in range(turns):
        history.append({"role": "user", "parts": [{"type": "text", "content": _text(turn, 25)}]})
        call_id = f"call_{conv}_{turn}"
        call = {
            "role": "assistant",
            "parts": [
                {
                    "type": "tool_call",
                    "id": call_id,
                    "name": "lookup",
                    "arguments": {"booking": conv, "turn": turn},
                }
            ],
        }
        span_id = f"{conv + 1:08x}{turn + 1:04x}0001"
        start = t0 + (turn + 1) * 10**9
        spans.append(
            span(
                trace_id,
                span_id,
                "chat gpt-4o",
                kind=3,
                start=start,
                parent_span_id=root_id,
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-4o",
                    "gen_ai.conversation.id": f"conv-{conv}",
                    "gen_ai.usage.input_tokens": 100 + turn,
                    "gen_ai.usage.output_tokens": 20,
                    "gen_ai.input.messages": json.dumps(history),
                    "gen_ai.output.messages": json.dumps([call]),
                },
            )
        )
        spans.append(
            span(
                trace_id,
                f"{conv + 1:08x}{turn + 1:04x}0002",
                "POST",
                kind=3,
                start=start + 1000,
                parent_span_id=span_id,
                attributes={"http.request.method": "POST", "server.address": "api.openai.com"},
            )
        )
        result = _text(turn + conv, 20)
        spans.append(
            span(
                trace_id,
                f"{conv + 1:08x}{turn + 1:04x}0003",
                "execute_tool lookup",
                start=start + 5 * 10**8,
                parent_span_id=root_id,
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "lookup",
                    "gen_ai.tool.call.id": call_id,
                    "gen_ai.tool.call.result": result,
                },
            )
        )
        history += [
            call,
            {
                "role": "tool",
                "parts": [{"type": "tool_call_response", "id": call_id, "response": result}],
            },
        ]
    return spans


def _interleaved(conversations: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Spans of conversations in flight together, in the order a Collector writes them.

    Every conversation's turn ``n`` ends before any one's turn ``n + 1``, each turn's spans in
    end order (the HTTP span, then the chat span, then the tool span), and the root spans,
    which end last, come after the last turn.
    """
    out: list[dict[str, Any]] = []
    turns = max(len(c) for c in conversations) // 3
    for turn in range(turns):
        for spans in conversations:
            chat, http, tool = spans[1 + 3 * turn : 4 + 3 * turn]
            out += [http, chat, tool]
    out += [spans[0] for spans in conversations]
    return out


def generate(path: Path, n_spans: int, turns: int = 6, inflight: int = 1) -> int:
    """Write about ``n_spans`` spans as OTLP/JSON Lines; return the exact span count.

    ``inflight`` conversations are written interleaved (:func:`_interleaved`); 1 writes each
    conversation whole, in creation order.
    """
    written, conv, batch = 0, 0, []
    with path.open("wb") as out:
        while written < n_spans:
            group = [_conversation(conv + i, turns) for i in range(inflight)]
            spans = _interleaved(group) if inflight > 1 else group[0]
            conv += inflight
            written += len(spans)
            batch += spans
            while len(batch) >= BATCH:
                out.write(orjson.dumps(export_request(batch[:BATCH])) + b"\n")
                batch = batch[BATCH:]
        if batch:
            out.write(orjson.dumps(export_request(batch)) + b"\n")
    return written


def _warm_up(path: str) -> None:
    """Ingest the file's first line, untimed: what the first call imports is not ingest CPU.

    Containers and conventions are imported when first asked, so without this the first
    repetition pays their imports, and their compilation when no bytecode is cached
    (``PYTHONDONTWRITEBYTECODE``), which a tree with cached bytecode does not pay.
    """
    from agent_eval.ingest import ingest

    with open(path, "rb") as stream:
        first = stream.readline()
    with tempfile.TemporaryDirectory() as folder:
        warm = Path(folder) / "first.otlp.jsonl"
        warm.write_bytes(first)
        sum(1 for _ in ingest(warm))


def _measure(kind: str, path: str, repeats: int) -> dict[str, Any]:
    """Run one measurement in this (fresh) process."""
    from agent_eval.ingest import ingest
    from agent_eval.ingest.containers._otlp_json import OtlpJsonContainer

    def baseline() -> int:
        with open(path, "rb") as stream:
            return sum(len(orjson.loads(line)["resourceSpans"]) for line in stream)

    def spans_with_attributes() -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        """Each span of the file and one plain dict of its attributes (key -> inner value)."""
        with open(path, "rb") as stream:
            for line in stream:
                for resource_spans in orjson.loads(line)["resourceSpans"]:
                    for scope_spans in resource_spans["scopeSpans"]:
                        for one in scope_spans["spans"]:
                            attributes: dict[str, Any] = {}
                            for item in one.get("attributes", ()):
                                for inner in item["value"].values():  # the one value kind
                                    attributes[item["key"]] = inner
                            yield one, attributes

    def python_floor() -> int:
        return sum(1 for _ in spans_with_attributes())

    def message_floor() -> int:
        spans = 0
        traces: dict[str, list[Any]] = {}
        for one, attributes in spans_with_attributes():
            trace = traces.setdefault(one["traceId"], [""])
            parts = []
            for key in MESSAGE_ATTRIBUTES:
                raw = attributes.get(key)
                if raw is None:
                    continue
                if key == HISTORY_ATTRIBUTE:
                    body, trace[0] = trace[0], raw[:-1]
                    if body and raw.startswith(body):
                        raw = "[" + raw[len(body) + 1 :]
                for message in orjson.loads(raw):
                    role = message["role"]
                    for part in message["parts"]:
                        parts.append((role, part["type"], part.get("content")))
            trace.append((one["spanId"], attributes, parts))
            spans += 1
        return spans

    def decode() -> int:
        return sum(1 for _ in OtlpJsonContainer().read(path))

    def pipeline() -> int:
        run = ingest(path)
        conversations = sum(1 for _ in run)
        assert run.report.balanced
        return conversations

    fn = {
        "baseline": baseline,
        "pyfloor": python_floor,
        "msgfloor": message_floor,
        "decode": decode,
        "pipeline": pipeline,
    }[kind]
    _warm_up(path)
    best_cpu = best_wall = float("inf")
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        count = fn()
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"cpu": best_cpu, "wall": best_wall, "count": count, "peak_mib": peak_kib / 1024}


def _child(kind: str, path: Path, repeats: int) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, __file__, "--measure", kind, str(path), "--repeats", str(repeats)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def _profile(path: Path) -> None:
    import cProfile
    import pstats

    from agent_eval.ingest import ingest

    profiler = cProfile.Profile()
    profiler.enable()
    sum(1 for _ in ingest(path))
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=200_000)
    parser.add_argument("--turns", type=int, default=6, help="LLM calls per conversation")
    parser.add_argument(
        "--inflight",
        type=int,
        default=40,
        help="conversations in flight: written interleaved, as a busy Collector writes them",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pipeline-repeats", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="cProfile the pipeline once")
    parser.add_argument("--measure", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(_measure(args.measure[0], args.measure[1], args.repeats)))
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "spans.otlp.jsonl"
        n = generate(path, args.spans, args.turns, args.inflight)
        size = path.stat().st_size / 2**20
        print(
            f"generated {n} spans, {size:.0f} MiB of OTLP/JSON Lines ({BATCH} spans per line, "
            f"{args.turns} turns per conversation, {args.inflight} in flight)"
        )
        results = {
            kind: _child(kind, path, args.repeats if kind != "pipeline" else args.pipeline_repeats)
            for kind in ("baseline", "pyfloor", "msgfloor", "decode", "pipeline")
        }
        base, floor = results["baseline"]["cpu"], results["pyfloor"]["cpu"]
        print("best of repeats; CPU time (process_time), wall time in brackets")
        for kind, r in results.items():
            print(
                f"{kind:9} {r['cpu']:7.2f} s CPU ({r['wall']:7.2f} s wall)  "
                f"{n / r['cpu']:>9,.0f} spans/s  {r['cpu'] / base:5.2f}x orjson.loads  "
                f"{r['cpu'] / floor:5.2f}x python floor  peak RSS {r['peak_mib']:6.0f} MiB"
            )
        print(f"pipeline conversations: {results['pipeline']['count']}")
        if args.profile:
            _profile(path)


if __name__ == "__main__":
    main()
