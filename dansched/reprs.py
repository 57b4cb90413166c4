"""One-line ``repr`` for dansched's objects: at most :data:`LIMIT` characters, never an array.

A plan, an instance or an evaluation holds arrays of every node, so the ``repr`` a
dataclass writes for itself runs to tens of thousands of characters (an instance's was
40,000, a timing's 22,000 and more) and fills a notebook or a log with digits. Every
public object of dansched prints in one line instead: :func:`one_line_repr`, set as the
class's ``__repr__``, names the class and its fields, each value in brief
(:func:`brief`: an array as its dtype and length, a long list as its length, a nested
object by its own one-line ``repr`` when short), leaves out the fields still at their
default, and ends with ``...`` where the line would pass :data:`LIMIT`.

>>> from dataclasses import dataclass, field
>>> import numpy as np
>>> @dataclass
... class Example:
...     name: str
...     start: np.ndarray
...     order: list[int]
...     seed: int = 0
...     __repr__ = one_line_repr
>>> Example("tiny", np.zeros(592, dtype=np.int64), list(range(1000)))
Example(name='tiny', start=int64[592], order=[1,000 items])
>>> Example("tiny", np.zeros(3, dtype=np.int64), [1, 2], seed=7)
Example(name='tiny', start=int64[3], order=[1, 2], seed=7)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["LIMIT", "one_line_repr", "brief", "cut"]

LIMIT = 200  # the most characters a repr takes
NESTED = 80  # a nested object's own repr is shown when at most this long, else its class name
TEXT = 60  # a string is shown whole when at most this long, else cut
ITEMS = 4  # a sequence or mapping of at most this many items is shown whole (each in brief)


def cut(text: str, limit: int = LIMIT) -> str:
    """``text`` (one line) in at most ``limit`` characters, ``...)`` where it is cut."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(0, limit - 4)] + "...)"


def brief(value: Any) -> str:
    """``value`` in a few characters: an array as ``int64[592]``, a list or tuple of more
    than :data:`ITEMS` items as ``[1,000 items]``, a long string cut, a nested dansched
    object by its repr when that is short, else ``Name(...)``."""
    if isinstance(value, np.ndarray):
        return f"{value.dtype}[{'x'.join(str(d) for d in value.shape)}]"
    if isinstance(value, (list, tuple)):
        if len(value) > ITEMS:
            return f"[{len(value):,} items]" if isinstance(value, list) else f"({len(value):,} items)"
        inner = ", ".join(brief(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, Mapping):
        if len(value) > ITEMS:
            return f"{{{len(value):,} items}}"
        return "{" + ", ".join(f"{brief(k)}: {brief(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return repr(value) if len(value) <= TEXT else repr(value[: TEXT - 3] + "...")
    text = repr(value)
    if len(text) <= NESTED and "\n" not in text:
        return text
    return f"{type(value).__name__}(...)"


def _at_default(f: dataclasses.Field[Any], value: Any) -> bool:
    """Whether ``value`` is field ``f``'s default (a field without one never is)."""
    if f.default is not dataclasses.MISSING:
        default = f.default
    elif f.default_factory is not dataclasses.MISSING:
        default = f.default_factory()
    else:
        return False
    try:
        return bool(value is default or (type(value) is type(default) and value == default))
    except (ValueError, TypeError):  # an array compared element-wise
        return False


def one_line_repr(self: Any) -> str:
    """``Name(field=value, ...)`` of a dataclass: the fields shown in its repr that are not
    at their default, each :func:`brief`, as many as fit :data:`LIMIT` (then ``...``)."""
    head = f"{type(self).__name__}("
    parts: list[str] = []
    for f in dataclasses.fields(self):
        if not f.repr:
            continue
        value = getattr(self, f.name)
        if _at_default(f, value):
            continue
        part = f"{f.name}={brief(value)}"
        if len(head) + len(", ".join([*parts, part])) + 1 > LIMIT - 5:
            parts.append("...")
            break
        parts.append(part)
    return cut(head + ", ".join(parts) + ")")
