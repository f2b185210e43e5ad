"""Secrets out of everything agent-eval writes or prints: credentials in URLs, key flags.

A judge endpoint may carry credentials in its URL: a user name and password
(``https://user:pass@host/v1``, RFC 3986 section 3.2.1 "userinfo") or a key-like query
parameter (``?api-key=...``, ``?key=...``, ``&sig=...``). :func:`redact_url` replaces them with
``***``; :func:`redact_text` does it for every URL inside a text (an argv item, an error message,
a log line). The runs table, the HTML report, result rows' error messages and the debug log
all pass through these (:class:`RedactingFilter` for logging).

:func:`userinfo_auth` turns the userinfo of an endpoint into the HTTP Basic ``Authorization``
header (RFC 7617) and returns the URL without it, since HTTP clients send no userinfo.
"""

from __future__ import annotations

import base64
import logging
import re
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

__all__ = [
    "MASK",
    "SECRET_QUERY_KEY",
    "RedactingFilter",
    "bare_endpoint",
    "redact_text",
    "redact_url",
    "userinfo_auth",
]

MASK = "***"
"""What a secret is replaced by."""
SECRET_QUERY_KEY = re.compile(
    r"(?i)(?:^|[-_.])(?:api[-_.]?key|key|token|access[-_.]?token|secret|password|passwd|pwd|"
    r"auth|authorization|sig|signature|credential|credentials|code)$"
)
"""Query parameter names whose values are secrets (``api-key``, ``key``, ``x-api-key``...)."""
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")


def redact_url(url: str) -> str:
    """``url`` with userinfo and secret query values replaced by ``***``.

    ``https://u:p@host:8443/v1?api-key=k&api-version=1`` becomes
    ``https://***@host:8443/v1?api-key=***&api-version=1``. Text that is not a URL is returned
    as it is.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # an invalid port or bracket: hide everything after the scheme
        scheme, sep, _ = url.partition("://")
        return f"{scheme}{sep}{MASK}" if sep else url
    netloc = parts.netloc
    if "@" in netloc:
        host = parts.hostname or ""
        host = f"[{host}]" if ":" in host else host
        netloc = f"{MASK}@{host}" + (f":{port}" if port is not None else "")
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(SECRET_QUERY_KEY.search(k) for k, _ in pairs):
            query = urlencode(
                [(k, MASK if SECRET_QUERY_KEY.search(k) else v) for k, v in pairs], safe="*"
            )
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def bare_endpoint(url: str) -> str:
    """``url`` as ``scheme://host[:port]/path``: no userinfo, query or fragment at all.

    What the judge-call cache keeps beside an entry to say which endpoint answered: the query
    (``?api-version=...&api-key=...``) and userinfo are dropped, not masked, so no part of a
    credential is ever stored. The host is lower-cased and a trailing ``/`` dropped, so
    ``HTTP://Host:8000/v1/`` and ``http://host:8000/v1`` are the same endpoint. Text that is
    not a URL (no ``scheme://host``) gives ``***``.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return MASK
    host = (parts.hostname or "").lower()
    if not parts.scheme or not host:
        return MASK
    host = f"[{host}]" if ":" in host else host
    where = host + (f":{port}" if port is not None else "")
    return f"{parts.scheme.lower()}://{where}{parts.path.rstrip('/')}"


def redact_text(text: str) -> str:
    """``text`` with every URL in it passed through :func:`redact_url`."""
    if "://" not in text:
        return text
    return _URL.sub(lambda m: redact_url(m.group(0)), text)


def userinfo_auth(url: str) -> tuple[str, dict[str, str]]:
    """``(url without userinfo, headers)``: userinfo becomes an HTTP Basic auth header.

    ``https://user:pass@host/v1`` gives ``("https://host/v1", {"Authorization": "Basic
    dXNlcjpwYXNz"})``; a URL without userinfo gives ``(url, {})``. Percent-escapes in the user
    name and password are decoded first (RFC 3986 section 3.2.1).
    """
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, {}
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode("ascii")
    return urlunsplit(parts._replace(netloc=hostport)), {"Authorization": f"Basic {token}"}


class RedactingFilter(logging.Filter):
    """A logging filter that redacts URLs in every record's message (formatted once, here)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Replace the record's message by its redacted text; always keeps the record."""
        message = record.getMessage()
        redacted = redact_text(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True
