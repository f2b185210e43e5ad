"""Stream the values of a large JSON document without loading it whole (private).

Chat-log datasets ship as one big JSON array (tau-bench) or one object holding a big array
(tau2-bench ``simulations``). :class:`JsonStream` reads the file in chunks and decodes one
element at a time with the standard library's ``JSONDecoder.raw_decode``, so memory is bounded
by the largest element, not the file. It also reads JSON Lines and concatenated JSON values.
Line numbers (1-based) of each value's first character are tracked for error messages.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from typing import IO, Any

from agent_eval.errors import DecodeError
from agent_eval.ingest.safe_text import MAX_INT_DIGITS, MAX_NESTING, NestingTooDeep, brief, clean

__all__ = ["JsonStream"]

_CHUNK = 1 << 20
_WHITESPACE = " \t\n\r"
_NUMBER_CHARS = "0123456789.eE+-"


class JsonStream:
    """A cursor over a UTF-8 JSON file, decoding one value at a time.

    Args:
        stream: A binary file object.
        path: The file name, for error messages.

    """

    def __init__(self, stream: IO[bytes], path: str) -> None:
        self._stream = stream
        self._path = path
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._json = json.JSONDecoder(parse_int=_parse_int)
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
                if self._fill(grow=True):
                    continue
                self._fail(f"invalid JSON: {exc.msg}")
            except RecursionError:
                self._fail(f"invalid JSON: values nest deeper than {MAX_NESTING} levels")
            except NestingTooDeep as exc:  # an integer too long to convert
                if self._fill(grow=True):
                    continue
                self._fail(f"invalid JSON: {exc}")
            if self._cut_number(value, end) and self._fill(grow=True):
                continue  # a number cut by the chunk boundary: read on and decode it again
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

    def _advance(self, end: int) -> None:
        self.line += self._buf.count("\n", self._pos, end)
        self._pos = end

    def _fill(self, grow: bool = False) -> bool:
        """Read another chunk; ``False`` at the end of the file."""
        if self._eof:
            return False
        chunk = self._stream.read(_CHUNK * (4 if grow else 1))
        try:
            text = self._decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as exc:
            self._fail(f"not UTF-8 ({exc.reason} at byte {exc.start} of a chunk)")
        self._eof = not chunk
        self._buf = self._buf[self._pos :] + text
        self._pos = 0
        return bool(chunk) or bool(text)

    def _fail(self, message: str) -> Any:
        raise DecodeError(message, path=self._path, line=self.line)


def _parse_int(digits: str) -> int:
    """``int(digits)``, or :class:`NestingTooDeep` for more than Python's conversion limit."""
    if len(digits) > MAX_INT_DIGITS + 1:
        raise NestingTooDeep(f"an integer of {len(digits)} digits is too long")
    return int(digits)
