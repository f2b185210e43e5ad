"""``compare`` and ``stability`` hold the conversations in flight, not the input (issue 15).

Regression (s6-scoremem's gap): both read their inputs with ``list(ingest(...))``, so every
conversation stayed alive for the whole command while ``score`` already streamed them through
its spool. They now spool the input as ingest emits it and read it back one conversation at a
time per pass (plans, renderings, ``conversations.jsonl``, each variant's or repeat's engine).
A formatter that watches which conversations are alive whenever it renders shows it: with a
list all 20 were; now a handful (the engine's concurrency ahead).
"""

from __future__ import annotations

import gc
import json
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from typer.testing import CliRunner

from agent_eval._trace import AgentTrace
from agent_eval.cli._app import app
from agent_eval.formatting import Formatter, NoParams, formatters
from agent_eval.formatting._registry import get_formatter, register
from agent_eval.ingest._pipeline import ingest
from agent_eval.run import _spool as spool_module
from agent_eval.run._artifacts import read_renderings, render_all
from agent_eval.testing import FakeModelServer

from . import judge_script

ENV = {"OPENAI_API_KEY": "sk-test-not-a-real-key", "COLUMNS": "200"}
N = 20
IN_FLIGHT = 2


class Watching(Formatter[NoParams]):
    """``transcript@1``'s text; on every call, counts the input's conversations still alive."""

    name = "spool-watching"
    version = 1
    seen: ClassVar[list[weakref.ref[AgentTrace]]] = []
    most_alive: ClassVar[int] = 0

    def render(self, trace: AgentTrace) -> str:
        if trace.conversation_id.startswith("c"):  # an input's, not a fingerprint probe
            gc.collect(0)
            alive = sum(ref() is not None for ref in Watching.seen)
            Watching.most_alive = max(Watching.most_alive, alive + 1)
            Watching.seen.append(weakref.ref(trace))
        return get_formatter("transcript@1").render(trace)


@pytest.fixture
def watching(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setattr(spool_module, "MEMORY_MESSAGES", 0)  # on disk from the first one
    register(Watching, replace=True)
    Watching.seen.clear()
    Watching.most_alive = 0
    try:
        yield "spool-watching@1"
    finally:
        formatters.unregister("spool-watching@1")


def _traces(tmp_path: Path) -> Path:
    specs = {f"c{i:02d}": "DONE" if i % 3 else "" for i in range(N)}
    return judge_script.write_traces(tmp_path / "traces.jsonl", specs)


def _run(server: FakeModelServer, *args: str) -> dict:
    common = ["--judge", "fake-model", "--base-url", server.base_url, "--json"]
    result = CliRunner().invoke(
        app, [*args, *common, "--concurrency", str(IN_FLIGHT), "--no-cache"], env=ENV
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_compare_holds_the_conversations_in_flight(
    fake_server: FakeModelServer, tmp_path: Path, watching: str
) -> None:
    judge_script.script(fake_server)
    path, out = _traces(tmp_path), tmp_path / "cmp"
    names = f"transcript@1,{watching}"
    cmp = _run(fake_server, "compare", str(path), "--formatters", names, "--out", str(out))
    variants = {v["variant"]: v for v in cmp["comparison"]["variants"]}
    assert variants[watching]["n_ok"] == variants["transcript@1"]["n_ok"] == N
    # renderings.jsonl's read renders each conversation once; the run session shares that
    # render cache with the variant's engine (as score's does), which renders none again
    assert len(Watching.seen) == N
    assert Watching.most_alive <= 2 * IN_FLIGHT + 2, Watching.most_alive  # a list: all N
    expected = render_all(list(ingest(path)), ["transcript@1", watching])
    assert read_renderings(out) == expected


def test_stability_holds_the_conversations_in_flight(
    fake_server: FakeModelServer, tmp_path: Path, watching: str
) -> None:
    judge_script.script(fake_server)
    path, out = _traces(tmp_path), tmp_path / "st"
    st = _run(
        fake_server, "stability", str(path), "--repeats", "3", "--formatter", watching,
        "--out", str(out),
    )  # fmt: skip
    assert len(st["stability"]["conversations"]) == N
    assert all(c["n_pass"] + c["n_fail"] == 3 for c in st["stability"]["conversations"])
    assert len(Watching.seen) == N  # rendered once; each repeat's read is seeded from the spool
    assert Watching.most_alive <= 2 * IN_FLIGHT + 2, Watching.most_alive
