"""The formatter registry: built-ins via entry points, lookups, errors, run-time registration."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_eval._trace import AgentTrace
from agent_eval.errors import ConfigError, UnknownPluginError
from agent_eval.formatting import (
    Formatter,
    NoParams,
    formatter_class,
    formatters,
    get_formatter,
    register,
)
from agent_eval.formatting._registry import new_registry

BUILT_INS = {"ragas-pretty@1", "transcript@1", "json@1", "xml@1"}


def test_built_ins_come_from_the_entry_point_group() -> None:
    fresh = new_registry()
    assert set(fresh.names()) >= BUILT_INS
    assert not BUILT_INS & set(fresh.broken)
    for name in BUILT_INS:
        assert fresh.get(name).__module__.startswith("agent_eval_formatters.")


def test_one_module_per_released_version() -> None:
    modules = [formatter_class(name).__module__ for name in BUILT_INS]
    assert len(set(modules)) == len(modules)
    assert all(m.endswith("_v1") for m in modules)


def test_get_formatter_returns_instance_with_identity() -> None:
    formatter = get_formatter("transcript@1[max_tool_chars=2000]")
    assert formatter.name == "transcript" and formatter.version == 1
    assert formatter.identity == "transcript@1[max_tool_chars=2000]"
    assert repr(formatter) == "<TranscriptV1 transcript@1[max_tool_chars=2000]>"


def test_unknown_version_lists_available() -> None:
    with pytest.raises(UnknownPluginError) as info:
        get_formatter("transcript@9")
    assert "transcript@9" in str(info.value)
    assert "ragas-pretty@1" in str(info.value) and "transcript@1" in str(info.value)


def test_unknown_name_lists_available() -> None:
    with pytest.raises(UnknownPluginError, match=r"available: .*json@1"):
        get_formatter("nope@1")


def test_missing_version_lists_versions_of_that_name() -> None:
    with pytest.raises(ConfigError, match=r"needs a version .*available: transcript@1"):
        get_formatter("transcript")


class _Echo(Formatter[NoParams]):
    name = "echo-test"
    version = 3
    description = "test formatter"

    def render(self, trace: AgentTrace) -> str:
        return trace.conversation_id


def test_register_at_run_time_and_conflicts() -> None:
    register(_Echo)
    try:
        assert get_formatter("echo-test@3").render(AgentTrace(conversation_id="c")) == "c"
        register(_Echo)  # the same class again is a no-op

        class Other(_Echo):
            pass

        with pytest.raises(ValueError, match="already registered"):
            register(Other)
    finally:
        formatters.unregister("echo-test@3")
    assert "echo-test@3" not in formatters


def test_entry_point_declaring_another_release_is_broken() -> None:
    fresh = new_registry()
    with pytest.raises(ValueError, match="declares itself 'echo-test@3'"):
        fresh.register("echo-test@4", _Echo)
    with pytest.raises(TypeError, match="Formatter subclass"):
        fresh.register("x@1", object())


def test_wrong_parameter_model_is_rejected() -> None:
    from agent_eval_formatters.transcript_v1 import TranscriptV1

    from agent_eval.formatting import NoParams as Plain

    with pytest.raises(TypeError, match="transcript@1 takes TranscriptParams, not NoParams"):
        TranscriptV1(Plain())


def test_badly_named_formatter_is_refused() -> None:
    class Upper(_Echo):
        name = "Upper"

    class NoVersion(_Echo):
        version = "one"  # type: ignore[assignment]

    fresh = new_registry()
    with pytest.raises(ConfigError, match="bad formatter 'Upper@3'"):
        fresh.register("Upper@3", Upper)
    with pytest.raises(ConfigError, match="bad formatter 'echo-test@one'"):
        fresh.register("echo-test@one", NoVersion)


def test_built_ins_install_under_an_unambiguous_top_level_name(tmp_path: Path) -> None:
    """The repository's formatters/ folder installs as agent_eval_formatters, not formatters."""
    from importlib.metadata import distribution

    points = [
        ep for ep in distribution("otel-agent-eval").entry_points
        if ep.group == "agent_eval.formatters"
    ]  # fmt: skip
    assert points and all(ep.value.startswith("agent_eval_formatters.") for ep in points)
    # an editable install puts the checkout on sys.path, where formatters/ is a bare folder
    # (a namespace package with no code); a wheel installs no "formatters" at all
    code = (
        "import importlib.util as u\n"
        "spec = u.find_spec('formatters')\n"
        "print(spec is None or spec.origin is None, u.find_spec('agent_eval_formatters').origin)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    no_formatters, origin = done.stdout.split()
    assert no_formatters == "True"
    assert Path(origin).parent.name == "agent_eval_formatters"
