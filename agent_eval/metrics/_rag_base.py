"""What the RAG metrics share: a turn-level metric that reads the unit, never a rendering.

:class:`RagMetric` scores each turn's answer (``unit_kind = "answer"``) from the unit's own
fields (question, answer, passages, reference): no formatter (``uses_formatter = False``, rows
record ``"none"``). Judged subclasses build their calls from a versioned jinja2
:class:`~agent_eval.metrics._prompts.PromptSet` (its sha256 goes into every row) with
:meth:`RagMetric.request`; judge-free ones set ``requires_judge = False`` and leave the prompt
hash empty.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel

from agent_eval._tokens import count_tokens, tokens_at_most
from agent_eval.judges._base import Judge, JudgeRequest
from agent_eval.metrics._base import CallTally, Metric, MetricInput, require_judge
from agent_eval.metrics._passages import Passage
from agent_eval.metrics._prompts import PromptSet

__all__ = ["RagMetric", "exact_int", "k_of_n", "render_passages"]


def exact_int(value: object) -> object:
    """A ``mode="before"`` check for integer verdicts: only a JSON integer passes.

    pydantic's ``Literal[1, 2]`` accepts ``2.0`` (equal to 2); a rubric verdict must be the
    integer itself, so floats, booleans and strings are refused (and re-asked).

    Raises:
        ValueError: ``value`` is not an ``int`` (or is a ``bool``).

    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"the verdict must be an integer, got {value!r}")
    return value


def k_of_n(passed: int, total: int) -> str:
    """``"3 of 4"``: a fraction as the counts a threshold means."""
    return f"{passed} of {total}"


def render_passages(passages: tuple[Passage, ...] | list[Passage]) -> str:
    """The passages as the reviewer sees them: ``[1] (id) text`` blocks, numbered from 1."""
    blocks = []
    for passage in passages:
        name = f" ({passage.id})" if passage.id else ""
        blocks.append(f"[{passage.rank + 1}]{name}\n{passage.text.strip()}")
    return "\n\n".join(blocks)


class RagMetric(Metric):
    """A turn-level RAG metric: one unit per user turn, read from the unit, no formatter."""

    unit_kind: ClassVar = "answer"
    uses_formatter: ClassVar[bool] = False
    prompts: ClassVar[PromptSet | None] = None

    @property
    def prompt_sha256(self) -> str:
        """sha256 of the prompt folder, ``""`` for judge-free metrics."""
        return self.prompts.sha256 if self.prompts is not None else ""

    def request(self, model: type[BaseModel], system: str, user: str) -> JudgeRequest:
        """A judge request with the metric's sampling settings."""
        return JudgeRequest(
            messages=({"role": "system", "content": system}, {"role": "user", "content": user}),
            response_model=model,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=self.seed,
        )

    def judge_request(self, sample: MetricInput) -> JudgeRequest | None:
        """The (largest) request for ``sample``; ``None`` for judge-free metrics."""
        return None

    def question_answer_request(self, model: type[BaseModel], sample: MetricInput) -> JudgeRequest:
        """A reviewer's call that sees the turn's question and answer only.

        Raises:
            TypeError: the metric has no prompts (a programming error).

        """
        if self.prompts is None:
            raise TypeError(f"{self.id} has no prompts")
        user = self.prompts.render("user", question=sample.unit.question, answer=sample.unit.answer)
        return self.request(model, self.prompts.render("system"), user)

    async def ask_once(self, sample: MetricInput, judge: Judge | None, tally: CallTally) -> Any:
        """The validated output of :meth:`judge_request`'s one call, counted on ``tally``.

        Raises:
            JudgeError: the call failed after its retries.
            TypeError: no judge, or a judge-free metric (programming errors).

        """
        request = self.judge_request(sample)
        if request is None:
            raise TypeError(f"{self.id} makes no judge call")
        return (await tally.ask(require_judge(self, judge), request)).output

    def prompt_tokens(self, sample: MetricInput) -> int:
        """o200k tokens of :meth:`judge_request`'s messages (0 for judge-free metrics)."""
        request = self.judge_request(sample)
        if request is None:
            return 0
        return sum(count_tokens(m["content"]) for m in request.messages)

    def prompt_tokens_at_most(self, sample: MetricInput) -> int:
        """:meth:`prompt_tokens` bounded by the UTF-8 bytes of the request's messages."""
        request = self.judge_request(sample)
        if request is None:
            return 0
        return sum(tokens_at_most(m["content"]) for m in request.messages)

    def planned_prompt_tokens(self, sample: MetricInput) -> int:
        """Same as :meth:`prompt_tokens`: one call per unit."""
        return self.prompt_tokens(sample)
