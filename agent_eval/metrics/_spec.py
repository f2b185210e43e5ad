"""Metric specs: ``name[@version][params]`` on the command line, to a :class:`Metric`.

The syntax is the formatters' (:mod:`agent_eval.formatting._identity`): ``goal_accuracy``,
``faithfulness@1``, ``faithfulness@1[per_statement=true]``. Parameters are validated against
the class's ``Params`` model.

Several versions of a metric can be registered (:func:`metric_class`): the entry point named
after the bare name (``goal_accuracy``) is the latest version, and each older version that stays
available has an entry point ``NAME@VERSION`` (``goal_accuracy@1``). So ``goal_accuracy@1``
always resolves to the same prompts, and a bare ``goal_accuracy`` to the latest version; the run
record stores the full ``name@version``, never the bare name.

``criteria:PATH`` names a criteria file instead (:mod:`agent_eval.metrics._criteria`), resolved
by :func:`criteria_spec_metric` so that every entry point that builds a metric from a spec
(``score``, ``compare``, ``stability``, ``calibrate``, ``serve``, the pytest plugin, the Python
API) reads one.
"""

from __future__ import annotations

from typing import Any

from agent_eval.errors import ConfigError
from agent_eval.formatting._identity import build_params, parse_identity
from agent_eval.metrics._base import Metric, metrics

__all__ = [
    "build_metric",
    "criteria_spec_metric",
    "metric_class",
    "metric_versions",
    "split_metrics",
]


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


def metric_versions(name: str) -> list[int]:
    """The registered versions of metric ``name``, ascending (reads entry-point names only)."""
    versions = {
        int(entry.rpartition("@")[2])
        for entry in metrics.declared_names()
        if entry.startswith(f"{name}@") and entry.rpartition("@")[2].isdigit()
    }
    if name in metrics.declared_names():
        versions.add(metrics.get(name).version)
    return sorted(versions)


def metric_class(name: str, version: int | None = None) -> type[Metric]:
    """The class of metric ``name`` at ``version``; the latest (the bare entry) when ``None``.

    Raises:
        ConfigError: that version of the metric is not registered (lists the ones that are).
        UnknownPluginError: no metric of that name is registered (the message lists them).

    """
    if version is not None and f"{name}@{version}" in metrics:
        cls = metrics.get(f"{name}@{version}")
    else:
        cls = metrics.get(name)
    if version is not None and version != cls.version:
        known = ", ".join(f"{name}@{v}" for v in metric_versions(name))
        raise ConfigError(
            f"metric {name} has no version {version} here; available: {known} "
            f"(a bare {name} is the latest)"
        )
    return cls


def build_metric(
    spec: str,
    *,
    with_reference: bool = False,
    temperature: float | None = 0.0,
    max_tokens: int | None = None,
    seed: int | None = None,
) -> Metric:
    """The metric ``spec`` names, with the run's judge settings; a bare name is the latest version.

    Raises:
        ConfigError: a malformed spec, a version that is not registered, an unknown
            parameter or a value of the wrong type.
        UnknownPluginError: no metric of that name is registered (the message lists them).

    """
    if spec.strip().startswith("criteria:"):
        return criteria_spec_metric(
            spec, with_reference=with_reference, temperature=temperature, max_tokens=max_tokens,
            seed=seed,
        )  # fmt: skip
    parsed = parse_identity(spec, "metric")
    cls = metric_class(parsed.name, parsed.version)
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
    from agent_eval.metrics._criteria import CRITERIA_PREFIX, criteria_metric

    path = spec.strip()[len(CRITERIA_PREFIX) :].strip()
    return criteria_metric(path, **settings)
