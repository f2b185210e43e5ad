"""Criteria files: a binary judged metric written as data (TOML or YAML).

A criteria file names one yes/no question a judge answers about each unit, and what passes
and what fails (see ``docs/criteria.md``)::

    name = "stayed_within_policy"        # lowercase letters, digits, ".", "_", "-"
    version = 1                          # a whole number >= 1; bump it when the wording changes
    unit = "conversation"                # "conversation" (the whole one) or "answer" (each turn)
    question = "Did the agent stay within the refund policy?"
    pass = "Every action the agent took is allowed by the policy."
    fail = "The agent promised or did something the policy does not allow."
    reference = "The reference is the policy text in force."   # optional: needs a reference

    [[examples]]                         # optional few-shot examples
    conversation = "User: ...  AI: ..."
    verdict = 1                          # 1 (pass) or 0 (fail)
    reason = "..."

Its identity is ``name@version`` plus the sha256 of the file's bytes (:attr:`Criteria.sha256`):
results record both, so a file changed under the same version is told apart
(:mod:`agent_eval.run._criteria_drift`). Every problem is a
:class:`~agent_eval.errors.CriteriaError` naming the file, the key and the fix.
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent_eval.errors import CriteriaError

__all__ = ["CRITERIA_SHA256", "Criteria", "CriteriaExample", "load_criteria", "parse_criteria"]

CRITERIA_SHA256 = "criteria_sha256"
"""The ``details`` key of every row of a criteria metric that holds the file's sha256."""

_NAME = r"^[a-z0-9][a-z0-9._-]*$"

_FIX = {
    "name": 'write a lowercase name of letters, digits, ".", "_" or "-", e.g. '
    'name = "stayed_within_policy"',
    "version": "write a whole number of 1 or more, e.g. version = 1 (bump it whenever the "
    "wording changes)",
    "unit": 'write unit = "conversation" (the whole conversation) or unit = "answer" (each '
    "answer turn)",
    "question": 'write the yes/no question the judge answers, e.g. question = "Did the agent '
    'stay within the policy?"',
    "pass": 'say what passes, e.g. pass = "Every action is allowed by the policy."',
    "fail": 'say what fails, e.g. fail = "The agent did something the policy forbids."',
    "reference": 'say how the judge uses the reference, e.g. reference = "The reference is the '
    'policy in force."; or leave the key out',
    "examples": "write each example as a table with conversation, verdict (1 pass, 0 fail) and "
    "reason ([[examples]] in TOML, a list of mappings in YAML)",
    "description": "write one line of text, or leave the key out",
}
_KEYS = "name, version, unit, question, pass, fail, reference, examples, description"


class CriteriaExample(BaseModel):
    """One few-shot example: a text to judge and the verdict it deserves, with the reason."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    conversation: str = Field(min_length=1)
    verdict: Literal["0", "1"]
    reason: str = Field(min_length=1)

    @field_validator("verdict", mode="before")
    @classmethod
    def _zero_or_one(cls, value: object) -> object:
        if isinstance(value, bool) or value not in (0, 1, "0", "1"):
            raise ValueError("the verdict must be 1 (pass) or 0 (fail)")
        return str(value)


class Criteria(BaseModel):
    """A parsed criteria file.

    Attributes:
        name / version: The metric's identity, ``name@version``.
        unit: ``conversation`` (the whole conversation, as the run's formatter renders it) or
            ``answer`` (each answer turn: the user's question and the assistant's answer).
        question: The yes/no question the judge answers.
        pass_when / fail_when: What makes the verdict ``"1"`` / ``"0"`` (keys ``pass``,
            ``fail``).
        reference: How the judge uses the unit's reference; ``None``: no reference is used.
        examples: Few-shot examples, in the order written.
        description: A line for people (not sent to the judge).
        path: The file it was read from (``""`` when parsed from text).
        sha256: sha256 hex of the file's bytes.

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=_NAME)
    version: int = Field(ge=1, strict=True)
    unit: Literal["conversation", "answer"] = "conversation"
    question: str = Field(min_length=1)
    pass_when: str = Field(alias="pass", min_length=1)
    fail_when: str = Field(alias="fail", min_length=1)
    reference: str | None = Field(default=None, min_length=1)
    examples: tuple[CriteriaExample, ...] = ()
    description: str | None = None
    path: str = Field(default="", exclude=True)
    sha256: str = Field(default="", exclude=True)

    @property
    def identity(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"


def _key(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc)


def _problem(error: Any) -> str:
    if error["type"] == "missing":
        return "is missing"
    if error["type"] == "extra_forbidden":
        return f"is not a criteria key (the keys are {_KEYS})"
    return f"{error['msg']} (got {error['input']!r})"


def _error(path: str, exc: ValidationError) -> CriteriaError:
    """The first problem of ``exc`` as a :class:`CriteriaError` (the key's fix attached)."""
    error = exc.errors()[0]
    key = _key(error["loc"])
    top = str(error["loc"][0]) if error["loc"] else ""
    fix = _FIX.get(top, f"remove it; the keys are {_KEYS}")
    if error["type"] == "extra_forbidden" and top in _FIX:  # an unknown key inside an example
        fix = _FIX[top]
    more = len(exc.errors()) - 1
    problem = _problem(error) + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")
    return CriteriaError(path, key, problem, fix)


def parse_criteria(document: object, path: str = "", sha256: str = "") -> Criteria:
    """The criteria in a parsed TOML/YAML ``document`` (a mapping).

    Raises:
        CriteriaError: not a mapping, a key missing or unknown, a value of the wrong type.

    """
    where = path or "<criteria>"
    if not isinstance(document, dict):
        raise CriteriaError(
            where, None, f"holds a {type(document).__name__}, not a table of keys",
            f"write the keys {_KEYS} at the top level",
        )  # fmt: skip
    try:
        criteria = Criteria.model_validate(document)
    except ValidationError as exc:
        raise _error(where, exc) from None
    return criteria.model_copy(update={"path": path, "sha256": sha256})


def _document(path: Path, data: bytes) -> object:
    """The parsed TOML or YAML document of ``data`` (by ``path``'s suffix)."""
    where, suffix = str(path), path.suffix.lower()
    if suffix not in (".toml", ".yaml", ".yml"):
        raise CriteriaError(
            where, None, f"has the suffix {suffix or '(none)'!r}", "name a .toml or .yaml file"
        )
    try:
        text = data.decode("utf-8")
        if suffix == ".toml":
            return tomllib.loads(text)
        import yaml  # only criteria files in YAML need it

        return yaml.safe_load(text)
    except UnicodeDecodeError as exc:
        raise CriteriaError(where, None, f"is not UTF-8 text ({exc})", "save it as UTF-8") from None
    except Exception as exc:  # tomllib.TOMLDecodeError, yaml.YAMLError: syntax, with the line
        kind = "TOML" if suffix == ".toml" else "YAML"
        raise CriteriaError(where, None, f"is not valid {kind}: {exc}", "fix the syntax") from None


def load_criteria(path: str | Path) -> Criteria:
    """Read and check the criteria file at ``path`` (``.toml``, ``.yaml`` or ``.yml``).

    Raises:
        CriteriaError: the file cannot be read, is not TOML/YAML, or breaks the format (names
            the key and what to write).

    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CriteriaError(
            str(path), None, f"cannot be read ({exc.strerror or exc})",
            "give the path of a criteria file, e.g. --metric criteria:criteria/policy.toml",
        ) from None  # fmt: skip
    document = _document(path, data)
    return parse_criteria(document, str(path), hashlib.sha256(data).hexdigest())
