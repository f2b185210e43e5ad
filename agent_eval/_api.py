"""The Python API of scoring: :func:`score` and :func:`ascore`, through the CLI's run session.

Both run a :class:`~agent_eval.run._session.RunSession`, as ``agent-eval score`` does, so a run
directory written here (``out=``) holds the same files and rows as the CLI's.

Example::

    import agent_eval
    from agent_eval.ingest import ingest
    from agent_eval.judges._openai_judge import OpenAIJudge

    traces = ingest("traces/")
    summary = agent_eval.score(  # closes the judge's connections before it returns
        traces,
        metric="goal_accuracy",
        formatter="transcript@2",   # the default (hardened); Ragas parity: "ragas-pretty@1"
        judge=OpenAIJudge("gpt-4o-mini"),
        reference=True,          # use each trace's reference (or pass {conversation_id: goal})
        out="runs/first",        # the run directory, as `agent-eval score --out` writes it
    )
    print(summary.accounting_line, summary.mean_score)
"""

from __future__ import annotations

import difflib
import inspect
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_eval._trace import AgentTrace
from agent_eval.errors import ConfigError
from agent_eval.formatting._base import Formatter
from agent_eval.formatting._identity import DEFAULT_FORMATTER
from agent_eval.formatting._registry import get_formatter
from agent_eval.judges._base import Judge, JudgeSettings, judges
from agent_eval.metrics._base import Metric
from agent_eval.metrics._spec import build_metric
from agent_eval.run import _event_loop as event_loop
from agent_eval.run._budget import Budget
from agent_eval.run._cache import CacheMode
from agent_eval.run._engine import DEFAULT_CONCURRENCY
from agent_eval.run._summary import RunSummary

if TYPE_CHECKING:
    from agent_eval.run._session import Executor

__all__ = ["ascore", "score"]

Reference = bool | Mapping[str, str] | str | Path | None
"""``True``: the traces' own references; a mapping ``{conversation_id: reference}``; a path to
a JSONL/CSV reference file; ``None``/``False``: the reference-free variant."""


def _metric(metric: str | Metric, reference: Reference) -> Metric:
    if isinstance(metric, Metric):
        return metric
    return build_metric(metric, with_reference=bool(reference))


def _references(reference: Reference) -> dict[str, str]:
    if isinstance(reference, str | Path):
        from agent_eval._references import load_references  # the ingest package: on use

        return load_references(reference)
    if isinstance(reference, Mapping):
        return dict(reference)
    return {}


def _judge(judge: Judge | str) -> tuple[Judge, bool]:
    if isinstance(judge, Judge):
        return judge, False
    from agent_eval.judges._openai_judge import OpenAIJudge

    return OpenAIJudge(judge), True


def _settings(judge: Judge | str) -> JudgeSettings | None:
    """How a worker rebuilds ``judge`` (``None``: a judge object, which it cannot).

    ``KIND:TARGET`` of a registered judge, else a model of the ``openai`` judge configured from
    the environment.
    """
    if isinstance(judge, Judge):
        return None
    head, sep, rest = judge.partition(":")
    if sep and head in judges:
        return JudgeSettings(kind=head, target=rest or None)
    return JudgeSettings(kind="openai", model=judge, base_url=os.environ.get("OPENAI_BASE_URL"))


def _executor(
    engine: str, judge: Judge | str, workers: int | None = None
) -> tuple[Executor | None, Judge | None]:
    """The executor ``engine`` names and the driver's judge (built from its settings).

    Raises:
        ConfigError: an unknown engine, Ray missing, a judge object with ``engine="ray"``, or
            ``workers`` without a Ray engine or below 1.

    """
    if workers is not None and (engine == "local" or workers < 1):
        raise ConfigError(
            f"workers={workers}: the actor pool of a Ray run takes 1 or more workers, with "
            'engine="ray" (one process scores with concurrency=)'
        )
    if engine == "local":
        return None, None
    if engine != "ray" and not (engine.startswith("ray:") and engine[4:]):
        raise ConfigError(f"unknown engine {engine!r}; give local, ray or ray:ADDRESS")
    from agent_eval.run.cluster import RayExecutor, RayOptions, require_ray

    require_ray()
    settings = _settings(judge)
    options = RayOptions(
        address=engine[4:] or None,
        workers=workers,
        judge=settings,
        env=(settings.api_key_env if settings else "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    )
    built = judges.get(settings.kind).from_settings(settings) if settings else None
    return RayExecutor(options), built


async def ascore(
    traces: Iterable[AgentTrace],
    *,
    metric: str | Metric = "goal_accuracy",
    formatter: str | Formatter[Any] = DEFAULT_FORMATTER,
    judge: Judge | str,
    reference: Reference = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    max_context_tokens: int | None = 128_000,
    out: str | Path | None = None,
    run_id: str | None = None,
    progress: bool = False,
    budget: Budget | None = None,
    keep_interrupted: bool = False,
    cache: CacheMode = "off",
    cache_path: str | Path | None = None,
    engine: str = "local",
    workers: int | None = None,
) -> RunSummary:
    """Score ``traces`` and return the run summary (its ``results`` hold every row).

    Args:
        traces: AgentTraces, e.g. from :func:`agent_eval.ingest.ingest`.
        metric: A metric spec (``NAME[@V][params]``; a bare name is the latest version) or a
            :class:`Metric` instance.
        formatter: A formatter identity (``name@version[params]``) or instance; the default
            is the hardened :data:`~agent_eval.config.DEFAULT_FORMATTER`, and
            ``metric="goal_accuracy@1", formatter="ragas-pretty@1"`` is the Ragas-parity
            configuration (:data:`~agent_eval.config.RAGAS_PARITY`).
        judge: A :class:`Judge`, or a model name for an :class:`OpenAIJudge` configured from
            the environment (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``); one made here is closed.
        reference: See :data:`Reference`; anything truthy selects the reference variant.
        concurrency: Conversations scored at once.
        max_context_tokens: Skip conversations whose prompt exceeds this (``None``: never).
        out: The run directory, written as ``agent-eval score --out`` writes it (results,
            the run record, ``conversations.jsonl``, ``renderings.jsonl``, for answer-level
            metrics ``units.jsonl`` and ``turns.jsonl``: ``agent-eval report OUT`` shows what
            the judge saw); ``None`` stores nothing.
        run_id: The run id; a new one when ``None``.
        progress: Show a progress bar on stderr.
        budget: The run's budget; the judge must already be wrapped in its
            :class:`~agent_eval.run._budget.BudgetedJudge` (see
            :func:`~agent_eval.run._judge_stack.wrap_judge`). Units left when it is reached are
            skipped with reason ``budget``.
        keep_interrupted: Keep each unit an interrupt (Ctrl-C, task cancelled) cut short after
            its judge calls had sent a request as a row skipped ``interrupted``, carrying what
            they spent (see :class:`~agent_eval.run._engine.Engine`); off, it leaves no row.
        cache: The judge-call cache: ``off`` (default), ``use`` or ``refresh``.
        cache_path: The cache file (default: the per-user one,
            :func:`~agent_eval.run._judge_stack.default_cache_path`).
        engine: ``local`` (this process), ``ray`` (the cluster ``$RAY_ADDRESS`` names, else
            a local one) or ``ray:ADDRESS`` (:mod:`agent_eval.run.cluster`, the ``ray``
            extra). On Ray the judge is rebuilt on every worker, so it must be a string: a
            model of the ``openai`` judge (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``), or
            ``KIND:TARGET`` of a registered judge (``openai-client:package.module:factory``
            for your own client); the workers share one rate limit, budget and judge-call
            cache.
        workers: The scoring actors of a Ray run (one CPU each); ``None``: one per CPU of the
            cluster. Only with a Ray ``engine``.

    Raises:
        ConfigError: an unknown metric/formatter name, or no judge endpoint configured; a
            judge object with ``engine="ray"`` (it cannot go to the workers); ``workers``
            without a Ray ``engine``.
        InputError: a reference file that cannot be read.

    """
    chosen_metric = _metric(metric, reference)  # a bad name before any judge is made
    chosen_formatter = formatter if isinstance(formatter, Formatter) else get_formatter(formatter)
    executor, built = _executor(engine, judge, workers)
    chosen_judge, owned = (built, True) if built is not None else _judge(judge)
    from rich.console import Console  # the run's modules load on the first run, not on import

    from agent_eval.config import ScoreConfig
    from agent_eval.run._session import RunSession, SessionHooks

    settings = ScoreConfig(
        out=Path(out) if out is not None else None,
        concurrency=concurrency,
        max_context_tokens=max_context_tokens,
        cache=cache,
        **({"cache_path": Path(cache_path)} if cache_path is not None else {}),
    )
    session = RunSession(
        settings,
        judge=chosen_judge,
        model=chosen_judge.model,
        metrics=[chosen_metric],
        formatter=chosen_formatter,
        hooks=SessionHooks(progress=Console(stderr=True) if progress else None),
        budget=budget,
        run_id=run_id,
        write=out is not None,
        keep_results=True,
        keep_interrupted=keep_interrupted,
        close_judges=owned,
        executor=executor,
    )
    try:
        session.read(traces, references=_references(reference))
        return (await session.run())[0]
    finally:
        session.close()


def score(traces: Iterable[AgentTrace], **options: Any) -> RunSummary:
    """Blocking :func:`ascore` (same arguments); use :func:`ascore` inside an event loop.

    The event loop is this call's own, so everything opened in it is closed before it returns:
    a :class:`Judge` passed in is closed (:meth:`Judge.aclose`) at the end, which releases its
    connections and leaves it usable again (a later call opens new ones).

    Raises:
        RuntimeError: called from a running event loop.
        TypeError: an option :func:`ascore` does not take (named, with the closest one), before
            anything runs.

    """
    _check_options(options)

    async def run_and_close() -> RunSummary:
        try:
            return await ascore(traces, **options)
        finally:
            judge = options.get("judge")
            if isinstance(judge, Judge):
                await judge.aclose()

    return event_loop.run(run_and_close())


def _check_options(options: Mapping[str, Any]) -> None:
    """Refuse a keyword :func:`ascore` does not take, naming the closest one it does."""
    known = [name for name in inspect.signature(ascore).parameters if name != "traces"]
    for name in options:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f"; it takes {', '.join(known)}"
            raise TypeError(f"agent_eval.score() got an unknown option {name!r}{hint}")
