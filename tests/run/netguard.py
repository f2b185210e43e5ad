"""Run a Python entry point with every non-loopback connection blocked and recorded.

Usage: ``python netguard.py LOG_FILE MODULE:FUNCTION [ARGS...]``. Before importing anything
else it patches :func:`socket.getaddrinfo` and ``socket.socket.connect``/``connect_ex`` so that
a connection to a host other than 127.0.0.1/::1/localhost (and any name resolution of another
host) is appended to ``LOG_FILE`` as one JSON line and refused at once; loopback connections
are logged and allowed. Then it calls ``MODULE:FUNCTION`` with ``sys.argv`` set to ``ARGS``.
"""

from __future__ import annotations

import json
import socket
import sys

LOOPBACK = {"127.0.0.1", "::1", "localhost"}
_log_path = sys.argv[1]
_real_getaddrinfo = socket.getaddrinfo
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _log(kind: str, host: object, port: object, allowed: bool) -> None:
    with open(_log_path, "a", encoding="utf-8") as handle:
        entry = {"kind": kind, "host": str(host), "port": port, "allowed": allowed}
        handle.write(json.dumps(entry) + "\n")


def _getaddrinfo(host, port, *args, **kwargs):  # type: ignore[no-untyped-def]
    allowed = host is None or str(host) in LOOPBACK
    _log("getaddrinfo", host, port, allowed)
    if not allowed:
        raise socket.gaierror(socket.EAI_NONAME, f"netguard: resolving {host} is blocked")
    return _real_getaddrinfo(host, port, *args, **kwargs)


def _target(address):  # type: ignore[no-untyped-def]
    if isinstance(address, tuple):
        return address[0], address[1]
    return address, None  # AF_UNIX path


def _allowed(sock: socket.socket, host: object) -> bool:
    return sock.family == socket.AF_UNIX or str(host) in LOOPBACK


def _connect(self, address):  # type: ignore[no-untyped-def]
    host, port = _target(address)
    allowed = _allowed(self, host)
    _log("connect", host, port, allowed)
    if not allowed:
        raise ConnectionRefusedError(f"netguard: connection to {host}:{port} is blocked")
    return _real_connect(self, address)


def _connect_ex(self, address):  # type: ignore[no-untyped-def]
    host, port = _target(address)
    allowed = _allowed(self, host)
    _log("connect", host, port, allowed)
    return _real_connect_ex(self, address) if allowed else 111


socket.getaddrinfo = _getaddrinfo
socket.socket.connect = _connect  # type: ignore[method-assign]
socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign]

if __name__ == "__main__":
    import importlib

    module_name, function_name = sys.argv[2].split(":")
    sys.argv = [module_name, *sys.argv[3:]]
    entry = getattr(importlib.import_module(module_name), function_name)
    sys.exit(entry())
