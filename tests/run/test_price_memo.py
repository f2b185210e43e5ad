"""Prices kept in the judge-call cache: a fully cached re-run imports no genai-prices (issue 15).

Regression: every ``score`` imported genai-prices (0.1-0.4 s) to price the agent's and the
judge's models, even when every judge answer came from the cache. A price the bundled data of
one genai-prices release gives is now kept in the cache file (table ``model_prices``) and read
back by later runs; the figures printed and recorded stay the same.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_eval._costs import PRICE_DATABASE, Price, database_price, remembered_prices
from agent_eval.run._cache import CachedPrices, JudgeCache
from agent_eval.run._store import ResultStore, load_results
from agent_eval.testing import FakeModelServer
from agent_eval.testing._script import load_script

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "fixtures" / "otel" / "openai-v2-latest-span.otlp.json"


@pytest.fixture
def fresh_lookups() -> Iterator[None]:
    """``database_price`` without what earlier tests of this process looked up."""
    database_price.cache_clear()
    yield
    database_price.cache_clear()


def _release() -> str:
    from importlib.metadata import version

    return f"{PRICE_DATABASE} {version(PRICE_DATABASE)}"


def test_cached_prices_round_trip_a_price_and_a_missing_price(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    memo = CachedPrices(path)
    memo.keep("r1", "gpt-4o", {"input": 2.5, "output": 10.0, "source": "s"})
    assert not path.exists()  # never a file of its own: kept only beside judge calls
    JudgeCache(path).close()
    memo.keep("r1", "gpt-4o", {"input": 2.5, "output": 10.0, "source": "s"})
    memo.keep("r1", "my-judge", None)
    assert memo.recall("r1", "gpt-4o") == (True, {"input": 2.5, "output": 10.0, "source": "s"})
    assert memo.recall("r1", "my-judge") == (True, None)  # "no price" is kept too
    assert memo.recall("r2", "gpt-4o") == (False, None)  # another release: looked up again
    assert CachedPrices(path, read=False).recall("r1", "gpt-4o") == (False, None)
    assert len(JudgeCache(path)) == 0  # the judge-call entries are untouched


def test_a_kept_price_is_used_and_a_new_one_kept(tmp_path: Path, fresh_lookups: None) -> None:
    path = tmp_path / "cache.db"
    JudgeCache(path).close()
    memo = CachedPrices(path)
    kept = {"input": 1.0, "output": 2.0, "source": "kept"}
    memo.keep(_release(), "gpt-4o", kept)
    with remembered_prices(memo):
        assert database_price("gpt-4o") == Price(**kept)
        assert database_price("gpt-4o").source == "kept"  # type: ignore[union-attr]
        looked_up = database_price("gpt-4o-mini")
    assert looked_up is not None and looked_up.source.startswith(PRICE_DATABASE)
    found, fields = memo.recall(_release(), "gpt-4o-mini")
    assert found and fields is not None and Price(**fields) == looked_up
    assert fields["source"] == looked_up.source


def test_an_unreadable_memo_costs_the_shortcut_not_the_price(fresh_lookups: None) -> None:
    class Broken:
        def recall(self, release: str, model: str) -> tuple[bool, dict[str, Any] | None]:
            raise OSError("disk gone")

        def keep(self, release: str, model: str, price: dict[str, Any] | None) -> None:
            raise OSError("disk gone")

    with remembered_prices(Broken()):
        price = database_price("gpt-4o")
    database_price.cache_clear()
    assert price == database_price("gpt-4o")


PROBE = """\
import atexit, sys
atexit.register(lambda: print("imported:", sorted(
    m for m in ("genai_prices", "opentelemetry.sdk", "agent_eval.cli._json_output", "aiohttp")
    if m in sys.modules)))
from agent_eval.cli import main
sys.argv = ["agent-eval", *sys.argv[1:]]
main()
"""


def _agent_total(stdout: str) -> str:
    """The agent's cost on score's last line (the judge's differs: cached calls cost $0)."""
    line = next(line for line in stdout.splitlines() if "agent total" in line)
    return line.split("agent total", 1)[1].split(";")[0].strip()


def _imported(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith("imported:"))


def _prices(directory: Path) -> dict[str, Any]:
    """The ``prices`` of the run record stored in ``directory``."""
    with ResultStore(directory) as store:
        (run,) = store.runs()
    prices: dict[str, Any] = run.record["prices"]
    return prices


def test_cached_rerun_imports_no_genai_prices_and_prices_alike(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    load_script(ROOT / "fixtures" / "fake-judge.json", fake_server)
    args = [
        "score", str(SMALL), "--metric", "goal_accuracy", "--judge", "gpt-4o-mini",
        "--base-url", fake_server.base_url,
    ]  # fmt: skip
    env = {"AGENT_EVAL_CACHE_PATH": str(tmp_path / "cache.db"), "COLUMNS": "200"}

    def run(out: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", PROBE, *args, "--out", str(tmp_path / out)],
            capture_output=True, text=True, check=False, cwd=tmp_path,
            env={**_base_env(), **env},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    first, again = run("first"), run("again")
    assert "'genai_prices'" in _imported(first)  # looked up, and kept
    assert "imported: []" in again  # no genai-prices, OTel SDK, --json models or HTTP client
    assert _agent_total(again) == _agent_total(first)
    assert _prices(tmp_path / "again") == _prices(tmp_path / "first")
    assert _prices(tmp_path / "again")["models"]["gpt-4o-mini"]["input"] > 0
    key = {"conversation_id", "status", "verdict", "judge_model"}
    assert [r.model_dump(include=key) for r in load_results(tmp_path / "again")] == [
        r.model_dump(include=key) for r in load_results(tmp_path / "first")
    ]
    refresh = subprocess.run(
        [sys.executable, "-c", PROBE, *args, "--refresh-cache", "--out", str(tmp_path / "r")],
        capture_output=True, text=True, check=False, cwd=tmp_path, env={**_base_env(), **env},
    )  # fmt: skip
    assert refresh.returncode == 0, refresh.stderr
    assert "'genai_prices'" in _imported(refresh.stdout)  # --refresh-cache looks up again


def _base_env() -> dict[str, str]:
    import os

    drop = ("OPENAI_API_KEY", "OPENAI_BASE_URL")
    return {k: v for k, v in os.environ.items() if k not in drop}
