"""The checks of what a caller passes in: the accepted range of every numeric option
(:class:`Range`), and the type of a public call's arguments (:func:`check_type`).

A value is checked once, where it enters: the command line checks each option as it
parses it (``dansched/cli.py`` passes :meth:`Range.check` as the option's callback),
and the library checks the same value where it is constructed (:class:`SolveOptions`,
the parameter dataclasses of :mod:`dansched.params`, ``SweepOptions``,
``ExecutorOptions``, ``generate``). A value out of range raises
:class:`~dansched.errors.ArgumentError` (a ``ValueError``; exit status 2 on the command
line) with one line naming the option and the range.

Each bound is what the code behind the option accepts, with the reason beside it:

>>> SEED.check(7, "--seed")
7
>>> SEED.check(2**31, "--seed")
Traceback (most recent call last):
...
dansched.errors.ArgumentError: --seed must be an integer from 0 to 2147483647, got 2147483648
>>> TIME_LIMIT.check(float("inf"), "SolveOptions.time_limit")
Traceback (most recent call last):
...
dansched.errors.ArgumentError: SolveOptions.time_limit must be a number from 0 to 1000000 (seconds), got inf
"""

from __future__ import annotations

import json
import math
import numbers
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ArgumentError, DuplicateKeyError

__all__ = [
    "Range",
    "INT64_MAX",
    "NAME_MAX",
    "PROBLEM",
    "SEED",
    "GENERATE_SEED",
    "TIME_LIMIT",
    "SECONDS",
    "FREQ_GHZ",
    "TRAFFIC_SLACK",
    "EXACT_WINDOW",
    "JOBS",
    "DASK_WORKERS",
    "SCALE",
    "NETWORK_TIMEOUT",
    "check_integer",
    "check_number",
    "check_type",
    "check_path",
    "check_integers",
    "check_choice",
    "check_names",
    "TEXT_ENCODING",
    "read_json",
    "check_progress",
]

INT64_MAX = 2**63 - 1  # counts and budgets handed to the solvers (CP-SAT, HiGHS, numpy) are int64
NAME_MAX = 255  # bytes in one file name (one part of a path) on the file systems dansched runs on (ext4, xfs, tmpfs...)


def _shown(x: float | int) -> str:
    """``x`` as the docs write it: floats without a trailing ``.0``, 2**63 - 1 as that."""
    if isinstance(x, float):
        return f"{x:g}"
    return {INT64_MAX: "2**63 - 1", -INT64_MAX - 1: "-2**63"}.get(x, str(x))


def _given(value: Any) -> str:
    """``repr(value)`` for a message, a long one cut (an integer of 400 digits, a list)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        digits = len(str(abs(value)))
        return f"{str(value)[:12]}... ({digits} digits)"
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:60]}... ({type(value).__name__})"


@dataclass(frozen=True)
class Range:
    """The values an option accepts: an integer (``integer``) or a finite number, at least
    ``low`` (more than ``low`` when ``low_open``), at most ``high`` (``None``: no upper
    bound but finiteness); ``unit`` is shown after the range."""

    low: int | float
    high: int | float | None = None
    integer: bool = False
    low_open: bool = False
    unit: str = ""

    @property
    def text(self) -> str:
        """The range in words: ``an integer from 0 to 2147483647``, ``a finite number >= 0``."""
        kind = "an integer" if self.integer else ("a finite number" if self.high is None else "a number")
        if self.high is None:
            words = f"{kind} {'>' if self.low_open else '>='} {_shown(self.low)}"
        elif self.low_open:
            words = f"{kind} > {_shown(self.low)} and <= {_shown(self.high)}"
        else:
            words = f"{kind} from {_shown(self.low)} to {_shown(self.high)}"
        return f"{words} ({self.unit})" if self.unit else words

    def accepts(self, value: Any) -> bool:
        """An integer (a numpy one too, never a bool) or, unless ``integer``, a finite real."""
        if isinstance(value, bool) or not isinstance(value, numbers.Integral if self.integer else numbers.Real):
            return False
        if not isinstance(value, numbers.Integral) and not math.isfinite(value):
            return False
        if value < self.low or (self.low_open and value == self.low):
            return False
        return self.high is None or value <= self.high

    def check(self, value: Any, what: str, optional: bool = False) -> Any:
        """``value`` when it lies in the range (another number than a Python ``int`` or
        ``float``, such as a numpy one, converted to one), else :class:`ArgumentError`
        naming ``what`` (an option such as ``--seed`` or a field such as
        ``SolveOptions.seed``). ``None`` passes only when ``optional`` (an option that was
        not given, such as ``--jobs``)."""
        if value is None and optional:
            return None
        if self.accepts(value):
            if type(value) in (int, float):
                return value
            return int(value) if isinstance(value, numbers.Integral) else float(value)
        raise ArgumentError(f"{what} must be {self.text}, got {_given(value)}")


def check_integer(value: Any, what: str, low: int, high: int = INT64_MAX) -> int:
    """An integer from ``low`` to ``high`` (default: int64), else :class:`ArgumentError`
    (the fast path of :meth:`Range.check`: it runs per node in :class:`GraphBuilder`)."""
    if type(value) is int and low <= value <= high:
        return value
    return int(Range(low, high, integer=True).check(value, what))


def check_number(value: Any, what: str, low: float, high: float | None = None, low_open: bool = False) -> float:
    """A finite number of at least ``low`` (more than ``low`` with ``low_open``) and at most
    ``high``, else :class:`ArgumentError`."""
    return Range(low, high, low_open=low_open).check(value, what)


def check_type(value: Any, kind: type | tuple[type, ...], what: str, hint: str = "") -> Any:
    """``value`` when it is a ``kind``, else :class:`ArgumentError` naming ``what`` (e.g.
    ``solve: inst``) and the type it got, with ``hint`` (what to pass instead) appended.
    Public calls check their arguments so, before any work."""
    if isinstance(value, kind):
        return value
    names = " or ".join(("an " if k.__name__[0] in "AEIOU" else "a ") + k.__name__ for k in _kinds(kind))
    scalar = isinstance(value, (str, bytes, int, float)) or value is None
    got = f"{type(value).__name__} {_given(value)}" if scalar else type(value).__name__
    raise ArgumentError(f"{what} must be {names}, got {got}" + (f" ({hint})" if hint else ""))


def check_path(value: Any, what: str, optional: bool = False) -> Any:
    """``value`` when it is a path (a ``str`` or an ``os.PathLike`` naming a ``str``, without
    a NUL character and without a part longer than :data:`NAME_MAX` bytes, which no file
    name can be; ``None`` too when ``optional``), else :class:`ArgumentError` naming ``what``."""
    if optional and value is None:
        return None
    check_type(value, (str, os.PathLike), what)
    text = os.fspath(value)
    if not isinstance(text, str):
        raise ArgumentError(f"{what} must be a path, got {_given(value)}")
    if "\0" in text:
        raise ArgumentError(f"{what} holds a NUL character, which no file name can: {_given(value)}")
    longest = max((len(os.fsencode(part)) for part in text.split(os.sep)), default=0)
    if longest > NAME_MAX:
        raise ArgumentError(
            f"{what} has a name of {longest} bytes, longer than any file name ({NAME_MAX}): {_given(value)}"
        )
    return value


def check_integers(value: Any, what: str, items: str = "integers") -> tuple[int, ...]:
    """``value`` as a tuple of ints when it is a sequence of integers (numpy integers
    converted; a bool is not one), else :class:`ArgumentError` naming ``what`` (``items``
    says what the sequence holds: ``node ids``)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable) or isinstance(value, Mapping):
        raise ArgumentError(f"{what} must be a sequence of {items}, got {type(value).__name__}")
    out = tuple(value)
    if all(type(v) is int for v in out):  # the common case, and the fast one
        return out
    for v in out:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ArgumentError(f"{what} must hold integers, got {_given(v)}")
    return tuple(int(v) for v in out)


def check_choice(value: Any, choices: Iterable[str], what: str) -> str:
    """``value`` when it is one of the names ``choices``, else :class:`ArgumentError` naming
    ``what`` and the choices."""
    names = list(choices)
    if isinstance(value, str) and value in names:
        return value
    raise ArgumentError(f"{what} must be one of {', '.join(names)}, got {_given(value)}")


def check_names(value: Any, what: str) -> tuple[str, ...]:
    """``value`` as a tuple when it is a sequence (a list, a tuple...) of strings, else
    :class:`ArgumentError` naming ``what`` (a string alone is refused: it is not a list of
    names)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable) or isinstance(value, Mapping):
        raise ArgumentError(f"{what} must be a list of names, got {_given(value)}")
    names = tuple(value)
    bad = next((x for x in names if not isinstance(x, str)), None)
    if bad is not None:
        raise ArgumentError(f"{what} must hold names (strings), got {_given(bad)}")
    return names


def check_progress(value: Any, what: str) -> Any:
    """``value`` when it is a function of one message (a progress callback) or None, else
    :class:`ArgumentError` naming ``what``."""
    if value is not None and not callable(value):
        raise ArgumentError(f"{what} must be a function of one message, or None, got {_given(value)}")
    return value


# One rule for every text file dansched reads (instances in JSON or CSV, hardware TOML, plan
# files, reports): UTF-8, and a byte-order mark at its start, as some editors write, ignored
TEXT_ENCODING = "utf-8-sig"


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict, refusing a key given twice (the last would win)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out


def read_json(text: str, **options: Any) -> Any:
    """``json.loads(text)``, with every object's keys given once: a key given twice raises
    :class:`~dansched.errors.DuplicateKeyError` naming it (the reader names the file),
    where ``json`` would keep the last value without a word (a duplicated ``"Nodes"``
    list would drop nodes)."""
    return json.loads(text, object_pairs_hook=_unique_keys, **options)


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


PROBLEM = Range(1, 3, integer=True)  # the three contest problems

# CP-SAT's random_seed is an int32 (OR-Tools refuses 2**31 with a TypeError) and the
# makespan search's numpy generator refuses a negative seed: both take 0 .. 2**31 - 1
SEED = Range(0, 2**31 - 1, integer=True)
# generate's seed only names a random.Random stream; 64 bits, like every integer of an instance
GENERATE_SEED = Range(-(2**63), INT64_MAX, integer=True)

# Wall-clock safety nets (the deterministic budgets bind first). 10^6 s, 11.6 days, is more
# than any run needs and stays below threading.TIMEOUT_MAX on every platform (Windows:
# 4,294,967 s), so every timed wait takes it; OR-Tools and HiGHS take any finite double, and
# the window counts derived from it (10 per second) stay small integers
TIME_LIMIT = Range(0, 10**6, unit="seconds")
# The seconds fields of the parameter dataclasses: the safety nets the presets derive reach ten
# times --time-limit (the polish's wall clock); they are compared with the clock, never waited on
SECONDS = Range(0, 10 * 10**6, unit="seconds")

# The clock of latencies, traces and pages: 1 MHz to 1 THz, three orders of magnitude either
# side of an NPU's clock. At 1 MHz a makespan of 2**60 cycles (the horizon of docs/rules.md,
# Supported ranges) is 1.2e21 us, still a finite JSON number
FREQ_GHZ = Range(0.001, 1000, unit="GHz")

# Percent of extra traffic problem 3 may add, read exactly (dansched.budget). 10**6 percent
# lets a plan carry 10,000 times the problem-2 plan's traffic, past any use; a larger slack
# only grows the report's figure (1e300 percent is a 301-digit integer there, which the page's
# JavaScript numbers cannot hold, so `view` refused such a plan after the solve)
TRAFFIC_SLACK = Range(0, 10**6, unit="percent")

# --exact-window W: positions per CP-SAT window in Stage 3 (0: off). A window's model has
# pairwise ordering constraints, O(W^2): on a 7,256-node random graph a solve with W = 1,024
# peaked at 350 MB, with W = 4,096 at 2.1 GB (both modes alike); windows are 8 to 64 in use
EXACT_WINDOW = Range(0, 1024, integer=True)

# Worker processes: each holds the solver stack (OR-Tools, HiGHS, numpy: about 125 MB before its
# first cell), so 64 local workers are 8 GB before any work; a pool is never larger than its jobs
JOBS = Range(1, 64, integer=True)
DASK_WORKERS = Range(1, 64, integer=True)

# generate --scale: the family's size knob; the node count it gives is bounded per family
# (dansched.generate.MAX_GENERATED_NODES), this is only the integer's own range
SCALE = Range(1, INT64_MAX, integer=True)

# Waits on a Dask scheduler: the TCP connect and the scheduler's handshake. An hour is beyond
# any reachable scheduler; a wait must end so that a silent peer cannot hang a sweep
NETWORK_TIMEOUT = Range(0, 3600, low_open=True, unit="seconds")
