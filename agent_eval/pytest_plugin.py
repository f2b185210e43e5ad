"""The agent-eval pytest plugin: score the spans your agent emits in a test, fail on a bad verdict.

Registered on the ``pytest11`` entry point, so pytest loads it wherever otel-agent-eval is
installed; it imports the SDK and the judge only when a test uses ``agent_spans``.

Usage::

    def test_books_a_table(agent_spans):
        run_my_agent("Book a table for two at 8pm")  # instrumented with OpenTelemetry
        agent_spans.assert_score(min_score=1.0)  # goal accuracy of every conversation

    @pytest.mark.agent_eval(metric="goal_accuracy", min_score=1.0)
    def test_refund(agent_spans):
        run_my_agent("Refund order A-1042")  # scored after the test body, same rule

- ``agent_spans`` collects the finished spans (and GenAI event log records) of the code under
  test in process, through :func:`agent_eval.ingest.sdk.install` on the global SDK
  ``TracerProvider`` (one is set when none is; collection is cleared before each test).
- ``assert_score`` / the ``agent_eval`` marker score each collected conversation with the
  metric and fail when one is not ``ok`` or scores below ``min_score``; the failure message
  shows the verdict, the judge's reason, the stage outputs and the rendering the judge saw.
- The judge: ``--agent-eval-judge MODEL`` / ``--agent-eval-base-url URL`` /
  ``--agent-eval-api-key-env VAR``, else the ini keys ``agent_eval_judge``,
  ``agent_eval_base_url``, ``agent_eval_api_key_env``, ``agent_eval_formatter``, else the
  environment (``AGENT_EVAL_JUDGE``, ``AGENT_EVAL_BASE_URL``, then the openai client's own
  ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``).
- ``--agent-eval-out DIR`` writes the run directory of each test's scoring to
  ``DIR/<test id>/`` (the test's node id, other characters than letters, digits, ``.``, ``-``
  and ``_`` as ``_``), as ``agent-eval score --out`` writes one (results, run record,
  ``conversations.jsonl``, ``renderings.jsonl``), through the same run session
  (:class:`~agent_eval.run.session.RunSession`), so ``agent-eval report`` shows it.
- ``--agent-eval-report PATH`` writes one HTML report of every result of the session at its end.
  Under pytest-xdist each worker stores its results in ``PATH.parts/<worker>/`` and the
  controller writes the report once all workers finished.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import threading
from collections.abc import Coroutine, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

if TYPE_CHECKING:
    from agent_eval.ingest.sdk import Collector
    from agent_eval.result import MetricResult
    from agent_eval.trace import AgentTrace

__all__ = ["AgentSpans", "JudgeSettings", "agent_spans"]

T = TypeVar("T")
_COLLECTOR = pytest.StashKey["Collector"]()
_RECORDER = pytest.StashKey["_Recorder"]()
_INI = {
    "judge": ("agent_eval_judge", "AGENT_EVAL_JUDGE"),
    "base_url": ("agent_eval_base_url", "AGENT_EVAL_BASE_URL"),
    "api_key_env": ("agent_eval_api_key_env", "AGENT_EVAL_API_KEY_ENV"),
    "formatter": ("agent_eval_formatter", "AGENT_EVAL_FORMATTER"),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``--agent-eval-*`` options and ``agent_eval_*`` ini keys."""
    group = parser.getgroup("agent-eval", "agent-eval: score agent spans with an LLM judge")
    group.addoption("--agent-eval-judge", help="Judge model (ini agent_eval_judge).")
    group.addoption("--agent-eval-base-url", help="OpenAI-compatible judge endpoint.")
    group.addoption("--agent-eval-api-key-env", help="Env var holding the judge's key.")
    group.addoption("--agent-eval-formatter", help="Formatter NAME@V (default transcript@2).")
    group.addoption(
        "--agent-eval-report", metavar="PATH", help="Write the session's HTML report to PATH."
    )
    group.addoption(
        "--agent-eval-out",
        metavar="DIR",
        help="Write each scored test's run directory to DIR/<test id>/ (as agent-eval score).",
    )
    parser.addini("agent_eval_judge", "Judge model for agent_spans scoring.")
    parser.addini("agent_eval_base_url", "OpenAI-compatible judge endpoint URL.")
    parser.addini("agent_eval_api_key_env", "Env var holding the judge's key.")
    parser.addini("agent_eval_formatter", "Formatter NAME@V for agent_spans scoring.")


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker; set up the report recorder when ``--agent-eval-report`` is given."""
    config.addinivalue_line(
        "markers",
        "agent_eval(metric='goal_accuracy', min_score=1.0, reference=None): score the spans "
        "collected by the agent_spans fixture after the test and fail below min_score.",
    )
    report = config.getoption("agent_eval_report", None)
    if report:
        workerinput: Mapping[str, Any] | None = getattr(config, "workerinput", None)
        worker = str(workerinput["workerid"]) if workerinput else "main"
        config.stash[_RECORDER] = _Recorder(Path(report), worker, controller=workerinput is None)


@dataclass(frozen=True)
class JudgeSettings:
    """The judge configuration of the session.

    Attributes:
        judge: The judge model; ``None`` when none is configured.
        base_url: The endpoint (``None``: the openai client's ``OPENAI_BASE_URL``).
        api_key_env: The variable holding the key.
        formatter: The formatter identity.

    """

    judge: str | None
    base_url: str | None
    api_key_env: str
    formatter: str

    @classmethod
    def from_config(cls, config: pytest.Config) -> JudgeSettings:
        """Option, then ini key, then environment variable (see the module docstring)."""
        from agent_eval.config import DEFAULT_FORMATTER

        values: dict[str, str | None] = {}
        for name, (ini, env) in _INI.items():
            value = config.getoption(f"agent_eval_{name}", None) or config.getini(ini)
            values[name] = str(value) if value else os.environ.get(env) or None
        return cls(
            judge=values["judge"],
            base_url=values["base_url"],
            api_key_env=values["api_key_env"] or "OPENAI_API_KEY",
            formatter=values["formatter"] or DEFAULT_FORMATTER,
        )


class _Recorder:
    """Results of one process, stored for the session's report."""

    def __init__(self, path: Path, worker: str, *, controller: bool) -> None:
        self.path, self.worker, self.controller = path, worker, controller
        self.parts = path.with_name(path.name + ".parts")
        self.run_id = f"pytest-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{worker}"
        self.renderings: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    @property
    def directory(self) -> Path:
        return self.parts / self.worker

    def add(self, results: list[MetricResult], renderings: Mapping[tuple[str, str], str]) -> None:
        from agent_eval.run.store import ResultStore

        with self._lock, ResultStore(self.directory) as store:
            for result in results:
                store.add(result)
            self.renderings.update(renderings)

    def flush(self) -> None:
        from agent_eval.report.renderings import write_renderings

        if self.renderings:
            write_renderings(self.directory, self.renderings)

    def write_report(self) -> Path | None:
        from agent_eval.report.html import write_html
        from agent_eval.report.model import build_report
        from agent_eval.report.renderings import read_renderings
        from agent_eval.run.store import load_results

        if not self.parts.is_dir():
            return None
        results: list[MetricResult] = []
        renderings: dict[tuple[str, str], str] = {}
        for part in sorted(p for p in self.parts.iterdir() if p.is_dir()):
            results += load_results(part)
            renderings.update(read_renderings(part))
        path = write_html(
            build_report(results, renderings=renderings, title="agent-eval: pytest"), self.path
        )
        shutil.rmtree(self.parts, ignore_errors=True)
        return path


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Store this process's renderings; the controller writes the HTML report."""
    recorder = session.config.stash.get(_RECORDER, None)
    if recorder is None:
        return
    recorder.flush()
    if recorder.controller:
        path = recorder.write_report()
        if path is not None:
            reporter = session.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_line(f"agent-eval: wrote {path}")


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion, in a thread when this thread already runs an event loop."""
    from agent_eval.run import event_loop

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return event_loop.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = event_loop.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


class AgentSpans:
    """The spans collected during one test, and scoring them (the ``agent_spans`` fixture).

    Args:
        collector: The session's in-process collector (cleared for this test).
        settings: The judge configuration.
        recorder: Where results go for the HTML report, when ``--agent-eval-report`` is set.
        test_id: The test's node id (recorded as the run's label).
        out: Where run directories go (``--agent-eval-out``); ``None``: none is written.

    """

    def __init__(
        self,
        collector: Collector,
        settings: JudgeSettings,
        recorder: _Recorder | None = None,
        test_id: str = "",
        out: Path | None = None,
    ) -> None:
        self.collector, self.settings = collector, settings
        self.recorder, self.test_id = recorder, test_id
        self.out = out

    def traces(self) -> list[AgentTrace]:
        """The conversations collected so far in this test."""
        return self.collector.traces().collect()

    def score(
        self, *, metric: str = "goal_accuracy", reference: str | None = None
    ) -> list[MetricResult]:
        """Score every collected conversation; returns one result per conversation.

        Args:
            metric: A registered metric name.
            reference: A reference goal for every conversation (selects the reference variant).

        Raises:
            pytest.UsageError: no judge is configured.

        """
        traces = self.traces()
        return _run(self._score(traces, metric, reference))[0] if traces else []

    async def _score(
        self, traces: list[AgentTrace], metric_name: str, reference: str | None
    ) -> tuple[list[MetricResult], dict[tuple[str, str], str]]:
        from agent_eval.config import ScoreConfig
        from agent_eval.formatting.registry import get_formatter
        from agent_eval.judges.openai_judge import OpenAIJudge
        from agent_eval.metrics.spec import build_metric
        from agent_eval.run.session import RunSession

        if not self.settings.judge:
            raise pytest.UsageError(
                "agent-eval: no judge configured; pass --agent-eval-judge MODEL (and "
                "--agent-eval-base-url URL), set agent_eval_judge in the ini file, or "
                "AGENT_EVAL_JUDGE in the environment"
            )
        chosen = build_metric(metric_name, with_reference=bool(reference))
        formatter = get_formatter(self.settings.formatter)
        judge = OpenAIJudge(
            self.settings.judge,
            base_url=self.settings.base_url,
            api_key_env=self.settings.api_key_env,
        )
        session = RunSession(
            ScoreConfig(out=self.run_directory(), cache="off", max_context_tokens=None),
            judge=judge,
            model=judge.model,
            metrics=[chosen],
            formatter=formatter,
            run_id=self.recorder.run_id if self.recorder else None,
            write=self.out is not None,
            keep_results=True,
            keep_interrupted=False,
        )
        try:
            session.read(
                traces,
                references={t.conversation_id: reference for t in traces} if reference else {},
            )
            summary = (await session.run())[0]
        finally:
            session.close()
        renderings = {(t.conversation_id, formatter.identity): formatter.render(t) for t in traces}
        results = list(summary.results)
        if self.recorder is not None:
            self.recorder.add(results, renderings)
        return results, renderings

    def run_directory(self) -> Path | None:
        """``DIR/<test id>/`` with ``--agent-eval-out DIR``; ``None`` without it."""
        if self.out is None:
            return None
        return self.out / (re.sub(r"[^A-Za-z0-9_.-]+", "_", self.test_id) or "test")

    def assert_score(
        self,
        min_score: float = 1.0,
        *,
        metric: str = "goal_accuracy",
        reference: str | None = None,
    ) -> list[MetricResult]:
        """Score, then fail unless every conversation is ``ok`` with ``score >= min_score``.

        Returns the results when the test passes the gate.

        Raises:
            pytest.fail.Exception: no conversation was collected, or one fails the gate; the
                message shows verdict, reason, stage outputs and the judge's rendering.

        """
        traces = self.traces()
        if not traces:
            pytest.fail(
                "agent-eval: no conversation was collected; is the code under test "
                "instrumented, and does it use the global TracerProvider?",
                pytrace=False,
            )
        results, renderings = _run(self._score(traces, metric, reference))
        failing = [r for r in results if r.status != "ok" or (r.score or 0.0) < min_score]
        if failing:
            pytest.fail(_failure(failing, renderings, min_score), pytrace=False)
        return results


def _failure(
    failing: list[MetricResult], renderings: Mapping[tuple[str, str], str], min_score: float
) -> str:
    parts = []
    for r in failing:
        head = (
            f"agent-eval: {r.metric} on conversation {r.conversation_id!r}: status {r.status}"
            + (
                f", verdict {r.verdict!r}, score {r.score} < {min_score}"
                if r.status == "ok"
                else ""
            )
            + (f" ({r.error_type}: {r.error_message})" if r.error_type else "")
        )
        lines = [head]
        if r.reason:
            lines.append(f"  reason: {r.reason}")
        if r.user_goal is not None:
            lines.append(f"  user goal: {r.user_goal}")
        if r.end_state is not None:
            lines.append(f"  end state: {r.end_state}")
        lines.append(f"  judge: {r.judge_model}, formatter {r.formatter}")
        rendering = renderings.get((r.conversation_id, r.formatter))
        if rendering is not None:
            lines.append("  what the judge saw:")
            lines += [f"    | {line}" for line in rendering.splitlines()]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _collector(config: pytest.Config) -> Collector:
    found = config.stash.get(_COLLECTOR, None)
    if found is None:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider

        from agent_eval.ingest.sdk import install

        if not isinstance(trace.get_tracer_provider(), TracerProvider):
            trace.set_tracer_provider(TracerProvider())
        found = config.stash[_COLLECTOR] = install()
    return found


def _out(config: pytest.Config) -> Path | None:
    out = config.getoption("agent_eval_out", None)
    return Path(out) if out else None


@pytest.fixture
def agent_spans(request: pytest.FixtureRequest) -> Iterator[AgentSpans]:
    """The spans the code under test emits during this test (see the module docstring)."""
    collector = _collector(request.config)
    collector.clear()
    yield AgentSpans(
        collector,
        JudgeSettings.from_config(request.config),
        request.config.stash.get(_RECORDER, None),
        request.node.nodeid,
        _out(request.config),
    )
    collector.clear()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """After a test marked ``agent_eval`` passed, score its spans and fail below the gate."""
    result = yield
    marker = item.get_closest_marker("agent_eval")
    if marker is not None:
        spans = getattr(item, "funcargs", {}).get("agent_spans")
        if not isinstance(spans, AgentSpans):
            pytest.fail("@pytest.mark.agent_eval needs the agent_spans fixture", pytrace=False)
        spans.assert_score(**marker.kwargs)
    return result
