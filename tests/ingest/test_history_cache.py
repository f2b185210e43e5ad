"""Replayed histories read incrementally give exactly what reading them whole gives."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_eval._trace import Message
from agent_eval.ingest.conventions import _history_cache as history_cache
from agent_eval.ingest.conventions._json_values import decode_json
from agent_eval.ingest.conventions._messages import (
    build_message,
    messages_from_value,
    read_message,
)


def _whole(text: str, role: str | None) -> list[Message]:
    """What messages_from_value gave before histories were read incrementally."""
    value = decode_json(text)
    if isinstance(value, list):
        return [m for item in value if isinstance(item, dict) for m in read_message(item, role)]
    assert isinstance(value, str) and role
    return [build_message(role, value)]


def _history(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "be brief " * 80}]
    for turn in range(turns):
        messages.append({"role": "user", "content": f"question {turn}"})
        messages.append({"content": f"answer {turn}"})  # no role: the default applies
    return messages


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    history_cache.clear_history_cache()


@pytest.mark.parametrize("separators", [(", ", ": "), (",", ":")])
def test_growing_history_matches_whole_reads(separators: tuple[str, str]) -> None:
    history = _history(6)
    for end in range(1, len(history) + 1):
        text = json.dumps(history[:end], separators=separators)
        for role in ("user", "assistant"):
            assert messages_from_value(text, role) == _whole(text, role)


def test_extension_reuses_the_remembered_messages() -> None:
    history = _history(3)
    first = messages_from_value(json.dumps(history), "user")
    extended = [*history, {"role": "user", "content": "more"}]
    second = messages_from_value(json.dumps(extended), "user")
    assert all(a is b for a, b in zip(first, second, strict=False))
    assert second[-1].content == "more"


@pytest.mark.parametrize(
    "suffix",
    [
        ", ]",  # an empty continuation is not JSON
        ', {"role": "user", "content": "x"',  # truncated
        ', {"role": "user", "content": "x"}] trailing',
        '0, {"role": "user", "content": "x"}]',  # not a new element
        ', {"role": "nobody", "content": "x"}]',  # an unknown role still raises
    ],
)
def test_broken_continuations_read_as_before(suffix: str) -> None:
    text = json.dumps(_history(3))
    messages_from_value(text, "user")  # remembered
    extended = text[:-1] + suffix
    try:
        expected = _whole(extended, "user")
    except ValueError as exc:
        with pytest.raises(ValueError, match="unknown message role") as raised:
            messages_from_value(extended, "user")
        assert str(raised.value) == str(exc)
        return
    assert messages_from_value(extended, "user") == expected


def test_whitespace_and_exact_repeats() -> None:
    text = "  " + json.dumps(_history(2), indent=1) + "\n"
    assert messages_from_value(text, "user") == _whole(text, "user")
    assert messages_from_value(text, "user") == _whole(text, "user")  # remembered


def test_large_arrays_are_not_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history_cache, "HISTORY_MAX_CHARS", 100)
    text = json.dumps(_history(2))
    assert messages_from_value(text, "user") == _whole(text, "user")
    assert history_cache._entries == []


def test_cache_is_bounded() -> None:
    for n in range(history_cache.HISTORY_CACHE_SIZE + 5):
        messages_from_value(json.dumps([{"role": "user", "content": f"{n} " + "x" * 600}]))
    assert len(history_cache._entries) == history_cache.HISTORY_CACHE_SIZE


def test_more_conversations_in_flight_than_the_recent_list_still_hit() -> None:
    """Interleaved conversations: each is found in its own scope (issue 15: 40+ in flight)."""
    conversations = history_cache.HISTORY_CACHE_SIZE * 2
    histories = {
        n: [*_history(2), {"role": "user", "content": f"conv {n}"}] for n in range(conversations)
    }
    first: dict[int, list[Message]] = {}
    for n, history in histories.items():
        with history_cache.history_scope(f"conv-{n}"):
            first[n] = messages_from_value(json.dumps(history), "user")
    for n, history in histories.items():
        extended = [*history, {"role": "user", "content": "more"}]
        with history_cache.history_scope(f"conv-{n}"):
            second = messages_from_value(json.dumps(extended), "user")
        assert all(a is b for a, b in zip(first[n], second, strict=False))  # read incrementally
        assert second == _whole(json.dumps(extended), "user")


def test_a_wrong_scope_costs_speed_not_correctness() -> None:
    history = _history(3)
    with history_cache.history_scope("a"):
        messages_from_value(json.dumps(history), "user")
    other = [*_history(3)[:-1], {"role": "user", "content": "different"}]
    with history_cache.history_scope("a"):
        assert messages_from_value(json.dumps(other), "user") == _whole(json.dumps(other), "user")


def test_scopes_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history_cache, "HISTORY_SCOPES", 3)
    for n in range(10):
        with history_cache.history_scope(f"s{n}"):
            messages_from_value(json.dumps([{"role": "user", "content": f"{n} " + "x" * 600}]))
    assert list(history_cache._scoped) == ["s7", "s8", "s9"]
    assert history_cache._scoped_chars[0] == sum(
        len(e.body) for entries in history_cache._scoped.values() for e in entries
    )
