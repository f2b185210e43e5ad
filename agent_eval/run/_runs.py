"""Finding an earlier run again: by its output directory or its run id.

``agent-eval errors RUN``, ``agent-eval score --resume RUN`` and ``--retry-errors RUN`` all take
``RUN`` as either a run directory (the ``--out`` of the run; its latest run is meant) or a run
id, looked up in the given output directory. The run's configuration identity is stored in the
``runs`` table of ``results.db`` (see :mod:`agent_eval.run._store`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_eval._result import MetricResult
from agent_eval.errors import ConfigError, StoreError
from agent_eval.run._budget import BUDGET_SKIP
from agent_eval.run._outcomes import INTERRUPTED_SKIP
from agent_eval.run._store import DB_NAME, ResultKey, ResultStore, RunRecord, result_key

__all__ = [
    "IDENTITY_KEYS",
    "RunRef",
    "check_identity",
    "errored_results",
    "find_run",
    "finished_results",
    "runs_in",
]

IDENTITY_KEYS = (
    "metric",
    "uses_reference",
    "formatter",
    "formatter_fingerprint",
    "prompt_sha256",
    "judge_model",
)
"""The parts of a run's configuration that must match to continue it."""


@dataclass(frozen=True, slots=True)
class RunRef:
    """A run found on disk.

    Attributes:
        directory: The output directory holding its ``results.db``.
        run: Its record in the ``runs`` table.

    """

    directory: Path
    run: RunRecord

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self.run.run_id


def runs_in(directory: Path) -> list[RunRecord]:
    """The runs recorded in ``directory``'s results.db, oldest first; ``[]`` if it has none."""
    if not (directory / DB_NAME).is_file():
        return []
    with ResultStore(directory) as store:
        return store.runs()


def find_run(run: str, out: str | Path | None = None) -> RunRef:
    """Locate ``run``: a run directory (its latest run) or a run id inside ``out``.

    Args:
        run: A directory holding ``results.db``, or a run id.
        out: The output directory to look for a run id in; ``None`` tries ``run`` as a path
            only.

    Raises:
        StoreError: nothing matches (exit 3, as for any run that cannot be read); the message
            lists the runs that exist there.

    """
    as_path = Path(run)
    if as_path.is_dir():
        records = runs_in(as_path)
        if not records:
            raise StoreError(f"{as_path} holds no runs ({DB_NAME} missing or empty)")
        return RunRef(as_path, records[-1])
    if out is None:
        default = Path("runs") / run
        if (default / DB_NAME).is_file():
            return find_run(run, default)
        raise StoreError(
            f"{run!r} is not a run directory; give the directory, or the run id with --out DIR"
        )
    records = runs_in(Path(out))
    for record in records:
        if record.run_id == run:
            return RunRef(Path(out), record)
    known = ", ".join(r.run_id for r in records) or "none"
    raise StoreError(f"no run {run!r} in {out}; runs there: {known}")


def errored_results(ref: RunRef) -> list[MetricResult]:
    """The run's results with status ``error`` (the dead letters), in key order."""
    with ResultStore(ref.directory) as store:
        return [r for r in store.results(ref.run_id) if r.status == "error"]


def check_identity(ref: RunRef, identity: Mapping[str, Any]) -> None:
    """Refuse to continue ``ref`` with a different metric, formatter, prompts or judge.

    A run of several metrics stores each one's identity under ``config["metrics"][metric]``;
    ``identity`` is then checked against its metric's.

    Raises:
        ConfigError: a setting in :data:`IDENTITY_KEYS` differs; names each one.

    """
    stored = ref.run.config
    per_metric = stored.get("metrics")
    if isinstance(per_metric, dict) and identity.get("metric") in per_metric:
        stored = per_metric[identity["metric"]]
    changed = [
        f"{key}: {stored.get(key)!r} then, {identity.get(key)!r} now"
        for key in IDENTITY_KEYS
        if key in stored and stored.get(key) != identity.get(key)
    ]
    if changed:
        raise ConfigError(
            f"run {ref.run_id} in {ref.directory} was scored differently ({'; '.join(changed)}); "
            "continue it with the same settings, or start a new run"
        )


def finished_results(ref: RunRef, *, retry_errors: bool = False) -> dict[ResultKey, MetricResult]:
    """The run's results that need no more work, by key (the engine's ``done``).

    Args:
        ref: The run.
        retry_errors: Leave ``error`` rows out, so their conversations are scored again.

    Rows skipped for ``budget`` or ``interrupted`` are always left out: a continued run
    scores them.

    """
    with ResultStore(ref.directory) as store:
        rows = store.results(ref.run_id)
    return {result_key(r): r for r in rows if not _again(r, retry_errors)}


_SCORED_AGAIN = frozenset({BUDGET_SKIP, INTERRUPTED_SKIP})
"""Skip reasons of units a continued run scores again: they were never judged to the end."""


def _again(result: MetricResult, retry_errors: bool) -> bool:
    """Whether a continued run scores ``result``'s unit again.

    Budget and interrupt skips always; errors with ``retry_errors``.
    """
    if result.status == "skipped" and result.error_type in _SCORED_AGAIN:
        return True
    return retry_errors and result.status == "error"
