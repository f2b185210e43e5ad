"""Who may post spans to ``agent-eval serve``: a bearer token, and loopback only without one.

Every conversation posted to the receiver is sent to a paid judge, so by default only this
machine may post: ``serve`` listens on loopback. To listen on another address the user gives a
token (``--token-env VAR``: the variable holding it), which every ``POST`` must carry as
``Authorization: Bearer TOKEN``: the header the OTLP exporters send when configured with
``OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer%20TOKEN"`` (OTLP exporter specification,
"Specifying headers via environment variables", values URL-encoded). A non-loopback
``--host`` without a token is refused unless ``--allow-unauthenticated`` says it is meant.
``GET /healthz`` needs no token (health checks), and tells nothing but counts.
"""

from __future__ import annotations

import hmac
import ipaddress
import os

from agent_eval.errors import ConfigError

__all__ = ["AUTHORIZATION", "authorized", "check_exposure", "is_loopback", "read_token"]

AUTHORIZATION = "Authorization"
"""The request header that carries the token (``Bearer TOKEN``, RFC 6750 section 2.1)."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or name to listen on) is this machine only.

    ``localhost``, ``127.0.0.0/8`` and ``::1`` are; ``0.0.0.0``, ``::``, other addresses and
    other names are not (a name may resolve to any address).
    """
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, token: str | None, allow_unauthenticated: bool) -> None:
    """Refuse to listen beyond loopback without a token, unless the user said it is meant.

    Raises:
        ConfigError: ``host`` is not loopback, no token is set and ``allow_unauthenticated``
            is false (the message names both fixes).

    """
    if token or allow_unauthenticated or is_loopback(host):
        return
    raise ConfigError(
        f"--host {host} listens beyond this machine, and every conversation posted to it is "
        "sent to the judge: set a token with --token-env VAR (senders then need "
        "OTEL_EXPORTER_OTLP_HEADERS='Authorization=Bearer%20TOKEN'), or pass "
        "--allow-unauthenticated if anyone who can reach the port may post"
    )


def read_token(variable: str) -> str:
    """The token held by the environment variable ``variable``.

    Raises:
        ConfigError: the variable is unset or empty.

    """
    token = os.environ.get(variable, "").strip()
    if not token:
        raise ConfigError(f"--token-env {variable}: the variable is unset or empty; export it")
    return token


def authorized(header: str | None, token: str) -> bool:
    """Whether an ``Authorization`` header value carries ``token`` as a bearer token.

    The scheme is matched case-insensitively (RFC 7235 section 2.1); the token is compared in
    constant time.
    """
    if not header:
        return False
    scheme, _, given = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), token.encode())
