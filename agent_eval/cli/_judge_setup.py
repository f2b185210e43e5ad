"""The judge of ``score``, ``compare`` and ``stability``: which model, how built, what is missing.

``judge_settings`` reads which registered judge the configuration picks: ``--judge MODEL``
(the ``openai`` judge, the default), ``--judge KIND`` or ``--judge KIND:TARGET`` for any judge
of the ``agent_eval.judges`` entry-point group (``langchain:package.module:factory``,
``llama-cpp:model.gguf``, a third-party judge), or the ``[judge]`` table of
``agent-eval.toml``. A ``--judge`` value is a kind only when the part before its first ``:``
is a registered judge name, so Ollama-style models (``qwen2.5:7b``) stay models; write
``openai:MODEL`` to force one. ``judge_model`` gives the model a configuration names
(``None`` without a judge) and ``build_judge`` the judge, through the registered class's
:meth:`~agent_eval.judges._base.Judge.from_settings`; ``HOW_TO_CONFIGURE`` is the how-to
printed when there is none.

``missing_judge`` names what keeps a :class:`~agent_eval.config.ScoreConfig` from having a
judge (``OPENAI_API_KEY is not set and no --base-url is given``). ``key_env_problem`` applies
the rule for a key variable named *explicitly* (``--api-key-env`` or ``api-key-env`` in the
config file) that is unset or empty: that is an error, since the user said a key is needed,
unless the endpoint is on this machine (a loopback ``--base-url`` such as Ollama's
``http://localhost:11434/v1``), where servers need no key; then the call goes without one. The
default variable, ``OPENAI_API_KEY``, may be unset whenever a ``--base-url`` is given.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
from urllib.parse import urlsplit

from agent_eval._redaction import bare_endpoint
from agent_eval.config import DEFAULT_JUDGE, ScoreConfig, redact_url
from agent_eval.errors import ConfigError
from agent_eval.judges._base import Judge, JudgeSettings, judges

__all__ = [
    "HOW_TO_CONFIGURE",
    "build_judge",
    "built_settings",
    "cache_endpoint",
    "check_judge_kind",
    "configured_model",
    "endpoint",
    "is_loopback_url",
    "judge_model",
    "judge_settings",
    "key_env_problem",
    "missing_judge",
]

HOW_TO_CONFIGURE = """\
No judge is configured, so nothing was scored. To score, either:
  - use OpenAI: export OPENAI_API_KEY=... and run again (judge {default}, or --judge MODEL);
  - use a local OpenAI-compatible server with --base-url and --judge, e.g.
      Ollama     --base-url http://localhost:11434/v1 --judge qwen2.5:7b-instruct
      vLLM       --base-url http://localhost:8000/v1  --judge Qwen/Qwen2.5-7B-Instruct
      llama.cpp  --base-url http://localhost:8080/v1  --judge local --mode json_schema
  - use any registered judge, e.g. a LangChain chat model from your own factory:
      --judge langchain:my_pkg.judges:make_chat_model   (or a [judge] table in agent-eval.toml)
  - or set judge and base-url in the [score] table of agent-eval.toml.
The key is read from the environment variable named by --api-key-env (default OPENAI_API_KEY),
never from a flag or a file. --dry-run shows this plan without this message."""

_LOCAL_NAMES = ("localhost", "localhost.localdomain")


def endpoint(cfg: ScoreConfig) -> str | None:
    """The judge endpoint ``cfg`` points at: ``base_url``, ``$OPENAI_BASE_URL`` or Azure's."""
    return cfg.base_url or os.environ.get("OPENAI_BASE_URL") or cfg.azure_endpoint


def cache_endpoint(cfg: ScoreConfig) -> str:
    """The endpoint label the judge-call cache keeps beside its entries, with no credential.

    :func:`endpoint`, bare (``scheme://host:port/path``, :func:`agent_eval._redaction.
    bare_endpoint`), or ``default`` when none is configured (the judge's own default, e.g.
    the OpenAI API).
    """
    url = endpoint(cfg)
    return bare_endpoint(url) if url else "default"


def is_loopback_url(url: str) -> bool:
    """Whether ``url``'s host is this machine (``localhost``, ``*.localhost``, 127/8, ``::1``)."""
    host = (urlsplit(url).hostname or "").lower()
    if host in _LOCAL_NAMES or host.endswith(".localhost"):  # RFC 6761 section 6.3
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


OPENAI = "openai"
"""The default judge kind: an OpenAI-compatible endpoint."""


def judge_settings(cfg: ScoreConfig) -> JudgeSettings:
    """Which registered judge ``cfg`` picks, with its target, model and arguments.

    ``--judge`` (``cfg.judge``) wins over the ``[judge]`` table: ``KIND`` or ``KIND:TARGET``
    when ``KIND`` is a registered judge name, else a model name for the table's kind
    (``openai`` by default). For ``openai`` the target is the model.
    """
    table = cfg.judge_table
    kind, target, model = table.kind, table.factory, table.model
    if cfg.judge:
        head, sep, rest = cfg.judge.partition(":")
        if cfg.judge in judges:
            kind, target = cfg.judge, target if cfg.judge == table.kind else None
        elif sep and head in judges:
            kind, target = head, rest or None
        else:
            model = cfg.judge
    if kind == OPENAI:
        model, target = target or model, None
    explicit_mode = "mode" in cfg.model_fields_set
    return JudgeSettings(
        kind=kind,
        model=model,
        target=target,
        params=dict(table.params),
        base_url=cfg.base_url,
        api_key_env=cfg.api_key_env,
        azure_endpoint=cfg.azure_endpoint,
        azure_api_version=cfg.azure_api_version,
        mode=cfg.mode if explicit_mode or kind == OPENAI else None,
        timeout=cfg.timeout,
        max_retries=cfg.max_retries,
        transport_retries=cfg.transport_retries,
    )


def check_judge_kind(cfg: ScoreConfig) -> None:
    """Check, before any input is read, that the judge kind ``cfg`` picks is registered.

    Raises:
        UnknownPluginError: the ``[judge]`` table's kind is not a registered judge (lists them).
        ConfigError: the kind's plugin is installed but failed to load.

    """
    judges.get(judge_settings(cfg).kind)


def _label(settings: JudgeSettings) -> str:
    """A name for a non-openai judge before it is built: its model, else ``KIND:TARGET``."""
    if settings.model:
        return settings.model
    return f"{settings.kind}:{settings.target}" if settings.target else settings.kind


def key_env_problem(cfg: ScoreConfig) -> str | None:
    """Why the explicitly named key variable is a problem, or ``None`` when it is not.

    ``None`` when the variable is set, was not named explicitly, or the endpoint is a loopback
    URL (a local server that needs no key).
    """
    if "api_key_env" not in cfg.model_fields_set or os.environ.get(cfg.api_key_env):
        return None
    if judge_settings(cfg).kind != OPENAI:  # the judge's own factory handles its credentials
        return None
    url = endpoint(cfg)
    if url is not None and cfg.azure_endpoint is None and is_loopback_url(url):
        return None
    where = f" for {redact_url(url)}" if url else ""
    return (
        f"--api-key-env {cfg.api_key_env}: the variable {cfg.api_key_env} is not set (or is "
        f"empty); export {cfg.api_key_env}=<your key>{where}, or leave --api-key-env out for a "
        "server that needs no key"
    )


def missing_judge(cfg: ScoreConfig) -> str:
    """What is missing for a judge, in one sentence (call it when no judge is configured)."""
    unset = f"{cfg.api_key_env} is not set"
    if cfg.judge:
        return f"--judge {cfg.judge} has no endpoint: {unset} and no --base-url is given"
    url = endpoint(cfg)
    if url:
        return f"--base-url {redact_url(url)} is given without --judge MODEL (the model to ask)"
    return f"{unset}, and neither --judge nor --base-url is given"


def judge_model(cfg: ScoreConfig) -> str | None:
    """The judge model to use, or ``None`` when no judge endpoint is configured.

    Raises:
        ConfigError: ``--api-key-env`` names an unset variable and the endpoint is not on this
            machine (see :func:`key_env_problem`).

    """
    problem = key_env_problem(cfg)
    if problem is not None:
        raise ConfigError(problem)
    return configured_model(cfg)


def configured_model(cfg: ScoreConfig) -> str | None:
    """The judge model ``cfg`` names or implies, ``None`` without one (no key check).

    A judge other than ``openai`` is always configured (its factory owns its endpoint); its
    model is the named one, else ``KIND:TARGET`` until the judge is built.
    """
    settings = judge_settings(cfg)
    if settings.kind != OPENAI:
        return _label(settings)
    has_key = bool(os.environ.get(cfg.api_key_env))
    endpoint = cfg.base_url or os.environ.get("OPENAI_BASE_URL") or cfg.azure_endpoint
    if settings.model:
        return settings.model if (has_key or endpoint) else None
    return DEFAULT_JUDGE if has_key and not endpoint else None


def build_judge(cfg: ScoreConfig, model: str) -> Judge:
    """The judge ``cfg`` picks (:func:`judge_settings`), built by its registered class.

    ``model`` is the ``openai`` judge's model (:func:`judge_model`); other judges take theirs
    from the settings. Wrappers such as a cache go around the judge returned.

    Raises:
        UnknownPluginError: the kind is not registered (lists the registered judges).
        ConfigError: the judge cannot be built from these settings (names what to fix).
        JudgeNotConfiguredError: the ``openai`` judge has no key and no endpoint.

    """
    settings = built_settings(cfg, model)
    return judges.get(settings.kind).from_settings(settings)


def built_settings(cfg: ScoreConfig, model: str) -> JudgeSettings:
    """The settings :func:`build_judge` builds the judge from (a Ray worker rebuilds it so)."""
    settings = judge_settings(cfg)
    if settings.kind == OPENAI:
        settings = dataclasses.replace(settings, model=model)
    return settings
