"""Auto-detect on JSON cut short: the error names the container it looks like, line and column.

A fresh user's finding: a truncated OTLP/JSON file was reported "not recognised" by
``--format auto`` (its first keys were cut off), while ``--format otlp-json`` named the line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.errors import DecodeError, UnknownFormatError
from agent_eval.ingest import containers, detect_container, ingest
from agent_eval.ingest._json_diagnosis import likely_container

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def test_otlp_file_cut_inside_its_first_key_is_a_decode_error_naming_otlp_json(
    tmp_path: Path,
) -> None:
    whole = (FIXTURES / "otel" / "strands-events.otlp.json").read_bytes()
    cut = tmp_path / "cut.otlp.json"
    cut.write_bytes(whole[:12])  # '{\n "resource'
    with pytest.raises(DecodeError) as info:
        detect_container(str(cut))
    assert info.value.line == 2
    assert str(info.value) == (
        f"{cut}:2: the file looks like otlp-json but ends early (truncated) at line 2, "
        "column 11 (unexpected end of data); re-export or copy it whole; once it is valid "
        "JSON, --format otlp-json reads it"
    )


def test_json_lines_cut_on_a_later_line_name_that_line(tmp_path: Path) -> None:
    lines = [json.dumps({"traceID": f"{n:032x}", "spanID": f"{n:016x}"}) for n in range(1, 4)]
    path = tmp_path / "spans.jsonl"
    path.write_text("\n".join(lines)[:-10])
    with pytest.raises(DecodeError) as info:
        detect_container(str(path))
    assert info.value.line == 3
    assert "looks like jaeger but ends early (truncated) at line 3, column" in str(info.value)


def test_invalid_not_truncated_json_says_invalid(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"colour": [1, 2,, 3]}\n')
    with pytest.raises(DecodeError) as info:
        detect_container(str(path))
    assert "no container recognises the file, and it is not valid JSON at line 1, column 18" in str(
        info.value
    )


def test_cut_json_of_no_known_shape_still_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{\n  "colour": "bl')
    with pytest.raises(DecodeError) as info:
        detect_container(str(path))
    assert str(info.value).startswith(
        f"{path}:2: no container recognises the file, and it ends early (truncated) at line 2"
    )


def test_valid_json_of_no_known_shape_stays_not_recognised(tmp_path: Path) -> None:
    for name, text in (("a.json", '{"colour": "blue"}'), ("b.jsonl", '{"a": 1}\n{"b": 2}\n')):
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(UnknownFormatError):
            detect_container(str(path))


def test_likely_container_counts_marker_keys_and_a_key_cut_off() -> None:
    found = likely_container(
        b'{"trace": {"resourceSpans": []}, "metrics": {}', [c for _, c in containers]
    )
    assert found is not None and found.name == "tempo"  # 2 tempo keys beat 1 otlp-json key
    found = likely_container(b'{"observ', [c for _, c in containers])
    assert found is not None and found.name == "langfuse"
    assert likely_container(b'{"colour": "blue"', [c for _, c in containers]) is None


def test_cli_exit_3_and_the_other_files_still_read(tmp_path: Path) -> None:
    cut = tmp_path / "cut.json"
    cut.write_bytes((FIXTURES / "otel" / "traceloop-attributes.otlp.json").read_bytes()[:9])
    good = FIXTURES / "otel" / "traceloop-attributes.otlp.json"
    run = ingest([cut, good])
    assert len(run.collect()) == 1
    errors = {Path(f.path).name: f.error for f in run.report.files}
    assert "looks like otlp-json but ends early (truncated) at line 2" in (errors["cut.json"] or "")
    result = CliRunner().invoke(app, ["ingest", str(cut)])
    assert result.exit_code == 3
    assert "looks like otlp-json but ends early (truncated)" in result.output
