"""What a solve can write into its plan folder, behind one registry.

Each output is one :class:`Output` entry of :data:`OUTPUTS`: its kind (the key of
:meth:`dansched.application.solution.Solution.files` and of the folder's group), the option of
``dansched solve`` that asks for it (none for the files every solve writes), whether it
needs timing (a plan with a layout: problems 2 and 3), the check that refuses it before the
solve, and the builder of its text (the builders of the trace and the page live beside
them in :mod:`dansched.application.report`, which :mod:`dansched.application.report.folder` calls too). Everything
else reads the registry: the options of ``dansched solve`` (:mod:`dansched.cli`), the checks
:func:`dansched.application.solution.solve` runs before the work (:func:`check_outputs`,
:func:`check_targets`), ``Solution.files`` and ``.write``. The file of each kind (its name
after ``<case>``, whether it carries the plan's fingerprint) is the plan folder's, the one
table :data:`dansched.plan_folder.FOLDER_SUFFIXES`. A new output format is one entry here
and its file name there.

The order of :data:`OUTPUTS` is the order the files are renamed into place (the report
last: a group is complete once its report is there, see :mod:`dansched.plan_folder`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..checks import FREQ_GHZ, check_names
from ..errors import InputError, TraceError
from ..hardware import closest_name
from ..instance import Instance
from ..plan import Plan, plan_texts
from ..plan_folder import FOLDER_SUFFIXES, REPORT, check_group_targets, folder_group, plan_fingerprint
from ..simulate import Evaluation
from .report.trace import trace_text
from .report.view import check_view_range, page_text

__all__ = [
    "Output",
    "OutputInput",
    "OUTPUTS",
    "output",
    "optional_outputs",
    "chosen",
    "check_outputs",
    "check_targets",
]


@dataclass(frozen=True)
class OutputInput:
    """What a builder reads: the instance, the plan, its evaluation, the report (with its
    fingerprint; the folder's report, or None, when a folder's plan is drawn again) and
    the clock of times shown in microseconds."""

    instance: Instance
    plan: Plan
    evaluation: Evaluation
    report: Mapping[str, Any] | None = None
    freq_ghz: float = 1.0

    @cached_property
    def texts(self) -> dict[str, str]:
        """The contest files' texts (:func:`dansched.plan.plan_texts`), made once."""
        return plan_texts(self.plan)

    @cached_property
    def fingerprint(self) -> str:
        """The plan's digest (:func:`dansched.plan_folder.plan_fingerprint`)."""
        return str(plan_fingerprint({k: t.encode() for k, t in self.texts.items()})["sha256"])


Builder = Callable[[OutputInput], str | None]  # None: nothing to write for this plan (no layout)


@dataclass(frozen=True)
class Output:
    """One output of a solve (module docstring). ``what`` names it in messages ("a
    trace"); ``flag`` is the option of ``dansched solve`` that asks for it and ``help``
    its help text (``flag`` None: every solve writes it); ``check`` refuses it for an
    instance before the solve."""

    kind: str
    what: str
    build: Builder
    flag: str | None = None
    help: str = ""
    needs_timing: bool = False
    check: Callable[[Instance], None] | None = None

    @property
    def suffix(self) -> str:
        """Its file name after ``<case>`` (:data:`dansched.plan_folder.FOLDER_SUFFIXES`)."""
        return FOLDER_SUFFIXES[self.kind]


def _contest_file(kind: str) -> Builder:
    return lambda given: given.texts.get(kind)


def _trace(given: OutputInput) -> str:
    return trace_text(given.instance, given.plan, given.evaluation, given.fingerprint, given.freq_ghz)


def _page(given: OutputInput) -> str:
    return page_text(given.instance, given.plan, given.evaluation, given.report, given.freq_ghz)


def _report(given: OutputInput) -> str | None:
    return None if given.report is None else json.dumps(given.report, indent=2) + "\n"


OUTPUTS: tuple[Output, ...] = (  # in the folder's rename order (FOLDER_SUFFIXES)
    Output("schedule", "the schedule", _contest_file("schedule")),
    Output("memory", "the memory file", _contest_file("memory")),
    Output("spill", "the spill file", _contest_file("spill")),
    Output(
        "trace",
        "a trace",
        _trace,
        flag="--trace",
        help="Also write <case>_trace.json (Perfetto) for problems 2 and 3.",
        needs_timing=True,
    ),
    Output(
        "view",
        "the page",
        _page,
        flag="--html",
        help="Also write <case>_view.html (dansched view) for problems 2 and 3.",
        needs_timing=True,
        check=check_view_range,
    ),
    Output(REPORT, "the report", _report),
)


def output(kind: str) -> Output:
    """The entry of ``kind``; :class:`~dansched.errors.InputError` naming the known kinds and
    the one meant: the kind a flag of that name asks for (``html``: ``view``, which ``--html``
    writes), else the closest kind.

    >>> output("html")
    Traceback (most recent call last):
    ...
    dansched.errors.InputError: unknown output 'html': did you mean 'view'? (--html writes it; known: schedule, memory, spill, trace, view, report)
    """
    for o in OUTPUTS:
        if o.kind == kind:
            return o
    known = [o.kind for o in OUTPUTS]
    by_flag = {o.flag.lstrip("-"): o for o in OUTPUTS if o.flag is not None}
    if isinstance(kind, str) and kind in by_flag:
        meant = by_flag[kind]
        hint = f": did you mean {meant.kind!r}? ({meant.flag} writes it; known: {', '.join(known)})"
    else:
        close = closest_name(kind, known) if isinstance(kind, str) else None
        hint = f": did you mean {close!r}?" if close else ""
        hint += f" (known: {', '.join(known)})"
    raise InputError(f"unknown output {kind!r}{hint}")


def optional_outputs() -> list[Output]:
    """The outputs a solve writes only when asked (each with its ``flag``)."""
    return [o for o in OUTPUTS if o.flag is not None]


def chosen(extra: Iterable[str] = ()) -> list[Output]:
    """The outputs of a solve asked for ``extra`` (kinds, e.g. ``("trace", "view")``): those
    every solve writes and those named, in registry order."""
    named = {output(k).kind for k in check_names(extra, "outputs")}
    return [o for o in OUTPUTS if o.flag is None or o.kind in named]


def check_outputs(outputs: Iterable[Output], problem: int, freq_ghz: float = 1.0) -> None:
    """The rule of every output that needs timing, written once: it needs a plan with a
    layout (problems 2 and 3) and a clock in range (:data:`dansched.checks.FREQ_GHZ`).
    Raises :class:`~dansched.errors.TraceError` or :class:`~dansched.errors.ArgumentError`
    (bad input, one line)."""
    timed = [o for o in outputs if o.needs_timing]
    if timed and problem == 1:
        o = timed[0]
        raise TraceError(
            f"{o.flag or o.kind} needs timing: solve problem 2 or 3 ({o.what} needs a layout, "
            "which a problem-1 order does not have)"
        )
    if timed:
        FREQ_GHZ.check(freq_ghz, "--freq-ghz")


def check_targets(folder: str | Path, case: str, outputs: Iterable[Output], inst: Instance | None = None) -> None:
    """Before the work: the folder can take these outputs of ``case``
    (:func:`dansched.plan_folder.check_group_targets`) and, given the instance, each
    output's own ``check`` accepts it."""
    outputs = list(outputs)
    check_group_targets(folder, case, folder_group(), [o.kind for o in outputs])
    for o in outputs:
        if inst is not None and o.check is not None:
            o.check(inst)
