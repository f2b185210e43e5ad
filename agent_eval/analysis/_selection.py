"""Selecting result rows for analysis: configuration identity, grouping and verdict vectors.

A statistic about a judge applies to one configuration: metric@version, formatter@version with
its fingerprint, prompt hash and judge model (:class:`ConfigurationIdentity`). These helpers
pull that identity out of :class:`~agent_eval._result.MetricResult` rows and turn ``ok`` rows
into ``{conversation_id: 0|1}`` verdict maps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from pydantic import BaseModel, ConfigDict

from agent_eval._result import MetricResult
from agent_eval.errors import ConfigError

__all__ = ["ConfigurationIdentity", "group_by", "identity_of", "verdicts"]

K = TypeVar("K")


class ConfigurationIdentity(BaseModel):
    """Everything that shapes a verdict, as stored on each result row."""

    model_config = ConfigDict(frozen=True)

    metric: str
    formatter: str
    formatter_fingerprint: str
    prompt_sha256: str
    judge_model: str

    @classmethod
    def of(cls, result: MetricResult) -> ConfigurationIdentity:
        """The identity of one result row."""
        return cls(
            metric=result.metric,
            formatter=result.formatter,
            formatter_fingerprint=result.formatter_fingerprint,
            prompt_sha256=result.prompt_sha256,
            judge_model=result.judge_model,
        )

    def __str__(self) -> str:
        """``metric | formatter#fingerprint[:12] | prompt sha256[:12] | judge model``.

        A judge-free metric (judge ``none``, formatter ``none``, no prompt) reads
        ``metric | no formatter, no prompt (judge-free)``; a judged one that reads no rendering
        shows ``no formatter`` in the formatter's place.
        """
        no_formatter = self.formatter == "none" and not self.formatter_fingerprint
        if no_formatter and not self.prompt_sha256 and self.judge_model == "none":
            return f"{self.metric} | no formatter, no prompt (judge-free)"
        formatter = (
            "no formatter"
            if no_formatter
            else f"{self.formatter}#{self.formatter_fingerprint[:12]}"
        )
        prompt = f"prompt {self.prompt_sha256[:12]}" if self.prompt_sha256 else "no prompt"
        return f"{self.metric} | {formatter} | {prompt} | judge {self.judge_model}"


def identity_of(results: Iterable[MetricResult]) -> ConfigurationIdentity | None:
    """The one configuration the rows share; ``None`` for no rows.

    Raises:
        ConfigError: The rows mix configurations (lists them; filter to one first).

    """
    identities = {ConfigurationIdentity.of(r) for r in results}
    if len(identities) > 1:
        listed = "; ".join(sorted(str(i) for i in identities))
        unfingerprinted = {i.model_copy(update={"formatter_fingerprint": ""}) for i in identities}
        advice = (
            "one formatter name@version with two fingerprints (its rendering changed without a "
            "version bump): these rows cannot be told apart by --formatter; use one run's rows"
            if len(unfingerprinted) < len(identities)
            else "choose one with --metric / --formatter"
        )
        raise ConfigError(f"the results mix {len(identities)} configurations ({listed}); {advice}")
    return next(iter(identities), None)


def group_by(
    results: Iterable[MetricResult], key: Callable[[MetricResult], K]
) -> dict[K, list[MetricResult]]:
    """Rows grouped by ``key``, groups in first-seen order, rows in input order."""
    groups: dict[K, list[MetricResult]] = {}
    for result in results:
        groups.setdefault(key(result), []).append(result)
    return groups


def verdicts(results: Sequence[MetricResult]) -> dict[str, int]:
    """``{subject: 0|1}`` from the binary ``ok`` rows of repeat 0 (other rows are ignored).

    The subject is the conversation id, or ``conversation_id/unit_id`` for turn units
    (:attr:`MetricResult.subject`). A row scored from atoms (no verdict) counts as 1 when every
    atom passed (score 1) and 0 otherwise: "fully supported", as response-level attribution
    labels (BEGIN's "Fully attributable") mean it.

    Raises:
        ConfigError: Two ``ok`` rows of repeat 0 share a subject (mixed configurations).

    """
    out: dict[str, int] = {}
    for result in results:
        if result.status != "ok" or result.repeat != 0:
            continue
        verdict = result.verdict
        if verdict is None and result.atoms is not None and result.score is not None:
            verdict = "1" if result.score == 1.0 else "0"
        if verdict not in ("0", "1"):
            continue
        if result.subject in out:
            raise ConfigError(
                f"conversation {result.subject!r} has more than one result; "
                "filter the results to one metric, formatter and judge"
            )
        out[result.subject] = int(verdict)
    return out
