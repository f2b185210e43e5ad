"""Criteria files: TOML and YAML read the same, and a bad file names the file, key and fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_eval.errors import ConfigError, CriteriaError
from agent_eval.metrics._criteria import criteria_metric
from agent_eval.metrics._criteria_file import load_criteria

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "criteria"

GOOD = """\
name = "polite"
version = 2
unit = "answer"
question = "Is the answer polite?"
pass = "No rude word."
fail = "A rude word."
"""


def _write(tmp_path: Path, text: str, name: str = "c.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_toml_and_yaml_give_the_same_criteria(tmp_path: Path) -> None:
    toml = load_criteria(
        _write(tmp_path, GOOD + '[[examples]]\nconversation = "x"\nverdict = 0\nreason = "r"\n')
    )
    yaml = load_criteria(
        _write(
            tmp_path,
            "name: polite\nversion: 2\nunit: answer\nquestion: Is the answer polite?\n"
            "pass: No rude word.\nfail: A rude word.\n"
            "examples:\n  - {conversation: x, verdict: '0', reason: r}\n",
            "c.yaml",
        )
    )
    assert toml.model_dump() == yaml.model_dump()
    assert toml.identity == "polite@2" and toml.examples[0].verdict == "0"
    assert toml.sha256 != yaml.sha256 and len(toml.sha256) == 64


def test_the_shipped_examples_load() -> None:
    names = sorted(load_criteria(p).identity for p in EXAMPLES.iterdir())
    assert names == [
        "asked_confirmation_before_irreversible_action@1",
        "stayed_within_policy@1",
    ]


@pytest.mark.parametrize(
    ("text", "key", "says", "fix"),
    [
        (GOOD.replace('question = "Is the answer polite?"\n', ""), "question", "is missing",
         "write the yes/no question"),
        (GOOD.replace('pass = "No rude word."\n', ""), "pass", "is missing", "say what passes"),
        (GOOD.replace("version = 2", 'version = "2"'), "version", "valid integer",
         "whole number of 1 or more"),
        (GOOD.replace("version = 2", "version = 0"), "version", "greater than or equal to 1",
         "whole number"),
        (GOOD.replace("version = 2", "version = 1.5"), "version", "1.5", "whole number"),
        (GOOD.replace('unit = "answer"', 'unit = "turn"'), "unit", "'turn'",
         'unit = "conversation"'),
        (GOOD.replace('name = "polite"', 'name = "Polite Answers"'), "name", "pattern",
         "lowercase name"),
        (GOOD.replace("question = ", "question = 3 #"), "question", "valid string",
         "yes/no question"),
        (GOOD + "threshold = 0.5\n", "threshold", "not a criteria key", "remove it"),
        (GOOD + '[[examples]]\nconversation = "x"\nverdict = 2\nreason = "r"\n',
         "examples.0.verdict", "1 (pass) or 0 (fail)", "verdict (1 pass, 0 fail)"),
        (GOOD + '[[examples]]\nconversation = "x"\nverdict = 1\n', "examples.0.reason",
         "is missing", "each example"),
    ],
)  # fmt: skip
def test_a_bad_file_names_file_key_and_fix(
    tmp_path: Path, text: str, key: str, says: str, fix: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(CriteriaError) as caught:
        load_criteria(path)
    error = caught.value
    assert isinstance(error, ConfigError)  # the CLI exits 2, as for any configuration mistake
    assert (error.path, error.key) == (str(path), key)
    assert says in error.problem and fix in error.fix
    assert str(error).startswith(f"{path}: key {key!r}: ")


@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        ("c.toml", "name = [", "is not valid TOML"),
        ("c.yaml", "name: [", "is not valid YAML"),
        ("c.yaml", "- a list", "holds a list, not a table of keys"),
        ("c.json", "{}", "has the suffix '.json'"),
    ],
)
def test_a_file_that_is_not_a_criteria_document(
    tmp_path: Path, name: str, text: str, says: str
) -> None:
    with pytest.raises(CriteriaError, match=says) as caught:
        load_criteria(_write(tmp_path, text, name))
    assert caught.value.path.endswith(name) and caught.value.key is None


def test_a_missing_file_says_how_to_name_one(tmp_path: Path) -> None:
    with pytest.raises(CriteriaError, match=r"cannot be read.*--metric criteria:"):
        load_criteria(tmp_path / "nope.toml")


def test_a_registered_metric_s_name_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD.replace('name = "polite"', 'name = "faithfulness"'))
    with pytest.raises(CriteriaError, match="registered metric") as caught:
        criteria_metric(path)
    assert caught.value.key == "name"
