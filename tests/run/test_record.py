"""The reproducibility record of a run, field by field, and ``agent-eval runs show/diff``."""

from __future__ import annotations

import hashlib
import json
import platform
from importlib import metadata
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.run._record import VERDICT_PACKAGES, diff_records, flatten
from agent_eval.testing import FakeModelServer, Structured

from .goal_script import script_goal_judge, trace

runner = CliRunner()


pytestmark = pytest.mark.usefixtures("judge_env_cleared")


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _run(server: FakeModelServer, tmp_path: Path, out: Path, *extra: str) -> dict:  # type: ignore[type-arg]
    traces = tmp_path / "traces.jsonl"
    traces.write_text(
        "".join(t.model_dump_json() + "\n" for t in (trace("a", done=True), trace("b", done=False)))
    )
    refs = tmp_path / "refs.jsonl"
    refs.write_text('{"conversation_id": "a", "reference": "get the thing done"}\n')
    result = runner.invoke(
        app,
        ["score", str(traces), "--judge", "fake-model", "--base-url", server.base_url,
         "--out", str(out), "--references", str(refs), *extra],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    shown = runner.invoke(app, ["runs", "show", str(out), "--json"])
    assert shown.exit_code == 0, shown.output
    return json.loads(shown.stdout)  # type: ignore[no-any-return]


def test_the_record_names_versions_parameters_inputs_and_config(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    config = tmp_path / "agent-eval.toml"
    config.write_text(
        '[score]\nconcurrency = 3\nseed = 11\nbase-url = "http://user:hunter2@localhost:9/v1"\n'
        'api-key-env = "MY_KEY"\n[prices."fake-model"]\ninput = 1.0\noutput = 2.0\n'
    )
    run = _run(fake_server, tmp_path, tmp_path / "out", "--api-key-env", "X")
    record = run["record"]
    assert record["agent_eval"] == _version("otel-agent-eval")
    assert record["python"]["version"] == platform.python_version()
    assert record["platform"]["machine"] == platform.machine()
    assert set(record["packages"]) == set(VERDICT_PACKAGES)
    assert record["packages"]["openai"] == _version("openai")
    assert record["packages"]["pydantic"] == _version("pydantic")
    request = record["request"]
    assert (request["judge_model"], request["base_url"]) == ("fake-model", fake_server.base_url)
    assert (request["temperature"], request["seed"], request["mode"]) == (0.0, 11, "tools")
    assert (request["concurrency"], request["timeout"], request["max_retries"]) == (3, 60.0, 2)
    assert request["max_context_tokens"] == 128_000 and request["max_judge_tokens"] is None
    traces = tmp_path / "traces.jsonl"
    (digest,) = record["inputs"]
    assert digest == {
        "path": str(traces),
        "sha256": hashlib.sha256(traces.read_bytes()).hexdigest(),
        "bytes": traces.stat().st_size,
    }
    refs = tmp_path / "refs.jsonl"
    assert record["references"]["sha256"] == hashlib.sha256(refs.read_bytes()).hexdigest()
    assert record["config"]["path"] == "agent-eval.toml"
    assert record["config"]["sha256"] == hashlib.sha256(config.read_bytes()).hexdigest()
    content = record["config"]["content"]
    assert content["score"]["base-url"] == "http://***@localhost:9/v1"
    assert content["score"]["api-key-env"] == "MY_KEY" and content["score"]["concurrency"] == 3
    assert content["prices"]["fake-model"] == {"input": 1.0, "output": 2.0}
    assert "hunter2" not in json.dumps(run)


def test_runs_diff_names_what_changed_and_which_rows(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    _run(fake_server, tmp_path, tmp_path / "one")
    fake_server.clear()  # the second judge fails everything in stage 2
    fake_server.add_rule(Structured({"reason": "r", "verdict": "0"}), schema="OutcomeComparison")
    script_goal_judge(fake_server)
    _run(fake_server, tmp_path, tmp_path / "two", "--concurrency", "5", "--no-cache")
    result = runner.invoke(app, ["runs", "diff", str(tmp_path / "one"), str(tmp_path / "two"),
                                 "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    diff = json.loads(result.stdout)
    record_keys = {key for key, _, _ in diff["record"]}
    assert "request.concurrency" in record_keys and "request.cache" in record_keys
    assert ["request.concurrency", 16, 5] in diff["record"]
    assert ["concurrency", 16, 5] in diff["config"]
    assert diff["pairing"] == "subject, metric, formatter, repeat"
    assert [c["key"][0] for c in diff["changed"]] == ["a"]  # b was "0" already
    assert diff["changed"][0]["a"].startswith("ok 1") and diff["changed"][0]["b"].startswith("ok 0")
    assert diff["unchanged"] == 1 and diff["only_a"] == diff["only_b"] == []
    text = runner.invoke(app, ["runs", "diff", str(tmp_path / "one"), str(tmp_path / "two")])
    assert "record.request.concurrency" in text.stdout
    assert "1 changed, 1 unchanged" in text.stdout


def test_flatten_and_diff_records() -> None:
    assert flatten({"a": {"b": 1}, "c": [2, {"d": 3}], "e": {}}) == {
        "a.b": 1, "c[0]": 2, "c[1].d": 3, "e": {},
    }  # fmt: skip
    assert diff_records({"x": 1, "y": {"z": 2}}, {"x": 1, "y": {"z": 3}, "w": 0}) == [
        ("w", None, 0),
        ("y.z", 2, 3),
    ]


def test_the_report_shows_the_record(fake_server: FakeModelServer, tmp_path: Path) -> None:
    script_goal_judge(fake_server)
    run = _run(fake_server, tmp_path, tmp_path / "out")
    html = tmp_path / "report.html"
    shown = runner.invoke(app, ["report", str(tmp_path / "out"), "--html", str(html)])
    assert shown.exit_code == 0, shown.output
    text = html.read_text()
    assert f"Reproducibility record of run {run['run_id']}" in text
    assert f"<code>packages.openai</code></td><td><code>{_version('openai')}</code>" in text
    assert run["record"]["inputs"][0]["sha256"] in text
