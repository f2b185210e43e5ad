"""What a small command imports: only what it uses (issue 15, ``agent-eval ingest`` < 0.3 s).

Regressions: ``ingest`` of one OTLP/JSON file imported protobuf and opentelemetry-proto (for the
``otlp-proto`` container's sniff), PyYAML (the cassette container), the ``--json`` payload
models, and every container twice over (once for ``--format``'s help text); ``score --judge
MODEL`` imported every judge plugin to learn that ``MODEL`` is not a judge kind; ``score``
imported the OTel SDK for event sinks nobody configured. Together about 0.2 s of the 0.5 s an
``ingest`` of a small file took (``bench/cli_startup.py``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agent_eval.cli._event_options import EVENTS_FILE_NAME

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "fixtures" / "otel" / "openai-v2-latest-span.otlp.json"

_NOT_FOR_A_SMALL_INGEST = (
    "google.protobuf",
    "opentelemetry.proto",
    "opentelemetry.sdk",
    "yaml",
    "agent_eval.cli._json_output",
    "agent_eval.run",
    "rich",  # its summary is printed without rich (cli.app.print_plain)
)


def _modules_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint('\\n'.join(sorted(sys.modules)), file=sys.stderr)\n"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return set(done.stderr.split())


def _cli(*argv: str) -> str:
    return (
        "import sys\nfrom agent_eval.cli import main\n"
        f"sys.argv = {['agent-eval', *argv]!r}\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
    )


def test_ingest_of_a_small_json_file_imports_no_proto_yaml_or_json_payloads(
    tmp_path: Path,
) -> None:
    out = tmp_path / "traces.jsonl"
    modules = _modules_after(_cli("ingest", str(SMALL), "-o", str(out)))
    assert not {m for m in modules if m.startswith(_NOT_FOR_A_SMALL_INGEST)}
    assert len(out.read_text().splitlines()) == 1  # and it did its work


def test_ingest_of_a_small_json_file_imports_two_of_the_container_modules(
    tmp_path: Path,
) -> None:
    # regression: `--format auto` imported all 21 built-in container modules to order them by
    # priority; their declarations (containers.builtin) now order them, and a module is imported
    # when its container is first asked: agent-trace-jsonl (priority 10), then otlp-json (20)
    modules = _modules_after(_cli("ingest", str(SMALL), "-o", str(tmp_path / "traces.jsonl")))
    from agent_eval.ingest.containers import _builtin as builtin

    implementations = {getattr(builtin, c).implementation.split(":")[0] for c in builtin.__all__}
    assert modules & implementations == {
        "agent_eval.ingest.containers._trace_jsonl",
        "agent_eval.ingest.containers._otlp_json",
    }
    assert "pydantic" in modules  # the probe sees the imports (the models are pydantic)


def test_help_imports_no_rich_and_no_pydantic() -> None:
    # regression: the stderr console (rich, a quarter of `--help`) was made on import of the CLI
    modules = _modules_after(_cli("--help"))
    assert "agent_eval.cli._app" in modules
    assert not {m for m in modules if m.startswith(("rich", "pydantic"))}


def test_every_command_prints_on_one_stderr_console() -> None:
    import importlib

    from agent_eval.cli import (
        _formatters_cmds as formatters_cmds,
    )
    from agent_eval.cli import (
        _ingest_cmds as ingest_cmds,
    )
    from agent_eval.cli import (
        _score_cmds as score_cmds,
    )

    app = importlib.import_module("agent_eval.cli._app")  # the module (`cli.app` is the Typer)
    assert score_cmds.err_console is formatters_cmds.err_console is app.error_console()
    assert app.err_console is app.error_console()
    assert app.err_console.stderr
    with app.error_console().capture() as captured:  # ingest makes no console of its own
        ingest_cmds._print_error("no [x]")
    assert captured.get() == "error: no [x]\n"


def test_ingest_json_summary_still_imports_its_payloads(tmp_path: Path) -> None:
    modules = _modules_after(_cli("ingest", str(SMALL), "-o", str(tmp_path / "t"), "--json"))
    assert "agent_eval.cli._json_output" in modules


def test_ingest_help_lists_every_container_without_importing_one() -> None:
    code = (
        "from agent_eval.ingest.containers import containers\n"
        "declared = containers.declared_names()\n"
        "assert not [m for m in __import__('sys').modules "
        "if m.startswith('agent_eval.ingest.containers.') and m != "
        "'agent_eval.ingest.containers._base'], 'imported a container'\n"
        "assert declared == containers.names(), (declared, containers.names())\n"
    )
    _modules_after(code)
    done = subprocess.run(
        [sys.executable, "-c", _cli("ingest", "--help")], capture_output=True, text=True, check=True
    )
    assert all(name in done.stdout for name in ("otlp-json", "otlp-proto", "tau2-bench"))


def test_in_imports_only_the_plugin_asked_for() -> None:
    code = (
        "from agent_eval.judges._base import judges\n"
        "assert 'openai' in judges\n"
        "assert 'gpt-4o-mini' not in judges  # a model name, not a judge kind\n"
    )
    modules = _modules_after(code)
    assert "agent_eval.judges._openai_judge" in modules
    assert "agent_eval.judges._langchain_judge" not in modules
    assert "agent_eval.judges._llama_cpp_judge" not in modules


def test_unregistered_entry_point_stays_out_when_the_group_loads_later() -> None:
    from agent_eval._plugins import Registry
    from agent_eval.ingest.containers._base import Container, _adapt

    registry: Registry[Container] = Registry("container", "agent_eval.containers", _adapt)
    assert "otlp-json" in registry
    registry.unregister("otlp-json")
    assert "otlp-json" not in registry.names()  # listing loads the rest, not it again
    assert "otlp-proto" in registry.names()


def test_otlp_proto_file_is_still_read_with_protobuf_imported_on_demand(tmp_path: Path) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    from agent_eval.ingest import ingest

    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = bytes(range(1, 17)), bytes(range(1, 9)), "chat m"
    span.attributes.add(key="gen_ai.operation.name").value.string_value = "chat"
    path = tmp_path / "one.otlp.pb"
    path.write_bytes(request.SerializeToString())
    run = ingest([path])
    run.collect()
    assert run.report.files[0].container == "otlp-proto"
    assert run.report.spans_read == 1


def test_events_file_name_is_the_emitter_s() -> None:
    from agent_eval.otel._events import EVENTS_FILE_NAME as EMITTED

    assert EVENTS_FILE_NAME == EMITTED


def test_import_agent_eval_api_imports_no_ingest_config_or_statistics() -> None:
    """``import agent_eval._api`` loads the scoring path only (issue 30).

    Regression: it imported the whole ingest package (for ``load_references``, used only with a
    reference file) and the config model (a type hint of the budget).
    """
    modules = _modules_after("import agent_eval._api")
    unwanted = ("agent_eval.ingest", "agent_eval.config", "statsmodels", "scipy", "yaml")
    assert not {m for m in modules if m.startswith(unwanted)}
    bare = _modules_after("import agent_eval")
    assert not {m for m in bare if m.startswith(("pydantic", "rich", "agent_eval._trace"))}
