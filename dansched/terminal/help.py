"""The help's layout: whole first sentences as command summaries, option lists wrapped
between words at the terminal's width, capitals in usage lines (docs/cli.md is generated
from the same app)."""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

import typer
import typer.core


def first_sentence(text: str | None) -> str:
    """The first sentence of a help text (up to the first ``". "`` before a capital letter,
    outside parentheses, or the end of its first paragraph): a command's summary in
    ``dansched --help`` and docs/cli.md, whole, never cut.

    >>> first_sentence("Judge a plan (Eqs. 27-31, e.g. yours). Prints the verdict first.")
    'Judge a plan (Eqs. 27-31, e.g. yours).'
    """
    paragraph = inspect.cleandoc(text or "").split("\n\n")[0].replace("\n", " ")
    depth = 0
    for k, c in enumerate(paragraph):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if c == "." and depth == 0 and paragraph[k + 1 : k + 2] == " " and paragraph[k + 2 : k + 3].isupper():
            return paragraph[: k + 1]
    return paragraph


def _wrap(text: str, width: int, indent: str = "") -> list[str]:
    """``text`` wrapped at ``width`` between words only: an option name (``--traffic-slack``)
    is never split at its hyphen; paragraphs (blank lines) kept."""
    import re
    import textwrap

    lines: list[str] = []
    for k, paragraph in enumerate(inspect.cleandoc(text).split("\n\n")):
        if k:
            lines.append("")
        glued = re.sub(r"\[(default|env var): ", r"[\1:\0", " ".join(paragraph.split()))  # [default: 3] kept whole
        wrapped = textwrap.wrap(
            glued,
            max(width, 10),
            initial_indent=indent,
            subsequent_indent=indent,
            break_on_hyphens=False,
            break_long_words=False,
        )
        lines += [line.replace("\0", " ") for line in wrapped]
    return lines


class HelpFormatter(typer.Context.formatter_class):  # type: ignore[misc,valid-type]
    """click's help layout (typer's click, vendored or not) with lines wrapped between words
    only (:func:`_wrap`)."""

    def write_text(self, text: str) -> None:
        for line in _wrap(text, self.width, " " * self.current_indent):
            self.write(f"{line}\n")

    def write_dl(self, rows: Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        rows = list(rows)
        first = min(max((len(term) for term, _ in rows), default=0), col_max) + col_spacing
        margin = " " * (self.current_indent + first)
        for term, definition in rows:
            lines = _wrap(definition, self.width - self.current_indent - first - 2) if definition else []
            head = f"{'':>{self.current_indent}}{term}"
            if len(term) <= first - col_spacing and lines:
                self.write(f"{head:<{self.current_indent + first}}{lines.pop(0)}\n")
            else:
                self.write(f"{head}\n")
            for line in lines:
                self.write(f"{margin}{line}\n" if line else "\n")


class _Context(typer.Context):
    formatter_class = HelpFormatter


class Command(typer.core.TyperCommand):
    """A command whose help wraps between words (:class:`HelpFormatter`), whose usage line
    names its arguments in capitals (``dansched solve [OPTIONS] INSTANCE``) and whose
    summary is the first sentence of its help, whole (:func:`first_sentence`)."""

    context_class = _Context

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = (param.metavar or param.name or "").upper()
                many = "..." if param.nargs != 1 else ""
                pieces.append(f"{name}{many}" if param.required else f"[{name}]{many}")
        return pieces

    def get_short_help_str(self, limit: int = 45) -> str:
        return first_sentence(self.help)


class Group(typer.core.TyperGroup):
    """The app: its help wraps between words too (:class:`HelpFormatter`)."""

    context_class = _Context
