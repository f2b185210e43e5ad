"""``agent-eval serve``: receive OTLP/HTTP spans and score conversations as they close.

Listens on ``--host`` (default ``127.0.0.1``: loopback only) and ``--port`` (default 4318, the
OTLP/HTTP port), so an agent instrumented with any OTLP exporter can point
``OTEL_EXPORTER_OTLP_ENDPOINT`` at it. Conversations close after ``--idle`` seconds without
spans, or ``--after-root`` seconds after their root span arrived
(:mod:`agent_eval.live._buffer`), and are scored with the judge configured as for ``score``
(flags or ``agent-eval.toml``) into ``OUT/results.jsonl`` and ``results.db``; each scored
conversation (every revision) and the text the judge saw go to ``OUT/conversations.jsonl`` and
``OUT/renderings.jsonl``, as ``score`` writes them, so ``agent-eval report OUT`` lays them out.
Ctrl-C (SIGINT) or SIGTERM stops it cleanly: what it holds is scored, or written to
``OUT/unscored.jsonl`` when the judge does not finish within ``--shutdown-timeout`` (with the
run, the reason and what its judge calls cut short had spent,
``metadata["agent_eval.unscored_spend"]``, :mod:`agent_eval.live._unscored`). The summary
printed on stdout at the end counts every judge request sent, those included
(``judge_usage``), as ``agent-eval runs show OUT`` does.
Every request body it answers 200 to is synced to ``OUT/ack-log/`` first
(:mod:`agent_eval.live._durable`); a start into an ``--out`` whose log holds requests not yet
scored (after a crash), or ``--resume OUT``, continues that run and scores them.
``--metric`` takes a list (one engine per metric, as ``score``); ``--where`` and ``--sample``
choose the conversations judged (:mod:`agent_eval.live._selection`); the others get ``skipped``
rows (``filtered_out``, ``sampled_out``) and the summary's ``conversations`` adds up.
Exit codes: 0 stopped cleanly; 2 usage or configuration error (no judge configured, port in use).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from agent_eval.cli._app import EXIT_USAGE, app, err_console
from agent_eval.cli._event_options import EventOptions, EventsFile, OtlpEndpoint
from agent_eval.cli._help_format import HelpCommand
from agent_eval.cli._judge_setup import build_judge, cache_endpoint, judge_model, missing_judge
from agent_eval.cli._quiet import machine_stdout
from agent_eval.config import DEFAULT_JUDGE, ScoreConfig, load_config
from agent_eval.errors import AgentEvalError, ConfigError
from agent_eval.run import _event_loop as event_loop

if TYPE_CHECKING:  # imported where used: aiohttp and the engine cost every command ~0.3 s
    from agent_eval.live._ack_log import AckLog
    from agent_eval.live._receiver import ReceiverLimits
    from agent_eval.live._scorer import LiveScorer
    from agent_eval.live._selection import Selection
    from agent_eval.run._session import RunSession
    from agent_eval.run._store import ResultStore

__all__ = ["serve"]

_MB = 1024 * 1024

SERVE_HOW_TO_CONFIGURE = """\
No judge is configured, so serve did not start: it scores each conversation as it closes.
To serve, either:
  - use OpenAI: export OPENAI_API_KEY=... and run again (judge {default}, or --judge MODEL);
  - use a local OpenAI-compatible server with --base-url and --judge, e.g.
      Ollama     --base-url http://localhost:11434/v1 --judge qwen2.5:7b-instruct
      vLLM       --base-url http://localhost:8000/v1  --judge Qwen/Qwen2.5-7B-Instruct
  - or set judge and base-url in the [score] table of agent-eval.toml (a [judge] table for
    a judge factory such as langchain:my_pkg.judges:make_chat_model).
The key is read from the environment variable named by --api-key-env (default OPENAI_API_KEY),
never from a flag or a file."""
"""``serve``'s hint when no judge is configured: it has no plan to show and scored nothing yet."""


async def _serve(  # noqa: PLR0917  (the command's parts, passed through once)
    cfg: ScoreConfig,
    limits: ReceiverLimits,
    host: str,
    port: int,
    events: EventOptions,
    argv: list[str],
    token: str | None = None,
    max_log_bytes: int = 1024 * _MB,
    selection: Selection | None = None,
) -> dict[str, Any]:
    from agent_eval.live._ack_log import ACK_LOG_DIR, AckLog
    from agent_eval.live._durable import continue_logged_run, index_traces_for
    from agent_eval.run._engine import new_run_id
    from agent_eval.run._session import build_metrics, output_directory

    metrics = build_metrics(cfg)  # every metric scores every conversation, as score does
    judged = any(m.requires_judge for m in metrics)
    model = judge_model(cfg)
    if model is None and judged:
        raise ConfigError(
            f"{missing_judge(cfg)}\n{SERVE_HOW_TO_CONFIGURE.format(default=DEFAULT_JUDGE)}"
        )
    run_id = new_run_id()
    out = Path(cfg.resume) if cfg.resume else output_directory(cfg, run_id)
    index = index_traces_for(limits.max_buffer_bytes)  # its index within --max-buffer-mb
    log = AckLog.open(out / ACK_LOG_DIR, max_bytes=max_log_bytes, index_traces=index)  # locked
    try:
        cfg, notice = continue_logged_run(cfg, log, out)
        if notice is not None:
            _notice(notice)
        return await _serve_logged(
            cfg, limits, host, port, events, argv, token, log, run_id, selection
        )
    finally:
        log.close()


async def _serve_logged(  # noqa: PLR0917  (the command's parts, passed through once)
    cfg: ScoreConfig,
    limits: ReceiverLimits,
    host: str,
    port: int,
    events: EventOptions,
    argv: list[str],
    token: str | None,
    log: AckLog,
    new_run: str,
    selection: Selection | None,
) -> dict[str, Any]:
    from agent_eval.live._durable import Durability
    from agent_eval.live._receiver import Receiver
    from agent_eval.live._scorer import LiveScorer
    from agent_eval.run._session import RunSession, SessionHooks, build_metrics

    metrics = build_metrics(cfg)  # every metric scores every conversation, as score does
    judged = any(m.requires_judge for m in metrics)
    model = judge_model(cfg)  # checked by _serve when a metric needs a judge
    session = RunSession(
        cfg,
        run_id=new_run,
        judge=build_judge(cfg, model) if judged and model is not None else None,
        model=model,
        metrics=metrics,
        endpoint=cache_endpoint(cfg),
        argv=argv,
        events=events,
        hooks=SessionHooks(notice=_notice),
        keep_results=True,
        keep_interrupted=False,  # a unit cut short goes to unscored.jsonl, not to a row
    )
    chosen = {"selection": list(selection.describe())} if selection is not None else {}
    engines, store, emitter = session.start_live(**chosen)
    directory, run_id = session.directory or Path("runs"), engines[0].run_id
    scorer = LiveScorer(engines, store, emitter, concurrency=cfg.concurrency, directory=directory)
    durable = Durability(log, engines)
    receiver = Receiver(
        scorer, limits, out_dir=directory, token=token, durable=durable, selection=selection
    )
    receiver.warm_up()  # before the first request, not on it: start-up includes it
    _bound_page_caches(session, store)
    durable.replay(receiver)  # what an earlier process acknowledged is held again
    log.start(run_id)
    stop = asyncio.Event()  # before listening: a SIGTERM right after the port opens stops cleanly
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        bound = await receiver.start(host, port)
    except OSError as exc:
        await session.stop_live(store, emitter)
        durable.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    err_console.print(
        f"agent-eval serve: listening on http://{host}:{bound} (POST /v1/traces, /v1/logs; "
        f"GET /healthz); run {run_id}, results in {directory}; Ctrl-C stops",
        highlight=False,
        soft_wrap=True,
    )
    try:
        await stop.wait()
    finally:
        err_console.print("agent-eval serve: stopping; scoring what is held", highlight=False)
        await receiver.stop()
        await session.stop_live(store, emitter)
        durable.close()  # what is not scored stays in the log for the next start
    return receiver.summary() | {
        "judge_usage": _judge_usage(directory, run_id, scorer),
        "ack_log": durable.summary(),
    }


def _bound_page_caches(session: RunSession, store: ResultStore) -> None:
    """The SQLite files serve keeps open hold :data:`PAGE_CACHE_KIB` KiB of pages each."""
    from agent_eval.live._evicted import PAGE_CACHE_KIB

    store.bound_page_cache(PAGE_CACHE_KIB)
    cache = session.stack.cache if session.stack is not None else None
    if cache is not None:
        cache.bound_page_cache(PAGE_CACHE_KIB)


def _notice(line: str) -> None:
    err_console.print(line, highlight=False, markup=False, soft_wrap=True)


def _judge_usage(directory: Path, run_id: str, scorer: LiveScorer) -> dict[str, Any]:
    """What this serve's judge calls spent: its rows, and the units the shutdown cut short.

    :class:`~agent_eval.run._usage.RunUsage` over the run's stored rows and the ``interrupted``
    rows (never stored) of the conversations written to ``unscored.jsonl``, so that it counts
    every request the endpoint received; ``interrupted`` counts those units.
    """
    from agent_eval.run._store import load_results
    from agent_eval.run._usage import usage_of

    return usage_of([*load_results(directory, run_id=run_id), *scorer.cut_short]).to_json()


@app.command(cls=HelpCommand)
def serve(  # noqa: PLR0917  (a typer command: one parameter per flag)
    host: Annotated[
        str, typer.Option(help="Address to listen on (loopback by default; 0.0.0.0 for all).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (the OTLP/HTTP default).")] = 4318,
    idle: Annotated[
        float, typer.Option(help="Close a conversation after this many seconds without spans.")
    ] = 30.0,
    after_root: Annotated[
        float, typer.Option(help="Close it this many seconds after its root span arrived.")
    ] = 2.0,
    max_buffer_mb: Annotated[
        float,
        typer.Option(
            help=(
                "Memory for held and scored spans and the ack log's index, MiB; scored "
                "conversations past it go to OUT/live-evicted.sqlite; 503 + Retry-After when "
                "spans waiting alone pass it."
            )
        ),
    ] = 256.0,
    max_body_mb: Annotated[
        float, typer.Option(help="Largest request body (also decompressed), MiB; beyond 413.")
    ] = 16.0,
    max_backlog: Annotated[
        int, typer.Option(help="Conversations waiting for the judge; beyond it 429.")
    ] = 1000,
    shutdown_timeout: Annotated[
        float, typer.Option(help="Seconds to finish scoring on shutdown before persisting.")
    ] = 30.0,
    metric: Annotated[
        str | None,
        typer.Option(
            help=(
                "Metrics, NAME[@V][,NAME...] (default goal_accuracy; a bare name is the latest "
                "version); each closed conversation gets each metric's rows."
            )
        ),
    ] = None,
    formatter: Annotated[
        str | None, typer.Option(help="Formatter NAME@V (default transcript@2, hardened).")
    ] = None,
    judge: Annotated[str | None, typer.Option(help="Judge model name.")] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint URL.")] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="Env var holding the key (default OPENAI_API_KEY).")
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option(help="Conversations scored at once (default 16).")
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Output directory (default runs/RUN_ID).")
    ] = None,
    config: Annotated[
        Path | None, typer.Option(help="TOML config (default ./agent-eval.toml).")
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the judge-call cache.")
    ] = False,
    otlp_endpoint: OtlpEndpoint = None,
    events_file: EventsFile = False,
    token_env: Annotated[
        str | None,
        typer.Option(help="Env var holding a token every POST must send as Bearer (401 else)."),
    ] = None,
    allow_unauthenticated: Annotated[
        bool,
        typer.Option("--allow-unauthenticated", help="Listen beyond loopback without --token-env."),
    ] = False,
    read_timeout: Annotated[
        float, typer.Option(help="Seconds a client may take to send a body; beyond it 408.")
    ] = 30.0,
    resume: Annotated[
        Path | None,
        typer.Option(
            help="Continue the run in this --out: score what its log acknowledged and not yet."
        ),
    ] = None,
    max_log_mb: Annotated[
        float, typer.Option(help="Disk for acknowledged, unscored bodies, MiB; beyond it 503.")
    ] = 1024.0,
    sample: Annotated[
        float,
        typer.Option(
            metavar="RATE",
            help="Share of the conversations judged, in (0, 1]; the rest are skipped rows "
            "(sampled_out). Decided per conversation id and --sample-seed.",
        ),
    ] = 1.0,
    sample_seed: Annotated[
        int, typer.Option(metavar="SEED", help="Seed of --sample's per-conversation draw.")
    ] = 0,
    where: Annotated[
        list[str] | None,
        typer.Option(
            metavar="CONDITION",
            help="Judge only conversations with a span or resource attribute so: KEY=V[,V], "
            "KEY!=V[,V] (none has it), KEY, !KEY; repeat to require all (filtered_out else).",
        ),
    ] = None,
) -> None:
    """Receive OTLP/HTTP spans (protobuf or JSON, gzip) and score conversations as they close.

    On Ctrl-C or SIGTERM what is held is scored; what the judge cannot finish within
    --shutdown-timeout goes to OUT/unscored.jsonl (no row), with why and what its cut-short
    judge calls spent. The JSON summary on stdout counts every judge request sent
    (judge_usage); so does agent-eval runs show OUT, which lists the unscored conversations.

    Every body answered 200 is first synced to OUT/ack-log (bounded by --max-log-mb; 503
    beyond): after a crash or kill -9, serve --resume OUT (or a start into the same --out)
    scores what was acknowledged and not yet scored, each revision once.

    Only this machine may post by default (loopback). A --host beyond it needs a token
    (--token-env VAR; exporters send it with OTEL_EXPORTER_OTLP_HEADERS=
    'Authorization=Bearer%20TOKEN'), or --allow-unauthenticated.

    --where filters and --sample samples the closed conversations before any judge call, e.g.
    --metric goal_accuracy,tool_errors --where service.name=checkout --where
    deployment.environment.name!=dev --sample 0.25; a conversation left out gets a skipped row
    per metric (filtered_out, sampled_out), counted in the summary's conversations.

    Exit codes: 0 stopped cleanly (Ctrl-C or SIGTERM); 2 a usage or configuration error (no
    judge configured, the port in use, a non-loopback --host without a token, a bad --where or
    --sample).
    """
    from agent_eval.live._auth import check_exposure, read_token
    from agent_eval.live._receiver import ReceiverLimits, dumps, working_bytes_for
    from agent_eval.live._selection import Selection, parse_condition

    overrides = {
        "metric": metric,
        "formatter": formatter,
        "judge": judge,
        "base_url": base_url,
        "api_key_env": api_key_env,
        "concurrency": concurrency,
        "out": out or resume,
        "resume": str(resume) if resume else None,
        "cache": "off" if no_cache else None,
    }
    limits = ReceiverLimits(
        max_body_bytes=int(max_body_mb * _MB),
        max_buffer_bytes=int(max_buffer_mb * _MB),
        working_bytes=working_bytes_for(int(max_buffer_mb * _MB)),
        max_backlog=max_backlog,
        idle_seconds=idle,
        after_root_seconds=after_root,
        shutdown_timeout=shutdown_timeout,
        read_timeout_seconds=read_timeout,
    )
    events = EventOptions(otlp_endpoint=otlp_endpoint, events_file=events_file)
    try:
        token = read_token(token_env) if token_env else None
        check_exposure(host, token, allow_unauthenticated)
        if resume is not None and out is not None and out != resume:
            raise ConfigError(f"--resume {resume} continues the run in {resume}; drop --out {out}")
        cfg = load_config(config, **overrides)
        max_log = int(max_log_mb * _MB)
        conditions = tuple(parse_condition(text) for text in where or ())
        selection = Selection(conditions, rate=sample, seed=sample_seed)
        chosen = None if selection.everything else selection
        summary = event_loop.run(
            _serve(
                cfg,
                limits,
                host,
                port,
                events,
                sys.argv,
                token,
                max_log_bytes=max_log,
                selection=chosen,
            )
        )
    except AgentEvalError as exc:
        err_console.print(
            f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
        )
        raise typer.Exit(EXIT_USAGE) from None
    machine_stdout().write(dumps(summary) + "\n")  # written with --quiet too
