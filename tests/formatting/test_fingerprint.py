"""Probe set coverage and the fingerprint definition, recomputed independently."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from agent_eval._trace import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from agent_eval.errors import ConfigError
from agent_eval.formatting import (
    FINGERPRINT_SCHEME,
    PROBE_SET_VERSION,
    fingerprint,
    get_formatter,
    probe_set,
)
from agent_eval.formatting._lock import lock_targets


def test_probe_set_covers_the_hard_shapes() -> None:
    traces = {trace.conversation_id: trace for trace in probe_set()}
    messages = [m for t in traces.values() for m in t.messages]
    assistants = [m for m in messages if isinstance(m, AssistantMessage)]
    calls = [c for m in assistants for c in m.tool_calls or ()]
    assert any(isinstance(m, UserMessage) and m.content == "" for m in messages)
    assert any(not m.content and m.tool_calls for m in assistants)
    assert any(m.tool_calls == () for m in assistants)
    assert any(len(m.tool_calls or ()) > 2 for m in assistants)
    assert any(
        isinstance(c.arguments, dict) and any(isinstance(v, dict) for v in c.arguments.values())
        for c in calls
    )
    assert any(
        not c.name.isascii() or not json.dumps(c.arguments, ensure_ascii=False).isascii()
        for c in calls
    )
    assert any(c.raw_arguments is not None and c.arguments is None for c in calls)
    assert any("\n" in m.content for m in messages)
    assert sum(isinstance(m, SystemMessage) for m in messages) >= 3
    assert any(len(t.agent_names) >= 2 for t in traces.values())
    assert any(r.documents for t in traces.values() for r in t.retrievals)
    assert any(isinstance(m, ToolMessage) and len(m.content) > 10_000 for m in messages)
    assert any("</message>" in m.content for m in messages)
    assert any(not t.messages for t in traces.values())
    assert len(traces) == len(probe_set())  # ids are unique


def test_probe_set_versions() -> None:
    assert probe_set() == probe_set(PROBE_SET_VERSION)
    with pytest.raises(ConfigError, match="unknown probe set version 99"):
        probe_set(99)


def _reference_fingerprint(identity: str) -> str:
    formatter = get_formatter(identity)
    sha = hashlib.sha256(f"{FINGERPRINT_SCHEME}\nprobe-set/{PROBE_SET_VERSION}\n".encode())
    for trace in probe_set():
        data = formatter.render(trace).encode("utf-8", "surrogatepass")
        sha.update(trace.conversation_id.encode() + b"\n" + str(len(data)).encode() + b"\n" + data)
    return sha.hexdigest()


@pytest.mark.parametrize("identity", sorted(lock_targets()))
def test_fingerprint_follows_its_documented_definition(identity: str) -> None:
    assert fingerprint(get_formatter(identity)) == _reference_fingerprint(identity)


def test_every_locked_identity_has_a_distinct_fingerprint() -> None:
    prints = {identity: fingerprint(f) for identity, f in lock_targets().items()}
    assert len(set(prints.values())) == len(prints)
    assert all(len(p) == 64 and int(p, 16) >= 0 for p in prints.values())


def test_fingerprints_are_stable_across_processes_hash_seeds_and_locales() -> None:
    code = (
        "import json; from agent_eval.formatting import fingerprint\n"
        "from agent_eval.formatting._lock import lock_targets\n"
        "print(json.dumps({k: fingerprint(f) for k, f in lock_targets().items()}))"
    )
    here = {identity: fingerprint(f) for identity, f in lock_targets().items()}
    for seed, locale, tz in (("1", "C", "UTC"), ("12345", "C.UTF-8", "Asia/Kathmandu")):
        env = {**os.environ, "PYTHONHASHSEED": seed, "LC_ALL": locale, "TZ": tz}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        assert json.loads(out.stdout) == here
