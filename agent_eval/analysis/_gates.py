"""CI gates declared on counts: a threshold together with the number of items it averages over.

A gate ``accuracy >= 0.8 over 3 items`` means "at least ceil(0.8 × 3) = 3 of 3": the required
count is ``ceil(threshold × items)`` (the product is rounded to 9 decimals first, so that
``0.7 × 10`` asks for 7, not 8). Declaring the item count makes the gate's meaning explicit
(0.8 of 3 items is all of them) and catches a run that measured over a different number of
items: that gate fails, with a message saying so.

Statistics (each a count of successes out of n items) and the commands that measure them:

- ``mean_score``: units scoring 1 of those scored ``ok`` (``score``, ``compare`` per variant):
  a binary verdict 1, or, for a fractional metric (``tool_errors``, faithfulness, any share of
  checks or atoms), a unit whose every check passed. A unit scoring 0.75 is no success (scores
  are never summed into counts), so a run whose mean is below the threshold never passes;
- ``accuracy``: conversations where the verdict equals the label (``calibrate``; ``compare`` per
  variant, with labels);
- ``agreement``: conversations with the same verdict under both variants (``compare`` per pair);
- ``unanimity``: conversations whose repeated verdicts are unanimous (``stability``);
- ``atoms``: atoms that passed (supported statements, claims) of all the atoms of the run's
  ``ok`` units, for metrics scored from atoms (``score``). Its ``items`` is the expected atom
  count: 0.8 over 3 statements is "3 of 3", over 20 it is "16 of 20" (at most 4 unsupported).
  With pinned decompositions the count is the same on every run of the same answers, so a run
  whose answers split into another number of atoms fails the gate, saying so.

Gates come from the config file (``[gates.<name>]`` tables with ``statistic``, ``threshold``
and ``items``) or from flags (``--gate [NAME=]STATISTIC>=THRESHOLD/ITEMS``). A command
evaluates the gates whose statistic it measures; any failure means CLI exit code 1. A ``--gate``
flag naming a statistic the command does not measure is a usage error (exit 2); a config gate
for another command's statistic is not applicable to this one and is only noted.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_eval.errors import ConfigError

__all__ = [
    "FLAG_SOURCE",
    "Gate",
    "GateCount",
    "GateOutcome",
    "GateStatistic",
    "evaluate_gates",
    "load_gates",
    "parse_gate",
]

GateStatistic = Literal["mean_score", "accuracy", "agreement", "unanimity", "atoms"]
"""What a gate measures (``STAT`` in ``NAME=STAT>=THRESHOLD/ITEMS``)."""
FLAG_SOURCE = "--gate"
"""``Gate.source`` of a gate given as a command-line flag."""
_FLAG = re.compile(r"^(?:(?P<name>[\w.-]+)=)?(?P<stat>\w+)>=(?P<thr>[0-9.]+)/(?P<items>\d+)$")


class Gate(BaseModel):
    """A declared gate: ``statistic >= threshold`` over exactly ``items`` items.

    ``source`` says where it was declared: ``"--gate"`` for a flag, else the config file path.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    statistic: GateStatistic
    threshold: float = Field(ge=0.0, le=1.0)
    items: int = Field(ge=1)
    source: str = FLAG_SOURCE

    @property
    def required(self) -> int:
        """Successes needed: ``ceil(threshold × items)``."""
        return math.ceil(round(self.threshold * self.items, 9))

    def describe(self) -> str:
        """E.g. ``"accuracy >= 0.8 over 3 items (3 of 3)"``.

        An ``atoms`` gate also says what it means operationally: ``"atoms >= 0.8 over 20 atoms
        (16 of 20: at most 4 may fail)"``.
        """
        if self.statistic == "atoms":
            return (
                f"atoms >= {self.threshold:g} over {self.items} atoms ({self.required} of "
                f"{self.items}: at most {self.items - self.required} may fail)"
            )
        return (
            f"{self.statistic} >= {self.threshold:g} over {self.items} items "
            f"({self.required} of {self.items})"
        )


class GateCount(BaseModel):
    """A measured count for a statistic: ``successes`` of ``n`` items, for ``subject``.

    ``note`` (optional) is said after the outcome, e.g. what counts as a success for a
    fractional metric.
    """

    model_config = ConfigDict(frozen=True)

    subject: str
    successes: int
    n: int
    note: str = ""


class GateOutcome(BaseModel):
    """The verdict of one gate on one measured count."""

    model_config = ConfigDict(frozen=True)

    gate: Gate
    count: GateCount
    passed: bool
    message: str


def _judge(gate: Gate, count: GateCount) -> GateOutcome:
    where = f"gate {gate.name!r} ({count.subject})"
    if count.n != gate.items:
        ok, why = False, f"declared over {gate.items} items but measured over {count.n}"
    else:
        ok = count.successes >= gate.required
        why = f"{count.successes} of {count.n}, needs {gate.required} of {gate.items}"
        if gate.statistic == "atoms":
            why += f" (at most {gate.items - gate.required} of {gate.items} atoms may fail)"
    verdict = "passed" if ok else "FAILED"
    if count.note:
        why += f" ({count.note})"
    return GateOutcome(
        gate=gate, count=count, passed=ok, message=f"{where} {verdict}: {gate.statistic} {why}"
    )


def evaluate_gates(
    gates: Iterable[Gate], counts: Mapping[str, Sequence[GateCount]]
) -> list[GateOutcome]:
    """Evaluate every gate on every count measured for its statistic.

    Args:
        gates: The declared gates.
        counts: ``{statistic: measured counts}`` from the command; gates whose statistic is
            absent are not applicable and give no outcome; an empty list (e.g. ``atoms`` in a
            run without atom metrics) counts as 0 of 0, which fails the gate.

    """
    outcomes = []
    for gate in gates:
        measured = counts.get(gate.statistic)
        if measured is not None and not measured:  # measured here, but nothing to count
            measured = [GateCount(subject="run", successes=0, n=0)]
        outcomes += [_judge(gate, count) for count in measured or ()]
    return outcomes


def parse_gate(text: str, statistics: Sequence[str] = ()) -> Gate:
    """Parse a ``--gate`` flag: ``[NAME=]STATISTIC>=THRESHOLD/ITEMS``, e.g. ``accuracy>=0.8/3``.

    Args:
        text: The flag's value.
        statistics: What the command measures; the error's example names the first of them
            (``accuracy`` when empty), so the example given is one the command accepts.

    Raises:
        ConfigError: The text does not match, or names an unknown statistic.

    """
    match = _FLAG.match(text.replace(" ", ""))
    if match is None:
        example = f"{statistics[0] if statistics else 'accuracy'}>=0.8/3"
        measured = f" (this command measures: {', '.join(statistics)})" if statistics else ""
        raise ConfigError(
            f"bad --gate {text!r}; write [NAME=]STATISTIC>=THRESHOLD/ITEMS, e.g. "
            f"{example}{measured}"
        )
    name = match["name"] or match["stat"]
    return _build(name, match["stat"], float(match["thr"]), int(match["items"]), FLAG_SOURCE)


def _build(name: str, statistic: object, threshold: object, items: object, where: str) -> Gate:
    try:
        return Gate(name=name, statistic=statistic, threshold=threshold, items=items, source=where)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(
            f"{where}: gate {name!r} is invalid ({problems}); statistic is one of "
            f"{', '.join(get_args(GateStatistic))}, threshold in [0, 1], items >= 1"
        ) from exc


def load_gates(path: str | Path) -> list[Gate]:
    """The ``[gates.<name>]`` tables of a TOML config file (none when the section is absent).

    Raises:
        ConfigError: Unreadable or invalid TOML, or an invalid gate (names file and gate).

    """
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from exc
    section = data.get("gates", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [gates] must be a table of [gates.<name>] tables")
    gates = []
    for name, table in section.items():
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: gates.{name} must be a table")
        extra = set(table) - {"statistic", "threshold", "items"}
        if extra:
            raise ConfigError(f"{path}: gates.{name}: unknown keys {sorted(extra)}")
        gates.append(
            _build(
                name, table.get("statistic"), table.get("threshold"), table.get("items"), str(path)
            )
        )
    return gates
