"""Third-party formatters: an installed package's entry point, and ``--formatter-path`` loading."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent_eval.errors import ConfigError
from agent_eval.formatting import fingerprint, formatters, get_formatter, load_formatters
from agent_eval.formatting._lock import read_lock, update_lock, verify_lock
from agent_eval.formatting._registry import new_registry

SHOUT = textwrap.dedent(
    '''
    """A third-party formatter: every message upper-cased."""

    from agent_eval.formatting import Formatter, FormatterParams
    from agent_eval._trace import AgentTrace


    class ShoutParams(FormatterParams):
        exclaim: bool = False


    class ShoutV1(Formatter[ShoutParams]):
        name = "shout"
        version = 1
        description = "upper-cased messages"
        Params = ShoutParams

        def render(self, trace: AgentTrace) -> str:
            end = "!" if self.params.exclaim else ""
            return "\\n".join(m.content.upper() + end for m in trace.messages)
    '''
)


@pytest.fixture
def third_party(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tmp dir holding package ``shout_formatters`` and its dist-info with an entry point."""
    package = tmp_path / "shout_formatters"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "shout_v1.py").write_text(SHOUT)
    dist = tmp_path / "shout_formatters-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: shout-formatters\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[agent_eval.formatters]\nshout@1 = shout_formatters.shout_v1:ShoutV1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_entry_point_plugin_is_discovered_and_fingerprinted(third_party: Path) -> None:
    registry = new_registry()
    assert "shout@1" in registry, registry.broken
    cls = registry.get("shout@1")
    assert cls.__module__ == "shout_formatters.shout_v1"
    digest = fingerprint(cls())
    assert len(digest) == 64
    assert digest != fingerprint(cls(cls.Params.model_validate({"exclaim": True})))
    project = verify_lock(registry=registry)  # the built-ins' lock does not cover it
    assert project.frozen_ok and project.unlocked == () and "shout@1" not in project.fingerprints
    own_lock = third_party / "shout_formatters" / "formatters.lock"  # the plugin's own lock
    assert update_lock(own_lock, registry) == ["shout@1"]
    assert read_lock(own_lock).fingerprints == {"shout@1": digest}
    anywhere = verify_lock(third_party / "all.lock", registry)  # outside a package: everything
    assert "shout@1" in anywhere.unlocked and "json@1" in anywhere.unlocked


def test_entry_point_plugin_in_the_cli(third_party: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(third_party)}
    cli = Path(sys.executable).with_name("agent-eval")
    out = subprocess.run(
        [str(cli), "formatters", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = {row["formatter"]: row for row in json.loads(out.stdout)["formatters"]}
    assert rows["shout@1"]["lock"] == "not locked"
    assert rows["shout@1"]["parameters"] == ["exclaim: bool = false"]
    assert rows["ragas-pretty@1"]["lock"] == "locked"


def test_load_from_a_directory(tmp_path: Path) -> None:
    (tmp_path / "loud.py").write_text(SHOUT.replace('"shout"', '"loud"'))
    (tmp_path / "_private.py").write_text("raise RuntimeError('must not be imported')")
    try:
        loaded = load_formatters(tmp_path)
        assert [cls.release() for cls in loaded] == ["loud@1"]
        assert get_formatter("loud@1[exclaim=yes]").identity == "loud@1[exclaim=true]"
        assert load_formatters(tmp_path) == loaded  # loading twice is harmless
    finally:
        formatters.unregister("loud@1")


def test_load_from_a_file_and_a_module_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "quiet_mod.py").write_text(
        SHOUT.replace('"shout"', '"quiet"').replace("version = 1", "version = 2")
    )
    try:
        assert [c.release() for c in load_formatters(tmp_path / "quiet_mod.py")] == ["quiet@2"]
    finally:
        formatters.unregister("quiet@2")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert [c.release() for c in load_formatters("quiet_mod")] == ["quiet@2"]
    finally:
        formatters.unregister("quiet@2")


def test_loading_a_release_that_exists_is_refused(tmp_path: Path) -> None:
    clash = SHOUT.replace('"shout"', '"json"')
    (tmp_path / "clash.py").write_text(clash)
    with pytest.raises(
        ConfigError, match=r"declares json@1, which agent_eval_formatters\.json_v1\.JsonV1"
    ):
        load_formatters(tmp_path / "clash.py")
    assert formatters.get("json@1").__module__ == "agent_eval_formatters.json_v1"


@pytest.mark.parametrize(
    ("location", "message"),
    [("no/such/dir.py", "does not exist"), ("no_such_module_xyz", "neither a directory")],
)
def test_bad_locations(location: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_formatters(location)


def test_location_without_formatters(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_text("X = 1\n")
    with pytest.raises(ConfigError, match="no Formatter subclass"):
        load_formatters(tmp_path)


def test_import_error_is_reported(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import does_not_exist_anywhere\n")
    with pytest.raises(ConfigError, match="importing it failed: ModuleNotFoundError"):
        load_formatters(tmp_path)


def test_a_lookup_by_name_imports_only_that_plugin() -> None:
    # regression: the first lookup imported every plugin of the group (0.7 s of a cached re-run)
    # (a built-in container's entry point is its declaration: using it imports its module)
    code = (
        "import json, sys\n"
        "from agent_eval.ingest.containers._base import containers\n"
        "containers.get('otlp-json').sniff('x.json', b'{}')\n"
        "mods = [m for m in sys.modules if m.startswith('agent_eval.ingest.containers.')]\n"
        "print(json.dumps(mods))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(done.stdout))
    assert "agent_eval.ingest.containers._otlp_json" in loaded
    assert "agent_eval.ingest.containers._jaeger" not in loaded
    assert "agent_eval.ingest.containers._tau_bench" not in loaded


def test_an_unknown_name_still_lists_every_plugin() -> None:
    from agent_eval.errors import UnknownPluginError
    from agent_eval.ingest.containers._base import containers

    with pytest.raises(UnknownPluginError, match="jaeger"):
        containers.get("no-such-container")
