"""``agent-eval serve``: an OTLP/HTTP receiver that scores conversations as their spans arrive.

Endpoints (OTLP/HTTP, OTLP specification 1.x):

- ``POST /v1/traces`` and ``POST /v1/logs``: protobuf or JSON bodies, optionally gzip
  (:mod:`agent_eval.live._payloads`). 200 with an ``Export*ServiceResponse`` in the request's
  encoding (``partial_success`` names the spans or log records that could not be used);
  400 malformed body; 413 body larger than ``max_body_bytes`` (before or after decompression);
  415 other media types; 503 with ``Retry-After`` when accepting it would exceed the memory
  budget (:mod:`agent_eval.live._buffer`) or while shutting down; 429 with ``Retry-After`` when
  the scoring backlog is full. The OTLP exporters retry 429/503 after ``Retry-After``. With an
  acknowledgement log (``serve``: :mod:`agent_eval.live._durable`) the body is synced to it
  before the 200, and 503 also means the log is full (``--max-log-mb``) or cannot be written.
- ``GET /healthz``: 200 ``{"status": "ok", ...counters}`` while serving, 503 while shutting down.

Conversations close as :mod:`agent_eval.live._buffer` describes (idle time, or root span end
plus a grace), are assembled with the ingest Assembler, and are scored by
:class:`~agent_eval.live._scorer.LiveScorer` into the results store. A conversation whose spans
keep arriving after it was scored is re-scored as a new row (``revision`` + 1, with a note).

Shutdown (SIGINT/SIGTERM, or :meth:`Receiver.stop`): the listener closes, everything held is
closed and scored; what the judge cannot finish within ``shutdown_timeout`` is written to
``OUT/unscored.jsonl`` (AgentTrace JSON Lines, ``agent-eval score`` reads it) and counted.
Every such conversation carries in its ``metadata``, under :data:`UNSCORED_SPEND_KEY`
(:func:`unscored_spend`, :mod:`agent_eval.live._unscored`), the run, why it is unscored (cut
short while being scored, or not started) and what its judge calls had spent; no formatter
renders ``metadata``, so scoring the file later judges the same text.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import ClientPayloadError, web

from agent_eval._trace import AgentTrace
from agent_eval.errors import OutputError
from agent_eval.ingest._accounting import FileReport, IngestReport
from agent_eval.ingest._assemble import Assembler
from agent_eval.ingest._folding import choose_continued
from agent_eval.ingest._message_identity import message_key
from agent_eval.ingest._pipeline import feed_items
from agent_eval.ingest._spans import LogRecord, SpanRecord
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.conventions._history_cache import forget_history_scopes
from agent_eval.ingest.conventions._messages import clear_message_cache
from agent_eval.live._ack_log import AckLogFull, AckTooLarge
from agent_eval.live._auth import AUTHORIZATION, authorized
from agent_eval.live._buffer import HeldTrace, SpanBuffer
from agent_eval.live._evicted import EVICTED_NAME, EvictedStore, key_digests
from agent_eval.live._payloads import (
    JSON,
    PROTOBUF,
    PayloadError,
    Signal,
    decode,
    encoding_of,
    response_body,
)
from agent_eval.live._scorer import Job, LiveScorer
from agent_eval.live._selection import Selection
from agent_eval.live._trim import trim
from agent_eval.live._unscored import (
    CUT_SHORT,
    NOT_STARTED,
    UNSCORED_NAME,
    UNSCORED_SPEND_KEY,
    unscored_spend,
)
from agent_eval.live._warm_up import PROBE_TRACE_ID, probe_requests

if TYPE_CHECKING:
    from agent_eval.live._durable import Durability

__all__ = [
    "UNSCORED_NAME",
    "UNSCORED_SPEND_KEY",
    "WORKING_BYTES",
    "Receiver",
    "ReceiverLimits",
    "unscored_spend",
    "working_bytes_for",
]

WORKING_BYTES = 3 * 1024 * 1024
"""What ``serve`` sets aside of ``--max-buffer-mb`` for the receiver's working memory
(:attr:`ReceiverLimits.working_bytes`; at most half the bound, :func:`working_bytes_for`):
requests being read and answered, conversations being assembled and scored, the judge's
connections, the SQLite page caches. Measured with ``bench/live_soak.py`` (4 exporters, 16
conversations scored at once, 2 KB messages): RSS 2-3 MiB above idle besides the held spans."""


def working_bytes_for(max_buffer_bytes: int) -> int:
    """:data:`WORKING_BYTES`, or half of ``max_buffer_bytes`` when that is less."""
    return min(WORKING_BYTES, max_buffer_bytes // 2)


CONTAINER = "otlp-http"
"""The container name in ingest accounting and ``AgentTrace.source`` for received spans."""
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReceiverLimits:
    """The receiver's bounds.

    Attributes:
        max_body_bytes: Largest request body, compressed or decompressed (413 beyond).
        max_buffer_bytes: Memory budget for held spans (503 beyond).
        max_backlog: Conversations queued or being scored (429 beyond).
        retry_after_seconds: The ``Retry-After`` value sent with 429/503.
        idle_seconds / after_root_seconds: The closing policy (:mod:`agent_eval.live._buffer`).
        sweep_seconds: How often due traces are looked for.
        shutdown_timeout: Seconds a shutdown waits for the judge before writing the rest to
            :data:`UNSCORED_NAME`.
        read_timeout_seconds: Seconds a client may take to send a request's body; a slower one
            gets 408 and its connection is closed (a client trickling bytes holds no
            connection for long).
        trim_seconds: How often the heap memory freed meanwhile is handed back to the
            system (:mod:`agent_eval.live._trim`).
        working_bytes: Of ``max_buffer_bytes``, what is set aside for the receiver's working
            memory, not for spans (``serve``: :func:`working_bytes_for`).

    """

    max_body_bytes: int = 16 * 1024 * 1024
    max_buffer_bytes: int = 256 * 1024 * 1024
    max_backlog: int = 1000
    retry_after_seconds: int = 5
    idle_seconds: float = 30.0
    after_root_seconds: float = 2.0
    sweep_seconds: float | None = None
    shutdown_timeout: float = 30.0
    read_timeout_seconds: float = 30.0
    trim_seconds: float = 10.0
    working_bytes: int = 0


class Receiver:
    """The OTLP/HTTP receiver and its closing loop.

    Args:
        scorer: Scores closed conversations.
        limits: See :class:`ReceiverLimits`.
        out_dir: Where :data:`UNSCORED_NAME` goes on a shutdown that runs out of time.
        token: When set, every ``POST`` must carry it as ``Authorization: Bearer TOKEN``
            (:mod:`agent_eval.live._auth`); others get 401 and their body is not read.
        durable: When given, every accepted body is in its acknowledgement log before the 200
            (503 when the log is full or cannot be written), and closed conversations get
            their revisions from it (:mod:`agent_eval.live._durable`).
        selection: Which closed conversations are judged (:mod:`agent_eval.live._selection`);
            the others get ``skipped`` rows with the reason. ``None``: all of them.

    Use ``await receiver.start(host, port)`` then ``await receiver.stop()``, or
    :meth:`serve_forever` (handles SIGINT/SIGTERM).
    """

    def __init__(
        self,
        scorer: LiveScorer,
        limits: ReceiverLimits | None = None,
        out_dir: Path | None = None,
        token: str | None = None,
        *,
        durable: Durability | None = None,
        selection: Selection | None = None,
    ) -> None:
        self.scorer, self.limits = scorer, limits or ReceiverLimits()
        self.out_dir, self.token, self.durable = out_dir, token, durable
        self.selection = selection
        if durable is not None:
            scorer.on_committed = durable.committed
        self._scratch = None if out_dir is not None else Path(tempfile.mkdtemp(prefix="ae-live-"))
        self.evicted = EvictedStore((out_dir or self._scratch or Path()) / EVICTED_NAME)
        index = durable.index_bytes if durable else 0  # the log's share of the bound
        self.buffer = SpanBuffer(
            max_bytes=self.limits.max_buffer_bytes - self.limits.working_bytes - index,
            idle_seconds=self.limits.idle_seconds,
            after_root_seconds=self.limits.after_root_seconds,
            store=self.evicted,
        )
        self.counters: Counter[str] = Counter()
        self.report = IngestReport()
        self._file = FileReport(path="<otlp-http>", container=CONTAINER)
        self.report.files.append(self._file)
        self._stopping = False
        self._runner: web.AppRunner | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self.port: int | None = None
        self.unscored: list[Job] = []

    # --- HTTP ----------------------------------------------------------------------------------

    def app(self) -> web.Application:
        """The aiohttp application (routes only; :meth:`start` runs it)."""
        app = web.Application(client_max_size=self.limits.max_body_bytes)
        app.router.add_post("/v1/traces", self._traces)
        app.router.add_post("/v1/logs", self._logs)
        app.router.add_get("/healthz", self._health)
        return app

    async def _traces(self, request: web.Request) -> web.Response:
        return await self._export(request, "traces")

    async def _logs(self, request: web.Request) -> web.Response:
        return await self._export(request, "logs")

    def _refuse(self, status: int, reason: str, message: str) -> web.Response:
        self.counters[f"http_{status}"] += 1
        self.counters[f"refused_{reason}"] += 1
        headers = {}
        if status in (429, 503):
            headers["Retry-After"] = str(self.limits.retry_after_seconds)
        if status == 401:
            headers["WWW-Authenticate"] = 'Bearer realm="agent-eval serve"'
        response = web.Response(status=status, text=message + "\n", headers=headers)
        if status in (401, 408):  # nothing more is read from such a client
            response.force_close()
        return response

    def _unauthorized(self, request: web.Request) -> web.Response | None:
        """401 for a request without the token, when one is set (its body is never read)."""
        if self.token is None or authorized(request.headers.get(AUTHORIZATION), self.token):
            return None
        why = "missing" if AUTHORIZATION not in request.headers else "wrong"
        return self._refuse(401, f"token_{why}", f"unauthorized: {why} bearer token")

    async def _read(self, request: web.Request) -> bytes:
        """The body, within ``read_timeout_seconds``.

        Raises:
            PayloadError: 413 too large, 408 too slow, 400 the client went away mid-body.

        """
        try:
            async with asyncio.timeout(self.limits.read_timeout_seconds):
                return await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise PayloadError(413, "too_large", "the body exceeds the size limit") from None
        except TimeoutError:
            seconds = f"{self.limits.read_timeout_seconds:g}"
            raise PayloadError(
                408, "read_timeout", f"the body did not arrive within {seconds} s"
            ) from None
        except (ConnectionError, ClientPayloadError) as exc:  # aiohttp's reset is one too
            raise PayloadError(400, "client_disconnected", f"the client went away: {exc}") from None

    async def _export(  # noqa: PLR0911  (one refusal per reason)
        self, request: web.Request, signal: Signal
    ) -> web.Response:
        self.counters[f"requests_{signal}"] += 1
        refused = self._unauthorized(request)
        if refused is not None:
            return refused
        if self._stopping:
            return self._refuse(503, "shutting_down", "the receiver is shutting down")
        if self.scorer.backlog >= self.limits.max_backlog:
            return self._refuse(429, "backlog_full", "the scoring backlog is full; retry later")
        try:
            encoding = encoding_of(request.content_type)
            if (request.content_length or 0) > self.limits.max_body_bytes:
                raise PayloadError(413, "too_large", "the body exceeds the size limit")
            body = await self._read(request)
            items, size = decode(
                body,
                signal=signal,
                encoding=encoding,
                content_encoding=request.headers.get("Content-Encoding"),
                max_bytes=self.limits.max_body_bytes,
            )
        except PayloadError as exc:
            _log.info("refused a %s request: %s", signal, exc)
            refusal = self._refuse(exc.status, exc.reason, exc.message)
            if exc.status == 408:  # answer, then close: a trickling client holds nothing
                await refusal.prepare(request)
                await refusal.write_eof()
                if request.transport is not None:
                    request.transport.close()
            return refusal
        cost = self.buffer.cost(items, size)
        if not self.buffer.admit(cost):
            return self._refuse(503, "memory_full", "the span buffer is full; retry later")
        ack = None
        if self.durable is not None:  # on disk before the 200
            coding = request.headers.get("Content-Encoding")
            try:
                ack = await self.durable.acknowledge(signal, encoding, coding, body)
            except AckTooLarge as exc:
                return self._refuse(413, "too_large", str(exc))
            except OutputError as exc:
                reason = "log_full" if isinstance(exc, AckLogFull) else "log_unwritable"
                return self._refuse(503, reason, str(exc))
            self.buffer.admit(cost)  # again: requests admitted during the sync are held now
        rejected, message = self._hold(items, size)
        if self.durable is not None and ack is not None:
            self.durable.held(ack, items, self.buffer.pending)
        self.counters["http_200"] += 1
        self.counters["bytes_accepted"] += size
        return web.Response(
            body=response_body(signal, encoding, rejected, message),
            content_type=PROTOBUF if encoding == "protobuf" else JSON,
        )

    def hold(self, items: list[ContainerItem], size: int) -> tuple[int, str]:
        """Hold decoded ``items`` charged ``size`` bytes, as an accepted request's.

        Also a replayed acknowledgement-log record's. Returns ``(rejected, partial_success
        message)``.
        """
        return self._hold(items, size)

    def _hold(self, items: list[ContainerItem], size: int) -> tuple[int, str]:
        usable: list[SpanRecord | LogRecord] = []
        rejected, reasons = 0, Counter[str]()
        for item in items:
            if isinstance(item, SpanRecord):
                self._file.spans_read += 1
                usable.append(item)
            elif isinstance(item, LogRecord):
                self._file.logs_read += 1
                if item.trace_id and item.span_id:
                    usable.append(item)
                else:  # counted as the assembler would, and reported as rejected
                    self.report.ignore_log("log_without_span_context")
                    rejected += 1
                    reasons["log_without_span_context"] += 1
            elif isinstance(item, Skipped):
                self._file.spans_read += item.spans
                self._file.logs_read += item.logs
                self.report.note_skipped(item)
                rejected += item.spans + item.logs
                reasons[item.reason] += item.spans + item.logs
        self.counters["spans_accepted"] += sum(isinstance(i, SpanRecord) for i in usable)
        self.counters["logs_accepted"] += sum(isinstance(i, LogRecord) for i in usable)
        self.counters["items_rejected"] += rejected
        self.buffer.add(usable, size)
        message = ", ".join(f"{n} {reason}" for reason, n in reasons.items())
        return rejected, message

    async def _health(self, request: web.Request) -> web.Response:
        body = {
            "status": "shutting_down" if self._stopping else "ok",
            "pending_traces": len(self.buffer.pending),
            "retained_conversations": len(self.buffer.retained),
            "evicted_conversations": self.evicted.conversations,
            "held_bytes": math.ceil(self.buffer.held_bytes),
            "max_buffer_bytes": self.limits.max_buffer_bytes,
            "max_held_bytes": self.buffer.max_bytes,
            "backlog": self.scorer.backlog,
            "results": dict(self.scorer.statuses),
            "rescored": self.scorer.rescored,
            "conversations": self.scorer.tally(),
            "counters": dict(self.counters),
            "ingest": self.ingest_summary(),
        }
        if self.durable is not None:
            body["ack_log"] = self.durable.summary()
        return web.json_response(body, status=503 if self._stopping else 200)

    # --- closing and scoring -------------------------------------------------------------------

    def close_due(self, *, everything: bool = False) -> int:
        """Assemble the due traces and submit their conversations; returns how many.

        A conversation scored before (same conversation id, a trace of it re-opened, or a
        bare-call conversation this one continues by the rule offline ingest folds by,
        :func:`~agent_eval.ingest._folding.choose_continued`) is read whole again (from disk
        when it was evicted) and submitted as its next revision, under its first conversation
        id. Ingest's read caches of the closed
        conversations are released afterwards (:meth:`_release_caches`).
        """
        closing = self.buffer.due(everything=everything)
        if not closing:
            return 0
        by_trace = {held.trace_id: held for held in closing}
        submitted = 0
        for assembled in self._assemble(closing, self.report):
            mine = [by_trace[t] for t in assembled.trace_ids if t in by_trace]
            bare = _named_after_a_trace(assembled)
            cid = self._conversation_of(assembled, mine) if bare else assembled.conversation_id
            earlier = self.buffer.retained_traces(cid)
            evicted = self.buffer.is_evicted(cid)
            trace = assembled
            if earlier:  # scored before: read it whole again (accounted once, above)
                whole = self._assemble([*earlier, *mine], IngestReport())
                ids = {h.trace_id for h in mine}
                trace = next(
                    (
                        t
                        for t in whole
                        if (ids & set(t.trace_ids) if bare else t.conversation_id == cid)
                    ),
                    assembled,
                )
            if trace.conversation_id != cid:  # a folded bare call keeps its first id
                trace = trace.model_copy(update={"conversation_id": cid})
            if bare:
                self.evicted.set_bare(cid, key_digests([message_key(m) for m in trace.messages]))
            new_spans = sum(h.new_spans for h in mine)
            revision = self.buffer.retain(cid, mine)
            note = _note(revision, new_spans, evicted) if revision else None
            if note is not None and bare and cid != assembled.conversation_id:
                note += (
                    f"; trace {assembled.conversation_id} has no conversation id and its input "
                    "replays this conversation whole, so it was read as its next turn"
                )
            left = (  # judged or not: on every span read for this revision (selection)
                self.selection.left_out(cid, (i for h in [*earlier, *mine] for i in h.items))
                if self.selection is not None
                else None
            )
            self._submit(Job(trace, revision, note, left=left))
            self.counters["conversations_closed"] += 1
            submitted += 1
        if self.durable is not None:
            self.durable.closed(by_trace)
        self._release_caches(closing)
        return submitted

    def warm_up(self) -> int:
        """Read, assemble and render the probe conversation; returns the conversations read.

        What the first received conversation would import and build is done before the
        receiver listens (:mod:`agent_eval.live._warm_up`): decoding (JSON and protobuf),
        the convention mappers, assembly, each engine's units and rendering. Nothing of it is
        held, logged, counted or scored, and ingest's read caches are released afterwards.

        Raises:
            Exception: whatever reading or rendering the probe raises (a broken install).

        """
        read = 0
        for encoding, body in probe_requests():
            items, _ = decode(body, signal="traces", encoding=encoding, content_encoding=None,
                              max_bytes=len(body))  # fmt: skip
            held = HeldTrace(PROBE_TRACE_ID)
            held.pack([i for i in items if isinstance(i, SpanRecord)])
            for trace in self._assemble([held], IngestReport()):
                read += 1
                for engine in self.scorer.engines:
                    engine.metric.units(trace)
                    if engine.metric.uses_formatter:
                        engine.renderings.render(trace, engine.formatter)
                        engine.renderings.forget(trace, engine.formatter)
        forget_history_scopes({PROBE_TRACE_ID}, everything=not self.buffer.pending)
        clear_message_cache()
        return read

    def _release_caches(self, closing: list[HeldTrace]) -> None:
        """Forget ingest's per-process read caches of the conversations just closed.

        The history cache remembers arrays per conversation (:func:`history_scope`: the
        conversation id, else the trace id) and the message cache every message read; a
        long-running receiver would keep them up to their bounds (tens of MB) for conversations
        long gone. A later turn is read whole, as the first one was.
        """
        scopes = {h.trace_id for h in closing} | {
            h.conversation_id for h in closing if h.conversation_id is not None
        }
        forget_history_scopes(scopes, everything=not self.buffer.pending)
        clear_message_cache()

    def _submit(self, job: Job) -> None:
        gated = job if self.durable is None else self.durable.gate(job)
        if gated is not None:
            self.scorer.submit(gated)

    def _conversation_of(self, assembled: AgentTrace, mine: list[HeldTrace]) -> str:
        """The conversation id ``assembled`` is scored under (see :meth:`close_due`).

        For a bare-call conversation (named after a trace: no conversation id to group by),
        matched to an earlier one by the conversation its re-opened trace was scored in, or
        else by offline folding's rule (:func:`~agent_eval.ingest._folding.choose_continued`)
        over the scored bare-call conversations' latest calls (retained or evicted): it
        continues one only when its input strictly extends that call's transcript, so a
        second run of the same agent (its first turn identical to the first run's) is a
        conversation of its own.
        """
        for held in mine:
            if held.conversation_id is not None:
                return held.conversation_id
        keys = key_digests([message_key(m) for m in assembled.messages])
        chosen, _ = choose_continued(keys, self.evicted.bare_candidates(keys))
        return assembled.conversation_id if chosen is None else chosen

    def _assemble(self, traces: list[HeldTrace], report: IngestReport) -> Iterator[AgentTrace]:
        assembler = Assembler(report)
        file = FileReport(path="<otlp-http>", container=CONTAINER)
        items: Iterator[ContainerItem] = (item for held in traces for item in held.items)
        for _ in feed_items(items, file, IngestReport(), assembler):
            pass  # OTLP carries no whole conversations
        yield from assembler.finish()

    async def _sweep(self) -> None:
        interval = self.limits.sweep_seconds or max(
            0.02, min(self.limits.idle_seconds, self.limits.after_root_seconds) / 4
        )
        trimmed = time.monotonic()
        while True:
            await asyncio.sleep(interval)
            try:
                self.close_due()
            except Exception:  # one bad conversation must not stop the receiver
                _log.exception("closing conversations failed")
                self.counters["close_errors"] += 1
            if time.monotonic() - trimmed >= self.limits.trim_seconds:
                trimmed = time.monotonic()
                self.counters["heap_trims"] += trim()

    # --- lifecycle -----------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 4318) -> int:
        """Listen on ``host:port`` (0: any free port); returns the port."""
        self.scorer.start()
        self._runner = web.AppRunner(self.app(), auto_decompress=False, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, host, port).start()
        self.port = int(self._runner.addresses[0][1])
        self._sweeper = asyncio.create_task(self._sweep())
        return self.port

    async def stop(self) -> list[Job]:
        """Stop listening, score everything held, persist what is left; returns that rest."""
        self._stopping = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        if self._runner is not None:
            await self._runner.cleanup()
        self.close_due(everything=True)
        self.unscored = await self.scorer.drain(self.limits.shutdown_timeout)
        if self.unscored:
            self._persist(self.unscored)
        self.evicted.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
        return self.unscored

    def _persist(self, jobs: list[Job]) -> None:
        if self.out_dir is None:
            _log.error("%d conversations were not scored and no output directory is set", len(jobs))
            return
        path = self.out_dir / UNSCORED_NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab") as handle:
            engine = self.scorer.engine
            for job in jobs:  # its run, why, and what its cut-short calls sent travel with it
                spend = unscored_spend(
                    self.scorer.spent(job),
                    run_id=engine.run_id,
                    metric=",".join(e.metric_id for e in self.scorer.engines),
                    judge_model=engine.judge_model,
                    reason=CUT_SHORT if self.scorer.was_started(job) else NOT_STARTED,
                    revision=job.revision,
                )
                metadata = {**job.trace.metadata, UNSCORED_SPEND_KEY: spend}
                trace = job.trace.model_copy(update={"metadata": metadata})
                handle.write(trace.model_dump_json().encode() + b"\n")
        self.counters["persisted_unscored"] += len(jobs)
        _log.warning("%d conversations not scored in time were written to %s", len(jobs), path)

    def summary(self) -> dict[str, Any]:
        """Counters for the closing line of ``agent-eval serve``."""
        return {
            "spans_accepted": self.counters["spans_accepted"],
            "logs_accepted": self.counters["logs_accepted"],
            "rejected": self.counters["items_rejected"],
            "refused_requests": {
                k.removeprefix("refused_"): v
                for k, v in self.counters.items()
                if k.startswith("refused_")
            },
            "results": dict(self.scorer.statuses),
            "rescored": self.scorer.rescored,
            "conversations": self.scorer.tally(),
            "unscored": len(self.unscored),
            "ingest": self.ingest_summary(),
        }

    def ingest_summary(self) -> dict[str, Any]:
        """What ingest made of the accepted spans and logs, as ``agent-eval score`` counts it.

        ``spans_used`` went into a conversation; ``spans_ignored`` and ``logs_ignored`` map a
        reason (``no_genai_content``, ``log_without_span_context``, ...) to a count, so spans
        that were accepted but made no conversation say why.
        """
        return {
            "spans_used": self.report.spans_used,
            "spans_ignored": dict(self.report.spans_ignored),
            "logs_used": self.report.logs_used,
            "logs_ignored": dict(self.report.logs_ignored),
        }


def _named_after_a_trace(trace: AgentTrace) -> bool:
    """No conversation id grouped it: it is named after (the last of) its traces."""
    return trace.conversation_id in trace.trace_ids


def _note(revision: int, new_spans: int, evicted: bool) -> str:
    at = datetime.now(UTC).isoformat(timespec="seconds")
    note = (
        f"re-scored (revision {revision}) at {at}: {new_spans} span(s) arrived after "
        f"revision {revision - 1} was scored; that row stays"
    )
    if evicted:
        note += "; the earlier spans had been evicted from memory, so only later spans were read"
    return note


def dumps(data: dict[str, Any]) -> str:
    """JSON text of ``data`` (the serve summary)."""
    return orjson.dumps(data).decode()
