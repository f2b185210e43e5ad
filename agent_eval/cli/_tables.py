"""Tables that keep ids and names whole at any terminal width.

CI logs are 80 columns wide and not a TTY (rich reads ``COLUMNS``); a rich table too wide for
them cuts its cells (``raga…``) by default. :func:`print_table` prints every table of a
renderable (a :class:`~rich.table.Table`, or the tables of a :class:`~rich.console.Group`)
with columns that wrap instead of cutting, and checks the rendering: when any word of a cell
or header (an id, a variant name such as ``ragas-pretty@1[max_chars=4000]``, a number) would
not come out whole, the table is printed in a narrow, stacked layout instead: one block per
row, one ``column: value`` line per cell, soft-wrapped by the terminal and never cut.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich.console import Console, Group, RenderableType
from rich.segment import Segment, SegmentLines
from rich.table import Table
from rich.text import Text

__all__ = ["fitted", "print_table", "stacked_lines"]


def _text(cell: object) -> Text | None:
    """A cell as text: markup strings parsed (as rich would), ``None`` for other renderables."""
    if isinstance(cell, Text):
        return cell
    if isinstance(cell, str):
        return Text.from_markup(cell)
    return None


def _words(table: Table) -> set[str]:
    words: set[str] = set()
    for column in table.columns:
        for cell in (*((column.header,) if table.show_header else ()), *column.cells):
            text = _text(cell)
            if text is not None:
                words.update(word for word in text.plain.split() if len(word) > 1)
    return words


def _rendered(console: Console, table: Table) -> list[list[Segment]] | None:
    """``table``'s lines at the console's width, or ``None`` when a word would not be whole."""
    for column in table.columns:
        column.overflow = "fold"  # never "…"; a folded word is caught below
    lines = console.render_lines(table, console.options, pad=False)
    rendered = "\n".join("".join(segment.text for segment in line) for line in lines)
    return lines if all(word in rendered for word in _words(table)) else None


def stacked_lines(table: Table) -> list[Text]:
    """``table`` in the narrow layout: one block per row, a ``column: value`` line per cell.

    A table without a header row (``what | value`` tables) gives one ``what: value`` line per
    row instead; empty cells are left out.
    """
    lines: list[Text] = []
    if table.title is not None:
        title = _text(table.title)
        lines.append(title if title is not None else Text(str(table.title)))
    cells = [[_text(cell) or Text("") for cell in column.cells] for column in table.columns]
    rows = max((len(column) for column in cells), default=0)
    for index in range(rows):
        row = [column[index] if index < len(column) else Text("") for column in cells]
        if not table.show_header:
            lines.append(Text.assemble("  ", *_joined([cell for cell in row if cell.plain])))
            continue
        if index or table.title is not None:
            lines.append(Text(""))
        for column, cell in zip(table.columns, row, strict=True):
            if cell.plain:
                header = _text(column.header)
                name = header.plain if header is not None else ""
                lines.append(Text.assemble(f"  {name}: " if name else "  ", cell))
    if table.caption is not None:
        caption = _text(table.caption)
        lines.append(caption if caption is not None else Text(str(table.caption)))
    return lines


def _joined(cells: list[Text]) -> list[Text | str]:
    parts: list[Text | str] = []
    for number, cell in enumerate(cells):
        parts += [": " if number == 1 else " " if number else "", cell]
    return parts


def _tables(renderable: RenderableType) -> Iterable[RenderableType]:
    if isinstance(renderable, Group):
        for part in renderable.renderables:
            yield from _tables(part)
    else:
        yield renderable


def print_table(console: Console, renderable: RenderableType) -> None:
    """Print ``renderable`` (tables, or a group of them) with every id and name whole.

    A table that fits the console's width is printed as a table (cells wrap at spaces);
    one that does not is printed as :func:`stacked_lines`. Other renderables print as they
    are.
    """
    for part in _tables(renderable):
        if not isinstance(part, Table):
            console.print(part)
            continue
        lines = _rendered(console, part)
        if lines is not None:  # print what was checked: the table is rendered once
            console.print(SegmentLines(lines, new_lines=True))
        else:
            for line in stacked_lines(part):
                for piece in fitted(line, console.width):
                    console.print(piece, soft_wrap=True, highlight=False)


def fitted(line: Text, width: int) -> list[Text]:
    """``line`` wrapped at spaces to ``width`` columns, never cutting a word.

    Each further line of a multi-line cell is indented two columns past the line's own indent
    (``  recall 1.00`` under ``  qualities: ...``), and a wrapped part two more, so a block
    stays readable at 80 columns; a word longer than the width is kept whole on its line.
    """
    indent = " " * (len(line.plain) - len(line.plain.lstrip(" ")) + 2)
    deeper = indent + "  "
    out: list[Text] = []
    for part in line.split("\n", allow_blank=True):
        first = max(width - (len(indent) if out else 0), 20)
        pieces = part.divide(_breaks(part.plain, first, max(width - len(deeper), 20)))
        for number, piece in enumerate(pieces):
            piece.rstrip()
            lead = deeper if number else indent
            out.append(Text.assemble(lead, piece) if out else piece)
    return out


def _breaks(text: str, first: int, rest: int) -> list[int]:
    """Offsets where ``text`` breaks: at spaces, ``first`` columns, then ``rest`` a line."""
    breaks: list[int] = []
    start, room = 0, first
    for word in _WORD.finditer(text):
        if (
            word.end() - start > room
            and word.start() > start
            and text[start : word.start()].strip()
        ):
            breaks.append(word.start())
            start, room = word.start(), rest
    return breaks


_WORD = re.compile(r"\S+")
