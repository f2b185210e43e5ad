"""Stream the values of a large JSON document without loading it whole (private).

Chat-log datasets ship as one big JSON array (tau-bench) or one object holding a big array
(tau2-bench ``simulations``). :class:`JsonStream` reads the file in chunks and decodes one
element at a time with the standard library's ``JSONDecoder.raw_decode``, so memory is bounded
by the largest element, not the file. It also reads JSON Lines and concatenated JSON values
(:meth:`JsonStream.records` skips a value that does not parse and reads on from the next line
that starts a value). Line numbers (1-based) of each value's first character are tracked for
error messages.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from agent_eval.errors import DecodeError
from agent_eval.ingest._safe_text import MAX_NESTING, NestingTooDeep, brief, clean, parse_int
from agent_eval.ingest._spans import SourceLocation
from agent_eval.ingest.containers._base import Skipped
from agent_eval.ingest.containers._leading import hold_leading_bad

__all__ = ["BadValue", "JsonStream"]

_CHUNK = 1 << 20
_WHITESPACE = " \t\n\r"
_NUMBER_CHARS = "0123456789.eE+-"
_NEXT_RECORD = re.compile(r"\n[{\[]")
"""Where reading resumes after a bad value: a line whose first character opens an object or
array. JSON Lines records start every line; pretty-printed concatenated values (the OTel
Python console exporter's) start at column 0 while their inner lines are indented."""
_NOT_UTF8 = re.compile("[\udc80-\udcff]")
"""What the ``surrogateescape`` decoder makes of a byte that is not UTF-8."""
_CUT_REACH = 16
"""A decode error this close to the buffer's end may be the chunk boundary cutting a token
(a literal such as ``-Infinity``, a ``\\uXXXX`` escape): read on and decode again. Further
back, more input cannot make the value valid."""


@dataclass(frozen=True, slots=True)
class BadValue:
    """A value :meth:`JsonStream.records` could not decode, and the lines it skipped.

    Attributes:
        error: The decode error (its ``line`` is the bad value's first line).
        last_line: The last non-blank line skipped with it (the same line for JSON Lines).

    """

    error: DecodeError
    last_line: int

    @property
    def lines(self) -> str:
        """``"line 4"`` or ``"lines 4-9"``."""
        first = self.error.line or 1
        return f"line {first}" if self.last_line <= first else f"lines {first}-{self.last_line}"

    def skipped(self, spans: int = 0) -> Skipped:
        """The ``invalid_json`` skip naming file:line.

        Args:
            spans: What the skipped value counts as in the span accounting: 0 for a record of
                a chat log (counted in ``records_ignored``), 1 when each value is a span.

        """
        reason = self.error.reason.removeprefix("invalid JSON: ")
        verb = "is" if self.last_line <= (self.error.line or 1) else "are"
        return Skipped(
            reason="invalid_json",
            detail=f"{self.lines} {verb} not valid JSON ({reason}); fix or remove the line",
            source=SourceLocation(self.error.path or "", self.error.line),
            spans=spans,
        )


class JsonStream:
    """A cursor over a UTF-8 JSON file, decoding one value at a time.

    Args:
        stream: A binary file object.
        path: The file name, for error messages.

    """

    def __init__(self, stream: IO[bytes], path: str) -> None:
        self._stream = stream
        self._path = path
        # bytes that are not UTF-8 become lone surrogates U+DC80..U+DCFF, which no valid UTF-8
        # decodes to: the value holding them is then reported bad, not the whole file
        self._decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
        self._json = json.JSONDecoder(parse_int=parse_int)  # no int too long: inf
        self._buf = ""
        self._pos = 0
        self._eof = False
        self.line = 1
        """1-based line of the cursor."""

    def peek(self) -> str:
        """The next non-whitespace character, ``""`` at the end of the file."""
        while True:
            while self._pos < len(self._buf) and self._buf[self._pos] in _WHITESPACE:
                self._advance(self._pos + 1)
            if self._pos < len(self._buf) or not self._fill():
                return self._buf[self._pos] if self._pos < len(self._buf) else ""

    def expect(self, char: str) -> None:
        """Consume ``char`` (after whitespace).

        Raises:
            DecodeError: the next character is something else.

        """
        found = self.peek()
        if found != char:
            self._fail(f"expected {char!r}, found {found or 'the end of the file'!r}")
        self._advance(self._pos + 1)

    def value(self) -> Any:
        """Decode the next whole JSON value.

        Raises:
            DecodeError: it is not valid JSON (or the file ends inside it).

        """
        self.peek()
        while True:
            try:
                value, end = self._json.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as exc:
                if self._may_be_cut(exc) and self._fill(grow=True):
                    continue
                self._fail(f"invalid JSON: {exc.msg.removesuffix(' starting at')}")
            except RecursionError:
                self._fail(f"invalid JSON: values nest deeper than {MAX_NESTING} levels")
            if self._cut_number(value, end) and self._fill(grow=True):
                continue  # a number cut by the chunk boundary: read on and decode it again
            escaped = _NOT_UTF8.search(self._buf, self._pos, end)
            if escaped is not None:
                byte = ord(escaped.group()) - 0xDC00
                self._fail(f"not UTF-8 (byte 0x{byte:02x} in this value)")
            self._advance(end)
            try:
                return clean(value)  # lone surrogates (valid JSON escapes) -> U+FFFD, counted
            except NestingTooDeep as exc:
                self._fail(f"invalid JSON: {exc}")

    def values(self) -> Iterator[tuple[int, Any]]:
        """``(line, value)`` for each top-level value: JSON Lines or concatenated JSON."""
        while self.peek():
            line = self.line
            yield line, self.value()

    def records(self, *, known: bool = False) -> Iterator[tuple[int, Any] | BadValue]:
        """Like :meth:`values`, but a value that does not decode is a :class:`BadValue`.

        Reading then resumes at the next line that starts with ``{`` or ``[`` (the next JSON
        Lines record), so one bad line (or a write cut off at the end of the file) costs only
        itself, the first line included: bad values before the first good one are held until
        it comes (:func:`~agent_eval.ingest.containers._leading.hold_leading_bad`), unless
        ``known`` (values read before showed the format): then every bad value is yielded.

        Raises:
            DecodeError: no value decodes before the end of the file or within
                :data:`~agent_eval.ingest.containers._leading.MAX_LEADING_BAD` bad ones (the
                file is likely not JSON at all): the first value's error.

        """
        if known:
            return self._records()
        return hold_leading_bad(
            self._records(), lambda item: isinstance(item, BadValue), _first_error
        )

    def _records(self) -> Iterator[tuple[int, Any] | BadValue]:
        while self.peek():
            line = self.line
            try:
                value = self.value()
            except DecodeError as exc:
                yield BadValue(exc, self._skip_to_next_record())
                continue
            yield line, value

    def array(self) -> Iterator[tuple[int, Any]]:
        """``(line, element)`` for each element of the array that starts at the cursor."""
        self.expect("[")
        if self.peek() == "]":
            self._advance(self._pos + 1)
            return
        while True:
            self.peek()
            line = self.line
            yield line, self.value()
            if self.peek() == "]":
                self._advance(self._pos + 1)
                return
            self.expect(",")

    def members(self) -> Iterator[str]:
        """The keys of the object at the cursor; after each, read its value (or array)."""
        self.expect("{")
        if self.peek() == "}":
            self._advance(self._pos + 1)
            return
        while True:
            key = self.value()
            if not isinstance(key, str):
                self._fail(f"expected an object key, found {brief(key)}")
            self.expect(":")
            yield key
            if self.peek() == "}":
                self._advance(self._pos + 1)
                return
            self.expect(",")

    def _cut_number(self, value: Any, end: int) -> bool:
        """Whether ``value`` is a number the buffer's end may have cut (``1`` of ``1.5``).

        The decoder stops a number where the grammar breaks: anything but number characters
        between ``end`` and the buffer's end means the number is complete.
        """
        if not isinstance(value, int | float) or isinstance(value, bool):
            return False
        rest = self._buf[end : end + 8]
        return end + len(rest) == len(self._buf) and not rest.strip(_NUMBER_CHARS)

    def _may_be_cut(self, exc: json.JSONDecodeError) -> bool:
        """Whether reading more input could turn this decode error into a valid value.

        The decoder reports an error at the character it could not use; only when that is at
        (or a token's length before) the buffer's end, or in a string the buffer's end cut
        before its closing quote (``Unterminated string``), is the cause the chunk boundary.
        """
        return exc.pos >= len(self._buf) - _CUT_REACH or exc.msg.startswith("Unterminated")

    def _skip_to_next_record(self) -> int:
        """Move the cursor to the next line starting with ``{``/``[``; the last line skipped."""
        last_line = self.line
        while True:
            found = _NEXT_RECORD.search(self._buf, self._pos)
            end = found.start() + 1 if found else max(self._pos, len(self._buf) - 1)
            skipped = self._buf[self._pos : end].rstrip(_WHITESPACE)
            if skipped:
                last_line = self.line + skipped.count("\n")
            self._advance(end)
            if found:
                return last_line
            if not self._fill():
                if self._buf[self._pos :].strip(_WHITESPACE):
                    last_line = self.line
                self._advance(len(self._buf))
                return last_line

    def _advance(self, end: int) -> None:
        self.line += self._buf.count("\n", self._pos, end)
        self._pos = end

    def _fill(self, grow: bool = False) -> bool:
        """Read another chunk; ``False`` at the end of the file."""
        if self._eof:
            return False
        chunk = self._stream.read(_CHUNK * (4 if grow else 1))
        text = self._decoder.decode(chunk, final=not chunk)
        self._eof = not chunk
        self._buf = self._buf[self._pos :] + text
        self._pos = 0
        return bool(chunk) or bool(text)

    def _fail(self, message: str) -> Any:
        raise DecodeError(message, path=self._path, line=self.line)


def _first_error(item: tuple[int, Any] | BadValue) -> Exception:
    """The error of the bad value that :func:`hold_leading_bad` fails on (it only fails on one)."""
    return item.error if isinstance(item, BadValue) else RuntimeError("not a bad value")
