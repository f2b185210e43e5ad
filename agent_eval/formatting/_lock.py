"""``formatters.lock``: the frozen fingerprints of released formatter versions.

Released versions are immutable, like database migrations. The lock records, for every locked
identity (each release with default parameters, plus its ``lock_variants``), the fingerprint
(:mod:`agent_eval.formatting._fingerprint`) over the probe set version the lock names. The file is
JSON with sorted keys::

    {"fingerprint_scheme": "agent-eval-fingerprint/1", "probe_set": 1,
     "formatters": {"json@1": "<64 hex>", "transcript@1[max_tool_chars=200]": "<64 hex>", ...}}

A lock covers the formatters of the package it sits in (:func:`lock_scope`), so a third-party
plugin installed beside the built-ins is neither checked against nor written into the project's
lock: its package ships its own. :func:`verify_lock` lists such identities apart
(:attr:`LockReport.uncovered`), so ``formatters lock --check`` can say that nothing notices a
change to them without a version bump (and ``--strict`` fail on them). :func:`check_lock` raises
:class:`~agent_eval.errors.FormatterLockError` ("bump the version") when a registered identity
renders differently from its entry, or a locked release is no longer registered;
:func:`update_lock` adds entries for identities not yet locked and never rewrites one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from agent_eval._plugins import Registry
from agent_eval.errors import ConfigError, FormatterLockError
from agent_eval.formatting._base import Formatter
from agent_eval.formatting._fingerprint import FINGERPRINT_SCHEME, fingerprint
from agent_eval.formatting._identity import build_params, parse_identity
from agent_eval.formatting._probe_set import PROBE_SET_VERSION
from agent_eval.formatting._registry import FormatterClass, formatters

__all__ = [
    "LockFile",
    "LockReport",
    "Mismatch",
    "Uncovered",
    "check_lock",
    "default_lock_path",
    "lock_scope",
    "lock_targets",
    "read_lock",
    "update_lock",
    "verify_lock",
    "write_lock",
]


def default_lock_path() -> Path:
    """``formatters.lock`` inside the installed ``agent_eval_formatters`` package.

    In the repository: ``formatters/agent_eval_formatters/formatters.lock``.
    """
    return Path(str(files("agent_eval_formatters").joinpath("formatters.lock")))


@dataclass(frozen=True, slots=True)
class LockFile:
    """The lock's content: the probe set version and ``identity -> 64-hex fingerprint``."""

    probe_set: int = PROBE_SET_VERSION
    fingerprints: dict[str, str] = field(default_factory=dict)


def read_lock(path: Path | None = None) -> LockFile:
    """Read a lock file; a missing file is an empty lock.

    Raises:
        ConfigError: the file is not a lock (bad JSON, wrong scheme or shape).

    """
    path = path or default_lock_path()
    if not path.exists():
        return LockFile()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data["fingerprint_scheme"] != FINGERPRINT_SCHEME:
            raise ValueError(f"fingerprint_scheme {data['fingerprint_scheme']!r}")
        return LockFile(
            int(data["probe_set"]), {str(k): str(v) for k, v in data["formatters"].items()}
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(
            f"{path}: not a formatter lock file ({exc}); restore it from git"
        ) from None


def write_lock(lock: LockFile, path: Path | None = None) -> None:
    """Write ``lock`` as sorted, indented JSON with a trailing newline."""
    document = {
        "fingerprint_scheme": FINGERPRINT_SCHEME,
        "probe_set": lock.probe_set,
        "formatters": dict(sorted(lock.fingerprints.items())),
    }
    text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    (path or default_lock_path()).write_text(text, encoding="utf-8")


def _variant(cls: FormatterClass, params: str) -> Formatter[Any]:
    spec = parse_identity(f"{cls.release()}[{params}]")
    return cls(build_params(spec.release, cls.Params, dict(spec.params)))


def lock_scope(path: Path) -> str | None:
    """The dotted package a lock file sits in, or ``None`` outside any package.

    A lock inside a package covers the formatters defined in that package only (the project's
    the built-in lock covers ``agent_eval_formatters.*``, a third-party package's own lock its
    own modules); a lock outside any package covers every registered formatter.
    """
    parts: list[str] = []
    folder = path.resolve().parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts) or None


def _in_scope(cls: FormatterClass, scope: str | None) -> bool:
    return scope is None or cls.__module__ == scope or cls.__module__.startswith(scope + ".")


def lock_targets(
    registry: Registry[FormatterClass] | None = None, scope: str | None = None
) -> dict[str, Formatter[Any]]:
    """Every lockable identity -> formatter: each release's defaults plus its ``lock_variants``.

    Args:
        registry: Where the formatters come from; the global registry by default.
        scope: Only formatters defined in this dotted package (see :func:`lock_scope`).

    """
    targets: dict[str, Formatter[Any]] = {}
    for _, cls in registry or formatters:
        if not _in_scope(cls, scope):
            continue
        for formatter in [cls(), *(_variant(cls, params) for params in cls.lock_variants)]:
            targets[formatter.identity] = formatter
    return targets


@dataclass(frozen=True, slots=True)
class Mismatch:
    """A locked identity whose current fingerprint differs from its lock entry."""

    identity: str
    locked: str
    actual: str


@dataclass(frozen=True, slots=True)
class Uncovered:
    """A registered identity outside the lock's scope (a plugin's formatter, another package).

    Attributes:
        identity: ``name@version[params]``.
        module: The module defining its class (its package should ship its own lock).
        fingerprint: Its current fingerprint (64 hex).

    """

    identity: str
    module: str
    fingerprint: str

    def describe(self) -> str:
        """One sentence: what is not covered, why it matters, how to lock it."""
        package = self.module.split(".", 1)[0]
        return (
            f"not covered by this lock: {self.identity} (module {self.module}, fingerprint "
            f"{self.fingerprint[:12]}): nothing notices a change to its rendering without a "
            f"version bump; lock it in its own package: agent-eval formatters lock --lock "
            f"<{package} package directory>/formatters.lock"
        )


@dataclass(frozen=True, slots=True)
class LockReport:
    """Outcome of :func:`verify_lock`.

    Attributes:
        mismatched: Locked identities that now render differently.
        missing: Locked identities whose release is no longer registered (with the load error of
            a broken plugin, when there is one).
        unlocked: Registered identities without a lock entry (new versions).
        fingerprints: The current fingerprint of every registered identity in the lock's scope.
        uncovered: Registered identities outside the lock's scope (:func:`lock_scope`), which
            this lock neither checks nor writes, sorted.

    """

    mismatched: tuple[Mismatch, ...] = ()
    missing: tuple[str, ...] = ()
    unlocked: tuple[str, ...] = ()
    fingerprints: dict[str, str] = field(default_factory=dict)
    uncovered: tuple[Uncovered, ...] = ()

    @property
    def frozen_ok(self) -> bool:
        """True when no released version changed or disappeared."""
        return not self.mismatched and not self.missing

    def problems(self) -> list[str]:
        """One sentence per mismatch or missing release, each saying what to do."""
        lines = [
            f"formatter {m.identity} renders the probe set differently from its lock entry "
            f"(locked {m.locked[:12]}, now {m.actual[:12]}): released versions are frozen, so "
            f"bump the version: restore {m.identity.split('[')[0]} and put the new behaviour in "
            "a new module with the next version, then run `agent-eval formatters lock`"
            for m in self.mismatched
        ]
        lines += [
            f"formatter {identity} is locked but not registered: released versions must stay "
            "available so old results stay reproducible; restore its module and entry point"
            for identity in self.missing
        ]
        return lines


def verify_lock(
    path: Path | None = None, registry: Registry[FormatterClass] | None = None
) -> LockReport:
    """Compare the fingerprint of every registered identity in the lock's scope with the lock."""
    path = path or default_lock_path()
    lock = read_lock(path)
    targets = lock_targets(registry, lock_scope(path))
    current = {k: fingerprint(f, lock.probe_set) for k, f in targets.items()}
    broken = (registry or formatters).broken
    outside = {k: f for k, f in lock_targets(registry).items() if k not in targets}
    return LockReport(
        uncovered=tuple(
            Uncovered(k, type(f).__module__, fingerprint(f, lock.probe_set))
            for k, f in sorted(outside.items())
        ),
        mismatched=tuple(
            Mismatch(k, v, current[k])
            for k, v in sorted(lock.fingerprints.items())
            if k in current and current[k] != v
        ),
        missing=tuple(
            k + (f" ({broken[k.split('[')[0]]})" if k.split("[")[0] in broken else "")
            for k in sorted(lock.fingerprints)
            if k not in current
        ),
        unlocked=tuple(sorted(set(current) - set(lock.fingerprints))),
        fingerprints=current,
    )


def check_lock(
    path: Path | None = None, registry: Registry[FormatterClass] | None = None
) -> LockReport:
    """:func:`verify_lock`, raising when a released version changed or disappeared.

    Raises:
        FormatterLockError: a mismatch ("bump the version") or a missing release.

    """
    report = verify_lock(path, registry)
    if not report.frozen_ok:
        raise FormatterLockError("; ".join(report.problems()))
    return report


def update_lock(
    path: Path | None = None, registry: Registry[FormatterClass] | None = None
) -> list[str]:
    """Add lock entries for identities not yet locked; existing entries are never rewritten.

    Returns:
        The identities added, sorted.

    Raises:
        FormatterLockError: a locked version changed or disappeared (fix that first).

    """
    report = check_lock(path, registry)
    if report.unlocked:
        lock = read_lock(path)
        added = {k: report.fingerprints[k] for k in report.unlocked}
        write_lock(LockFile(lock.probe_set, {**lock.fingerprints, **added}), path)
    return list(report.unlocked)
