"""``agent-eval serve``: receive OTLP/HTTP spans and score conversations as they close.

Listens on ``--host`` (default ``127.0.0.1``: loopback only) and ``--port`` (default 4318, the
OTLP/HTTP port), so an agent instrumented with any OTLP exporter can point
``OTEL_EXPORTER_OTLP_ENDPOINT`` at it. Conversations close after ``--idle`` seconds without
spans, or ``--after-root`` seconds after their root span arrived
(:mod:`agent_eval.live.buffer`), and are scored with the judge configured as for ``score``
(flags or ``agent-eval.toml``) into ``OUT/results.jsonl`` and ``results.db``; each scored
conversation (every revision) and the text the judge saw go to ``OUT/conversations.jsonl`` and
``OUT/renderings.jsonl``, as ``score`` writes them, so ``agent-eval report OUT`` lays them out.
Ctrl-C (SIGINT) or SIGTERM stops it cleanly: what it holds is scored, or written to
``OUT/unscored.jsonl`` when the judge does not finish within ``--shutdown-timeout`` (with the
run, the reason and what its judge calls cut short had spent,
``metadata["agent_eval.unscored_spend"]``, :mod:`agent_eval.live.unscored`). The summary
printed on stdout at the end counts every judge request sent, those included
(``judge_usage``), as ``agent-eval runs show OUT`` does.
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

from agent_eval.cli.app import EXIT_USAGE, app, err_console
from agent_eval.cli.event_options import EventOptions, EventsFile, OtlpEndpoint
from agent_eval.cli.help_format import HelpCommand
from agent_eval.cli.judge_setup import build_judge, cache_endpoint, judge_model, missing_judge
from agent_eval.cli.quiet import machine_stdout
from agent_eval.config import DEFAULT_JUDGE, ScoreConfig, load_config
from agent_eval.errors import AgentEvalError, ConfigError
from agent_eval.run import event_loop

if TYPE_CHECKING:  # imported where used: aiohttp and the engine cost every command ~0.3 s
    from agent_eval.live.receiver import ReceiverLimits
    from agent_eval.live.scorer import LiveScorer

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
) -> dict[str, Any]:
    from agent_eval.live.receiver import Receiver
    from agent_eval.live.scorer import LiveScorer
    from agent_eval.metrics.spec import split_metrics
    from agent_eval.run.session import RunSession, SessionHooks

    model = judge_model(cfg)
    if model is None:
        raise ConfigError(
            f"{missing_judge(cfg)}\n{SERVE_HOW_TO_CONFIGURE.format(default=DEFAULT_JUDGE)}"
        )
    names = split_metrics(cfg.metric)
    if len(names) > 1:
        raise ConfigError(
            f"serve scores one metric, not {len(names)} ({', '.join(names)}): give one with "
            f"--metric NAME (e.g. --metric {names[0]}), and run one serve per metric if you "
            "need several"
        )
    session = RunSession(
        cfg,
        judge=build_judge(cfg, model),
        model=model,
        endpoint=cache_endpoint(cfg),
        argv=argv,
        events=events,
        hooks=SessionHooks(notice=_notice),
        keep_results=True,
        keep_interrupted=False,  # a unit cut short goes to unscored.jsonl, not to a row
    )
    engine, store, emitter = session.start_live()
    directory, run_id = session.directory or Path("runs"), engine.run_id
    scorer = LiveScorer(engine, store, emitter, concurrency=cfg.concurrency, directory=directory)
    receiver = Receiver(scorer, limits, out_dir=directory, token=token)
    try:
        bound = await receiver.start(host, port)
    except OSError as exc:
        await session.stop_live(store, emitter)
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    err_console.print(
        f"agent-eval serve: listening on http://{host}:{bound} (POST /v1/traces, /v1/logs; "
        f"GET /healthz); run {run_id}, results in {directory}; Ctrl-C stops",
        highlight=False,
        soft_wrap=True,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        err_console.print("agent-eval serve: stopping; scoring what is held", highlight=False)
        await receiver.stop()
        await session.stop_live(store, emitter)
    return receiver.summary() | {"judge_usage": _judge_usage(directory, run_id, scorer)}


def _notice(line: str) -> None:
    err_console.print(line, highlight=False, markup=False, soft_wrap=True)


def _judge_usage(directory: Path, run_id: str, scorer: LiveScorer) -> dict[str, Any]:
    """What this serve's judge calls spent: its rows, and the units the shutdown cut short.

    :class:`~agent_eval.run.usage.RunUsage` over the run's stored rows and the ``interrupted``
    rows (never stored) of the conversations written to ``unscored.jsonl``, so that it counts
    every request the endpoint received; ``interrupted`` counts those units.
    """
    from agent_eval.run.store import load_results
    from agent_eval.run.usage import usage_of

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
        float, typer.Option(help="Memory for held spans, MiB; beyond it 503 + Retry-After.")
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
                "The one metric serve scores, NAME[@V] (default goal_accuracy; a bare name "
                "is the latest version)."
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
) -> None:
    """Receive OTLP/HTTP spans (protobuf or JSON, gzip) and score conversations as they close.

    On Ctrl-C or SIGTERM what is held is scored; what the judge cannot finish within
    --shutdown-timeout goes to OUT/unscored.jsonl (no row), with why and what its cut-short
    judge calls spent. The JSON summary on stdout counts every judge request sent
    (judge_usage); so does agent-eval runs show OUT, which lists the unscored conversations.

    Only this machine may post by default (loopback). A --host beyond it needs a token
    (--token-env VAR; exporters send it with OTEL_EXPORTER_OTLP_HEADERS=
    'Authorization=Bearer%20TOKEN'), or --allow-unauthenticated.

    Exit codes: 0 stopped cleanly (Ctrl-C or SIGTERM); 2 a usage or configuration error (no
    judge configured, the port in use, a non-loopback --host without a token).
    """
    from agent_eval.live.auth import check_exposure, read_token
    from agent_eval.live.receiver import ReceiverLimits, dumps

    overrides = {
        "metric": metric,
        "formatter": formatter,
        "judge": judge,
        "base_url": base_url,
        "api_key_env": api_key_env,
        "concurrency": concurrency,
        "out": out,
        "cache": "off" if no_cache else None,
    }
    limits = ReceiverLimits(
        max_body_bytes=int(max_body_mb * _MB),
        max_buffer_bytes=int(max_buffer_mb * _MB),
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
        cfg = load_config(config, **overrides)
        summary = event_loop.run(_serve(cfg, limits, host, port, events, sys.argv, token))
    except AgentEvalError as exc:
        err_console.print(
            f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
        )
        raise typer.Exit(EXIT_USAGE) from None
    machine_stdout().write(dumps(summary) + "\n")  # written with --quiet too
