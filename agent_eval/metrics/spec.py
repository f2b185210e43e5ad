"""Metric specs: ``name[@version][params]`` on the command line, to a :class:`Metric`.

The syntax is the formatters' (:mod:`agent_eval.formatting.identity`): ``goal_accuracy``,
``faithfulness@1``, ``faithfulness@1[per_statement=true]``. The version, when given, must be
the registered class's; parameters are validated against the class's ``Params`` model.

``criteria:PATH`` names a criteria file instead (:mod:`agent_eval.metrics.criteria`), resolved
by :func:`criteria_spec_metric` so that every entry point that builds a metric from a spec
(``score``, ``compare``, ``stability``, ``calibrate``, ``serve``, the pytest plugin, the Python
API) reads one.
"""

from __future__ import annotations

from typing import Any

from agent_eval.errors import ConfigError
from agent_eval.formatting.identity import build_params, parse_identity
from agent_eval.metrics.base import Metric, metrics

__all__ = ["build_metric", "criteria_spec_metric", "split_metrics"]


def split_metrics(text: str) -> list[str]:
    """``"a,b[x=1,y=2],c"`` -> ``["a", "b[x=1,y=2]", "c"]`` (commas inside brackets kept)."""
    specs, depth, current = [], 0, ""
    for char in text:
        depth += (char == "[") - (char == "]")
        if char == "," and depth == 0:
            specs.append(current.strip())
            current = ""
        else:
            current += char
    specs.append(current.strip())
    return [spec for spec in specs if spec]


def build_metric(
    spec: str,
    *,
    with_reference: bool = False,
    temperature: float | None = 0.0,
    max_tokens: int | None = None,
    seed: int | None = None,
) -> Metric:
    """The metric ``spec`` names, with the run's judge settings.

    Raises:
        ConfigError: a malformed spec, a version that is not the registered one, an unknown
            parameter or a value of the wrong type.
        UnknownPluginError: no metric of that name is registered (the message lists them).

    """
    if spec.strip().startswith("criteria:"):
        return criteria_spec_metric(
            spec, with_reference=with_reference, temperature=temperature, max_tokens=max_tokens,
            seed=seed,
        )  # fmt: skip
    parsed = parse_identity(spec, "metric")
    cls = metrics.get(parsed.name)
    if parsed.version is not None and parsed.version != cls.version:
        raise ConfigError(
            f"metric {parsed.name} is at version {cls.version} here, not {parsed.version}: "
            f"use {parsed.name}@{cls.version}"
        )
    params = build_params(f"{parsed.name}@{cls.version}", cls.Params, dict(parsed.params), "metric")
    return cls(
        params,
        with_reference=with_reference,
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
    )


def criteria_spec_metric(spec: str, **settings: Any) -> Metric:
    """The metric of ``criteria:PATH`` (the criteria file at PATH), with the run's settings.

    Raises:
        CriteriaError: the file is unreadable or breaks the criteria format.

    """
    from agent_eval.metrics.criteria import CRITERIA_PREFIX, criteria_metric

    path = spec.strip()[len(CRITERIA_PREFIX) :].strip()
    return criteria_metric(path, **settings)
