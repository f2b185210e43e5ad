"""Which closed conversations ``agent-eval serve`` sends to the judge: filters, then a sample.

An online evaluator rarely judges all traffic. Like the online evaluators of Langfuse and
Arize Phoenix (a filter on the traces' attributes, then a sampling rate over what matches),
:class:`Selection` decides per closed conversation, before any judge call:

1. **Filters** (``--where``, :func:`parse_condition`), all of which must hold. Each is tested
   against the conversation's spans and their resources: every span read for this revision
   (the spans of all its traces, those retained from earlier revisions included), its own
   attributes and its resource's attributes. Log records are not looked at.

   - ``KEY=VALUE`` holds when **some** span or span resource has ``KEY`` equal to ``VALUE``;
     ``KEY=A,B`` when equal to ``A`` or ``B``.
   - ``KEY!=VALUE`` (``KEY!=A,B``) is its negation: it holds when **no** span or span
     resource has ``KEY`` equal to one of them (a conversation without ``KEY`` holds).
   - ``KEY`` holds when some span or span resource has ``KEY`` (any value); ``!KEY`` when none
     has.

   A value matches as text: a string as is, a boolean as ``true``/``false``, a number as
   Python prints it (``3``, ``0.5``), a list when one of its elements matches.
   ``deployment.environment.name`` (OTel semantic conventions v1.27+) and its deprecated
   spelling ``deployment.environment`` are one key: a condition on either reads both.
2. **Sampling** (``--sample RATE``, ``--sample-seed SEED``) of the conversations the filters
   kept: a conversation is in the sample when ``u < RATE``, where ``u`` is the first 8 bytes of
   ``sha256(f"{SEED}:{conversation_id}")`` read as a big-endian integer, divided by 2**64
   (uniform in [0, 1)). The draw depends on the conversation id and the seed only: a re-opened
   conversation (a late span, the next turn) gets its first decision again, two receivers with
   the same seed choose the same conversations, and the share chosen is binomial(n, RATE).

A conversation not chosen is not sent to the judge; it is stored as a ``skipped`` row per metric
whose ``error_type`` is :data:`FILTERED_OUT` or :data:`SAMPLED_OUT` and whose message says
which condition or draw left it out.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from agent_eval.errors import ConfigError
from agent_eval.ingest._spans import AttributeValue, LogRecord, SpanRecord
from agent_eval.ingest.conventions._genai_keys import AGENT_NAME

__all__ = [
    "DEPLOYMENT_ENVIRONMENT",
    "DEPLOYMENT_ENVIRONMENT_NAME",
    "FILTERED_OUT",
    "GEN_AI_AGENT_NAME",
    "SAMPLED_OUT",
    "SERVICE_NAME",
    "Condition",
    "Left",
    "Selection",
    "draw",
    "parse_condition",
]

SERVICE_NAME: Final = "service.name"
"""Resource attribute (OTel semantic conventions, service)."""
DEPLOYMENT_ENVIRONMENT_NAME: Final = "deployment.environment.name"
"""Resource attribute (OTel semantic conventions v1.27+, deployment)."""
DEPLOYMENT_ENVIRONMENT: Final = "deployment.environment"
"""Its spelling before semantic conventions v1.27 (deprecated; still sent by older SDKs)."""
GEN_AI_AGENT_NAME: Final = AGENT_NAME
"""Span attribute ``gen_ai.agent.name`` (OTel GenAI semantic conventions)."""

FILTERED_OUT: Final = "filtered_out"
"""``error_type`` of a row whose conversation a ``--where`` condition left out."""
SAMPLED_OUT: Final = "sampled_out"
"""``error_type`` of a row whose conversation was outside the ``--sample``."""

_SYNONYMS: Final[Mapping[str, tuple[str, ...]]] = {
    DEPLOYMENT_ENVIRONMENT_NAME: (DEPLOYMENT_ENVIRONMENT_NAME, DEPLOYMENT_ENVIRONMENT),
    DEPLOYMENT_ENVIRONMENT: (DEPLOYMENT_ENVIRONMENT_NAME, DEPLOYMENT_ENVIRONMENT),
}
_CONDITION = re.compile(r"^\s*(?P<key>[^=!\s][^=!]*?)\s*(?P<op>!=|=)\s*(?P<values>.*?)\s*$")
_PRESENCE = re.compile(r"^\s*(?P<neg>!?)\s*(?P<key>[^=!\s][^=!]*?)\s*$")
_HINT = (
    "write KEY=VALUE, KEY=A,B (one of), KEY!=VALUE (none of its spans has it), KEY (present) "
    "or !KEY (absent), e.g. --where service.name=checkout "
    "--where deployment.environment.name!=dev"
)

Op = Literal["=", "!=", "exists", "absent"]


@dataclass(frozen=True)
class Condition:
    """One ``--where`` condition (see the module docstring for what it matches).

    Attributes:
        key: The attribute key, e.g. ``service.name``.
        op: ``=``, ``!=``, ``exists`` (``KEY``) or ``absent`` (``!KEY``).
        values: The values of ``=``/``!=`` (one of them); empty for the others.

    """

    key: str
    op: Op
    values: tuple[str, ...] = ()

    def __str__(self) -> str:
        if self.op == "exists":
            return self.key
        if self.op == "absent":
            return f"!{self.key}"
        return f"{self.key}{self.op}{','.join(self.values)}"

    def witness(self, spans: Iterable[SpanRecord]) -> SpanRecord | None:
        """The first span whose attributes or resource have the key (with a listed value)."""
        keys = _SYNONYMS.get(self.key, (self.key,))
        wanted = None if self.op in ("exists", "absent") else set(self.values)
        for span in spans:
            for attributes in (span.attributes, span.resource):
                for key in keys:
                    if key in attributes and (
                        wanted is None or not wanted.isdisjoint(_texts(attributes[key]))
                    ):
                        return span
        return None

    def holds(self, spans: Sequence[SpanRecord]) -> tuple[bool, SpanRecord | None]:
        """Whether the conversation of ``spans`` meets it, and the span that decided it."""
        found = self.witness(spans)
        negated = self.op in ("!=", "absent")
        return (found is None) if negated else (found is not None), found


def parse_condition(text: str) -> Condition:
    """A ``--where`` condition from its text.

    Raises:
        ConfigError: not one of the forms the module docstring lists (names the text and the
            forms).

    """
    match = _CONDITION.match(text)
    if match is not None:
        values = tuple(v.strip() for v in match["values"].split(","))
        if not all(values):
            raise ConfigError(f"--where {text!r}: a value is empty; {_HINT}")
        op: Op = "!=" if match["op"] == "!=" else "="
        return Condition(match["key"], op, values)
    match = _PRESENCE.match(text)
    if match is not None and " " not in match["key"]:
        return Condition(match["key"], "absent" if match["neg"] else "exists")
    raise ConfigError(f"--where {text!r} is not a condition: {_HINT}")


def draw(conversation_id: str, seed: int) -> float:
    """The conversation's sampling draw in [0, 1) (module docstring: sha256 of seed and id)."""
    digest = hashlib.sha256(f"{seed}:{conversation_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass(frozen=True)
class Left:
    """Why a conversation is not sent to the judge: a skip reason and its message."""

    reason: str
    message: str


@dataclass(frozen=True)
class Selection:
    """Filters, then a seeded sample (module docstring).

    Attributes:
        conditions: All must hold (``--where``, in order).
        rate: Share of the matching conversations judged, in (0, 1] (``--sample``).
        seed: The sample's seed (``--sample-seed``).

    Raises:
        ConfigError: ``rate`` outside (0, 1].

    """

    conditions: tuple[Condition, ...] = ()
    rate: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0.0 < self.rate <= 1.0:
            raise ConfigError(
                f"--sample {self.rate:g} is not a share in (0, 1]: 1 judges every conversation, "
                "0.25 a quarter of them"
            )

    @property
    def everything(self) -> bool:
        """Whether every conversation is chosen (no filter, rate 1)."""
        return not self.conditions and self.rate >= 1.0

    def sampled(self, conversation_id: str) -> bool:
        """Whether ``conversation_id`` is in the sample (filters aside)."""
        return self.rate >= 1.0 or draw(conversation_id, self.seed) < self.rate

    def left_out(
        self, conversation_id: str, items: Iterable[SpanRecord | LogRecord]
    ) -> Left | None:
        """``None`` when the conversation is judged, else why not (filters first).

        Args:
            conversation_id: The id it is scored under (the sample's key).
            items: Its spans (log records among them are not looked at).

        """
        if self.everything:
            return None
        held = [item for item in items if isinstance(item, SpanRecord)]
        for condition in self.conditions:
            ok, span = condition.holds(held)
            if not ok:
                return Left(FILTERED_OUT, _filtered_message(condition, span))
        if self.sampled(conversation_id):
            return None
        message = (
            f"not judged: outside the sample (--sample {self.rate:g} --sample-seed {self.seed}: "
            f"its draw {draw(conversation_id, self.seed):.4f} is not below {self.rate:g}); "
            "this conversation id is left out whenever this seed is used"
        )
        return Left(SAMPLED_OUT, message)

    def describe(self) -> Iterator[str]:
        """The options as given, for the run record and the banner (``--where ...``)."""
        for condition in self.conditions:
            yield f"--where {condition}"
        if self.rate < 1.0:
            yield f"--sample {self.rate:g} --sample-seed {self.seed}"


def _filtered_message(condition: Condition, span: SpanRecord | None) -> str:
    if span is None:
        return (
            f"not judged: no span of this conversation or its resource has {condition.key}"
            + ("" if condition.op == "exists" else f" = {' or '.join(condition.values)}")
            + f" (--where {condition})"
        )
    return (
        f"not judged: span {span.span_id} of trace {span.trace_id} (or its resource) has "
        f"{condition.key}"
        + ("" if condition.op == "absent" else f" = {' or '.join(condition.values)}")
        + f", which --where {condition} excludes"
    )


def _texts(value: AttributeValue) -> set[str]:
    """The texts an attribute value matches (module docstring)."""
    if isinstance(value, (list, tuple)):
        return {text for item in value for text in _texts(item)}
    if isinstance(value, bool):
        return {"true" if value else "false"}
    if isinstance(value, bytes):
        return {value.hex()}
    return {str(value)}
