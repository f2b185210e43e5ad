"""Formatter identities: parsing, canonical printing, parameter validation."""

from __future__ import annotations

import pytest
from agent_eval_formatters.transcript_v1 import TranscriptParams

from agent_eval.errors import ConfigError
from agent_eval.formatting import FormatterSpec, format_identity, get_formatter, parse_identity
from agent_eval.formatting._identity import build_params, describe_params


def test_parse_full_identity() -> None:
    spec = parse_identity(" transcript@1[ system = off , max_tool_chars=2000 ] ")
    assert spec == FormatterSpec("transcript", 1, (("system", "off"), ("max_tool_chars", "2000")))
    assert spec.release == "transcript@1"


def test_parse_without_params_and_without_version() -> None:
    assert parse_identity("ragas-pretty@1") == FormatterSpec("ragas-pretty", 1)
    assert parse_identity("json@12[]") == FormatterSpec("json", 12)
    assert parse_identity("json").version is None


@pytest.mark.parametrize(
    "text",
    ["", "Transcript@1", "transcript@v1", "transcript@1[", "transcript@1[a]", "t@1[=1]", "x@1]["],
)
def test_malformed_identities_are_config_errors(text: str) -> None:
    with pytest.raises(ConfigError, match="formatter"):
        parse_identity(text)


def test_duplicate_parameter_rejected() -> None:
    with pytest.raises(ConfigError, match="twice"):
        parse_identity("transcript@1[system=on,system=off]")


def test_canonical_order_is_sorted_and_defaults_dropped() -> None:
    a = get_formatter("transcript@1[system=false,max_tool_chars=2000]")
    b = get_formatter("transcript@1[max_tool_chars=2000,system=off]")
    assert a.identity == b.identity == "transcript@1[max_tool_chars=2000,system=false]"
    assert a == b and hash(a) == hash(b)
    assert get_formatter("transcript@1[system=true]").identity == "transcript@1"
    assert get_formatter("transcript@1[max_tool_chars=none]").identity == "transcript@1"


def test_identity_round_trips_through_parse() -> None:
    formatter = get_formatter("transcript@1[max_tool_chars=0,system=no]")
    assert get_formatter(formatter.identity) == formatter
    assert formatter.params == TranscriptParams(max_tool_chars=0, system=False)


def test_format_identity_values() -> None:
    params = {"b": True, "a": None, "c": 1.5, "d": "x"}
    assert format_identity("f", 2, params) == "f@2[a=none,b=true,c=1.5,d=x]"
    assert format_identity("f", 2, {}) == "f@2"


def test_unknown_parameter_lists_what_exists() -> None:
    with pytest.raises(ConfigError) as info:
        get_formatter("transcript@1[max_chars=5]")
    message = str(info.value)
    assert "no parameter 'max_chars'" in message
    assert "max_tool_chars: int | None = none" in message
    assert "system: bool = true" in message


@pytest.mark.parametrize("value", ["lots", "-1", "1.5"])
def test_bad_parameter_value_names_it(value: str) -> None:
    with pytest.raises(ConfigError) as info:
        get_formatter(f"transcript@1[max_tool_chars={value}]")
    assert f"max_tool_chars={value!r}" in str(info.value)
    assert "its parameters" in str(info.value)


def test_parameter_on_formatter_without_parameters() -> None:
    with pytest.raises(ConfigError, match=r"ragas-pretty@1 has no parameter 'x'.*\(none\)"):
        get_formatter("ragas-pretty@1[x=1]")


def test_none_only_where_the_type_allows_it() -> None:
    with pytest.raises(ConfigError, match="system"):
        build_params("transcript@1", TranscriptParams, {"system": "none"})


def test_describe_params_sorted() -> None:
    assert describe_params(TranscriptParams) == [
        "max_tool_chars: int | None = none",
        "system: bool = true",
    ]
