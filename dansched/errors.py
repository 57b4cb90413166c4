"""Every exception class of dansched, in one place (the bottom of the core layer).

A public call of ``dansched.__all__`` raises only these, and the CLI maps them (one line
on stderr, no traceback):

- exit status 2, bad input or usage: :class:`InputError` (and :class:`ArgumentError`),
  :class:`InstanceError`, :class:`HardwareError`, :class:`PlanFormatError` (and
  :class:`OutputError`, :class:`MixedPlanError`), :class:`TraceError`, :class:`ViewError`;
- exit status 1, an invalid plan or no valid plan: :class:`PlanInvalidError` and its
  subclasses :class:`NoLegalOrderError` and :class:`PlacementFailed`; :class:`WriteFailed`,
  a plan folder whose destinations passed the checks before the work but whose write then
  failed (no room left, an obstacle put there meanwhile: the input was fine); and
  :class:`OutOfMemory`, a solve that ran out of host memory, the computer's RAM (its line
  says how much the graph needs; a graph that does not fit the scratchpad tiers is an
  :class:`InstanceError`, exit status 2);
- exit status 130 or 143: :class:`Interrupted`, SIGINT or SIGTERM under the command
  line's signal policy (:mod:`dansched.interrupt`; a library caller meets Python's own
  ``KeyboardInterrupt`` instead).

Every message of these classes is one line, whatever text from input it quotes (a path
holding a line break, an op name with an escape sequence): :func:`one_line` writes each
control character as an escape when the exception is made, the rule the command line
prints every line with (``dansched.application.report.text.printable``).

The remaining classes are internal signals that a bounded search or an exact model
gave up (a caller catches them and falls back).
"""

from __future__ import annotations

import re

__all__ = [
    "InputError",
    "ArgumentError",
    "OutOfMemory",
    "InstanceError",
    "HardwareError",
    "PlanFormatError",
    "OutputError",
    "WriteFailed",
    "TraceError",
    "PlanInvalidError",
    "NoLegalOrderError",
    "PlacementFailed",
    "ReuseBudgetExceeded",
    "ExactModelTooLarge",
    "ExactModelInapplicable",
    "PeakWorkExceeded",
    "JointModelError",
    "JointModelTooLarge",
    "MixedPlanError",
    "ViewError",
    "TimedFailed",
    "SweepInputError",
    "ExecutorError",
    "DaskMissingError",
    "Interrupted",
    "DuplicateKeyError",
    "one_line",
]

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


def one_line(text: object) -> str:
    """``str(text)`` with every control character, line separator and bidirectional
    control written as a Python-style escape (``\\n``, ``\\x1b``, ``\\u202e``): one line,
    nothing a terminal acts on. Applied twice, it changes nothing more."""
    return _UNSAFE.sub(_escape, str(text))


class _OneLine:
    """The messages of the classes a caller meets are one line (module docstring)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(one_line(a) if isinstance(a, str) else a for a in args))


class Interrupted(BaseException):
    """The run was interrupted by SIGINT or SIGTERM (``signum``) under the command line's
    signal policy (:mod:`dansched.interrupt`): one line, ``dansched: interrupted (...)``,
    exit status 128 + ``signum`` (130, 143). A ``BaseException``, like
    ``KeyboardInterrupt``, so that no ``except Exception`` on the way out swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class InputError(_OneLine, Exception):
    """Bad input or usage: reported as one line on stderr with exit status 2."""


class ArgumentError(InputError, ValueError, TypeError):
    """An argument, option or parameter of the wrong type or outside the range dansched
    accepts (:mod:`dansched.checks`), found before any work starts: the message names it
    and what it accepts. Both a ``ValueError`` and a ``TypeError``, so a caller that
    catches either keeps working; exit status 2."""


class OutOfMemory(_OneLine, MemoryError):
    """A solve that ran out of host memory (the computer's RAM, not a scratchpad tier); the
    message says how much RAM the graph needs, estimated
    from its node and edge counts. A ``MemoryError`` (a sweep retries the cell on resume);
    exit status 1: the input is fine, the machine is too small for it."""


class InstanceError(_OneLine, ValueError):
    """An instance that breaks a well-formedness rule of docs/rules.md, section 1.2 (exit status 2)."""


class HardwareError(_OneLine, ValueError):
    """A hardware file that cannot be read or does not describe a usable core."""


class PlanFormatError(_OneLine, ValueError):
    """A plan file that cannot be parsed at all (bad input, exit status 2)."""


class OutputError(PlanFormatError):
    """An output file that cannot be written (a folder in the way, an unwritable place): like
    bad input, one line and exit status 2. Raised before any target is replaced, unless a
    rename itself fails part-way (see :func:`dansched.plan.atomic_write_files`)."""


class WriteFailed(OutputError):
    """Files that passed the checks before the work (:class:`OutputError` there: bad input,
    exit status 2) but could not be written after it: the disk filled up, something was
    put in the way meanwhile. Raised before any target is replaced (the folders keep their
    earlier plan, and the message says so), unless a rename itself failed part-way (then
    the folders are marked incomplete, and the message says that). Exit status 1: the
    input was fine, the write was not."""


class TraceError(_OneLine, ValueError):
    """A plan that cannot be traced (no timing: a problem-1 order)."""


class PlanInvalidError(_OneLine, RuntimeError):
    """A stage produced a plan the evaluator rejects, or no valid plan exists (exit status 1)."""


class NoLegalOrderError(PlanInvalidError):
    """The instance admits no order that keeps buffer lifetimes and the L0
    single-residency rule (docs/rules.md, sections 3 and 8.1); the CLI maps it to exit status 1."""


class PlacementFailed(PlanInvalidError):
    """No placement exists for a buffer even after evicting everything evictable
    (exit status 1 if it ever reaches the CLI; Stage 2 catches it and tries another variant)."""


class ReuseBudgetExceeded(RuntimeError):
    """The reuse-aware schedule needed more scan steps than its budget allowed."""


class ExactModelTooLarge(RuntimeError):
    """The down-set DP would need more states than allowed."""


class ExactModelInapplicable(RuntimeError):
    """An exact model whose assumptions the instance does not meet (the down-set DP needs an
    operation that opens and one that closes every buffer): the caller does without it."""


class PeakWorkExceeded(Exception):
    """The ancestor bitsets of the structural peak bound would exceed the work budget."""


class JointModelError(RuntimeError):
    """A model solution that the evaluator does not accept as a plan of the model's traffic."""


class JointModelTooLarge(ValueError):
    """More instance nodes than ``max_nodes``."""


class TimedFailed(RuntimeError):
    """The time-driven scheduler could not finish (no room even after evicting, or over the traffic allowance)."""


class ViewError(_OneLine, ValueError):
    """A plan folder whose report cannot be read (bad JSON)."""


class MixedPlanError(PlanFormatError):
    """A folder whose files belong to more than one plan, or to an interrupted write
    (one line, exit status 2)."""


class SweepInputError(_OneLine, ValueError):
    """Bad input to a sweep (exit status 2, one line, nothing written)."""


class ExecutorError(_OneLine, ValueError):
    """Executor options that cannot be used together or make no sense (bad input)."""


class DaskMissingError(ExecutorError):
    """A Dask option was given but ``dask[distributed]`` is not installed."""


class DuplicateKeyError(ValueError):
    """A JSON object that gives one key twice (:func:`dansched.checks.read_json`); the file's
    reader turns it into its own one-line error naming the key and the file."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} is given twice in one object (the last would silently win)")
        self.key = key
