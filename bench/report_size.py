"""HTML report size and time for a big compare: N conversations x 3 formatters.

Builds N synthetic conversations (a user question, an assistant tool call, its result, an
answer, a follow-up and a final answer; about 2 KB each), renders each with three formatters,
makes one ok result row per (conversation, formatter), and writes the report. Prints the page
size against the baseline measured in the same run: the bytes of the run files the page shows
(``results.jsonl`` + ``renderings.jsonl`` + ``conversations.jsonl``), plus the time to build and
render the page and the peak RSS of the process.

    python bench/report_size.py [--conversations 5000]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace, AssistantMessage, ToolCall, ToolMessage, UserMessage
from agent_eval.report._html import write_html
from agent_eval.report._model import build_report
from agent_eval.run._artifacts import render_all, write_conversations, write_renderings

FORMATTERS = ("ragas-pretty@1", "transcript@1", "json@1")


def traces(n: int) -> list[AgentTrace]:
    out = []
    for i in range(n):
        city = f"City{i}"
        out.append(
            AgentTrace(
                conversation_id=f"conv-{i}",
                messages=(
                    UserMessage(content=f"What is the weather in {city} today? " * 4),
                    AssistantMessage(
                        tool_calls=(
                            ToolCall(id=f"t{i}", name="get_weather", arguments={"city": city}),
                        )
                    ),
                    ToolMessage(
                        content=f'{{"city": "{city}", "forecast": "sunny, 21C"}} ' * 6,
                        tool_call_id=f"t{i}",
                    ),
                    AssistantMessage(content=f"It is sunny and 21C in {city}. " * 6),
                    UserMessage(content="Thanks! And tomorrow? " * 3),
                    AssistantMessage(content="Tomorrow looks the same, with a light breeze. " * 5),
                ),
            )
        )
    return out


def rows(all_traces: list[AgentTrace]) -> list[MetricResult]:
    return [
        MetricResult(
            run_id="bench",
            conversation_id=t.conversation_id,
            metric="goal_accuracy@1",
            formatter=f,
            formatter_fingerprint="f" * 64,
            prompt_sha256="a" * 64,
            judge_model="gpt-4o-mini",
            status="ok",
            verdict="1" if k % 4 else "0",
            score=1.0 if k % 4 else 0.0,
            reason="The user got the forecast they asked for. " * 2,
            user_goal="Learn the weather today and tomorrow.",
            end_state="Gave both forecasts.",
            input_tokens=900,
            output_tokens=60,
            attempts=1,
            latency_ms=850.0,
            started_at="2026-01-01T00:00:00Z",
        )
        for k, t in enumerate(all_traces)
        for f in FORMATTERS
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=5000)
    args = parser.parse_args()
    all_traces = traces(args.conversations)
    results = rows(all_traces)
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp)
        renderings = render_all(all_traces, FORMATTERS)
        write_renderings(run, renderings)
        write_conversations(run, all_traces)
        (run / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in results))
        baseline = sum(
            (run / name).stat().st_size
            for name in ("results.jsonl", "renderings.jsonl", "conversations.jsonl")
        )
        start = time.perf_counter()
        data = build_report(
            results, renderings=renderings, traces={t.conversation_id: t for t in all_traces}
        )
        built = time.perf_counter() - start
        page = write_html(data, run / "report.html")
        rendered = time.perf_counter() - start - built
        size = page.stat().st_size
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"{args.conversations} conversations x {len(FORMATTERS)} formatters")
    print(f"run files the page shows (baseline): {baseline / 1e6:.1f} MB")
    print(f"report: {size / 1e6:.1f} MB = {size / baseline:.2f}x the baseline")
    print(f"build {built:.1f} s, render {rendered:.1f} s, peak RSS {peak:.0f} MiB")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
