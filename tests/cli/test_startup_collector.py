"""The collector is kept off the start-up and given back as it was (``agent_eval.cli._startup``).

``main()`` pauses the cyclic garbage collector while the CLI starts, freezes the start-up's
objects when the command runs, and unfreezes them when it returns: a program that calls
``main()`` in process keeps the collector it had, and one that disabled the collector or froze
objects itself finds them untouched.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_eval.cli import _ingest_cmds as ingest_cmds
from agent_eval.cli import main
from agent_eval.cli._startup import collector_paused

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "fixtures" / "otel" / "openai-v2-latest-span.otlp.json"


@pytest.fixture
def collector() -> Iterator[None]:
    """An enabled collector with nothing frozen, before and after the test whatever it does."""
    gc.enable()
    gc.unfreeze()
    yield
    gc.enable()
    gc.unfreeze()


def _main(monkeypatch: pytest.MonkeyPatch, *argv: str) -> object:
    monkeypatch.setattr("sys.argv", ["agent-eval", *argv])
    try:
        main()
    except SystemExit as exc:
        return exc.code
    return 0


def test_the_command_runs_with_the_start_up_frozen_and_main_gives_the_collector_back(
    collector: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: list[tuple[bool, int]] = []
    write_out = ingest_cmds._write_out

    def observed(*args: object) -> object:
        seen.append((gc.isenabled(), gc.get_freeze_count()))
        return write_out(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(ingest_cmds, "_write_out", observed)
    out = tmp_path / "t.jsonl"
    assert _main(monkeypatch, "ingest", str(SMALL), "-o", str(out)) in (0, None)
    assert len(out.read_text().splitlines()) == 1
    [(enabled, frozen)] = seen
    assert enabled and frozen > 0  # the command's code ran with the collector on
    assert gc.isenabled() and gc.get_freeze_count() == 0  # and main() unfroze them


def test_help_and_a_usage_error_give_the_collector_back(
    collector: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _main(monkeypatch, "--help") == 0
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert _main(monkeypatch, "ingest", "--no-such-option") == 2
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_disabled_collector_stays_disabled(
    collector: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    gc.disable()
    assert _main(monkeypatch, "ingest", str(SMALL), "-o", str(tmp_path / "t")) in (0, None)
    assert not gc.isenabled() and gc.get_freeze_count() == 0


def test_objects_someone_else_froze_stay_frozen_and_nothing_more_is_frozen(
    collector: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    gc.freeze()
    before = gc.get_freeze_count()
    assert _main(monkeypatch, "ingest", str(SMALL), "-o", str(tmp_path / "t")) in (0, None)
    # not unfrozen (0) and nothing added; frozen objects freed since leave the count
    assert gc.isenabled() and 0 < gc.get_freeze_count() <= before


def test_collector_paused_nests_and_resumes(collector: None) -> None:
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block did not resume the outer pause
    assert gc.isenabled() and gc.get_freeze_count() == 0
