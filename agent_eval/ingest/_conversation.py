"""One grouped conversation -> one :class:`AgentTrace`, with its span accounting.

:class:`ConversationBuilder` walks the conversation's span entries in order and feeds the
:class:`~agent_eval.ingest._transcript.Transcript`: LLM calls (input and output messages, labelled
with the agent found on the span or its nearest ancestor), tool runs, retrievals (attached where
the next LLM call's input ends: the context they were retrieved for). It sums usage per model
over LLM calls, collects span errors, pairs tool results (:mod:`~agent_eval.ingest._pairing`)
and records every span as used or ignored:

- a span whose messages (or usage) a descendant LLM span also recorded (a framework span over a
  client span, an ``invoke_agent`` span over its ``chat`` spans) is ``duplicate_of_child_llm_span``
  unless its agent name labelled a message;
- except when an LLM span has exactly one LLM call beneath it (one call recorded by two
  instrumentations, e.g. an agent framework's ``chat`` span over the client library's) and
  records more message content than it: then the parent is read and the child is
  ``duplicate_of_parent_llm_span`` (a client instrumentation may drop content it cannot
  serialise, such as a list of content parts). Such pairs across two files, and spans read
  twice from two files (the same export given twice), are noted on the conversation;
- a retriever span that returned nothing (:attr:`SpanExtraction.retrieved_nothing`) is a
  retrieval with no documents; one beneath a retriever span already read (LlamaIndex's
  ``_retrieve`` inside ``retrieve``) is ``duplicate_of_parent_retrieval``;
- a span that only names an agent is used when that name labelled a message;
- a turn that no LLM call answered (its trace has no chat call, only completions-API calls or
  none: LlamaIndex answers "Empty Response" itself when the retriever returns nothing) is taken
  from its root chain/agent span's input and output (:attr:`SpanExtraction.turn`), placed where
  that span ends, with a note; completions-API calls (``llm.prompts``, a framework's internal
  step such as a condense-question call) add no message, their usage is counted;
- a conversation that ends without any message is not emitted and its spans are
  ``no_message_content``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from operator import attrgetter

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Message,
    ModelUsage,
    Retrieval,
    SourceInfo,
    SpanErrorInfo,
    SpanRef,
    SpanTiming,
    ToolCall,
    UserMessage,
)
from agent_eval.ingest._accounting import FileReport, IngestReport
from agent_eval.ingest._extraction import SpanExtraction
from agent_eval.ingest._grouping import Conversation
from agent_eval.ingest._pairing import pair_tool_results
from agent_eval.ingest._reference_calls import parse_tool_calls
from agent_eval.ingest._reference_keys import REFERENCE_TOOL_CALLS
from agent_eval.ingest._span_entry import SpanEntry
from agent_eval.ingest._transcript import Transcript
from agent_eval.ingest.containers._base import Skipped
from agent_eval.ingest.conventions import _openinference_keys as oi_keys

__all__ = ["ConversationBuilder", "final_reply_note_prefix", "is_llm_call"]

CAPTURE_HINT = (
    "the spans recorded no message text: turn content capture on (OpenTelemetry GenAI "
    "instrumentations: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true; Traceloop: "
    "TRACELOOP_TRACE_CONTENT=true; OpenInference: OPENINFERENCE_HIDE_INPUTS/OUTPUTS unset)"
)
"""How to record message content, for conversations that arrive without any."""
PYDANTIC_AI_HINT = (
    "the spans are pydantic-ai's (logfire / pydantic_ai.* attributes) and recorded no message "
    "text: pydantic-ai leaves it out when instrumented with "
    "InstrumentationSettings(include_content=False); instrument with include_content=True, the "
    "default (pydantic_ai.models.instrumented.InstrumentationSettings, given to "
    "Agent(instrument=...) or Agent.instrument_all(...))"
)
""":data:`CAPTURE_HINT` for spans of the pydantic-ai convention (pydantic-ai's documented
``InstrumentationSettings.include_content``, True by default)."""
PYDANTIC_AI_CONVENTION = "pydantic-ai"
"""The name of :class:`~agent_eval.ingest.conventions._pydantic_ai.PydanticAIConvention`."""
NO_ASSISTANT = "no assistant message with content"
"""What a conversation lacks when the model's side of it was not recorded."""
LOGS_HINT = (
    "; if capture is already on, the instrumentation may write the message text as GenAI "
    "event log records (gen_ai.user.message, gen_ai.choice, ...; opentelemetry-instrumentation-"
    "openai-v2 does) through the SDK's LoggerProvider, and no log record was joined to these "
    "spans: give the logs export too (agent-eval ingest SPANS.jsonl LOGS.jsonl)"
)
"""Added to :data:`CAPTURE_HINT` for GenAI-convention spans that no log record was joined to."""
HIDDEN_HINT = (
    f"the text was hidden by OpenInference: the spans hold its redaction marker "
    f"{oi_keys.REDACTED_VALUE!r} instead (OPENINFERENCE_HIDE_INPUTS / OPENINFERENCE_HIDE_OUTPUTS, "
    "or OPENINFERENCE_HIDE_INPUT_MESSAGES / _OUTPUT_MESSAGES / _INPUT_TEXT / _OUTPUT_TEXT, set "
    "to true in the agent's environment or its TraceConfig); unset them and record again"
)
"""How to unhide content that OpenInference's ``OPENINFERENCE_HIDE_*`` settings redacted."""
NO_CHAT_HINT = (
    "content capture is on (span {span} recorded text), but no LLM call of it recorded chat "
    "messages: {calls}, and no root chain/agent span's input.value/output.value reads as the "
    "user's message and the reply (plain text, or JSON with a 'message' / 'response' string as "
    "LlamaIndex's chat engines record), so there is no turn to evaluate"
)
"""Why a conversation whose spans hold text (a completion, a root span's input and output) has
no message: it made no chat call that was recorded, and its turn could not be read."""
UNRECORDED_CHAT_HINT = (
    "content capture is on (span {span} recorded text), but its chat call(s) {calls} recorded "
    "usage and no messages: message capture is off for LLM calls alone (OpenInference: "
    "OPENINFERENCE_HIDE_INPUT_MESSAGES / OPENINFERENCE_HIDE_OUTPUT_MESSAGES set to true), so "
    "the turn cannot be read from the calls that answered it"
)
"""Why a conversation whose spans hold text has no message although its LLM calls ran: the
calls' messages alone were left out."""
_SPAN_ID = attrgetter("span_id")
MAYBE_AGENT = "agent"
"""Internal verdict: the span is used only if its agent name labels a message."""


class ConversationBuilder:
    """Turns one grouped conversation into an AgentTrace and does its span accounting.

    Args:
        conversation: The grouped, ordered span entries.
        report: Updated with used/ignored spans and file conventions/conversations.

    """

    def __init__(
        self,
        conversation: Conversation,
        report: IngestReport,
        orphan_choices: Mapping[str, int] | None = None,
    ) -> None:
        self.conversation = conversation
        self.report = report
        self.orphan_choices = orphan_choices or {}
        """File -> ``gen_ai.choice`` log records it held without span context."""
        self.transcript = Transcript()
        self.retrievals: list[Retrieval] = []
        self.pending: list[Retrieval] = []
        self.retriever_spans: set[str] = set()
        """The retriever spans read as retrievals (an empty one beneath them repeats theirs)."""
        """Retrievals waiting for the LLM call they feed (placed after that call's input)."""
        self.usage: dict[str, ModelUsage] = {}
        self._tallies: dict[str, list[int]] = {}
        """Per model, [input tokens, output tokens, calls] of the LLM calls so far: plain ints
        while spans are added, made :class:`ModelUsage` once in :meth:`_trace` (one model object
        per model, not one per call)."""
        self.used: list[SpanEntry] = []
        self.agent_sources: set[str] = set()
        self.shadowed: Counter[tuple[str, str]] = Counter()
        self.counted = 0
        """Spans already counted in the report (used or ignored)."""
        self.poorer: set[str] = set()
        """LLM spans read instead from the span above them, which recorded more of the call."""
        self.overlapped: list[tuple[SpanEntry, SpanEntry]] = []
        """(parent, child) LLM spans of one call that came from two different files."""
        self.ran_calls: dict[str, str] = {}
        """Span id -> the call id its tool run was paired to, for failed tool spans that did
        not record the call id themselves (OpenInference TOOL spans)."""
        self.counted_files: tuple[str, ...] = ()
        """The files (spans' and joined log records') the conversation was counted in."""
        self.unanswered: str | None = None
        """What a held unanswered call lacks (see :meth:`build`) until :meth:`settle`."""
        self.chatted = {
            e.trace_id
            for e in conversation.entries
            if e.has_messages
            or (is_llm_call(e) and e.extraction and e.extraction.completion is None)
        }
        """Traces with a chat call: a span that recorded chat messages, or an LLM call that
        recorded none (its content left out) and is no completions-API call; their turns came
        from LLM calls, never from a root span's input and output."""
        self.turns: list[SpanEntry] = []
        """Root spans whose turn no LLM call answered, waiting for their end (then added)."""
        self.answered: list[SpanEntry] = []
        """Root spans whose turn was added from their input and output."""
        self.turn_notes: list[str] = []

    def build(self, *, hold_unanswered: bool = False) -> AgentTrace | None:
        """The conversation's AgentTrace, or ``None`` when it has no message (spans counted).

        With ``hold_unanswered``, a bare call (one trace, no conversation id) that has a user
        message but no assistant one (its reply was not recorded, e.g. Traceloop's streamed
        events) is returned anyway with :attr:`unanswered` set and its spans not yet counted:
        a later call replaying it may continue it (:mod:`~agent_eval.ingest._folding`). The
        caller then calls :meth:`settle`.
        """
        covered = self._covered_by_descendant_calls()
        candidates: list[SpanEntry] = []
        for entry in self.conversation.entries:
            if self.turns:
                self._add_turns(entry.start)
            reason = self._add(entry, covered)
            if reason is None:
                self.used.append(entry)
            elif reason == MAYBE_AGENT:
                candidates.append(entry)
            else:
                self._ignore(entry, reason)
        for entry in candidates:
            if entry.span_id in self.agent_sources:
                self.used.append(entry)
            else:
                self._ignore(
                    entry, "duplicate_of_child_llm_span" if entry.span_id in covered else None
                )
        self._add_turns(None)
        self._place_retrievals(len(self.transcript))
        missing = self._missing_content()
        if missing is not None:
            if hold_unanswered and missing == NO_ASSISTANT and self._bare_call():
                self.unanswered = missing
                return self._trace()
            self._skip_without_content(missing)
            return None
        trace = self._trace()
        self._count_used()
        return trace

    def settle(self, *, folded: bool) -> None:
        """Count a held unanswered call's spans (see :meth:`build`).

        Used when it was folded into a later conversation (its usage and trace id are that
        conversation's), else ``no_message_content`` with the reason :meth:`build` would have
        given.
        """
        missing, self.unanswered = self.unanswered, None
        if missing is None:
            return
        if folded:
            self._count_used()
        else:
            self._skip_without_content(missing)

    def _bare_call(self) -> bool:
        """Whether the conversation is one trace named after itself (no conversation id)."""
        return self.conversation.trace_ids == [self.conversation.id]

    def _missing_content(self) -> str | None:
        """What the transcript lacks for a judge to read it, or ``None`` when it has both sides.

        A conversation needs a user message with content and an assistant message with text or
        tool calls; without either there is nothing to evaluate (content capture was off, or
        the spans only describe an agent, e.g. a ``create_agent`` span with its instructions).
        """
        messages = [s.message for s in self.transcript.slots]
        has_user = any(m.role == "user" and (m.content or m.parts) for m in messages)
        has_assistant = any(
            isinstance(m, AssistantMessage) and (m.content or m.parts or m.tool_calls)
            for m in messages
        )
        if has_user and has_assistant:
            return None
        if not messages:
            return "no message content at all"
        return "no user message with content" if not has_user else NO_ASSISTANT

    def _skip_without_content(self, missing: str) -> None:
        """Count the conversation's spans ``no_message_content``, with a located reason.

        The reason says how to get the text: :data:`HIDDEN_HINT` when OpenInference redacted
        it, else when no message has text :data:`PYDANTIC_AI_HINT` for pydantic-ai's spans, the
        hint a convention gave for spans of an instrumentation that records no text at all
        (:attr:`~.SpanExtraction.text_hint`), and :data:`CAPTURE_HINT` for others (with
        :data:`LOGS_HINT` for GenAI-convention spans no log record was joined to), or, when
        only the model's side is missing and its LLM call recorded output tokens, that call
        and why its reply is absent.
        """
        spans = len(self.used)
        self.counted += spans
        if not spans:
            return
        first = self.used[0]
        texts = [s.message.content for s in self.transcript.slots if s.message.content]
        hint = ""
        if self._redacted():
            hint = f"; {HIDDEN_HINT}"
        elif not texts and self._convention_used(PYDANTIC_AI_CONVENTION):
            hint = f"; {PYDANTIC_AI_HINT}"
        elif not texts and (known := self._text_hint()) is not None:
            hint = f"; {known}"
        elif not texts and (said := self._text_without_messages()) is not None:
            hint = f"; {said}"
        elif not texts:
            genai = self._convention_used("genai")
            logs = any(e.logs for e in self.conversation.entries)
            hint = f"; {CAPTURE_HINT}" + (LOGS_HINT if genai and not logs else "")
        elif missing == NO_ASSISTANT and (lost := self._unrecorded_reply()) is not None:
            hint = f"; its LLM call (span {lost[0].span_id}) {lost[1]}"
        detail = (
            f"conversation {self.conversation.id!r} has {missing}, so it is not sent to a judge"
            + hint
        )
        skipped = Skipped(
            reason="no_message_content", detail=detail, trace_id=first.trace_id,
            span_id=first.span_id, source=first.location, spans=spans,
        )  # fmt: skip
        self.report.note_skipped(skipped)

    def _text_hint(self) -> str | None:
        """The first :attr:`~.SpanExtraction.text_hint` of the conversation's spans, if any."""
        entries = self.conversation.entries
        return next(
            (e.extraction.text_hint for e in entries if e.extraction and e.extraction.text_hint),
            None,
        )

    def _text_without_messages(self) -> str | None:
        """What is missing when a span recorded text that is no message, else ``None``.

        A completion (``llm.prompts``) or a root span's input/output shows that content capture
        was on: what is missing is a chat call (:data:`NO_CHAT_HINT`), or, when chat calls ran
        and recorded no messages, their message capture (:data:`UNRECORDED_CHAT_HINT`).
        """
        entries = self.conversation.entries
        hidden = (None, "", oi_keys.REDACTED_VALUE)
        spoke = next(
            (
                e
                for e in entries
                if e.extraction and (e.extraction.completion not in hidden or e.extraction.turn)
            ),
            None,
        )
        if spoke is None:
            return None
        prompts = [e.span_id for e in entries if e.extraction and e.extraction.completion]
        chats = [e.span_id for e in entries if is_llm_call(e) and e.span_id not in prompts]
        if chats:
            return UNRECORDED_CHAT_HINT.format(span=spoke.span_id, calls=", ".join(chats))
        what = "it has no LLM span at all"
        if prompts:
            what = (
                f"its {len(prompts)} LLM call(s) were completions-API calls sent prompts "
                f"(llm.prompts: {', '.join(prompts)}), whose replies are no conversation message"
            )
        return NO_CHAT_HINT.format(span=spoke.span_id, calls=what)

    def _convention_used(self, name: str) -> bool:
        return any(e.extraction and e.extraction.convention == name for e in self.used)

    def _redacted(self) -> int:
        """How many messages (and completions) hold OpenInference's redaction marker.

        Messages count by their text or tool arguments; completions-API calls by their
        recorded reply.
        """
        marker = oi_keys.REDACTED_VALUE
        return sum(
            1
            for slot in self.transcript.slots
            if slot.message.content == marker
            or (
                isinstance(slot.message, AssistantMessage)
                and any(c.raw_arguments == marker for c in slot.message.tool_calls or ())
            )
        ) + sum(1 for e in self.used if e.extraction and e.extraction.completion == marker)

    def _place_retrievals(self, position: int) -> None:
        if not self.pending:  # (after most LLM calls)
            return
        self.retrievals.extend(
            r.model_copy(update={"after_message": position}) for r in self.pending
        )
        self.pending.clear()

    def _covered_by_descendant_calls(self) -> set[str]:
        below: dict[str, list[SpanEntry]] = {}
        ancestors: dict[str, SpanEntry] = {}
        for entry in self.conversation.entries:
            if is_llm_call(entry):
                # an "ancestor" that is also a descendant (a parent cycle, A->B->A) covers nothing
                for a in self.conversation.ancestors(entry):
                    if entry.span_id not in map(_SPAN_ID, self.conversation.ancestors(a)):
                        below.setdefault(a.span_id, []).append(entry)
                        ancestors[a.span_id] = a
        covered = set(below)
        for span_id, calls in below.items():
            parent = ancestors[span_id]
            if len(calls) != 1 or parent.extraction is None or parent.extraction.kind != "llm":
                continue
            (child,) = calls  # one call, recorded twice
            if parent.file.path != child.file.path:
                self.overlapped.append((parent, child))
            if _content_count(parent) > _content_count(child):
                covered.discard(span_id)
                self.poorer.add(child.span_id)
        return covered

    def _add(self, entry: SpanEntry, covered: set[str]) -> str | None:
        """Feed one entry; ``None`` when used, ``"agent"`` when maybe used, else the reason."""
        ex = entry.extraction
        if ex is None:
            return entry.reason or "no_genai_content"
        if (duplicate := self._duplicate_of_parent(entry, ex)) is not None:
            return duplicate
        if is_llm_call(entry) and entry.span_id in covered:
            return MAYBE_AGENT if ex.agent_name else "duplicate_of_child_llm_span"
        if entry.has_messages:
            agent = self._agent_name(entry)
            new_call = self.transcript.add_call(
                ex.input_messages,
                ex.output_messages,
                entry.span_id,
                agent_name=agent,
                model=ex.model,
            )
            if not new_call:  # the same call seen on a sibling span: its usage is counted once
                self._note_shadowed(entry)
                return None
            self._place_retrievals(self.transcript.inputs_end)
        elif ex.tool is not None:
            call = self.transcript.add_tool_run(ex.tool, entry.span_id, self._agent_name(entry))
            if entry.errors and ex.tool.call_id is None and call.id is not None:
                self.ran_calls[entry.span_id] = call.id
        elif ex.documents or ex.retrieved_nothing:
            self.retriever_spans.add(entry.span_id)
            self.pending.append(
                Retrieval(
                    after_message=len(self.transcript),
                    query=ex.retrieval_query,
                    documents=ex.documents,
                    span_id=entry.span_id,
                )
            )
        elif not is_llm_call(entry):
            return self._add_other(entry, ex)
        self._count_usage(entry)
        self._note_shadowed(entry)
        return None

    def _duplicate_of_parent(self, entry: SpanEntry, ex: SpanExtraction) -> str | None:
        """The reason a span repeats the span above it, else ``None``.

        ``duplicate_of_parent_llm_span`` (the parent recorded more of the call) or
        ``duplicate_of_parent_retrieval`` (an empty retrieval beneath a retriever span already
        read: LlamaIndex's ``_retrieve`` inside ``retrieve``).
        """
        if entry.span_id in self.poorer:
            return "duplicate_of_parent_llm_span"
        if ex.retrieved_nothing and not ex.documents and entry.parent_id in self.retriever_spans:
            return "duplicate_of_parent_retrieval"
        return None

    def _add_other(self, entry: SpanEntry, ex: SpanExtraction) -> str | None:
        """Feed a span that is no LLM call, tool run or retrieval (``None`` when used).

        A root span whose turn no LLM call answered is added where it ends, after the spans
        beneath it (:meth:`_add_turns`); any other span is maybe an agent, else ignored.
        """
        if ex.turn is not None and entry.trace_id not in self.chatted:
            self.turns.append(entry)
            return None
        return MAYBE_AGENT if ex.agent_name else (ex.ignored_reason or "no_genai_content")

    def _add_turns(self, until: int | None) -> None:
        """Add the waiting turns of root spans that ended by ``until`` (``None``: all of them).

        The user's message and the reply are the span's :attr:`SpanExtraction.turn`; the
        retrievals of the turn (none, when the reply is LlamaIndex's "Empty Response") are
        placed after the user's message, as for an LLM call's input.
        """
        ready = [e for e in self.turns if until is None or e.end <= until]
        for entry in ready:
            self.turns.remove(entry)
            ex = entry.extraction
            assert ex is not None and ex.turn is not None
            user, reply = ex.turn
            agent = self._agent_name(entry)
            self.transcript.add_call(
                (UserMessage(content=user),),
                (AssistantMessage(content=reply),),
                entry.span_id,
                agent_name=agent,
            )
            self._place_retrievals(self.transcript.inputs_end)
            self.answered.append(entry)
            alone = ""
            if self.conversation.id == entry.trace_id:  # no session or conversation id
                alone = (
                    "; no session or conversation id groups this trace with the turns before "
                    "it, and no later call replays it, so it is a conversation of its own: set "
                    "one (openinference using_session, or gen_ai.conversation.id)"
                )
            self.turn_notes.append(
                f"span {entry.span_id} ({entry.name!r}, trace {entry.trace_id}): turn answered "
                "without an LLM call (its trace has no chat call): the user's message and the "
                f"reply are its input.value and output.value{alone}"
            )

    def _note_shadowed(self, entry: SpanEntry) -> None:
        if entry.shadowed and entry.extraction is not None:  # (most spans match one convention)
            self.shadowed.update((entry.extraction.convention, s) for s in entry.shadowed)

    def _agent_name(self, entry: SpanEntry) -> str | None:
        ex = entry.extraction
        if ex is not None and ex.agent_name:
            return ex.agent_name
        for candidate in self.conversation.ancestors(entry):
            ex = candidate.extraction
            if ex is not None and ex.agent_name:
                self.agent_sources.add(candidate.span_id)
                return ex.agent_name
        return None

    def _agent_of(self, entry: SpanEntry) -> str | None:
        """The agent of the span or its nearest ancestor (as :meth:`_agent_name`, no record)."""
        for candidate in (entry, *self.conversation.ancestors(entry)):
            ex = candidate.extraction
            if ex is not None and ex.agent_name:
                return ex.agent_name
        return None

    def _count_usage(self, entry: SpanEntry) -> None:
        ex = entry.extraction
        if ex is None or not is_llm_call(entry):
            return
        if ex.model is None and ex.input_tokens is None and ex.output_tokens is None:
            return  # nothing recorded about the call's model or tokens
        tally = self._tallies.get(ex.model or "unknown")
        if tally is None:
            tally = self._tallies[ex.model or "unknown"] = [0, 0, 0]
        tally[0] += ex.input_tokens or 0
        tally[1] += ex.output_tokens or 0
        tally[2] += 1

    def _ignore(self, entry: SpanEntry, reason: str | None) -> None:
        self.counted += 1
        reason = reason or (entry.extraction.ignored_reason if entry.extraction else None)
        reason = reason or "no_genai_content"
        if entry.detail is not None:
            self.report.note_skipped(
                Skipped(
                    reason=reason,
                    detail=entry.detail,
                    trace_id=entry.trace_id,
                    span_id=entry.span_id,
                    source=entry.location,
                )
            )
        else:
            self.report.ignore_span(reason)

    def _count_used(self) -> None:
        files: dict[str, FileReport] = {}
        by_path: dict[str, FileReport] | None = None  # only needed for joined log records
        for entry in self.used:
            files.setdefault(entry.file.path, entry.file)
            if entry.log_files:
                by_path = by_path or {f.path: f for f in self.report.files}
                files.update((p, by_path[p]) for p in entry.log_files if p in by_path)
            if entry.extraction is not None:
                entry.file.conventions.add(entry.extraction.convention)
        for file in files.values():
            file.conversations += 1
        self.counted_files = tuple(files)
        self.report.spans_used += len(self.used)
        self.counted += len(self.used)

    def _reference_calls(self, notes: list[str]) -> tuple[ToolCall, ...] | None:
        """The first ``agent_eval.reference.tool_calls`` span attribute, parsed (or a note)."""
        for entry in self.conversation.entries:
            if entry.reference_tool_calls is not None:
                try:
                    return parse_tool_calls(entry.reference_tool_calls)
                except ValueError as exc:
                    notes.append(f"span {entry.span_id}: {REFERENCE_TOOL_CALLS} ignored: {exc}")
        return None

    def _trace(self) -> AgentTrace:
        for model, (input_tokens, output_tokens, calls) in self._tallies.items():
            self.usage[model] = ModelUsage(
                model=model, input_tokens=input_tokens, output_tokens=output_tokens, calls=calls
            )
        messages, pairing_notes = pair_tool_results(self.transcript.messages())
        reference_notes: list[str] = []
        reference_calls = self._reference_calls(reference_notes)
        usage_notes: list[str] = []
        if not self.usage:
            self._agent_usage(usage_notes)
        cut_short, cut_short_notes = self._final_reply_missing()
        files = list(dict.fromkeys(e.file.path for e in self.used))
        container = next((e.file.container for e in self.used if e.file.container), None)
        used_conventions = sorted({e.extraction.convention for e in self.used if e.extraction})
        roots = self._root_spans()
        return AgentTrace(
            conversation_id=self.conversation.id,
            trace_ids=tuple(self.conversation.trace_ids),
            messages=tuple(messages),
            retrievals=tuple(
                r.model_copy(update={"after_message": min(r.after_message, len(messages))})
                for r in self.retrievals
            ),
            usage=tuple(self.usage.values()),
            errors=self._errors(),
            source=SourceInfo(
                container=container or "unknown",
                conventions=tuple(used_conventions),
                files=tuple(files),
            ),
            notes=tuple(
                self.conversation.notes()
                + [n for e in self.used if e.extraction for n in e.extraction.notes]
                + self.transcript.notes
                + pairing_notes
                + usage_notes
                + self._shadow_notes()
                + self._overlap_notes()
                + reference_notes
                + self.turn_notes
                + cut_short_notes
            ),
            reference_tool_calls=reference_calls,
            final_reply_missing=cut_short,
            root_spans=roots,
            response_ids={e.span_id: e.response_id for e in self.used if e.response_id},
            spans=self._timings({r.span_id for r in roots}),
        )

    def _timings(self, roots: set[str]) -> tuple[SpanTiming, ...]:
        """The trajectory's spans with their times (:attr:`AgentTrace.spans`), in order.

        The spans read (LLM calls, tool runs, retrievals, turns), every agent invocation
        (where agents hand off) and each trace's root; not the spans ignored as transport,
        unknown or duplicates of another span's call.
        """
        used = {e.span_id for e in self.used}
        return tuple(
            _timing(e, self._agent_of(e), self.ran_calls.get(e.span_id))
            for e in self.conversation.entries
            if e.span_id in used
            or e.span_id in roots
            or (e.extraction is not None and e.extraction.kind == "agent")
        )

    def _root_spans(self) -> tuple[SpanRef, ...]:
        """Each trace's outermost agent-invocation span, else its root (see ``AgentTrace``).

        A root is a span with no ancestor among the trace's exported spans (no parent, or a
        parent that was never exported); of several, the first in conversation order.
        """
        roots: dict[str, tuple[int, SpanEntry]] = {}
        agents: dict[str, tuple[int, SpanEntry]] = {}
        for entry in self.conversation.entries:  # in conversation order: first wins a tie
            depth = len(self.conversation.ancestors(entry))
            trace_id = entry.trace_id
            if depth == 0 and trace_id not in roots:
                roots[trace_id] = (0, entry)
            extraction = entry.extraction
            if extraction is not None and extraction.kind == "agent":
                known = agents.get(trace_id)
                if known is None or depth < known[0]:
                    agents[trace_id] = (depth, entry)
        chosen = [
            (agents.get(t) or roots.get(t) or (0, None))[1] for t in self.conversation.trace_ids
        ]
        return tuple(
            SpanRef(trace_id=e.trace_id, span_id=e.span_id, name=e.name)
            for e in chosen
            if e is not None
        )

    def _final_reply_missing(self) -> tuple[str | None, list[str]]:
        """The last LLM call's span id and a note when it recorded output tokens, no output.

        Such a call's reply cannot be in the transcript (no later call replays it), so the
        conversation is known to stop short of what the model last said.
        """
        lost = self._unrecorded_reply()
        if lost is None:
            return None, []
        last, what = lost
        files = list(dict.fromkeys([last.file.path, *last.log_files]))
        note = (
            f"{final_reply_note_prefix(last.span_id, last.trace_id)}, {', '.join(files)}): the "
            f"last LLM call {what}, so the transcript stops before the model's final reply. "
            "Judge metrics skip its conversation unit and last turn (final_reply_missing)"
        )
        return last.span_id, [note]

    def _unrecorded_reply(self) -> tuple[SpanEntry, str] | None:
        """The last chat call, when it recorded output tokens and no output content, and why.

        That is the LLM call whose reply would be the conversation's final assistant message:
        completions-API calls that recorded their reply (``completion``: a framework's internal
        step, e.g. LlamaIndex's condense-question call) are passed over, and a turn taken from
        a root span that ended after the call (answered without an LLM call) holds the final
        reply itself.
        """
        last = next(
            (
                e
                for e in reversed(self.used)
                if e.extraction and e.extraction.kind == "llm" and e.extraction.completion is None
            ),
            None,
        )
        ex = last.extraction if last is not None else None
        if last is None or ex is None or not ex.output_tokens or _has_content(ex.output_messages):
            return None
        if any(turn.end >= last.end for turn in self.answered):
            return None
        orphans = sum(self.orphan_choices.get(f, 0) for f in last.log_files) or sum(
            self.orphan_choices.values()
        )
        if orphans:
            cause = (
                f"{orphans} gen_ai.choice log record(s) of this input carry no trace/span "
                "context and cannot be joined to their span (Traceloop's opentelemetry-"
                "instrumentation-openai in events mode, use_legacy_attributes=False, with "
                "stream=True writes them so; its attributes mode records the reply on the span)"
            )
        else:
            cause = "the reply was recorded neither on the span nor in a log record joined to it"
            if not last.log_files:
                cause += " (give the logs export too if the instrumentation writes GenAI events)"
        return last, (
            f"recorded {ex.output_tokens} output token(s) but no output content ({cause})"
        )

    def _errors(self) -> tuple[SpanErrorInfo, ...]:
        """The span errors, a failed tool run's with the id of the call it was paired to.

        A tool span that recorded no call id (an OpenInference TOOL span whose tool raised has
        no ``output.value`` to read one from) ran the call the transcript paired it to by name
        and arguments; without that id the error could only be matched through the result's
        span ids, which a replayed result does not carry.
        """
        out: list[SpanErrorInfo] = []
        for entry in self.conversation.entries:
            if not entry.errors:  # (most spans)
                continue
            call_id = self.ran_calls.get(entry.span_id)
            out += (
                e.model_copy(update={"tool_call_id": call_id})
                if call_id is not None and e.tool_call_id is None
                else e
                for e in entry.errors
            )
        return tuple(out)

    def _agent_usage(self, notes: list[str]) -> None:
        """Usage recorded only on agent spans (none per LLM call), counted once.

        The outermost agent spans that carry token counts are summed (a nested agent's usage
        is part of its parent's); ``calls`` is the number of LLM calls the conversation
        recorded, whose own spans had no usage.
        """
        with_usage = [
            e for e in self.conversation.entries
            if e.extraction is not None and e.extraction.kind == "agent"
            and (e.extraction.input_tokens is not None or e.extraction.output_tokens is not None)
        ]  # fmt: skip
        ids = {e.span_id for e in with_usage}
        top = [
            e for e in with_usage
            if not any(a.span_id in ids for a in self.conversation.ancestors(e))
        ]  # fmt: skip
        if not top:
            return
        calls = sum(1 for e in self.conversation.entries if is_llm_call(e))
        for entry in top:
            ex = entry.extraction
            assert ex is not None
            model = ex.model or "unknown"
            old = self.usage.get(model, ModelUsage(model=model))
            self.usage[model] = ModelUsage(
                model=model,
                input_tokens=old.input_tokens + (ex.input_tokens or 0),
                output_tokens=old.output_tokens + (ex.output_tokens or 0),
                calls=old.calls + (calls if entry is top[0] else 0),
            )
        spans = ", ".join(e.span_id for e in top)
        notes.append(f"usage taken from agent span(s) {spans}: no LLM call recorded its own")

    def _shadow_notes(self) -> list[str]:
        return [
            f"{count} span(s) also matched convention {other!r}; messages read once, with {kept!r}"
            for (kept, other), count in sorted(self.shadowed.items())
        ]

    def _overlap_notes(self) -> list[str]:
        """Where two files recorded the same spans or the same LLM calls (read once)."""
        notes = []
        copied = [e for e in self.conversation.entries if e.copies]
        if copied:
            files = dict.fromkeys(p for e in copied for p in (e.file.path, *e.copies))
            notes.append(
                f"{len(copied)} span(s) were read from more than one file ({', '.join(files)}: "
                "the same trace and span ids, one export given twice); each was used once"
            )
        if self.overlapped:
            pairs = dict.fromkeys((p.file.path, c.file.path) for p, c in self.overlapped)
            kept = Counter(
                (c if c.span_id not in self.poorer else p).file.path for p, c in self.overlapped
            )
            where = "; ".join(f"a span in {a} over one in {b}" for a, b in pairs)
            from_ = ", ".join(f"{n} from {path}" for path, n in kept.items())
            notes.append(
                f"{len(self.overlapped)} LLM call(s) were recorded twice, by spans in two files "
                f"({where}: two instrumentations of one call); each was read once, from the inner "
                f"span unless the outer one recorded more message content ({from_})"
            )
        return notes


def final_reply_note_prefix(span_id: str, trace_id: str) -> str:
    """How the note on a conversation whose final reply is missing begins (span, trace).

    Folding drops this note from a trace folded into a later one (the later one's input
    replays the reply), so it is recognised by this prefix.
    """
    return f"span {span_id} (trace {trace_id}"


def _timing(entry: SpanEntry, agent: str | None, paired_call: str | None) -> SpanTiming:
    """One span entry as a :class:`SpanTiming` (kind, times, agent, model, tool, usage).

    ``paired_call`` is the call id a tool run that recorded none was paired to.
    """
    ex = entry.extraction
    tool = ex.tool if ex is not None else None
    llm = is_llm_call(entry)
    return SpanTiming(
        trace_id=entry.trace_id,
        span_id=entry.span_id,
        parent_span_id=entry.parent_id,
        kind="llm" if llm else (ex.kind if ex is not None else "other"),
        name=entry.name,
        start_ns=entry.start,
        end_ns=entry.end,
        agent_name=agent,
        model=ex.model if ex is not None and llm else None,
        tool_name=tool.name if tool is not None else None,
        tool_call_id=(tool.call_id or paired_call) if tool is not None else None,
        input_tokens=ex.input_tokens if ex is not None and llm else None,
        output_tokens=ex.output_tokens if ex is not None and llm else None,
    )


def _has_content(messages: tuple[Message, ...]) -> bool:
    """Whether any of ``messages`` carries text, parts or tool calls."""
    return any(
        m.content or getattr(m, "parts", None) or getattr(m, "tool_calls", None) for m in messages
    )


def _content_count(entry: SpanEntry) -> int:
    """How many of the span's input and output messages carry text, parts or tool calls."""
    ex = entry.extraction
    if ex is None:
        return 0
    return sum(
        1
        for m in (*ex.input_messages, *ex.output_messages)
        if m.content or getattr(m, "parts", None) or getattr(m, "tool_calls", None)
    )


def is_llm_call(entry: SpanEntry) -> bool:
    """An LLM call: a span with messages, or an LLM span with usage but no recorded content."""
    ex = entry.extraction
    if ex is None:
        return False
    if ex.input_messages or ex.output_messages:
        return True
    return ex.kind == "llm" and (ex.input_tokens is not None or ex.output_tokens is not None)
