"""ScoreConfig from agent-eval.toml with flag overrides; secrets never read from the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from agent_eval.config import ScoreConfig, load_config, redact_url
from agent_eval.errors import ConfigError


def test_defaults_without_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config()
    assert config == ScoreConfig()
    assert (config.metric, config.formatter, config.concurrency, config.max_retries) == (
        "goal_accuracy",
        "transcript@2",
        16,
        2,
    )


def test_file_then_flags(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        '[score]\njudge = "m1"\nbase-url = "http://localhost:11434/v1"\nconcurrency = 4\n'
        'with_reference = true\npaths = ["a.jsonl"]\n[prices."m1"]\ninput = 1\noutput = 2\n'
    )
    config = load_config(path, concurrency=8, judge=None, mode="json")
    assert (config.judge, config.base_url, config.concurrency, config.mode) == (
        "m1",
        "http://localhost:11434/v1",
        8,
        "json",
    )
    assert config.with_reference and config.paths == ("a.jsonl",)


def test_agent_eval_toml_in_the_working_directory_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent-eval.toml").write_text('[score]\nformatter = "transcript@1"\n')
    assert load_config().formatter == "transcript@1"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[score]\napi-key = "sk-1234"\n', "api-key-env"),
        ("[score]\nconcurency = 2\n", "concurency"),
        ('[score]\nmode = "xml"\n', "mode"),
        ("[score]\nconcurrency = 0\n", "concurrency"),
        ("[score]\nfail-under = 2\n", "fail_under"),
        ("[score\n", "not valid TOML"),
        ('score = "x"\n', "[score] must be a table"),
    ],
)
def test_bad_settings_name_the_problem(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=None) as caught:
        load_config(path)
    assert message in str(caught.value)
    assert "sk-1234" not in str(caught.value)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / "nope.toml")


@pytest.mark.parametrize("bad", ["--out", "", "localhost:11434", "ftp://host/v1"])
def test_base_url_must_be_an_http_url(bad: str) -> None:
    # regression: `--base-url $UNSET --out DIR` took "--out" as the endpoint and failed late,
    # as 15 connection errors, instead of as a usage error
    with pytest.raises(ValidationError, match="not an http\\(s\\) URL"):
        ScoreConfig(base_url=bad)


def test_redact_url_hides_credentials_only() -> None:
    assert (
        redact_url("https://user:s3cret@proxy.example:8443/v1")
        == "https://***@proxy.example:8443/v1"
    )
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert redact_url(None) is None


def test_a_check_across_settings_says_its_message_alone(tmp_path: Path) -> None:
    # fresh-user trial: "--workers 2" without Ray printed ": : Value error, ... (got {...the
    # whole table, PosixPath and all...})"; now the message alone
    with pytest.raises(ConfigError) as caught:
        load_config(None, workers=2)
    assert str(caught.value) == (
        "invalid setting in the command line: workers sizes the actor pool of a Ray run: give it "
        "with --engine ray (one process scores with --concurrency)"
    )


def test_a_message_that_quotes_the_value_does_not_repeat_it() -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(None, engine="bogus")
    text = str(caught.value)
    assert text.startswith("invalid setting in the command line: engine: unknown engine 'bogus';")
    assert text.count("'bogus'") == 1 and "Value error" not in text
    with pytest.raises(ConfigError) as caught:
        load_config(None, concurrency=0)
    assert str(caught.value).endswith(
        "concurrency: Input should be greater than or equal to 1 (got 0)"
    )
