"""What is missing from a judge configuration, said plainly, and the rule for an unset key.

``missing_judge`` names what keeps a :class:`~agent_eval.config.ScoreConfig` from having a
judge (``OPENAI_API_KEY is not set and no --base-url is given``). ``key_env_problem`` applies
the rule for a key variable named *explicitly* (``--api-key-env`` or ``api-key-env`` in the
config file) that is unset or empty: that is an error, since the user said a key is needed,
unless the endpoint is on this machine (a loopback ``--base-url`` such as Ollama's
``http://localhost:11434/v1``), where servers need no key; then the call goes without one. The
default variable, ``OPENAI_API_KEY``, may be unset whenever a ``--base-url`` is given.
"""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import urlsplit

from agent_eval.config import ScoreConfig, redact_url

__all__ = ["endpoint", "is_loopback_url", "key_env_problem", "missing_judge"]

_LOCAL_NAMES = ("localhost", "localhost.localdomain")


def endpoint(cfg: ScoreConfig) -> str | None:
    """The judge endpoint ``cfg`` points at: ``base_url``, ``$OPENAI_BASE_URL`` or Azure's."""
    return cfg.base_url or os.environ.get("OPENAI_BASE_URL") or cfg.azure_endpoint


def is_loopback_url(url: str) -> bool:
    """Whether ``url``'s host is this machine (``localhost``, ``*.localhost``, 127/8, ``::1``)."""
    host = (urlsplit(url).hostname or "").lower()
    if host in _LOCAL_NAMES or host.endswith(".localhost"):  # RFC 6761 section 6.3
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def key_env_problem(cfg: ScoreConfig) -> str | None:
    """Why the explicitly named key variable is a problem, or ``None`` when it is not.

    ``None`` when the variable is set, was not named explicitly, or the endpoint is a loopback
    URL (a local server that needs no key).
    """
    if "api_key_env" not in cfg.model_fields_set or os.environ.get(cfg.api_key_env):
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
