"""formatters.lock: released versions are frozen; an unversioned change must fail loudly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from agent_eval_formatters.ragas_pretty_v1 import RagasPrettyV1
from agent_eval_formatters.transcript_v1 import TranscriptV1

from agent_eval._trace import AgentTrace
from agent_eval.errors import ConfigError, FormatterLockError
from agent_eval.formatting import (
    Formatter,
    NoParams,
    check_lock,
    default_lock_path,
    fingerprint,
    formatters,
    update_lock,
    verify_lock,
)
from agent_eval.formatting._lock import lock_targets, read_lock
from agent_eval.formatting._registry import new_registry


def test_lock_file_is_where_the_package_is() -> None:
    assert (
        default_lock_path()
        == Path(__file__).resolve().parents[2]
        / "formatters"
        / "agent_eval_formatters"
        / "formatters.lock"
    )


def test_every_registered_release_matches_its_lock_entry() -> None:
    report = check_lock()
    assert report.frozen_ok
    assert report.unlocked == ()
    assert set(read_lock().fingerprints) == set(lock_targets())


def test_lock_covers_parameter_variants() -> None:
    locked = read_lock().fingerprints
    assert {"transcript@1[max_tool_chars=200]", "transcript@1[system=false]"} <= set(locked)


def test_unversioned_change_fails_with_bump_the_version(monkeypatch: pytest.MonkeyPatch) -> None:
    original = RagasPrettyV1.render

    def changed(self: RagasPrettyV1, trace: AgentTrace) -> str:
        return original(self, trace).replace("Human: ", "User: ")

    monkeypatch.setattr(RagasPrettyV1, "render", changed)
    with pytest.raises(FormatterLockError) as info:
        check_lock()
    message = str(info.value)
    assert "ragas-pretty@1" in message and "bump the version" in message
    assert "transcript@1" not in message


def test_a_one_character_change_in_a_helper_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    import agent_eval_formatters.xml_v1 as xml_v1

    monkeypatch.setattr(xml_v1, "_TEXT", xml_v1._TEXT[:3])  # forget to escape "\r"
    report = verify_lock()
    # xml@2 renders through xml@1, so its fingerprint moves too
    assert [m.identity for m in report.mismatched] == ["xml@1", "xml@2"]
    with pytest.raises(FormatterLockError, match="bump the version"):
        check_lock()


def test_change_in_a_parameterised_path_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    original = TranscriptV1._truncate

    def changed(self: TranscriptV1, content: str) -> str:
        return original(self, content).replace("characters cut", "chars cut")

    monkeypatch.setattr(TranscriptV1, "_truncate", changed)
    report = verify_lock()
    assert [m.identity for m in report.mismatched] == ["transcript@1[max_tool_chars=200]"]


def test_removed_release_is_reported_missing(tmp_path: Path) -> None:
    lock = tmp_path / "formatters.lock"
    shutil.copy(default_lock_path(), lock)
    registry = new_registry()
    assert "json@1" in registry  # loads the entry points first
    registry.unregister("json@1")
    with pytest.raises(FormatterLockError, match="json@1 is locked but not registered"):
        check_lock(lock, registry)


class _NewV1(Formatter[NoParams]):
    name = "brand-new"
    version = 1

    def render(self, trace: AgentTrace) -> str:
        return f"{len(trace.messages)}"


def test_update_lock_adds_new_versions_only(tmp_path: Path) -> None:
    lock = tmp_path / "formatters.lock"
    shutil.copy(default_lock_path(), lock)
    before = read_lock(lock).fingerprints
    registry = new_registry()
    registry.register("brand-new@1", _NewV1)
    assert verify_lock(lock, registry).unlocked == ("brand-new@1",)
    assert update_lock(lock, registry) == ["brand-new@1"]
    after = read_lock(lock).fingerprints
    assert after == {**before, "brand-new@1": fingerprint(_NewV1())}
    assert update_lock(lock, registry) == []
    assert json.loads(lock.read_text())["probe_set"] == 1


def test_update_lock_never_rewrites_a_changed_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = tmp_path / "formatters.lock"
    shutil.copy(default_lock_path(), lock)
    monkeypatch.setattr(RagasPrettyV1, "render", lambda self, trace: "changed")
    with pytest.raises(FormatterLockError, match="bump the version"):
        update_lock(lock)
    assert lock.read_bytes() == default_lock_path().read_bytes()


def test_empty_or_missing_lock(tmp_path: Path) -> None:
    assert read_lock(tmp_path / "absent.lock").fingerprints == {}
    assert verify_lock(tmp_path / "absent.lock").unlocked == tuple(sorted(lock_targets()))


def test_corrupt_lock_is_a_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "formatters.lock"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="not a formatter lock file"):
        read_lock(bad)
    bad.write_text(json.dumps({"fingerprint_scheme": "other/9", "probe_set": 1, "formatters": {}}))
    with pytest.raises(ConfigError, match="fingerprint_scheme"):
        read_lock(bad)


def test_global_registry_untouched() -> None:
    assert "brand-new@1" not in formatters
