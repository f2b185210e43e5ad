"""The report's agent views on 2,000 conversations: page size and browser load time.

Builds N conversations from the recorded fixtures (``fixtures/otel``, ingested: real span
trees with LLM calls, tool runs, agents and their times), each copy with its own id and times,
one ``ok`` result row and one rendering per conversation, and writes the report twice in the
same run: without the agent views (``build_report(..., agent_views=False)``: the page as it was
before them, the baseline) and with them (trajectories, tool failures, shapes). Prints each
page's size, build+render time, and the load time in headless Chromium (navigation start to
the end of the load event, median of 3 loads), and the ratios.

    python bench/report_agent_views.py [--conversations 2000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace
from agent_eval.ingest import ingest
from agent_eval.report._html import write_html
from agent_eval.report._model import ReportData, build_report
from agent_eval.run._artifacts import render_all

ROOT = Path(__file__).resolve().parents[1]
FORMATTER = "transcript@2"
_LOAD = (
    "(() => { const n = performance.getEntriesByType('navigation')[0];"
    " return n.loadEventEnd - n.startTime; })()"
)


def conversations(n: int) -> list[AgentTrace]:
    """``n`` copies of the fixtures' conversations, each with its own id and shifted times."""
    recorded = list(ingest([ROOT / "fixtures" / "otel"]))
    out = []
    for i in range(n):
        base = recorded[i % len(recorded)]
        shift = i * 10**9
        spans = tuple(
            s.model_copy(update={"start_ns": s.start_ns + shift, "end_ns": s.end_ns + shift})
            for s in base.spans
        )
        out.append(base.model_copy(update={"conversation_id": f"c{i}-{base.conversation_id}",
                                           "spans": spans}))  # fmt: skip
    return out


def rows(traces: list[AgentTrace]) -> list[MetricResult]:
    return [
        MetricResult(
            run_id="bench", conversation_id=t.conversation_id, metric="goal_accuracy@1",
            formatter=FORMATTER, formatter_fingerprint="f" * 64, prompt_sha256="a" * 64,
            judge_model="judge", started_at="2026-01-01T00:00:00Z", status="ok",
            verdict="1" if i % 4 else "0", score=1.0 if i % 4 else 0.0, reason="because",
            input_tokens=900, output_tokens=40, attempts=1,
        )
        for i, t in enumerate(traces)
    ]  # fmt: skip


def write(data_args: dict[str, object], agent: bool, path: Path) -> tuple[Path, float]:
    start = time.perf_counter()
    data: ReportData = build_report(**data_args, agent_views=agent)  # type: ignore[arg-type]
    write_html(data, path)
    return path, time.perf_counter() - start


def load_ms(page: Path) -> float:
    from agent_eval.testing._chromium import Chromium

    times = []
    with Chromium(width=1280, height=900) as browser:
        for _ in range(3):
            browser.open(page.as_uri(), settle=0.05)
            times.append(float(browser.evaluate(_LOAD)))
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--no-browser", action="store_true", help="sizes and times only")
    n = parser.parse_args().conversations
    no_browser = parser.parse_args().no_browser
    traces = conversations(n)
    results = rows(traces)
    texts = render_all(traces, [FORMATTER])
    args = {"results": results, "renderings": texts,
            "traces": {t.conversation_id: t for t in traces}}  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        before, t_before = write(args, False, Path(tmp) / "before.html")
        after, t_after = write(args, True, Path(tmp) / "after.html")
        size_b, size_a = before.stat().st_size, after.stat().st_size
        print(f"{n} conversations, {sum(len(t.spans) for t in traces)} spans")
        print(f"page without the agent views (baseline): {size_b / 1e6:6.2f} MB, {t_before:.2f} s")
        print(f"page with the agent views:               {size_a / 1e6:6.2f} MB, {t_after:.2f} s")
        print(f"size ratio {size_a / size_b:.2f}x, build time ratio {t_after / t_before:.2f}x")
        if not no_browser:
            load_b, load_a = load_ms(before), load_ms(after)
            print(f"Chromium load (median of 3): baseline {load_b:.0f} ms, with the views "
                  f"{load_a:.0f} ms, ratio {load_a / load_b:.2f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
