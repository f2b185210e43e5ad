"""Containers declared apart from their implementation (``DeferredContainer``), built-in or not.

``--format auto`` orders every container by ``(priority, name)`` before asking one, which used
to import all 21 built-in container modules for any file (issue 15: 30-50 ms of a small
``ingest``). The built-ins are now declared in ``containers.builtin`` and their modules are
imported when first asked.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from agent_eval._plugins import declared_entry_points
from agent_eval._trace import AgentTrace
from agent_eval.errors import ConfigError
from agent_eval.ingest import detect_container, ingest
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import (
    Container,
    ContainerItem,
    DeferredContainer,
    containers,
)
from agent_eval.ingest.containers._otlp_json import OtlpJsonContainer

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "fixtures" / "otel" / "openai-v2-latest-span.otlp.json"


def _implementations() -> dict[str, str]:
    """Module of each built-in implementation -> the container's name."""
    return {
        getattr(builtin, cls).implementation.partition(":")[0]: getattr(builtin, cls).name
        for cls in builtin.__all__
    }


def test_every_builtin_entry_point_names_its_declaration() -> None:
    declared = {ep.name: ep.value for ep in declared_entry_points("agent_eval.containers")}
    assert sorted(getattr(builtin, cls).name for cls in builtin.__all__) == sorted(declared)
    for cls in builtin.__all__:
        declaration = getattr(builtin, cls)
        assert declared[declaration.name] == f"agent_eval.ingest.containers._builtin:{cls}"


@pytest.mark.parametrize("cls", builtin.__all__)
def test_each_implementation_inherits_its_declaration(cls: str) -> None:
    declaration = getattr(builtin, cls)()
    implementation = declaration.load()
    assert type(implementation) is not type(declaration)
    assert isinstance(implementation, type(declaration))
    assert type(implementation).__module__ == declaration.implementation.partition(":")[0]
    assert (implementation.name, implementation.priority, implementation.json_keys) == (
        declaration.name,
        declaration.priority,
        declaration.json_keys,
    )
    assert implementation.load() is implementation  # used directly, it is its own
    assert declaration.load() is implementation  # imported once


def test_auto_detection_imports_only_the_containers_asked_before_the_match() -> None:
    # ordered by (priority, name): agent-trace-jsonl (10) is asked, then otlp-json (20) matches
    code = textwrap.dedent(
        f"""
        import sys
        from agent_eval.ingest import detect_container
        from agent_eval.ingest.containers._base import containers
        assert len(containers.names()) >= 21
        assert detect_container({str(SMALL)!r}).name == "otlp-json"
        print("\\n".join(sys.modules))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    imported = {_implementations()[m] for m in done.stdout.split() if m in _implementations()}
    assert imported == {"agent-trace-jsonl", "otlp-json"}


_ORDER_BEFORE = [
    "agent-trace-jsonl", "otlp-json", "mtrag", "mtrag-human-eval", "mtrag-un", "tau-bench",
    "tau2-bench", "begin", "expertqa", "faithdial-audit", "otel-python-console", "rag-jsonl",
    "otlp-proto", "jaeger", "langfuse", "openai-cassette", "otel-js", "phoenix", "tempo",
    "openai-messages", "span-attributes",
]  # fmt: skip
"""The ``(priority, name)`` order when the priorities were class attributes of the modules."""


def test_the_detection_order_is_the_one_before_the_declarations() -> None:
    ordered = sorted((c for _, c in containers), key=lambda c: (c.priority, c.name))
    assert [c.name for c in ordered] == _ORDER_BEFORE


class _Declared(DeferredContainer):
    name: ClassVar[str] = "test-declared"
    description: ClassVar[str] = "a third-party container declared apart from its module"
    priority: ClassVar[int] = 1
    json_keys: ClassVar[frozenset[str]] = frozenset({"marker"})
    implementation: ClassVar[str] = "st_declared_impl:Implementation"


_IMPLEMENTATION = """
from agent_eval.ingest.containers._base import containers
from agent_eval._trace import AgentTrace


class Implementation(type(containers.get("test-declared"))):
    def sniff(self, path, head):
        return head.startswith(b"DECLARED")

    def read(self, path):
        yield AgentTrace(conversation_id="declared")
"""


def _register(declaration: type[DeferredContainer], module: str, tmp_path: Path) -> None:
    (tmp_path / "st_declared_impl.py").write_text(module)
    sys.path.insert(0, str(tmp_path))
    containers.register(declaration.name, declaration)


@pytest.fixture
def registered(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    containers.unregister(_Declared.name)
    sys.path.remove(str(tmp_path))
    sys.modules.pop("st_declared_impl", None)


def test_a_third_party_declaration_is_imported_when_first_asked(registered: Path) -> None:
    _register(_Declared, _IMPLEMENTATION, registered)
    assert "st_declared_impl" not in sys.modules
    assert [c.name for _, c in containers if c.priority == 1] == ["test-declared"]
    assert "st_declared_impl" not in sys.modules  # listing and ordering import nothing
    other = registered / "other.json"
    other.write_bytes(b'{"schema_version": 1}')
    assert not containers.get("test-declared").sniff(str(other), other.read_bytes())
    assert "st_declared_impl" in sys.modules
    mine = registered / "mine.txt"
    mine.write_bytes(b"DECLARED\n")
    (trace,) = ingest(mine)
    assert trace.conversation_id == "declared"
    assert containers.get("test-declared").json_keys == frozenset({"marker"})


def test_a_broken_implementation_says_which_and_auto_passes_over_it(registered: Path) -> None:
    _register(_Declared, "import no_such_module_anywhere\n", registered)
    declaration = containers.get("test-declared")
    with pytest.raises(ConfigError, match=r"'test-declared' is installed but failed to load "):
        declaration.load()
    with pytest.raises(ConfigError, match="st_declared_impl:Implementation: ModuleNotFound"):
        list(declaration.read(str(SMALL)))
    assert detect_container(str(SMALL)).name == "otlp-json"


class _Unrelated(Container):
    name: ClassVar[str] = "unrelated"
    description: ClassVar[str] = "not an implementation of the declaration"

    def sniff(self, path: str, head: bytes) -> bool:
        return True

    def read(self, path: str) -> Iterator[ContainerItem]:
        yield AgentTrace()


class _NoRead(_Declared):
    def sniff(self, path: str, head: bytes) -> bool:
        return True


@pytest.mark.parametrize("found", ["_Unrelated", "_NoRead"])
def test_an_implementation_of_another_kind_is_refused(found: str) -> None:
    class Pointing(_Declared):
        implementation: ClassVar[str] = f"{__name__}:{found}"

    with pytest.raises(ConfigError, match=f"{found} is not a subclass of .*that defines sniff"):
        Pointing().sniff("x", b"DECLARED")


def test_a_builtin_implementation_used_directly_reads_as_through_its_declaration() -> None:
    direct = [t.model_dump_json() for t in ingest(SMALL, format="otlp-json")]
    declared = containers.get("otlp-json")
    assert isinstance(declared, builtin.OtlpJson) and not isinstance(declared, OtlpJsonContainer)
    items = list(OtlpJsonContainer().read(str(SMALL)))
    assert items == list(declared.read(str(SMALL)))
    assert len(direct) == 1
