"""No behaviour changes: ``score`` gives the results it gave before the performance work (issue 15).

Each scenario scores real inputs (the bundled ``fixtures/`` and, when present, ``../shared/data``)
through the fake OpenAI-compatible server answering from ``fixtures/fake-judge.json``, and
compares with ``tests/run/golden/<scenario>.json``: every field of every result row except the
run id, timestamps and durations, the stored renderings, and the ``--dry-run`` plan. The golden
files were written by the code before any change (``python tests/run/test_golden_results.py``
regenerates them; do so only for an intended change of results, and say why in the commit).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.run._event_loop import LOOP_ENV
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer
from agent_eval.testing._script import load_script

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
SHARED_DATA = ROOT.parent / "shared" / "data"
SCRIPT = ROOT / "fixtures" / "fake-judge.json"

COLUMNS = "120"

_VOLATILE = frozenset({"run_id", "started_at", "latency_ms"})
"""Result fields that differ between two runs of the same inputs (ids, clocks)."""


@dataclass(frozen=True)
class Scenario:
    """One golden score run: its inputs and flags."""

    name: str
    paths: tuple[Path, ...]
    flags: tuple[str, ...]
    shared: bool = False


SCENARIOS = (
    Scenario(
        "fixtures-otel",
        (ROOT / "fixtures" / "otel",),
        (
            "--metric",
            "goal_accuracy@1,faithfulness@1,groundedness@1,tool_errors,loops",
            "--formatter",
            "ragas-pretty@1",  # today's behaviour: the hardened defaults are tested elsewhere
            "--max-context-tokens",
            "520",
        ),
    ),
    Scenario(
        "fixtures-rag-transcript",
        (ROOT / "fixtures" / "rag",),
        (
            "--metric",
            "goal_accuracy@1,faithfulness@1[per_statement=true],groundedness@1,loops",
            "--formatter",
            "transcript@1",
        ),
    ),
    Scenario(
        "shared-otel-tau2",
        (SHARED_DATA / "otel", SHARED_DATA / "tau2-bench"),
        (
            "--metric",
            "goal_accuracy@1,tool_errors",
            "--formatter",
            "ragas-pretty@1",
            "--max-context-tokens",
            "6000",
        ),
        shared=True,
    ),
)


def _normal(value: Any) -> Any:
    """``value`` with the volatile keys removed at every depth (details hold stage latencies)."""
    if isinstance(value, dict):
        return {
            k: _normal(v)
            for k, v in sorted(value.items())
            if k not in _VOLATILE and not k.endswith("latency_ms")
        }
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def observe(scenario: Scenario, server: FakeModelServer, work: Path) -> dict[str, Any]:
    """Score ``scenario`` into ``work/out``; the comparable part of what it produced."""
    runner = CliRunner()
    args = [
        "score", *map(str, scenario.paths), *scenario.flags,
        "--judge", "fake", "--base-url", server.base_url,
        "--cache-path", str(work / "judge-cache.db"),
        "--concurrency", "1",  # identical answers in two conversations: "new", then "pinned"
    ]  # fmt: skip
    plan = runner.invoke(app, [*args, "--dry-run"])
    assert plan.exit_code == 0, plan.output
    scored = runner.invoke(app, [*args, "--out", str(work / "out")])
    assert scored.exit_code == 0, scored.output
    rows = [_normal(r.model_dump(mode="json")) for r in load_results(work / "out")]
    renderings = (work / "out" / "renderings.jsonl").read_bytes().decode().splitlines()
    return {
        "plan": [line.rstrip() for line in plan.stdout.splitlines()],
        "results": rows,
        "renderings": [orjson.loads(line) for line in renderings],
    }


@pytest.fixture
def scripted_server() -> Iterator[FakeModelServer]:
    """The fake server answering from ``fixtures/fake-judge.json``."""
    with FakeModelServer() as server:
        load_script(SCRIPT, server)
        yield server


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_results_identical_to_before(
    scenario: Scenario,
    loop: str,
    scripted_server: FakeModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same results on either event loop (``AGENT_EVAL_EVENT_LOOP``) as before."""
    monkeypatch.setenv("COLUMNS", COLUMNS)  # the plan table's width
    monkeypatch.setenv(LOOP_ENV, loop)
    if scenario.shared and not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    expected = orjson.loads((GOLDEN / f"{scenario.name}.json").read_bytes())
    observed = observe(scenario, scripted_server, tmp_path)
    assert observed["plan"] == expected["plan"]
    assert len(observed["results"]) == len(expected["results"])
    for got, want in zip(observed["results"], expected["results"], strict=True):
        assert got == want
    assert observed["renderings"] == expected["renderings"]


def _regenerate() -> None:  # pragma: no cover - run by hand, see the module docstring
    import tempfile

    GOLDEN.mkdir(exist_ok=True)
    os.environ["COLUMNS"] = COLUMNS
    for scenario in SCENARIOS:
        with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as server:
            load_script(SCRIPT, server)
            observed = observe(scenario, server, Path(tmp))
        (GOLDEN / f"{scenario.name}.json").write_bytes(
            orjson.dumps(observed, option=orjson.OPT_INDENT_2) + b"\n"
        )
        print(f"{scenario.name}: {len(observed['results'])} results", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    _regenerate()
