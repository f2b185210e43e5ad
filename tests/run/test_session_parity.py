"""One run session behind every entry point: the same inputs through ``agent-eval score``,
``agent_eval.score(out=...)``, the pytest plugin's scoring and ``serve``'s live run (the session's
``start_live`` with the live scorer ``serve`` uses, fed the conversations its receiver would
assemble) give run directories with the same files and the same rows (run ids and times aside),
and each holds what the judge saw."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import agent_eval
from agent_eval._trace import AgentTrace
from agent_eval.cli._app import app
from agent_eval.config import ScoreConfig
from agent_eval.ingest._pipeline import ingest
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.live._scorer import Job, LiveScorer
from agent_eval.pytest_plugin import AgentSpans, JudgeSettings
from agent_eval.run import _event_loop as event_loop
from agent_eval.run._session import RunSession
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer

from ..analysis import judge_script

ENV = {"OPENAI_API_KEY": "sk-test-not-a-real-key", "COLUMNS": "200"}
_VARY = {"run_id", "started_at", "latency_ms"}
"""What differs between two runs of the same inputs: the run, the clock."""


class _Collected:
    """The plugin's collector, holding the conversations a test collected."""

    def __init__(self, traces: list[AgentTrace]) -> None:
        self._traces = traces

    def traces(self) -> Any:
        class _Run:
            def collect(inner) -> list[AgentTrace]:
                return list(self._traces)

        return _Run()


async def _serve_like(traces: list[AgentTrace], base_url: str, out: Path) -> None:
    session = RunSession(
        ScoreConfig(out=out, judge="fake-model", base_url=base_url, cache="off"),
        judge=OpenAIJudge("fake-model", base_url=base_url, api_key="sk-test"),
        model="fake-model",
        keep_results=True,
        keep_interrupted=False,
    )
    engine, store, emitter = session.start_live()
    scorer = LiveScorer(engine, store, emitter, concurrency=1, directory=out)
    scorer.start()
    for trace in traces:
        scorer.submit(Job(trace))
    assert await scorer.drain(timeout=60) == []
    await session.stop_live(store, emitter)


def _rows(directory: Path) -> list[dict[str, Any]]:
    rows = [r.model_dump(mode="json", exclude=_VARY) for r in load_results(directory)]
    return sorted(rows, key=lambda r: (r["conversation_id"], r["unit_id"]))


def _files(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir() if not p.name.startswith(".")}


def test_cli_api_plugin_and_serve_write_the_same_run_directory(
    fake_server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_EVAL_PARITY_KEY", "sk-test")
    judge_script.script(fake_server)
    specs = {f"c{i}": "DONE" if i % 2 else "" for i in range(6)}
    path = judge_script.write_traces(tmp_path / "traces.jsonl", specs)
    cli_dir, api_dir, plugin_dir = tmp_path / "cli", tmp_path / "api", tmp_path / "plugin"

    common = ["--judge", "fake-model", "--base-url", fake_server.base_url, "--no-cache"]
    done = CliRunner().invoke(app, ["score", str(path), "--out", str(cli_dir), *common], env=ENV)
    assert done.exit_code == 0, done.output

    judge = OpenAIJudge("fake-model", base_url=fake_server.base_url, api_key="sk-test")
    summary = agent_eval.score(list(ingest(path)), judge=judge, out=api_dir)
    assert summary.scored == len(specs)

    spans = AgentSpans(
        _Collected(list(ingest(path))),  # type: ignore[arg-type]
        JudgeSettings("fake-model", fake_server.base_url, "AGENT_EVAL_PARITY_KEY", "transcript@2"),
        test_id="test_parity",
        out=plugin_dir,
    )
    plugin_dir = spans.run_directory() or plugin_dir
    results = spans.score()  # the plugin's scoring, as assert_score runs it
    assert len(results) == len(specs)

    serve_dir = tmp_path / "serve"
    event_loop.run(_serve_like(list(ingest(path)), fake_server.base_url, serve_dir))

    files = _files(cli_dir)
    assert {"results.db", "results.jsonl", "conversations.jsonl", "renderings.jsonl"} <= files
    assert len(_rows(cli_dir)) == len(specs)
    assert _files(api_dir) == files == _files(plugin_dir) == _files(serve_dir)
    assert _rows(api_dir) == _rows(cli_dir) == _rows(plugin_dir) == _rows(serve_dir)
    for name in ("conversations.jsonl", "renderings.jsonl"):  # live: in the order scored
        lines = sorted((cli_dir / name).read_text().splitlines())
        assert sorted((serve_dir / name).read_text().splitlines()) == lines
    for name in ("conversations.jsonl", "renderings.jsonl"):
        text = (cli_dir / name).read_text()
        assert (api_dir / name).read_text() == text == (plugin_dir / name).read_text()
    # what agent-eval report shows of an API run: the text the judge saw
    rendered = [
        json.loads(line) for line in (api_dir / "renderings.jsonl").read_text().splitlines()
    ]
    assert {r["conversation_id"] for r in rendered} == set(specs)
