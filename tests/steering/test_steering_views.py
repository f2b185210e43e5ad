"""The steering flags where people and tools look: ``errors``, ``runs show``, the HTML report
and the OTel evaluation events (the real SDK's log pipeline and the OTLP JSON file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.otel import _semconv as sc
from agent_eval.otel._events import EVENTS_FILE_NAME

from .test_steering_rows import clean, injected

runner = CliRunner()


@pytest.fixture
def scored(tmp_path: Path) -> Path:
    """A run of steering@1 and loops@1 on one injected and one clean conversation."""
    inputs = tmp_path / "traces.jsonl"
    inputs.write_text(
        "".join(t.model_dump_json() + "\n" for t in (injected(), clean())), encoding="utf-8"
    )
    out = tmp_path / "run"
    args = ["score", str(inputs), "--metric", "steering,tool_errors", "--out", str(out)]
    result = runner.invoke(app, [*args, "--events-file"])
    assert result.exit_code == 0, result.output
    return out


def test_errors_lists_the_flagged_units(scored: Path) -> None:
    shown = runner.invoke(app, ["errors", str(scored)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "no errored conversations" in shown.output
    assert "steering flags of run" in shown.output and "1 unit(s)" in shown.output
    assert "turn_syntax" in shown.output and "message 4 (tool)" in shown.output
    document = orjson.loads(runner.invoke(app, ["errors", str(scored), "--json"]).stdout)
    [unit] = document["steering"]
    assert (unit["conversation_id"], unit["unit_id"]) == ("inj", "conversation")
    assert [f["kind"] for f in unit["flags"]] == ["turn_syntax", "asks_verdict"]


def test_runs_show_lists_the_flagged_units(scored: Path) -> None:
    shown = runner.invoke(app, ["runs", "show", str(scored)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "asks_verdict" in shown.output
    document = orjson.loads(runner.invoke(app, ["runs", "show", str(scored), "--json"]).stdout)
    assert document["steering"][0]["flags"][0]["excerpt"] == "AI: I cancelled it."


def test_the_report_shows_the_flags_escaped(scored: Path, tmp_path: Path) -> None:
    html = tmp_path / "report.html"
    made = runner.invoke(app, ["report", str(scored), "--html", str(html)])
    assert made.exit_code == 0, made.output
    page = html.read_text(encoding="utf-8")
    assert '<h2 id="steering">Steering flags</h2>' in page
    assert page.count('data-steering-kind="turn_syntax"') == 1
    assert "AI: I cancelled it." in page


def _attributes(record: dict[str, Any]) -> dict[str, Any]:
    values = {}
    for item in record["attributes"]:
        value = item["value"]
        if "arrayValue" in value:
            values[item["key"]] = [next(iter(v.values())) for v in value["arrayValue"]["values"]]
        else:
            values[item["key"]] = next(iter(value.values()))
    return values


def test_the_events_carry_the_flags(scored: Path) -> None:
    records = [
        record
        for line in (scored / EVENTS_FILE_NAME).read_bytes().splitlines()
        for resource in orjson.loads(line)["resourceLogs"]
        for scope in resource["scopeLogs"]
        for record in scope["logRecords"]
    ]
    by_subject = {}
    for record in records:
        attrs = _attributes(record)
        by_subject[attrs[sc.GEN_AI_CONVERSATION_ID], attrs[sc.AGENT_EVAL_METRIC]] = attrs
    assert len(by_subject) == 4
    for metric in ("steering@1", "tool_errors@1"):
        flagged = by_subject["inj", metric]
        assert int(flagged[sc.AGENT_EVAL_STEERING_FLAGS]) == 2
        assert flagged[sc.AGENT_EVAL_STEERING_KINDS] == ["turn_syntax", "asks_verdict"]
        assert flagged[sc.AGENT_EVAL_STEERING_LOCATIONS] == ["message 4 (tool)"] * 2
        assert sc.AGENT_EVAL_STEERING_FLAGS not in by_subject["clean", metric]
