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
  test in process, through :func:`agent_eval.ingest._sdk.install` on the global SDK
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
  (:class:`~agent_eval.run._session.RunSession`), so ``agent-eval report`` shows it.
- In CI (docs/testing.md): a configuration error (no judge, an unknown metric, formatter or
  marker keyword) stops the session with one ``ERROR: agent-eval: ...`` line and exit code 4;
  a judge that cannot be reached makes the test an error, not a failure (skipped with
  ``--agent-eval-skip-unreachable`` / ini ``agent_eval_skip_unreachable``); failure messages,
  run ids and run records name the test's node id.
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
from collections.abc import Coroutine, Generator, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

if TYPE_CHECKING:
    from agent_eval._result import MetricResult
    from agent_eval._trace import AgentTrace
    from agent_eval.formatting._base import Formatter
    from agent_eval.ingest._sdk import Collector
    from agent_eval.judges._base import Judge
    from agent_eval.metrics._base import Metric

__all__ = ["AgentSpans", "JudgeSettings", "JudgeUnreachable", "agent_spans"]

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
        "--agent-eval-skip-unreachable",
        action="store_true",
        default=None,
        help="Skip a test whose judge cannot be reached (default: the test errors).",
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
    parser.addini(
        "agent_eval_skip_unreachable",
        "Skip (instead of error) a test whose judge cannot be reached.",
        type="bool",
        default=False,
    )


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
        skip_unreachable: Skip a test whose judge cannot be reached (else it errors).

    """

    judge: str | None
    base_url: str | None
    api_key_env: str
    formatter: str
    skip_unreachable: bool = False

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
            skip_unreachable=bool(
                config.getoption("agent_eval_skip_unreachable", None)
                or config.getini("agent_eval_skip_unreachable")
            ),
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
        from agent_eval.run._store import ResultStore

        with self._lock, ResultStore(self.directory) as store:
            for result in results:
                store.add(result)
            self.renderings.update(renderings)

    def flush(self) -> None:
        from agent_eval.run._artifacts import write_renderings

        if self.renderings:
            write_renderings(self.directory, self.renderings)

    def write_report(self) -> Path | None:
        from agent_eval.report._html import write_html
        from agent_eval.report._model import build_report
        from agent_eval.run._artifacts import read_renderings
        from agent_eval.run._store import load_results

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
    from agent_eval.run import _event_loop as event_loop

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False  # run outside the handler: no "no running event loop" context chained
    else:
        running = True
    if not running:
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
            pytest.exit.Exception: a configuration error (no judge configured, an unknown
                metric or formatter): the session stops with that one line (exit code 4).

        """
        traces = self.traces()
        if not traces:
            return []
        return _run(self._score(traces, _plan_or_stop(self.settings, metric, reference)))[0]

    async def _score(
        self, traces: list[AgentTrace], plan: _Plan
    ) -> tuple[list[MetricResult], dict[tuple[str, str], str]]:
        from agent_eval.config import ScoreConfig
        from agent_eval.run._session import RunSession

        session = RunSession(
            ScoreConfig(out=self.run_directory(), cache="off", max_context_tokens=None),
            judge=plan.judge,
            model=plan.judge.model,
            metrics=[plan.metric],
            formatter=plan.formatter,
            run_id=self.recorder.run_id if self.recorder else self.run_id(),
            write=self.out is not None,
            record={"pytest": {"test": self.test_id}},
            keep_results=True,
            keep_interrupted=False,
        )
        try:
            session.read(
                traces,
                references={t.conversation_id: plan.reference for t in traces}
                if plan.reference
                else {},
            )
            summary = (await session.run())[0]
        finally:
            session.close()
        formatter = plan.formatter
        renderings = {(t.conversation_id, formatter.identity): formatter.render(t) for t in traces}
        results = list(summary.results)
        if self.recorder is not None:
            self.recorder.add([_named(r, self.test_id) for r in results], renderings)
        return results, renderings

    def run_id(self) -> str:
        """The run id of this test's scoring: ``pytest-<UTC time>-<test id>`` (names the test).

        With ``--agent-eval-report`` the session's one run id is used instead (one report).
        """
        return f"pytest-{datetime.now(UTC):%Y%m%dT%H%M%S%fZ}-{_safe(self.test_id)}"

    def run_directory(self) -> Path | None:
        """``DIR/<test id>/`` with ``--agent-eval-out DIR``; ``None`` without it."""
        if self.out is None:
            return None
        return self.out / (_safe(self.test_id) or "test")

    def assert_score(
        self,
        min_score: float = 1.0,
        *,
        metric: str = "goal_accuracy",
        reference: str | None = None,
    ) -> list[MetricResult]:
        """Score, then fail unless every conversation is ``ok`` with ``score >= min_score``.

        Returns the results when the test passes the gate. A conversation the judge could not
        be reached for (``judge_unavailable``) is not the agent's failure: when no other
        conversation fails the gate, the test is reported as an error (or skipped, with
        ``--agent-eval-skip-unreachable``).

        Raises:
            pytest.fail.Exception: no conversation was collected, or one fails the gate; the
                message names the test and shows verdict, reason, stage outputs and the
                judge's rendering.
            JudgeUnreachable: the judge could not be reached (a test error).
            pytest.skip.Exception: the same, with ``--agent-eval-skip-unreachable``.
            pytest.exit.Exception: a configuration error; the session stops (exit code 4).

        """
        traces = self.traces()
        if not traces:
            pytest.fail(
                f"agent-eval ({self.test_id}): no conversation was collected; is the code "
                "under test instrumented, and does it use the global TracerProvider?",
                pytrace=False,
            )
        plan = _plan_or_stop(self.settings, metric, reference)
        results, renderings = _run(self._score(traces, plan))
        unreachable = [r for r in results if _unreachable(r)]
        failing = [
            r
            for r in results
            if not _unreachable(r) and (r.status != "ok" or (r.score or 0.0) < min_score)
        ]
        if failing:
            pytest.fail(_failure(failing, renderings, min_score, self.test_id), pytrace=False)
        if unreachable:
            message = _unreachable_message(unreachable, len(results), self.test_id)
            if self.settings.skip_unreachable:
                pytest.skip(message)
            raise JudgeUnreachable(message)
        return results


def _safe(test_id: str) -> str:
    """``test_id`` with other characters than letters, digits, ``.``, ``-``, ``_`` as ``_``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", test_id)


class JudgeUnreachable(Exception):
    """The judge could not be reached for a test's conversations: the test errors, not fails.

    Raised by :meth:`AgentSpans.assert_score` (and the ``agent_eval`` marker); the plugin
    reports the test as ``ERROR`` with this one-line message, so CI does not blame the agent.
    """


_UNREACHABLE = "agent_eval_unreachable"
"""The attribute marking the report of a test whose judge could not be reached."""
_MARKER_KEYS = frozenset({"metric", "min_score", "reference"})
_NO_JUDGE = (
    "no judge configured; pass --agent-eval-judge MODEL (and --agent-eval-base-url URL), "
    "set agent_eval_judge in the ini file, or AGENT_EVAL_JUDGE in the environment"
)


@dataclass(frozen=True)
class _Plan:
    """What one scoring needs, built (and so checked) before any conversation is read."""

    metric: Metric
    formatter: Formatter[Any]
    judge: Judge
    reference: str | None


def _plan(settings: JudgeSettings, metric_name: str, reference: str | None) -> _Plan:
    """The metric, formatter and judge of one scoring.

    Raises:
        AgentEvalError: no judge configured, or a bad metric, formatter or judge setting.

    """
    from agent_eval.errors import JudgeNotConfiguredError
    from agent_eval.formatting._registry import get_formatter
    from agent_eval.judges._openai_judge import OpenAIJudge
    from agent_eval.metrics._spec import build_metric

    if not settings.judge:
        raise JudgeNotConfiguredError(_NO_JUDGE)
    metric = build_metric(metric_name, with_reference=bool(reference))
    formatter = get_formatter(settings.formatter)
    judge = OpenAIJudge(
        settings.judge, base_url=settings.base_url, api_key_env=settings.api_key_env
    )
    return _Plan(metric, formatter, judge, reference)


def _plan_or_stop(settings: JudgeSettings, metric_name: str, reference: str | None) -> _Plan:
    """:func:`_plan`; a configuration error ends the session on pytest's usage-error path."""
    from agent_eval.errors import AgentEvalError

    try:
        return _plan(settings, metric_name, reference)
    except AgentEvalError as exc:
        error = exc
    # outside the handler, so that nothing is chained onto the one line pytest prints
    pytest.exit(f"agent-eval: {error}", returncode=pytest.ExitCode.USAGE_ERROR)


def _unreachable(result: MetricResult) -> bool:
    """Whether the row errored because the judge could not be reached (not the agent)."""
    from agent_eval.errors import JudgeTransportError

    return result.status == "error" and result.error_type == JudgeTransportError.error_type


def _unreachable_message(unreachable: list[MetricResult], total: int, test_id: str) -> str:
    first = unreachable[0]
    return (
        f"agent-eval ({test_id}): the judge could not be reached for {len(unreachable)} of "
        f"{total} conversation(s), so the agent was not judged: {first.error_message}"
    )


def _named(result: MetricResult, test_id: str) -> MetricResult:
    """``result`` with the test that made it in its ``note`` (the session's HTML report)."""
    return result.model_copy(update={"note": f"pytest {test_id}"}) if test_id else result


def _failure(
    failing: list[MetricResult],
    renderings: Mapping[tuple[str, str], str],
    min_score: float,
    test_id: str = "",
) -> str:
    parts = []
    made_by = f" ({test_id})" if test_id else ""
    for r in failing:
        head = (
            f"agent-eval{made_by}: {r.metric} on conversation {r.conversation_id!r}: "
            f"status {r.status}"
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

        from agent_eval.ingest._sdk import install

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


def pytest_collection_finish(session: pytest.Session) -> None:
    """Check the settings and every ``agent_eval`` marker once, before any test runs.

    Only when a selected test uses ``agent_spans``; a test with the marker needs a judge.

    Raises:
        pytest.UsageError: the first problem, as one line (pytest prints ``ERROR: ...`` and
            exits 4 without running a test).

    """
    using = [i for i in session.items if "agent_spans" in getattr(i, "fixturenames", ())]
    if not using:
        return
    from agent_eval.errors import AgentEvalError

    settings = JudgeSettings.from_config(session.config)
    try:
        _check(settings, using)
    except AgentEvalError as exc:
        error = exc
    else:
        return
    raise pytest.UsageError(f"agent-eval: {error}")


def _check(settings: JudgeSettings, items: list[pytest.Item]) -> None:
    """Build what the selected tests' scoring needs.

    Raises:
        AgentEvalError: a bad formatter; a marker with an unknown argument or metric; no
            judge while a selected test carries the marker.

    """
    from agent_eval.errors import ConfigError
    from agent_eval.formatting._registry import get_formatter

    get_formatter(settings.formatter)
    checked: set[tuple[str, bool]] = set()
    for item in items:
        marker = item.get_closest_marker("agent_eval")
        if marker is None:
            continue
        unknown = sorted(set(marker.kwargs) - _MARKER_KEYS)
        if marker.args or unknown:
            raise ConfigError(
                f"{item.nodeid}: @pytest.mark.agent_eval takes the keywords metric=, "
                f"min_score=, reference= (got {[*marker.args, *unknown]})"
            )
        key = (
            str(marker.kwargs.get("metric", "goal_accuracy")),
            bool(marker.kwargs.get("reference")),
        )
        if key not in checked:
            checked.add(key)
            _plan(settings, key[0], "x" if key[1] else None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A test whose judge could not be reached: marked, with its one-line message."""
    report = yield
    if call.excinfo is not None and call.excinfo.errisinstance(JudgeUnreachable):
        report.longrepr = str(call.excinfo.value)
        setattr(report, _UNREACHABLE, True)  # an attribute of the report: xdist sends it on
    return report


def pytest_report_teststatus(
    report: pytest.TestReport, config: pytest.Config
) -> tuple[str, str, str] | None:
    """A test whose judge could not be reached is an error (``E``), not a failure."""
    if report.failed and getattr(report, _UNREACHABLE, False):
        return "error", "E", "ERROR"
    return None
