"""Opening an input as a byte stream: regular files, gzip'd files, standard input and pipes.

Every built-in container opens its file with :func:`open_input` (a third-party container should
too), so that any container reads:

- **gzip'd files**, recognised by their magic bytes (``1f 8b``, RFC 1952 section 2.3.1) whatever
  their name (``x.otlp.jsonl.gz``, ``x.json.gz``, a ``gzip``-rotated export); the data is
  decompressed as it is read (stdlib :mod:`gzip`), never whole into memory;
- **standard input** (the path ``-``, named :data:`STDIN_NAME` in messages), and pipes, FIFOs
  and character devices given by path (``/dev/stdin``, a named pipe, ``<(zcat x.gz)``). A
  stream can be read once: its first :data:`HEAD_BYTES` are kept, so sniffing the format and
  reading it see the same bytes; a container that opens it a second time, or seeks in it, gets
  an :class:`~agent_eval.errors.InputError` saying to write it to a file first.

Archives (zip, tar, 7z) and other compressions (bzip2, xz, zstd) are not read: a directory walk
lists them as skipped with the remedy (:func:`archive_note`), and a file given by name that
holds one is not recognised with the same remedy (:func:`compressed_kind`).

A gzip'd file is named as the file it holds: :func:`input_name` (``x.json`` for
``dir/x.json.gz``), :func:`input_stem` (``x``, what containers name conversations after) and
:func:`input_suffix` (``.json``, what companion files and loaders tell their format by).
Companion files read whole by one loader (labels, references, turn labels, review files) are
opened with :func:`opened_input` / :func:`opened_text`, which name gzip damage in an
:class:`~agent_eval.errors.InputError`.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import BinaryIO, TextIO, cast

from agent_eval.errors import InputError

__all__ = [
    "GZIP_MAGIC",
    "HEAD_BYTES",
    "STDIN_NAME",
    "STDIN_PATH",
    "archive_note",
    "compressed_kind",
    "gzip_damage",
    "input_name",
    "input_stem",
    "input_suffix",
    "is_stream",
    "open_input",
    "opened_input",
    "opened_text",
    "position",
    "read_error",
    "read_head",
    "release",
    "size",
]

STDIN_PATH = "-"
"""The path that means standard input (``agent-eval ingest -``)."""
STDIN_NAME = "<stdin>"
"""How standard input is named in reports and messages."""
HEAD_BYTES = 64 * 1024
"""How much of an input is kept for ``Container.sniff`` (and replayed for a stream)."""
GZIP_MAGIC = b"\x1f\x8b"
"""The first two bytes of every gzip member (RFC 1952, section 2.3.1: ID1 ID2)."""
_CHUNK = 64 * 1024

_MAGIC = (
    (b"PK\x03\x04", "a zip archive", "extract it (unzip -d DIR FILE) and pass DIR"),
    (b"PK\x05\x06", "an empty zip archive", "it holds no files"),
    (b"BZh", "bzip2-compressed", "decompress it first (bunzip2 -k FILE)"),
    (b"\xfd7zXZ\x00", "xz-compressed", "decompress it first (unxz -k FILE)"),
    (b"(\xb5/\xfd", "zstd-compressed", "decompress it first (zstd -d FILE)"),
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive", "extract it (7z x FILE) and pass the folder"),
)
"""(leading magic bytes, what the data is, the remedy) of formats no container reads."""
_TAR_MAGIC_OFFSET = 257
"""Where a POSIX tar header holds ``ustar`` (POSIX.1-1988, the ``magic`` field)."""
ARCHIVE_SUFFIXES = {
    ".zip": "a zip archive: extract it (unzip -d DIR FILE) and pass DIR",
    ".tar": "a tar archive: extract it (tar -xf FILE -C DIR) and pass DIR",
    ".tgz": "a gzip'd tar archive: extract it (tar -xzf FILE -C DIR) and pass DIR",
    ".tar.gz": "a gzip'd tar archive: extract it (tar -xzf FILE -C DIR) and pass DIR",
    ".7z": "a 7z archive: extract it (7z x FILE) and pass the folder",
    ".rar": "a rar archive: extract it and pass the folder",
    ".bz2": "bzip2-compressed: decompress it first (bunzip2 -k FILE)",
    ".xz": "xz-compressed: decompress it first (unxz -k FILE)",
    ".zst": "zstd-compressed: decompress it first (zstd -d FILE)",
}
"""Name endings (lowercase) of archives and compressions that are not read, with the remedy."""
READ_COMPRESSION_SUFFIXES = (".gz",)
"""Name endings (lowercase) of the compression :func:`open_input` reads: a name is judged
without them (:func:`input_name`)."""


def input_name(path: str | PurePath) -> str:
    """The file name of ``path`` without the compression suffix it is read through.

    ``dir/x.json.gz`` -> ``x.json``; ``dir/x.json`` -> ``x.json``; ``<stdin>`` -> ``<stdin>``.
    The suffix is matched in any case (``X.JSON.GZ`` -> ``X.JSON``); a name that is only the
    suffix (``.gz``) is kept.
    """
    base = os.path.basename(os.fspath(path))
    lower = base.lower()
    for suffix in READ_COMPRESSION_SUFFIXES:
        if lower.endswith(suffix) and len(base) > len(suffix):
            return base[: -len(suffix)]
    return base


def input_stem(path: str | PurePath) -> str:
    """The stem of an input's name, a compression suffix stripped first.

    ``dir/x.json.gz`` -> ``x`` as ``dir/x.json`` -> ``x`` (:attr:`pathlib.PurePath.stem` of
    :func:`input_name`): what containers name conversations after.
    """
    return PurePath(input_name(path)).stem


def input_suffix(path: str | PurePath) -> str:
    """The lowercase suffix of an input's name, a compression suffix stripped first.

    ``labels.csv.gz`` -> ``.csv``; ``labels.jsonl`` -> ``.jsonl``; ``x.gz`` -> ``""``.
    """
    return PurePath(input_name(path)).suffix.lower()


def archive_note(name: str) -> str | None:
    """``"not read: a zip archive: extract it ..."`` when ``name`` ends like an unread archive.

    ``FILE`` in the remedy is replaced by ``name``. gzip'd files (``.gz``) are read, except a
    gzip'd tar archive (``.tar.gz``, ``.tgz``).
    """
    lower = name.lower()
    for suffix, what in ARCHIVE_SUFFIXES.items():
        if lower.endswith(suffix):
            return "not read: " + what.replace("FILE", name)
    return None


def compressed_kind(head: bytes) -> str | None:
    """``"a zip archive; extract it ..."`` when ``head`` starts like data no container reads.

    Args:
        head: The first bytes of the input, after gzip decompression (so a ``.tar.gz`` is
            recognised as a tar archive).

    """
    for magic, what, remedy in _MAGIC:
        if head.startswith(magic):
            return f"{what}; {remedy}"
    if head[_TAR_MAGIC_OFFSET : _TAR_MAGIC_OFFSET + 5] == b"ustar":
        return "a tar archive; extract it (tar -xf FILE -C DIR) and pass DIR"
    return None


@dataclass(slots=True)
class _Stream:
    """A stream input: the open file, its first bytes (kept for sniffing), whether it was read."""

    raw: BinaryIO
    head: bytes
    owned: bool
    opened: bool = False


_streams: dict[str, _Stream] = {}
"""The stream inputs open now, by name; each is released by :func:`release`."""
_reading: dict[str, BinaryIO] = {}
"""The undecompressed file last opened under each path, for :func:`position` (progress)."""


def is_stream(path: str) -> bool:
    """Whether ``path`` is standard input, a pipe, a FIFO or a character device (read once)."""
    if path in (STDIN_PATH, STDIN_NAME) or path in _streams:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


def _stream(path: str) -> _Stream | None:
    """The stream input ``path`` names (opened on first use), or ``None`` for a regular file."""
    found = _streams.get(path)
    if found is not None or not is_stream(path):
        return found
    if path in (STDIN_PATH, STDIN_NAME):
        raw: BinaryIO = sys.stdin.buffer
        owned = False
    else:
        raw = open(path, "rb")  # noqa: SIM115 - closed by release()
        owned = True
    found = _Stream(raw, _read_up_to(raw, HEAD_BYTES), owned)
    _streams[path] = found
    return found


def _read_up_to(stream: BinaryIO, size: int) -> bytes:
    """Up to ``size`` bytes (fewer only at the end of the stream)."""
    parts: list[bytes] = []
    left = size
    while left > 0:
        part = stream.read(left)
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


class _Replay(io.RawIOBase):
    """A stream input's kept first bytes, then the rest of it (read once, not seekable)."""

    def __init__(self, name: str, head: bytes, rest: BinaryIO) -> None:
        super().__init__()
        self.name = name
        self._head = memoryview(head)
        self._rest = rest
        self._given = 0

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        """Bytes given so far (the stream cannot seek; this is for the progress line)."""
        return self._given

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
        else:
            data = self._rest.read(len(buffer))
            n = len(data)
            buffer[:n] = data
        self._given += n
        return n


class _GzipInput(gzip.GzipFile):
    """A gzip stream over ``raw`` that closes ``raw`` with itself."""

    def __init__(self, raw: BinaryIO, name: str) -> None:
        super().__init__(filename=name, mode="rb", fileobj=raw)
        self._raw = raw

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw.close()


def _open_raw(path: str) -> tuple[BinaryIO, bytes]:
    """``path`` opened as bytes, undecompressed, with its first two bytes (not consumed)."""
    source = _stream(path)
    if source is None:
        handle = open(path, "rb")  # noqa: SIM115 - the caller closes it
        _reading[path] = cast(BinaryIO, handle)
        return cast(BinaryIO, handle), handle.peek(2)[:2]
    if source.opened:
        raise InputError(
            "standard input or a pipe can be read once, and this input is being read a second "
            "time (a container that reads its input twice); write it to a file first "
            "(e.g. cat > traces.jsonl) and pass the file",
            path=_name(path),
        )
    source.opened = True
    replay = io.BufferedReader(_Replay(_name(path), source.head, source.raw), _CHUNK)
    _reading[path] = cast(BinaryIO, replay)
    return cast(BinaryIO, replay), source.head[:2]


def _name(path: str) -> str:
    return STDIN_NAME if path == STDIN_PATH else path


def open_input(path: str) -> BinaryIO:
    """``path`` opened for reading bytes, gzip decompressed as it is read when it is gzip'd.

    Args:
        path: A file path, :data:`STDIN_PATH` / :data:`STDIN_NAME` for standard input, or a
            pipe, FIFO or character device.

    Returns:
        A binary stream (use it as a context manager). It does not seek when the input is
        standard input or a pipe (``io.UnsupportedOperation``, an ``OSError``).

    Raises:
        OSError: the file cannot be opened (``FileNotFoundError``...).
        InputError: the input is standard input or a pipe that was already read.

    """
    raw, magic = _open_raw(path)
    if magic == GZIP_MAGIC:
        return cast(BinaryIO, _GzipInput(raw, _name(path)))
    return raw


@contextmanager
def opened_input(path: str | Path) -> Iterator[BinaryIO]:
    """:func:`open_input` for a file read whole by one loader (labels, references...).

    The stream is closed and the input forgotten (:func:`release`) afterwards; gzip data cut
    short or corrupt, met anywhere in the ``with`` block, becomes an
    :class:`~agent_eval.errors.InputError` naming the file (:func:`gzip_damage`).

    Raises:
        OSError: the file cannot be opened.
        InputError: its gzip data is cut short or corrupt.

    """
    name = os.fspath(path)
    try:
        with open_input(name) as stream:
            yield stream
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise cast(InputError, gzip_damage(exc, name, kept=False)) from None
    finally:
        release(name)


@contextmanager
def opened_text(path: str | Path, encoding: str = "utf-8") -> Iterator[TextIO]:
    """:func:`opened_input` decoded as text (``newline=""``, as :mod:`csv` wants it).

    Raises:
        OSError: the file cannot be opened.
        InputError: its gzip data is cut short or corrupt.
        UnicodeDecodeError: the bytes are not ``encoding`` (raised while reading).

    """
    with (
        opened_input(path) as stream,
        io.TextIOWrapper(stream, encoding=encoding, newline="") as text,
    ):
        yield text


def read_head(path: str, size: int = HEAD_BYTES) -> bytes:
    """The first ``size`` bytes of ``path`` as :func:`open_input` reads them (decompressed).

    For a stream input they are the kept bytes, not consumed. A gzip'd input cut short gives
    what decompressed before the cut (the container's read then reports the error).

    Raises:
        OSError: the file cannot be opened, or its gzip header is not valid.
        EOFError / zlib.error: the gzip data is cut short or corrupt before its first byte.

    """
    source = _stream(path)
    if source is None:
        with open_input(path) as stream:
            return _decompressed_head(stream, size)
    if source.head[:2] != GZIP_MAGIC:
        return source.head[:size]
    with gzip.GzipFile(fileobj=io.BytesIO(source.head), mode="rb") as gzipped:
        return _decompressed_head(cast(BinaryIO, gzipped), size)


def _decompressed_head(stream: BinaryIO, size: int) -> bytes:
    """Up to ``size`` bytes; gzip data cut short or corrupt after the first bytes ends them.

    ``read1`` (one decompression step per call) keeps what came before a bad step, which
    ``read`` would lose with the exception.

    Raises:
        EOFError / zlib.error: the gzip data is cut short or corrupt before its first byte.

    """
    read = getattr(stream, "read1", stream.read)
    parts: list[bytes] = []
    left = size
    try:
        while left > 0:
            part = read(min(left, _CHUNK))
            if not part:
                break
            parts.append(part)
            left -= len(part)
    except (EOFError, zlib.error):
        if not parts:
            raise
    return b"".join(parts)


def input_size(path: str, head: bytes) -> int | None:
    """The byte size of the data :func:`open_input` gives, when known without reading it.

    A regular uncompressed file's size; for gzip'd or stream input, ``len(head)`` when ``head``
    (the first :data:`HEAD_BYTES`) is all of it, else ``None``.
    """
    if not is_stream(path):
        with open(path, "rb") as handle:
            if handle.peek(2)[:2] != GZIP_MAGIC:
                return os.fstat(handle.fileno()).st_size
    return len(head) if len(head) < HEAD_BYTES else None


def gzip_damage(exc: BaseException, path: str, *, kept: bool) -> InputError | None:
    """The :class:`InputError` for gzip data cut short or corrupt, else ``None``.

    Args:
        exc: What reading raised: ``EOFError`` (cut short), ``zlib.error`` or
            ``gzip.BadGzipFile`` (corrupt).
        path: The input, named in the message (``-`` as :data:`STDIN_NAME`).
        kept: Whether what was read before the damage is used (a trace file: yes; a labels or
            references file: no, the loader stops), said in the message.

    """
    name = _name(path)
    so_far = "what was read before it is kept; " if kept else ""
    if isinstance(exc, EOFError):
        return InputError(
            f"the gzip data ends early (truncated: {exc}); {so_far}re-copy or re-export the "
            "file whole",
            path=name,
        )
    if isinstance(exc, zlib.error | gzip.BadGzipFile):
        return InputError(
            f"the gzip data is corrupt ({exc}); {so_far}re-copy or re-export the file "
            f"(gzip -t {name} checks it)",
            path=name,
        )
    return None


def read_error(exc: BaseException, path: str, container: str) -> InputError | None:
    """The :class:`InputError` for an exception raised while ``container`` read ``path``.

    Covers gzip data cut short (``EOFError``) or corrupt (``zlib.error``,
    ``gzip.BadGzipFile``), a stream input that cannot seek, and a container that opened a
    stream input's name itself instead of using :func:`open_input`; ``None`` for others.
    """
    name = _name(path)
    damage = gzip_damage(exc, path, kept=True)
    if damage is not None:
        return damage
    if not is_stream(path):
        return None
    if isinstance(exc, io.UnsupportedOperation):
        return InputError(
            f"container {container!r} needs to seek in its input, which standard input or a "
            "pipe cannot do; write it to a file first (e.g. cat > traces.jsonl) and pass the "
            "file",
            path=name,
        )
    if isinstance(exc, FileNotFoundError):
        return InputError(
            f"container {container!r} opens its path itself, so it cannot read standard input "
            "or a pipe (it should use agent_eval.ingest.open_input); write the input to a "
            "file first and pass the file",
            path=name,
        )
    return None


def position(path: str) -> int | None:
    """How many bytes of ``path`` have been read so far (of a gzip'd file, compressed bytes).

    ``None`` when it is not open. Safe to call from another thread (the progress line's).
    """
    handle = _reading.get(path)
    if handle is None:
        return None
    try:
        return handle.tell()
    except (OSError, ValueError):  # closed meanwhile, or a stream that does not count
        return None


def size(path: str) -> int | None:
    """The size in bytes of the file ``path`` as stored (``None`` for a stream input)."""
    if is_stream(path):
        return None
    try:
        return os.path.getsize(path)
    except OSError:
        return None


def release(path: str) -> None:
    """Forget the input ``path`` (closing a stream input opened by path); else nothing."""
    _reading.pop(path, None)
    found = _streams.pop(path, None)
    if found is not None and found.owned:
        found.raw.close()
