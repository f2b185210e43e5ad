"""The per-user judge-call cache: default location, ``cache info``, ``cache prune``, processes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.run._cache import CacheEntry, JudgeCache
from agent_eval.run._judge_stack import CACHE_PATH_ENV, default_cache_path
from agent_eval.run._store import ResultStore

runner = CliRunner()


def _fill(path: Path, models: dict[str, int]) -> None:
    with JudgeCache(path) as cache:
        for model, count in models.items():
            for i in range(count):
                cache.put(f"{model}-{i}", CacheEntry(model=model, output="{}"))


def test_default_is_the_user_cache_dir_unless_the_variable_names_a_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(CACHE_PATH_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert default_cache_path() == tmp_path / "xdg" / "agent-eval" / "judge-cache.db"
    assert default_cache_path().name == "judge-cache.db"
    monkeypatch.setenv(CACHE_PATH_ENV, str(tmp_path / "mine.db"))
    assert default_cache_path() == tmp_path / "mine.db"


def test_info_reports_entries_per_model(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    _fill(path, {"gpt-4o-mini": 3, "o3-mini": 1})
    result = runner.invoke(app, ["cache", "info", "--cache-path", str(path), "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert info["entries"] == 4 and info["models"] == {"gpt-4o-mini": 3, "o3-mini": 1}
    assert info["path"] == str(path) and info["size_bytes"] > 0 and info["oldest"]
    table = runner.invoke(app, ["cache", "info", "--cache-path", str(path)])
    assert "gpt-4o-mini" in table.stdout and "4" in table.stdout


def test_info_uses_the_variable_and_says_when_there_is_no_cache(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["cache", "info"])  # the test's own, still empty, cache path
    assert missing.exit_code == 2 and "no judge-call cache" in missing.output
    _fill(Path(os.environ[CACHE_PATH_ENV]), {"m": 2})
    assert json.loads(runner.invoke(app, ["cache", "info", "--json"]).stdout)["entries"] == 2


def test_prune_by_age_and_all(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    _fill(path, {"m": 5})
    with sqlite3.connect(path) as db:  # two entries written 40 days ago
        db.execute("UPDATE judge_calls SET created_at = '2000-01-01T00:00:00+00:00' "
                   "WHERE key IN ('m-0', 'm-1')")  # fmt: skip
    result = runner.invoke(app, ["cache", "prune", "--older-than", "30", "--cache-path", str(path)])
    assert result.exit_code == 0, result.output
    assert "pruned 2 entries; 3 left" in result.stdout
    with JudgeCache(path) as cache:
        assert len(cache) == 3 and cache.get("m-0") is None and cache.get("m-4") is not None
    result = runner.invoke(app, ["cache", "prune", "--all", "--cache-path", str(path)])
    assert "pruned 3 entries; 0 left" in result.stdout


def test_prune_needs_exactly_one_of_older_than_and_all(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    _fill(path, {"m": 1})
    for args in ([], ["--all", "--older-than", "3"], ["--older-than", "-1"]):
        result = runner.invoke(app, ["cache", "prune", "--cache-path", str(path), *args])
        assert result.exit_code == 2, (args, result.output)


WRITER = """
import sys
from agent_eval.run._cache import CacheEntry, JudgeCache
with JudgeCache(sys.argv[1]) as cache:
    for i in range(200):
        cache.put(f"{sys.argv[2]}-{i}", CacheEntry(model=sys.argv[2], output="{}"))
        assert cache.get(f"{sys.argv[2]}-{i}") is not None
"""


def test_concurrent_processes_share_one_cache_file(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"p{n}"]) for n in range(3)
    ]
    assert [w.wait(120) for w in writers] == [0, 0, 0]
    with JudgeCache(path) as cache:
        assert cache.stats().models == {"p0": 200, "p1": 200, "p2": 200}


OPENER = """
import sys, time
from pathlib import Path
from agent_eval.run._cache import CacheEntry, JudgeCache
from agent_eval.run._store import ResultStore
cache_path, store_dir, name, go = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4])
Path(f"{go}.{name}").touch()  # ready
while not go.exists():
    time.sleep(0.001)
with JudgeCache(cache_path) as cache:  # every process opens the fresh file at the same moment
    for i in range(20):
        cache.put(f"{name}-{i}", CacheEntry(model=name, output="{}"))
with ResultStore(store_dir):  # a reader's open of a results store another process creates
    pass
"""


def test_concurrent_first_opens_of_a_fresh_file_never_fail(tmp_path: Path) -> None:
    # regression (trial5 #2): under load, 2 of 3 writers died with "database is locked" from
    # PRAGMA journal_mode=WAL, which returns SQLITE_BUSY without waiting for the busy timeout
    n = 8
    for round_ in range(3):
        cache_path, store_dir, go = (tmp_path / f"{what}{round_}" for what in ("c.db", "s", "go"))
        openers = [
            subprocess.Popen(
                [sys.executable, "-c", OPENER, str(cache_path), str(store_dir), f"p{k}", str(go)],
                stderr=subprocess.PIPE,
                text=True,
            )
            for k in range(n)
        ]
        while sum(Path(f"{go}.p{k}").exists() for k in range(n)) < n:
            assert all(p.poll() is None for p in openers), [p.communicate() for p in openers]
            time.sleep(0.01)
        go.touch()
        failed = [p.communicate(timeout=120)[1] for p in openers if p.wait(120) != 0]
        assert failed == [], failed
        with JudgeCache(cache_path) as cache:
            assert cache.stats().models == {f"p{k}": 20 for k in range(n)}
        assert (store_dir / "results.db").is_file()


@pytest.mark.parametrize("opener", ["cache", "store"])
def test_an_open_waits_out_another_process_switching_the_fresh_file(
    tmp_path: Path, opener: str
) -> None:
    # The deterministic form of the race above: while another connection holds the fresh
    # file's RESERVED lock (as a process does during its own switch to WAL), PRAGMA
    # journal_mode=WAL fails at once with SQLITE_BUSY, without waiting for the busy timeout.
    path = tmp_path / "c.db" if opener == "cache" else tmp_path / "s" / "results.db"
    path.parent.mkdir(exist_ok=True)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        sqlite3.connect(path, isolation_level=None, timeout=5).execute("PRAGMA journal_mode=WAL")
    release = threading.Timer(0.5, other.execute, ("COMMIT",))
    release.start()
    started = time.monotonic()
    try:
        if opener == "cache":
            with JudgeCache(path) as cache:
                cache.put("k", CacheEntry(model="m", output="{}"))
                assert cache.get("k") is not None
        else:
            with ResultStore(path.parent) as store:
                assert store.results() == []
    finally:
        release.join()
        other.close()
    assert time.monotonic() - started >= 0.4  # it waited for the lock, then opened
