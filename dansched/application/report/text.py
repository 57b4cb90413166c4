"""Text from input files made safe for a terminal.

Op names, tier and pipe names, case names and paths come from files a user did not
necessarily write. Printed raw, a newline splits a one-line error in two, a carriage
return overwrites what came before, and an escape sequence (``ESC [ ...``) recolours or
moves the cursor. :func:`printable` shows every such character as an escape instead;
every error, warning and summary line the command line prints goes through it, and
:func:`markup_safe` does the same for the cells and titles of rich tables (whose
``[...]`` would otherwise be read as markup).

>>> printable("MATMUL\\n\\x1b[31mred\\r")
'MATMUL\\\\n\\\\x1b[31mred\\\\r'
>>> printable("plain text stays as it is: é, 中, ✓")
'plain text stays as it is: é, 中, ✓'
>>> printable("case\\udcff")  # the byte 0xff of a file name that is not UTF-8
'case\\\\udcff'
"""

from __future__ import annotations

import os
import re
import shutil
import textwrap
from typing import Any, TextIO, cast

from rich.markup import escape

from ...errors import one_line

__all__ = [
    "printable",
    "markup_safe",
    "width",
    "wrapped",
    "fit",
    "NoTrailingSpaces",
    "no_trailing_spaces",
    "DEFAULT_WIDTH",
]

DEFAULT_WIDTH = 80  # the width of every line printed to a pipe or a file (``$COLUMNS`` overrides it)


def printable(text: object) -> str:
    """``str(text)`` with every control character, line separator and bidirectional
    control written as a Python-style escape (``\\n``, ``\\x1b``, ``\\u202e``): one line,
    nothing a terminal acts on (the rule of :func:`dansched.errors.one_line`, which every
    error message follows too)."""
    return one_line(text)


def markup_safe(text: object) -> str:
    """:func:`printable`, with rich markup escaped too (for table cells and titles)."""
    return escape(printable(text))


def width() -> int:
    """The columns a printed line may take: ``$COLUMNS`` when set, else the terminal's,
    else :data:`DEFAULT_WIDTH` (a pipe, a file)."""
    value = os.environ.get("COLUMNS", "")
    if value.isdigit() and int(value) > 0:
        return int(value)
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


# a figure and its unit stay on one line: ``(1.0 s)``, ``9.280 us``, ``628 MB``; so do a tier or
# pipe and its figure: ``L0A 256``, ``VECTOR 25,600``
_FIGURE_UNIT = re.compile(r"(\d) (s|ms|us|GHz|MB|MiB|GiB)\b")
_NAME_FIGURE = re.compile(r"\b([A-Z][A-Z0-9_]*) (\d)")
_GLUE = "\x00"


def wrapped(text: str, columns: int | None = None, indent: str = "  ") -> list[str]:
    """``text`` as lines of at most ``columns`` (default :func:`width`), broken only
    between words, never between a figure and its unit nor a tier or pipe and its figure
    (a word longer than a line, such as a long path, stays whole on its own line), the
    lines after the first indented by ``indent``.

    >>> wrapped("Exp: makespan 60 (1.0 s)", 20)
    ['Exp: makespan 60', '  (1.0 s)']
    >>> wrapped("hardware from the default model: L1 4,096, UB 1,024, L0A 256", 50)
    ['hardware from the default model: L1 4,096,', '  UB 1,024, L0A 256']
    """
    glued = _NAME_FIGURE.sub(rf"\1{_GLUE}\2", _FIGURE_UNIT.sub(rf"\1{_GLUE}\2", text))
    lines = textwrap.wrap(
        glued,
        columns or width(),
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [line.replace(_GLUE, " ") for line in lines] or [""]


def fit(text: str, columns: int) -> str:
    """``text`` cut to ``columns`` characters, ending in ``...`` when cut (a live line
    that must never wrap)."""
    if len(text) <= columns:
        return text
    return text[: max(0, columns - 3)] + "..."[: max(0, columns)]


class NoTrailingSpaces:
    """A text stream that drops the spaces at the end of each line written to ``stream``
    (rich pads table cells to the table's width)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._spaces = ""

    def write(self, text: str) -> int:
        lines = (self._spaces + text).split("\n")
        head = [line.rstrip(" ") for line in lines[:-1]]
        last = lines[-1].rstrip(" ")
        self._spaces = lines[-1][len(last) :]
        self._stream.write("".join(line + "\n" for line in head) + last)
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def no_trailing_spaces(stream: TextIO) -> TextIO:
    """``stream`` behind a :class:`NoTrailingSpaces` (a text stream in all but name)."""
    return cast(TextIO, NoTrailingSpaces(stream))
