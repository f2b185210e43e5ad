r"""Trace content made safe for a terminal: control characters shown, never obeyed.

Trace files are untrusted. Text from them (messages, tool output, ids, error details) may hold
ANSI/VT escape sequences (``ESC [2J`` clears the screen, ``ESC ]0;...BEL`` retitles the
window, OSC 8 forges links) or other C0/C1 control characters (ECMA-48). Every command prints
such text through :func:`escape_control`, which writes each control character as a visible
``\xNN`` escape (``\u202e``-style for bidirectional overrides), keeping newlines and tabs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_eval._trace import AgentTrace

__all__ = ["escape_control", "escape_trace"]

_KEEP = {"\n", "\t"}
_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
"""Bidirectional embedding/override/isolate controls (Unicode UAX #9), which reorder text."""
_TABLE: dict[int, str] = {
    code: f"\\x{code:02x}"
    for code in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0))
    if chr(code) not in _KEEP
} | {code: f"\\u{code:04x}" for code in _BIDI}


def escape_control(text: str) -> str:
    r"""``text`` with C0/C1 control characters (but newline and tab) and bidi controls escaped.

    ``"\x1b[31mred"`` (ESC) becomes the visible ``"\\x1b[31mred"``; a carriage return becomes
    ``"\\x0d"``.
    """
    return text.translate(_TABLE)


def _escaped(value: Any) -> Any:
    if isinstance(value, str):
        return escape_control(value)
    if isinstance(value, list | tuple):
        return [_escaped(v) for v in value]
    if isinstance(value, dict):
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    return value


def escape_trace(trace: AgentTrace) -> AgentTrace:
    """A copy of ``trace`` with :func:`escape_control` applied to every string, for display.

    (AgentTrace values nest at most ``safe_text.MAX_NESTING`` levels, so the walk is bounded.)
    """
    return type(trace).model_validate(_escaped(trace.model_dump(mode="python")))
