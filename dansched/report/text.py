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

import re

from rich.markup import escape

__all__ = ["printable", "markup_safe"]

# C0 controls (NUL, LF, CR, ESC, ...), DEL and C1 controls, the Unicode line and paragraph
# separators, the bidirectional controls that reorder what a terminal shows, and lone
# surrogates (a file name's undecodable bytes, which no terminal, font or UTF-8 file can show)
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    c = match.group()
    if c in _NAMED:
        return _NAMED[c]
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object) -> str:
    """``str(text)`` with every control character, line separator and bidirectional
    control written as a Python-style escape (``\\n``, ``\\x1b``, ``\\u202e``): one line,
    nothing a terminal acts on."""
    return _UNSAFE.sub(_escape, str(text))


def markup_safe(text: object) -> str:
    """:func:`printable`, with rich markup escaped too (for table cells and titles)."""
    return escape(printable(text))
