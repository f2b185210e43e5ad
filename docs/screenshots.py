"""Regenerate the screenshots of the HTML report (docs/report.md) from the bundled fixtures.

    .venv/bin/python docs/screenshots.py            # writes docs/img/report-*.png
    .venv/bin/python docs/screenshots.py --out DIR  # elsewhere

What it does, all offline: starts agent-eval's fake OpenAI-compatible judge
(:class:`agent_eval.testing.FakeModelServer`) with scripted answers, runs the real CLI on
``fixtures/otel/`` (``compare`` of two formatters with ``fixtures/labels.jsonl``, and
``stability`` with 3 repeats, and ``score`` twice on the fixtures plus a recorded agent run
with a handoff and a failed tool call, ``tests/report/agent_run.py``, for the agent's views and
their history), writes the reports with ``agent-eval report``, and photographs parts of them in
headless Chromium (:mod:`agent_eval.testing._chromium`). The judge's answers are
scripted from the fixture scenarios (they are not a model's judgement): the restaurant and
flight conversations fail, the refund conversation fails under ``json@1`` only (a flip), the
currency conversations get an invalid verdict under ``json@1`` (error rows with their raw
replies), and the stability repeats disagree on the weather conversations.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from agent_eval.report._model import anchor
from agent_eval.testing import FakeModelServer, InvalidVerdict, Structured
from agent_eval.testing._chromium import Chromium
from agent_eval.testing._recording import RecordedRequest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "report"))
import agent_run  # noqa: E402  (the recorded agent run the report's tests use)

_MAIN = "from agent_eval.cli import main; main()"

SCENARIOS = {  # keyword in the conversation -> (goal, end state, verdict)
    "Paris": ("Learn the weather in Paris and in Rome.", "Gave both forecasts.", "1"),
    "Luigi": ("Book a table for 4 at Luigi's at 8pm.", "No table at 8pm; nothing booked.", "0"),
    "A-1042": ("Refund order A-1042 (broken lamp).", "Refund issued.", "1"),
    "JPY": ("Convert 250 USD to EUR and JPY.", "Gave both amounts.", "1"),
    "LH401": ("Move flight LH401 to 13 May.", "The change failed with an error.", "0"),
}


def _scenario(text: str) -> tuple[str, str, str]:
    return next((v for k, v in SCENARIOS.items() if k in text), ("(unknown)", "(unknown)", "1"))


class Judge:
    """Scripted judge replies keyed on the conversation's content (see the module docstring).

    Stage 1 (``GoalAndOutcome``) sees the rendered conversation, so it tells the formatters
    apart (``json@1`` renders ``"role"`` keys); stage 2 (``OutcomeComparison``) sees only the
    goal and end state, so its answer is keyed on stage 1's words.
    """

    def __init__(self, seed: int = 7) -> None:
        self.random = random.Random(seed)

    def goal(self, request: RecordedRequest) -> Structured:
        """Stage 1: the scenario's goal and end state."""
        text = request.text
        goal, end, _ = _scenario(text)
        if '"role"' in text and "A-1042" in text:
            end = "A refund was requested; no confirmation is shown."
        if '"role"' in text and "JPY" in text:
            end = "Amounts given; the tool results are unreadable."
        return Structured({"user_goal": goal, "end_state": end})

    def verdict(self, request: RecordedRequest) -> Any:
        """Stage 2: the scenario's verdict, with the scripted exceptions."""
        text = request.text
        goal, end, verdict = _scenario(text)
        if "unreadable" in text:
            return InvalidVerdict("yes")
        if "no confirmation" in text:
            return Structured(
                {"reason": "No confirmation id: the refund may not exist.", "verdict": "0"}
            )
        if "Paris" in text and self.random.random() < 0.35:
            return Structured(
                {"reason": "Only one city's forecast is clearly given.", "verdict": "0"}
            )
        return Structured({"reason": f"Wanted: {goal} Outcome: {end}", "verdict": verdict})


def _cli(*args: str) -> None:
    installed = Path(sys.executable).with_name("agent-eval")
    program = [str(installed)] if installed.exists() else [sys.executable, "-c", _MAIN]
    done = subprocess.run([*program, *args], capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode not in (0, 1):  # 1: a gate failed or something errored; still a run
        sys.exit(f"agent-eval {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")


def _agent_runs(work: Path, base_url: str) -> Path:
    """Two runs of ``score`` on the fixtures and the agent run, beside each other; the later."""
    inputs = work / "agent-inputs"
    inputs.mkdir()
    agent_run.write(inputs / "flight-change.otlp.json")
    judge = ["--judge", "fake-judge", "--base-url", base_url, "--no-cache"]
    for name in ("1-monday", "2-tuesday"):
        _cli("score", "fixtures/otel/", str(inputs), "--formatter", "transcript@1", *judge,
             "--out", str(work / "agent-runs" / name))  # fmt: skip
    return work / "agent-runs" / "2-tuesday"


def _runs(work: Path, base_url: str) -> tuple[Path, Path]:
    judge = ["--judge", "fake-judge", "--base-url", base_url, "--no-cache"]
    cmp_dir, st_dir = work / "cmp", work / "st"
    fixtures, labels = "fixtures/otel/", "fixtures/labels.jsonl"  # relative to ROOT
    _cli("compare", fixtures, "--formatters", "transcript@1,json@1", *judge, "--labels", labels,
         "--out", str(cmp_dir))  # fmt: skip
    _cli("stability", fixtures, "--repeats", "3", "--formatter", "transcript@1", *judge,
         "--out", str(st_dir))  # fmt: skip
    return cmp_dir, st_dir


def main(argv: list[str] | None = None) -> int:
    """Write the screenshots; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = parser.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    scripted = Judge()
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as server:
        server.add_rule(scripted.goal, schema="GoalAndOutcome")
        server.add_rule(scripted.verdict, schema="OutcomeComparison")
        cmp_dir, st_dir = _runs(Path(tmp), server.base_url)
        agent_dir = _agent_runs(Path(tmp), server.base_url)
        agent_html = Path(tmp) / "agent.html"
        _cli("report", str(agent_dir), "-o", str(agent_html),
             "--title", "agent-eval report: the agent's views")  # fmt: skip
        cmp_html, st_html = Path(tmp) / "compare.html", Path(tmp) / "stability.html"
        _cli("report", str(cmp_dir), "--html", str(cmp_html), "--labels", "fixtures/labels.jsonl",
             "--title", "agent-eval report: transcript@1 vs json@1 on the fixtures")  # fmt: skip
        _cli("report", str(st_dir), "--html", str(st_html),
             "--title", "agent-eval report: stability over 3 repeats")  # fmt: skip
        with Chromium(width=1360, height=900) as browser:
            shots = [
                (cmp_html.as_uri(), "#summary-and-plots", "report-summary.png"),
                (cmp_html.as_uri() + "?agreement=disagree", "#results-view", "report-results.png"),
                (
                    cmp_html.as_uri() + "#" + anchor("oi-openai/refund"),
                    "section.conversation:target",
                    "report-conversation.png",
                ),
                (
                    cmp_html.as_uri() + "#" + anchor("oi-openai/currency"),
                    "section.conversation:target .verdicts",
                    "report-error.png",
                ),
                (st_html.as_uri(), "#stability-view", "report-stability.png"),
                (agent_html.as_uri(), "#agent-view", "report-agent.png"),
                (
                    agent_html.as_uri() + "#" + anchor(agent_run.CONVERSATION),
                    "section.conversation:target .trajectory",
                    "report-trajectory.png",
                ),
                (agent_html.as_uri(), "#conversations-view", "report-conversations.png"),
            ]
            for url, selector, name in shots:
                browser.open(url)
                if errors := browser.console_errors():
                    sys.exit(f"{url}: the page's script failed: {errors}")
                path = browser.screenshot(out / name, selector=selector)
                print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
