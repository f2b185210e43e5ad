"""VCR / pytest-recording YAML cassettes of OpenAI chat-completion HTTP traffic.

A cassette (vcrpy's format, version 1) is ``{interactions: [{request: {method, uri, body,
headers}, response: {status: {code}, body: {string}, headers}}], version: 1}``. Each
``POST .../chat/completions`` interaction is one LLM call: its request body (OpenAI Chat
Completions API) holds the messages sent, its response body the choice returned (a JSON
``chat.completion``, or a ``text/event-stream`` of ``chat.completion.chunk`` deltas).

Successive calls whose request replays the transcript so far (the usual agent loop) are one
conversation; a request that does not extend it starts the next. Bodies vcrpy recorded as the
server sent them, gzip-compressed (``!!binary`` bytes beginning with the gzip magic number, RFC
1952), are decompressed; a body that claims gzip but does not decompress makes that interaction
a skip (``undecodable_response``/``undecodable_request``). Conversations are yielded as
whole :class:`~agent_eval._trace.AgentTrace` objects (there are no spans), with the agent's token
usage from the responses' ``usage``; each interaction is one record of the ingest accounting
(``records: used + skipped = read``). Headers are never read, so recorded credentials cannot leak
into results. Other interactions (other endpoints, non-2xx responses, and ``invalid_interaction``:
an interaction, request, response or status that is not a mapping) are reported as skipped.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Message,
    ModelUsage,
    SourceInfo,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.errors import DecodeError
from agent_eval.ingest._safe_text import MAX_NESTING, NestingTooDeep, clean
from agent_eval.ingest._safe_text import loads as safe_json_loads
from agent_eval.ingest._sources import input_stem, open_input
from agent_eval.ingest._spans import SourceLocation
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, RecordsUsed, Skipped
from agent_eval.ingest.conventions._values import as_int, as_str, content_of, tool_call

__all__ = ["OpenAICassetteContainer"]

CHAT_COMPLETIONS_PATH = "/chat/completions"
SSE_DATA = "data:"
SSE_DONE = "[DONE]"
GZIP_MAGIC = b"\x1f\x8b"
"""The first two bytes of a gzip member (RFC 1952, section 2.3.1)."""


class OpenAICassetteContainer(builtin.OpenAICassette):
    """Reads a VCR cassette of OpenAI chat-completion calls into conversations."""

    def sniff(self, path: str, head: bytes) -> bool:
        """A YAML cassette starts with ``interactions:`` and records ``chat/completions`` calls."""
        return head.lstrip().startswith(b"interactions:") and b"chat/completions" in head

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield one AgentTrace per conversation, and a Skipped note per unused interaction.

        Raises:
            DecodeError: the file is not YAML or has no ``interactions`` list.

        """
        calls: list[tuple[list[Message], Message | None, ModelUsage | None]] = []
        for index, interaction in enumerate(_interactions(path), start=1):
            problem = _invalid(interaction)
            if problem is not None:
                yield Skipped(
                    reason="invalid_interaction",
                    detail=f"interaction {index} cannot be read: {problem} (a cassette "
                    "written by vcrpy has them); fix or remove it",
                    source=SourceLocation(path),
                    spans=0,
                )
                continue
            call = _call(interaction)
            if isinstance(call, str):
                yield Skipped(
                    reason=call,
                    detail=f"interaction {index} is not a successful chat completion ({call})",
                    source=SourceLocation(path),
                    spans=0,
                )
            else:
                calls.append(call)
        yield RecordsUsed(len(calls))  # the records are interactions: several per conversation
        for number, group in enumerate(_conversations(calls), start=1):
            yield _trace(path, number, group)


def _interactions(path: str) -> list[Any]:
    import yaml  # imported to read a cassette, not to sniff a file (CLI start-up)

    from agent_eval.ingest.containers import _yaml

    try:
        with open_input(path) as handle:
            document = clean(_yaml.load(handle))  # lone surrogates -> U+FFFD, counted
    except yaml.YAMLError as exc:
        raise DecodeError(f"not a valid YAML cassette ({exc})", path=path) from exc
    except (RecursionError, NestingTooDeep):
        raise DecodeError(
            f"not a usable YAML cassette: values nest deeper than {MAX_NESTING} levels", path=path
        ) from None
    if not isinstance(document, Mapping) or not isinstance(document.get("interactions"), list):
        raise DecodeError("expected a VCR cassette with an 'interactions' list", path=path)
    interactions: list[Any] = document["interactions"]
    return interactions


def _invalid(interaction: Any) -> str | None:
    """What is not a mapping where vcrpy writes one: the interaction, request, response, status."""
    if not isinstance(interaction, Mapping):
        return "the interaction is not a mapping"
    for part in ("request", "response"):
        if not isinstance(interaction.get(part) or {}, Mapping):
            return f"its {part} is not a mapping of method, uri, body..."
    if not isinstance((interaction.get("response") or {}).get("status") or {}, Mapping):
        return "its response status is not a mapping of code and message"
    return None


def _call(
    interaction: Mapping[str, Any],
) -> tuple[list[Message], Message | None, ModelUsage | None] | str:
    request = interaction.get("request") or {}
    response = interaction.get("response") or {}
    if not str(request.get("uri") or "").split("?")[0].endswith(CHAT_COMPLETIONS_PATH):
        return "not_chat_completion"
    status = as_int((response.get("status") or {}).get("code")) or 200
    if not 200 <= status < 300:
        return "http_error_response"
    sent_body, reply_body = _body(request.get("body")), _body(response.get("body"))
    sent = _json(sent_body) if sent_body is not None else None
    if not isinstance(sent, Mapping) or not isinstance(sent.get("messages"), list):
        return "undecodable_request"
    if reply_body is None:
        return "undecodable_response"
    reply, usage = _reply(reply_body, str(sent.get("model") or ""))
    return [m for raw in sent["messages"] if (m := _message(raw)) is not None], reply, usage


def _body(body: Any) -> str | None:
    """The body as text; gzip bytes decompressed; ``None`` when gzip that does not decompress."""
    if isinstance(body, Mapping):
        body = body.get("string")
    if isinstance(body, bytes):
        data: bytes = body
        if data.startswith(GZIP_MAGIC):
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError, zlib.error):
                return None
        return data.decode("utf-8", errors="replace")
    return body if isinstance(body, str) else ""


def _json(text: str) -> Any:
    try:
        return safe_json_loads(text)
    except orjson.JSONDecodeError:
        return None


def _reply(text: str, model: str) -> tuple[Message | None, ModelUsage | None]:
    completion = _from_stream(text) if text.lstrip().startswith(SSE_DATA) else _json(text)
    if not isinstance(completion, Mapping):
        return None, None
    choices = completion.get("choices") or []
    message = (
        _message(choices[0].get("message")) if choices and isinstance(choices[0], Mapping) else None
    )
    usage = completion.get("usage") if isinstance(completion.get("usage"), Mapping) else None
    model = str(completion.get("model") or model)
    if usage is None or not model:
        return message, None
    return message, ModelUsage(
        model=model,
        input_tokens=as_int(usage.get("prompt_tokens")) or 0,
        output_tokens=as_int(usage.get("completion_tokens")) or 0,
        calls=1,
    )


def _from_stream(text: str) -> dict[str, Any]:
    """Fold a ``chat.completion.chunk`` event stream into one completion-shaped object."""
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    completion: dict[str, Any] = {}
    for line in text.splitlines():
        data = line.removeprefix(SSE_DATA).strip() if line.startswith(SSE_DATA) else ""
        chunk = _json(data) if data and data != SSE_DONE else None
        if not isinstance(chunk, Mapping):
            continue
        completion["model"] = chunk.get("model") or completion.get("model")
        completion["usage"] = chunk.get("usage") or completion.get("usage")
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            content.append(delta.get("content") or "")
            for call in delta.get("tool_calls") or ():
                index = as_int(call.get("index")) if isinstance(call, dict) else None
                _merge_call_delta(calls.setdefault(index or 0, {}), call)
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content)}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    completion["choices"] = [{"message": message}]
    return completion


def _merge_call_delta(call: dict[str, Any], delta: Mapping[str, Any]) -> None:
    call["id"] = call.get("id") or delta.get("id")
    function = call.setdefault("function", {"name": "", "arguments": ""})
    part = delta.get("function") or {}
    function["name"] += part.get("name") or ""
    function["arguments"] += part.get("arguments") or ""


def _message(raw: Any) -> Message | None:
    """One OpenAI Chat Completions message (request or response) as our message type."""
    if not isinstance(raw, Mapping):
        return None
    role = raw.get("role")
    content, parts = content_of(raw.get("content"))  # images etc.: typed placeholders
    if role == "assistant":
        calls = [_tool_call(c) for c in raw.get("tool_calls") or () if isinstance(c, Mapping)]
        calls_or_none = tuple(calls) if calls else None
        return AssistantMessage(content=content, parts=parts, tool_calls=calls_or_none)
    if role == "tool":
        call_id = as_str(raw.get("tool_call_id"))
        return ToolMessage(content=content, parts=parts, tool_call_id=call_id)
    if role in ("system", "developer"):
        return SystemMessage(content=content, parts=parts)
    return UserMessage(content=content, parts=parts) if role == "user" else None


def _tool_call(raw: Mapping[str, Any]) -> ToolCall:
    function = raw.get("function")
    function = function if isinstance(function, Mapping) else {}
    return tool_call(raw.get("id"), function.get("name"), function.get("arguments"))


def _conversations(
    calls: list[tuple[list[Message], Message | None, ModelUsage | None]],
) -> Iterator[tuple[list[Message], list[ModelUsage]]]:
    transcript: list[Message] = []
    usage: list[ModelUsage] = []
    for sent, reply, call_usage in calls:
        if transcript and sent[: len(transcript)] != transcript:
            yield transcript, usage
            transcript, usage = [], []
        transcript = list(sent) + ([reply] if reply is not None else [])
        usage += [call_usage] if call_usage is not None else []
    if transcript:
        yield transcript, usage


def _trace(path: str, number: int, group: tuple[list[Message], list[ModelUsage]]) -> AgentTrace:
    messages, usage = group
    totals: dict[str, ModelUsage] = {}
    for item in usage:
        seen = totals.get(item.model)
        totals[item.model] = (
            item
            if seen is None
            else ModelUsage(
                model=item.model,
                input_tokens=seen.input_tokens + item.input_tokens,
                output_tokens=seen.output_tokens + item.output_tokens,
                calls=seen.calls + 1,
            )
        )
    return AgentTrace(
        conversation_id=f"{input_stem(path)}#{number}",
        messages=_with_tool_names(messages),
        usage=tuple(totals.values()),
        source=SourceInfo(container=OpenAICassetteContainer.name, files=(path,)),
    )


def _with_tool_names(messages: list[Message]) -> tuple[Message, ...]:
    """Name each tool result after the call it answers (the API's tool messages carry no name)."""
    names: dict[str, str] = {}
    out: list[Message] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            names.update({c.id: c.name for c in message.tool_calls or () if c.id})
        name = names.get(message.tool_call_id or "") if isinstance(message, ToolMessage) else None
        if isinstance(message, ToolMessage) and name and message.tool_name is None:
            out.append(message.model_copy(update={"tool_name": name}))
        else:
            out.append(message)
    return tuple(out)
