"""No behaviour changes in ingest: its output on every fixture and shared data file, pinned.

``tests/ingest/golden/ingest.json`` was written by the ingest code as it was *before* the
performance work of issue 15 (``python tests/ingest/test_ingest_golden.py --write`` on that
commit), and written again by main's code, still without that work, when issue 19's fidelity
changes (which alter ingest output on purpose) were merged (``PYTHONPATH=<an export of main's
agent_eval> python tests/ingest/test_ingest_golden.py --write``). For each case (one file, or
a set of files read in one run, as the CLI would) it holds the conversations produced, in
order, each with a SHA-256 of its ``model_dump_json()`` (the line ``agent-eval ingest``
writes), and the whole span accounting (``IngestReport.to_json()``). The test re-ingests
every case and compares both, so any change to a transcript, to the order of conversations
or to a used/ignored count fails here with the case and conversation named.

The same cases run again with the in-memory budget squeezed (every trace spilled to disk as
soon as another span arrives, or every few spans): the output must still be identical.

Paths are stored relative (``<repo>/...``, ``<shared>/...``) so the file does not depend on
where the checkout lives. Cases under ``<shared>`` skip when ``../shared`` is absent. When a
change *is meant* to alter ingest output, regenerate the file with ``--write`` and say why in
the commit message.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

if __package__:
    from .stream_traffic import write_traffic
else:  # run as a script (--write)
    from stream_traffic import write_traffic

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DIR = REPO_ROOT.parent / "shared"
GOLDEN = Path(__file__).with_name("golden") / "ingest.json"
TRAFFIC_DIR = Path(tempfile.gettempdir()) / f"agent-eval-golden-traffic-{os.getpid()}"
"""Where :func:`write_traffic` writes its files (the same content every time)."""
TRAFFIC_RUNS = [
    ["first.otlp.jsonl"],
    ["first.otlp.jsonl", "second.otlp.jsonl"],
    ["second.otlp.jsonl", "first.otlp.jsonl"],
]
"""Generated Collector-like traffic (:mod:`stream_traffic`): interleaved, children first."""

FIXTURE_FOLDERS = (
    "fixtures/otel",
    "fixtures/rag",
    "fixtures/overlap",
    "fixtures/js",
    "fixtures/langfuse",
    "fixtures/cassettes",
    "fixtures/handoff",
    "fixtures/stacks",
)
FIXTURE_FILES = sorted(
    str(p.relative_to(REPO_ROOT))
    for folder in FIXTURE_FOLDERS
    if (REPO_ROOT / folder).is_dir()
    for p in (REPO_ROOT / folder).iterdir()
    if p.is_file() and p.suffix not in {".md", ".mjs", ".py"}
)
"""Every recorded trace fixture, each read on its own (fixed when the golden file is written)."""
FIXTURE_RUNS = [
    ["fixtures/otel"],
    ["fixtures/otel", "fixtures/rag"],
    ["fixtures/overlap"],
    ["fixtures/overlap/strands.otlp.json", "fixtures/overlap/strands.otlp.json"],
    ["fixtures/overlap/two-exporters.otlp.json", "fixtures/overlap/two-exporters.console.json"],
    ["fixtures"],
]
"""Whole folders in one run: conversations that span files, and cross-file order."""
SHARED_RUNS = [
    ["data/otel"],
    ["data/tau-bench"],
    ["data/tau2-bench"],
    ["data/tau2-judge-pr103"],
    ["data/mtrag-conversations"],
    ["data/mtrag-human-eval"],
    ["data/mtrag-un"],
    ["data/expertqa"],
    ["data/begin"],
    ["data/faithdial-audit"],
]
"""Shared data folders, each read in one run (every file in them, as ``agent-eval ingest``)."""


def _shared_files() -> list[str]:
    if not (SHARED_DIR / "data").is_dir():
        return []
    return sorted(
        str(p.relative_to(SHARED_DIR))
        for p in (SHARED_DIR / "data" / "otel").iterdir()
        if p.is_file() and not p.name.endswith(".md")
    )


def _cases() -> dict[str, list[str]]:
    """Case name -> input paths as ``<repo>/...`` or ``<shared>/...``."""
    cases: dict[str, list[str]] = {}
    for name in FIXTURE_FILES:
        cases[f"<repo>/{name}"] = [f"<repo>/{name}"]
    for run in FIXTURE_RUNS:
        cases[" + ".join(f"<repo>/{p}" for p in run)] = [f"<repo>/{p}" for p in run]
    for name in _shared_files():
        cases[f"<shared>/{name}"] = [f"<shared>/{name}"]
    for run in SHARED_RUNS:
        cases[" + ".join(f"<shared>/{p}" for p in run)] = [f"<shared>/{p}" for p in run]
    for run in TRAFFIC_RUNS:
        cases[" + ".join(f"<traffic>/{p}" for p in run)] = [f"<traffic>/{p}" for p in run]
    return cases


def _real(path: str) -> str:
    if path.startswith("<traffic>") and not (TRAFFIC_DIR / "second.otlp.jsonl").is_file():
        TRAFFIC_DIR.mkdir(exist_ok=True)
        atexit.register(shutil.rmtree, TRAFFIC_DIR, True)
        write_traffic(TRAFFIC_DIR)
    return (
        path.replace("<repo>", str(REPO_ROOT))
        .replace("<shared>", str(SHARED_DIR))
        .replace("<traffic>", str(TRAFFIC_DIR))
    )


def _relative(text: str) -> str:
    return (
        text.replace(str(TRAFFIC_DIR), "<traffic>")
        .replace(str(SHARED_DIR), "<shared>")
        .replace(str(REPO_ROOT), "<repo>")
    )


def ingest_case(paths: list[str]) -> dict[str, Any]:
    """Ingest ``paths`` in one run: conversations (id, digest) in order, and the accounting."""
    from agent_eval.errors import InputError
    from agent_eval.ingest import ingest

    run = ingest([_real(p) for p in paths])
    conversations: list[list[str]] = []
    error = None
    try:
        for trace in run:
            line = _relative(trace.model_dump_json())
            digest = hashlib.sha256(line.encode()).hexdigest()[:20]
            conversations.append([trace.conversation_id, digest])
    except InputError as exc:  # every input failed: that is behaviour too
        error = _relative(f"{type(exc).__name__}: {exc}")
    report = json.loads(_relative(json.dumps(run.report.to_json())))
    return {"conversations": conversations, "report": report, "error": error}


@functools.cache
def _golden() -> dict[str, Any]:
    if not GOLDEN.is_file():  # a missing file fails every case below, it is never "no cases"
        return {}
    loaded: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return loaded


def _check(case: str, paths: list[str]) -> None:
    if any(p.startswith("<shared>") for p in paths) and not (SHARED_DIR / "data").is_dir():
        pytest.skip(f"shared data not found at {SHARED_DIR}")
    assert case in _golden(), f"{case} is not in {GOLDEN}"
    expected = _golden()[case]
    got = ingest_case(paths)
    assert got["error"] == expected["error"], case
    assert [c[0] for c in got["conversations"]] == [c[0] for c in expected["conversations"]], case
    for (conversation, digest), (_, want) in zip(
        got["conversations"], expected["conversations"], strict=True
    ):
        assert digest == want, f"{case}: conversation {conversation!r} differs"
    assert got["report"] == expected["report"], case


def _golden_cases() -> list[str]:
    return sorted(_golden()) or [f"missing {GOLDEN.name}"]


@pytest.mark.parametrize("case", _golden_cases())
def test_ingest_output_is_as_before(case: str) -> None:
    _check(case, _golden().get(case, {}).get("paths", []))


@contextmanager
def _squeezed(limits: Any) -> Iterator[None]:
    """Assemblers created in the block get ``limits`` (spill to disk early and often)."""
    from agent_eval.ingest import _assemble as assemble

    saved = assemble.STREAM_LIMITS
    assemble.STREAM_LIMITS = limits
    try:
        yield
    finally:
        assemble.STREAM_LIMITS = saved


@pytest.mark.parametrize("budget", ["tightest", "small"])
@pytest.mark.parametrize("case", _golden_cases())
def test_ingest_output_is_as_before_when_traces_spill_to_disk(case: str, budget: str) -> None:
    from agent_eval.ingest._spill import StreamLimits

    limits = StreamLimits.tightest() if budget == "tightest" else StreamLimits(5, 0.5)
    with _squeezed(limits):
        _check(case, _golden().get(case, {}).get("paths", []))


def test_the_golden_file_covers_every_fixture() -> None:
    golden = _golden()
    assert all(f"<repo>/{name}" in golden for name in FIXTURE_FILES)
    assert sum(len(golden[case]["conversations"]) for case in golden) > 400


def write() -> None:
    """Regenerate the golden file from the code as it is now."""
    if not (SHARED_DIR / "data").is_dir():
        raise SystemExit(f"shared data not found at {SHARED_DIR}: the golden file needs it")
    try:
        out = {case: {"paths": paths, **ingest_case(paths)} for case, paths in _cases().items()}
    finally:
        shutil.rmtree(TRAFFIC_DIR, ignore_errors=True)
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {len(out)} cases to {GOLDEN}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
    else:
        raise SystemExit("usage: python tests/ingest/test_ingest_golden.py --write")
