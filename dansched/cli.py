"""The ``dansched`` command line: each command parses its arguments, makes one library
call and prints the result (the reference, generated from this app: docs/cli.md).

Results go to stdout (``--json``: one JSON object); progress, warnings and errors to
stderr. Exit codes everywhere: 0 success / valid, 1 a plan is invalid or no valid plan
exists, a solve ran out of host memory (RAM), or a folder could not be written after
its checks passed (no room left: the folder keeps its earlier plan), 2 bad input or usage (one line on
stderr, no traceback; a graph that does not fit its scratchpad tiers is bad input), 130
and 143 interrupted by SIGINT and SIGTERM (one line, ``dansched: interrupted (nothing
written)`` or ``(kept: DIR)``; the first SIGINT during a solve stops it with its best plan,
written, then 130 too: :mod:`dansched.interrupt`, *Stopping early*; ``solve --time-limit``
stops it so, exit 0). Every line printed from input (names, paths, messages
quoting files) goes through :func:`dansched.report.text.printable`.

SIGINT and SIGTERM are the command line's from the first line of this module, when it is
the program (the ``dansched`` script, ``python -m dansched.cli``), to the last: the
policy of :mod:`dansched.interrupt`.
"""

from __future__ import annotations

import os
import sys

from . import interrupt

# the program's first lines: while the modules below load, a signal ends it at once with the line
if __name__ == "__main__" or os.path.basename(sys.argv[0]) == "dansched":
    interrupt.install_early()

import functools
import inspect
import json
import signal
import threading
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.core

from .checks import (
    DASK_WORKERS,
    EXACT_WINDOW,
    FREQ_GHZ,
    GENERATE_SEED,
    JOBS,
    NETWORK_TIMEOUT,
    PROBLEM,
    SCALE,
    SEED,
    TIME_LIMIT,
    TRAFFIC_SLACK,
    Range,
)
from .errors import (
    HardwareError,
    InputError,
    InstanceError,
    Interrupted,
    OutOfMemory,
    PlanFormatError,
    PlanInvalidError,
    TraceError,
    ViewError,
    WriteFailed,
)
from .generate import MAX_GENERATED_NODES
from .hardware import Hardware, load_hardware
from .instance import Instance, load_instance
from .report.text import printable

if TYPE_CHECKING:
    from .budget import TrafficBudget
    from .interrupt import Stop
    from .report.progress import Reporter
    from .summary import SolveSummary
from .stages.dlr.victim import VICTIMS


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


app = typer.Typer(
    cls=Group,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Schedule operator-level DAGs onto one NPU core: MPAS -> DLR -> CPE, with a shared evaluator.",
)

DEFAULT_OUT = Path("dansched-out")  # solve's folder when --out is not given
HEARTBEAT_ENV = "DANSCHED_HEARTBEAT"  # seconds between progress lines when stderr is not a terminal
BAD_INPUT = (InstanceError, HardwareError, PlanFormatError, InputError, TraceError, ViewError)


def _version(value: bool) -> None:
    if value:
        from . import __version__

        typer.echo(f"dansched {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Schedule operator-level DAGs onto one NPU core: MPAS -> DLR -> CPE, with a shared evaluator."""
    if ctx.invoked_subcommand is None:  # `dansched` alone: the help, as help (stdout, exit 0)
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


class Failure(Exception):
    """No valid plan, or an invalid one: one line on stderr (``dansched: <message>``), exit 1
    (as is a solve that runs out of host memory, :class:`~dansched.errors.OutOfMemory`)."""


_pending_warnings: list[str] = []  # printed when the command ends, or folded into its error line


def _loaded(instance: Path, hw: Hardware) -> Instance:
    """The instance on ``hw``; its warnings (e.g. Cycles costed at 1) are printed when the
    command ends, or folded into its one error line."""
    inst = load_instance(instance, hw)
    _pending_warnings.extend(f"{inst.name}: {w}" for w in inst.warnings)
    return inst


def load_inputs(instance: Path, hw_path: Path | None) -> Instance:
    """The instance on the default hardware model, or the one ``--hw`` gives."""
    return _loaded(instance, load_hardware(hw_path))


def load_folder_inputs(instance: Path, folder: Path, hw_path: Path | None) -> Instance:
    """The instance on the hardware the plan folder's report records (``--hw`` is checked
    against it; see :func:`dansched.judge.folder_hardware`)."""
    return folder_inputs(instance, folder, hw_path)[0]


def folder_inputs(instance: Path, folder: Path, hw_path: Path | None) -> tuple[Instance, str]:
    """:func:`load_folder_inputs` and the line saying which hardware that is and where it
    came from (:func:`hardware_line`: audit, trace and view print it)."""
    from .instance import instance_name
    from .judge import folder_hardware

    try:
        found = folder_hardware(folder, instance_name(instance), hw_path)
    except PlanFormatError:  # no plan of the case there: a bad instance is said first
        load_instance(instance, load_hardware(hw_path))
        raise
    if found.warning is not None:
        _pending_warnings.append(found.warning)
    return _loaded(instance, found.hardware), hardware_line(found.hardware, found.origin)


def hardware_line(hw: Hardware, origin: str) -> str:
    """``hardware from ORIGIN: TIER CAP, ...``: where the capacities a plan was judged on
    came from (the default model, a --hw file, the plan folder's report), then each tier's."""
    return f"hardware from {origin}: {hw.capacity_text}"


def _echo(line: str, err: bool = False) -> None:
    """One line from input-derived text, escaped (:func:`printable`); on stdout wrapped
    between words at ``$COLUMNS`` (80 on a pipe; :func:`dansched.report.text.wrapped`)."""
    if err:
        typer.echo(printable(line), err=True)
        return
    from .report.text import wrapped

    for part in wrapped(printable(line)):
        typer.echo(part)


def _in(accepted: Range) -> Any:
    """The callback that checks an option against its range (:mod:`dansched.checks`) as it
    is parsed: one line naming the option and the range, exit 2."""

    def check(param: typer.CallbackParam, value: Any) -> Any:
        return accepted.check(value, param.opts[0] if param.opts else str(param.name), optional=True)

    return check


def _ranged(flag: str, accepted: Range, help: str) -> Any:
    """A numeric ``typer.Option`` checked against ``accepted``, its range stated in the help."""
    return typer.Option(flag, callback=_in(accepted), help=f"{help.rstrip('.')}. Accepts {accepted.text}.")


def _progress(quiet: bool) -> AbstractContextManager[Reporter]:
    """The progress reporter of a long command (live line on a terminal, else a heartbeat
    line every ``$DANSCHED_HEARTBEAT`` seconds, default 5; nothing with --quiet)."""
    from .params import ProgressParams
    from .report.progress import progress_reporter

    value = os.environ.get(HEARTBEAT_ENV)
    try:
        params = ProgressParams(heartbeat_seconds=float(value)) if value else ProgressParams()
    except ValueError:
        raise InputError(f"{HEARTBEAT_ENV} must be a positive number of seconds, got {value!r}") from None
    return progress_reporter(quiet, params)


def _latency(makespan: int | None, freq_ghz: float) -> None:
    """The estimated latency line: a result, on stdout."""
    if makespan is not None:
        from .report.stats import estimated_latency_line

        typer.echo(estimated_latency_line(makespan, freq_ghz))


class Variant(str, Enum):
    """Stage-1 variants (:data:`dansched.stages.mpas.stage.VARIANTS`; tests/test_cli_options.py checks they agree)."""

    mpas = "mpas"
    mpas_greedy = "mpas-greedy"
    mpas_paper = "mpas-paper"


# Stage-2 victim rules: the registry's choices (:data:`dansched.stages.dlr.victim.VICTIMS`)
Victim = Enum("Victim", {name.replace("-", "_"): name for name in VICTIMS}, type=str)  # type: ignore[misc]
DEFAULT_VICTIM = Victim("cost")


class Effort(str, Enum):
    """``--effort`` (:data:`dansched.params.EFFORTS`)."""

    fast = "fast"
    default = "default"
    max = "max"


class WindowMode(str, Enum):
    """``--exact-window-mode`` (:data:`dansched.pipeline.WINDOW_MODES`)."""

    fixed = "fixed"
    memory = "memory"


class Family(str, Enum):
    """Synthetic families (:data:`dansched.generate.FAMILIES`)."""

    matmul = "matmul"
    fa = "fa"
    conv = "conv"
    random = "random"
    chain = "chain"
    ladder = "ladder"


InstanceArg = Annotated[Path, typer.Argument(metavar="INSTANCE", help="Instance: <case>.json or <case>_Nodes.csv")]
HwOption = Annotated[
    Path | None,
    typer.Option("--hw", help="TOML file whose keys replace the default hardware model's (new tiers: [new_tiers])."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")]
QuietOption = Annotated[bool, typer.Option("--quiet", help="No progress line (the result is still printed).")]
BoundSeconds = Annotated[float, _ranged("--time-limit", TIME_LIMIT, "Budget in seconds for CP-SAT bounds.")]
SeedOption = Annotated[int, _ranged("--seed", SEED, "Seed for CP-SAT.")]
FreqOption = Annotated[float, _ranged("--freq-ghz", FREQ_GHZ, "Clock for the estimated latency line.")]
SlackOption = Annotated[
    float, _ranged("--traffic-slack", TRAFFIC_SLACK, "Percent more traffic Stage 3 may trade for makespan.")
]
PlanFolder = Annotated[
    Path, typer.Option("--plan", help="Folder holding <case>_schedule.txt (and _memory.txt, _spill.txt, _report.json).")
]


def _with_warnings(line: str) -> str:
    """``line`` with the pending warnings folded in (so an error stays one line)."""
    if not _pending_warnings:
        return line
    folded = "; ".join(_pending_warnings)
    _pending_warnings.clear()
    return f"{line} (warning: {folded})"


def _flush_warnings() -> None:
    for w in _pending_warnings:
        _echo(f"dansched: warning: {w}", err=True)
    _pending_warnings.clear()


@app.command()
def evaluate(
    instance: InstanceArg,
    plan_dir: Annotated[
        Path | None,
        typer.Option("--plan", help="Folder holding <case>_schedule.txt (and _memory.txt, _spill.txt): its plan."),
    ] = None,
    schedule: Annotated[
        Path | None, typer.Option("--schedule", help="<case>_schedule.txt: one node id per line")
    ] = None,
    memory: Annotated[Path | None, typer.Option("--memory", help="<case>_memory.txt: BufId:Offset per line")] = None,
    spill: Annotated[Path | None, typer.Option("--spill", help="<case>_spill.txt: BufId:NewOffset per line")] = None,
    hw: HwOption = None,
    as_json: JsonOption = False,
    freq_ghz: FreqOption = 1.0,
) -> None:
    """Judge a plan: a plan folder (--plan), a problem-1 order (--schedule alone) or a full plan for problems 2 and 3 (--memory, --spill).

    Prints the verdict first: an invalid plan's violations, then the figures its files still define, marked "(invalid plan)"; a plan whose order breaks a dependency, or whose schedule is not a permutation, has no timing, so no makespan and no latency (null in --json). Exit status 0 valid, 1 invalid. Files a solve wrote and someone then edited are judged as they are, with one note on stderr (--json: differs_from_report)."""
    from .instance import instance_name
    from .judge import evaluate_files, evaluate_folder

    if plan_dir is not None and (schedule, memory, spill) != (None, None, None):
        raise InputError("give --plan DIR or the files (--schedule, --memory, --spill), not both")
    with _progress(False) as say:
        say("evaluate: reading the instance and the plan, then judging it")
        if plan_dir is not None:
            inst = load_folder_inputs(instance, plan_dir, hw)
            verdict = evaluate_folder(inst, plan_dir)
        elif schedule is not None:
            in_folder = schedule.name == f"{instance_name(instance)}_schedule.txt"  # a solve's folder, maybe
            inst = load_folder_inputs(instance, schedule.parent, hw) if in_folder else load_inputs(instance, hw)
            verdict = evaluate_files(inst, schedule, memory, spill)
        else:
            raise InputError("give the plan: --plan DIR, or --schedule FILE (with --memory, --spill for a full plan)")
    if as_json:
        typer.echo(json.dumps(verdict.to_dict(), indent=2))
    else:
        from .report.tables import print_evaluation

        if verdict.differs is not None:  # the files are judged as they are: one line says so
            _echo(f"dansched: note: {verdict.differs}", err=True)
        ev = verdict.evaluation
        print_evaluation(inst, ev, verdict.notes, violations=verdict.other_case is None)
        if ev.makespan is not None:  # a plan without a timing has no latency
            from .report.stats import estimated_latency_line

            typer.echo(f"{estimated_latency_line(ev.makespan, freq_ghz)} {ev.figures_label}".rstrip())
    raise typer.Exit(0 if verdict.valid else 1)


def with_output_flags(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with one ``--FLAG`` option per optional output of the registry
    (:func:`dansched.outputs.optional_outputs`: ``--trace``, ``--html``, ...), passed to it
    as ``outputs``, the kinds asked for. A new output's flag needs no code here."""
    from .outputs import optional_outputs

    flags = {f"output_{o.kind}": o for o in optional_outputs()}
    signature = inspect.signature(command, eval_str=True)
    params = [p for name, p in signature.parameters.items() if name != "outputs"]
    params += [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=False,
            annotation=Annotated[bool, typer.Option(str(o.flag), help=o.help)],
        )
        for name, o in flags.items()
    ]

    @functools.wraps(command)
    def wrapped(*args: Any, **kwargs: Any) -> None:
        asked = tuple(o.kind for name, o in flags.items() if kwargs.pop(name, False))
        command(*args, outputs=asked, **kwargs)

    wrapped.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    wrapped.__annotations__ = {p.name: p.annotation for p in params} | {"return": None}
    return wrapped


def _watch_work(say: Reporter, nodes: int, effort: str) -> Callable[[str], None]:
    """``say``, checking at each step the deterministic work done so far
    (:func:`dansched.simulate.work.slow_note`): once past the rule, one warning line on
    stderr (docs/guide.md, *Slow runs*), at most once a run."""
    from .simulate import work

    start = work.units()
    warned: list[bool] = []

    def watched(message: str) -> None:
        say(message)
        note = None if warned else work.slow_note(work.units() - start, nodes, effort)
        if note is not None:
            warned.append(True)
            _echo(f"dansched: warning: {note} (docs/guide.md)", err=True)

    return watched


def figure_lines(inst: Instance, summary: SolveSummary, seconds: float) -> list[str]:
    """What ``solve`` prints of its plan: the problem's figures and the time; for a plan
    with a layout, its physical peak beside the capacity of the tiers it counts, and
    ``max_v_stay`` (the logical peak, problem 1's metric) labelled as such."""
    tiers = "+".join(inst.hw.peak_tiers)
    figures = summary.figures
    if "makespan" not in figures and "extra_traffic" not in figures:  # problem 1: the order's peak
        return [f"{inst.name}: max_v_stay {figures['max_v_stay']:,} (logical {tiers}) ({seconds:.1f} s)"]
    shown = ", ".join(f"{k} {figures[k]:,}" for k in ("makespan", "extra_traffic", "spill_count") if k in figures)
    capacity = sum(inst.hw.capacity[t] for t in inst.hw.peak_tiers)
    lines = [f"{inst.name}: {shown} ({seconds:.1f} s)"]
    if "physical_peak" in figures:
        lines.append(f"physical peak {figures['physical_peak']:,} of capacity {capacity:,} ({tiers})")
    lines.append(f"max_v_stay {figures['max_v_stay']:,} (logical {tiers}: problem 1's metric, not a capacity check)")
    return lines


def wrote_line(out: Path, files: list[str]) -> str:
    """``wrote N file(s) in OUT: name, name, ...`` (the names of the files in ``out``;
    any other file by its path)."""
    names = [Path(f).name if Path(f).parent == out else f for f in files]
    return f"wrote {len(files)} file(s) in {out}: " + ", ".join(names)


def budget_line(budget: TrafficBudget) -> str:
    """``traffic budget A: the problem-2 plan's traffic B + P% slack`` (problem 3)."""
    return (
        f"traffic budget {budget.allowance:,}: the problem-2 plan's traffic {budget.base:,} "
        f"+ {budget.to_dict()['slack_percent']}% slack (--traffic-slack)"
    )


@app.command()
@with_output_flags
def solve(
    instance: InstanceArg,
    problem: Annotated[
        int,
        _ranged("--problem", PROBLEM, "1: order only (peak); 2: + layout and spills (traffic); 3: + timing (makespan)"),
    ] = 3,
    out: Annotated[
        Path,
        typer.Option(
            "--out", help="Folder for <case>_schedule.txt, _memory.txt, _spill.txt, _report.json (and the trace, page)."
        ),
    ] = DEFAULT_OUT,
    hw: HwOption = None,
    exact_window: Annotated[
        int, _ranged("--exact-window", EXACT_WINDOW, "Width W of the CP-SAT timing windows in Stage 3; 0: off")
    ] = 0,
    exact_window_mode: Annotated[
        WindowMode,
        typer.Option(
            "--exact-window-mode", help="fixed: memory events keep their order; memory: they may move too (problem 3)."
        ),
    ] = WindowMode.fixed,
    time_limit: Annotated[
        float | None,
        _ranged(
            "--time-limit",
            TIME_LIMIT,
            "Stop the whole solve after S seconds of wall clock with the best plan found so far (its report says "
            "where it cut; another run may then differ). Default: no limit, the deterministic budgets alone decide "
            "(the CP-SAT parts keep a 60 s safety net)",
        ),
    ] = None,
    seed: Annotated[int, _ranged("--seed", SEED, "Seed for CP-SAT (results are deterministic for a given seed).")] = 0,
    traffic_slack: SlackOption = 0.0,
    frontier: Annotated[
        bool,
        typer.Option(
            "--frontier",
            help="Problem 3: also plan the traffic-makespan frontier and write each of its plans as a plan "
            "folder (OUT/<case>_frontier/traffic-<T>); the plan of OUT is the fastest within --traffic-slack.",
        ),
    ] = False,
    variant: Annotated[
        Variant,
        typer.Option(
            "--variant",
            help="Stage-1 variant: mpas, mpas-greedy (no local search) or mpas-paper (literal Algorithm 1).",
        ),
    ] = Variant.mpas,
    victim: Annotated[
        Victim, typer.Option("--victim", help="Stage-2 victim rule: cost (Eqs. 27-31) or lru.")
    ] = DEFAULT_VICTIM,
    freq_ghz: Annotated[
        float, _ranged("--freq-ghz", FREQ_GHZ, "Clock for the estimated latency, the trace and the page.")
    ] = 1.0,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object (figures and files written) instead of lines.")
    ] = False,
    quiet: QuietOption = False,
    effort: Annotated[
        Effort,
        typer.Option(
            "--effort",
            help="How much work: fast (MPAS, DLR, CPE once), default, or max (never slower than default; "
            "default is not promised faster than fast: docs/guide.md).",
        ),
    ] = Effort.default,
    outputs: tuple[str, ...] = (),
) -> None:
    """Plan the instance: MPAS (problem 1), + DLR (problem 2), + CPE (problem 3, the default).
    Writes the plan folder (default ./dansched-out) and prints the figures and every file written."""
    from .instance import instance_name
    from .outputs import check_outputs, chosen
    from .pipeline import effort_options
    from .pipeline.options import OptionFields
    from .solution import check_destinations, frontier_folder
    from .solution import solve as run_solve

    if frontier and problem != 3:
        raise InputError(
            f"--frontier plans problem 3's traffic-makespan frontier; it does not apply to --problem {problem}"
        )
    # every output before the instance is even read: the folder, each file, the frontier's folders
    check_outputs(chosen(outputs), problem, freq_ghz)
    check_destinations(out, instance_name(instance), outputs, frontier and problem == 3)
    inst = load_inputs(instance, hw)
    fields: OptionFields = {
        "problem": problem,
        "variant": variant.value,
        "victim": victim.value,
        "exact_window": exact_window,
        "seed": seed,
        "traffic_slack": traffic_slack,
        "frontier": frontier,
    }
    if time_limit is not None:  # opt-in: the whole solve's wall clock, and the CP-SAT parts' safety net
        fields |= {"time_limit": time_limit, "stop_after": time_limit}
    opts = effort_options(effort.value, exact_window_mode=exact_window_mode.value, **fields)
    with _progress(quiet) as say:
        try:
            watched = _watch_work(say, inst.n, effort.value)
            solution = run_solve(inst, opts, watched, out=out, outputs=outputs, freq_ghz=freq_ghz)
        except PlanInvalidError as exc:
            raise Failure(f"{inst.name}: {exc}") from None
    summary = solution.summary()
    if as_json:
        typer.echo(json.dumps(summary.to_dict()))
        _end_stopped(solution.stopped)
        return
    for line in figure_lines(inst, summary, say.elapsed):
        _echo(line)
    if solution.stopped is not None:
        _echo(stopped_line(solution.stopped))
    _latency(summary.makespan, freq_ghz)
    if summary.traffic_budget is not None:
        _echo(budget_line(summary.traffic_budget))
    files = list(summary.files)
    if summary.frontier:
        from .report.tables import print_frontier

        print_frontier([r.to_dict() for r in summary.frontier], list(summary.frontier_folders))
        _echo(summary.frontier_note or "")
        base = str(frontier_folder(out, inst.name))
        files = [f for f in files if not f.startswith(base)]
        same = [i for i, r in enumerate(summary.frontier, start=1) if r.point.plan == solution.plan]
        ours = f"; {out} holds row {same[0]}'s plan" if same else ""
        _echo(
            f"wrote the frontier's {len(summary.frontier_folders)} plan folder(s) under {base}: each a whole "
            f"plan folder to view, evaluate or submit{ours}"
        )
    _echo(wrote_line(out, files))
    if "view" in outputs:
        from .plan_folder import folder_paths

        _echo(f"open {folder_paths(out, inst.name)['view']} in a browser to explore the plan")
    _end_stopped(solution.stopped)


def stopped_line(stop: Stop) -> str:
    """``stopped early by Ctrl-C after 12.3 s, in "STEP": ...``: what cut a solve short."""
    by = "Ctrl-C" if stop.by == interrupt.CTRL_C else "its --time-limit" if stop.by == interrupt.TIME_LIMIT else stop.by
    return (
        f"stopped early by {by} after {stop.seconds:.1f} s, {f'in {stop.step!r}' if stop.step else 'at its start'}: the plan is the "
        "best valid one found by then, and another run may stop elsewhere (docs/guide.md, Stopping early)"
    )


def _end_stopped(stop: Stop | None) -> None:
    """A solve that Ctrl-C stopped early ends with the interruption line and status 130, its
    plan written (the line names it as kept); a time limit's stop ends as a solve does."""
    if stop is not None and stop.by == interrupt.CTRL_C:
        if interrupt.claim_line():
            _echo(interrupt.line(), err=True)
        raise typer.Exit(interrupt.exit_status(signal.SIGINT))


@app.command()
def bound(
    instance: InstanceArg,
    hw: HwOption = None,
    time_limit: BoundSeconds = 30.0,
    seed: SeedOption = 0,
    as_json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Lower bounds on maxV_stay, extra traffic and makespan, with how each was obtained.

    The fixed-order traffic bound is for the order of dansched's own plan, and says so."""
    from .audit import bound as run_bound

    inst = load_inputs(instance, hw)
    with _progress(quiet) as say:
        try:
            result = run_bound(inst, time_limit, seed, progress=say)
        except PlanInvalidError as exc:
            raise Failure(f"{inst.name}: {exc}") from None
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
        return
    from .report.tables import print_bounds

    print_bounds(f"{inst.name}: lower bounds", result.to_dict())


@app.command()
def audit(
    instance: InstanceArg,
    plan_dir: PlanFolder,
    hw: HwOption = None,
    time_limit: BoundSeconds = 30.0,
    seed: SeedOption = 0,
    as_json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """A plan's figures beside their lower bounds, the gaps, and the stage that loses the most."""
    from .audit import audit_folder

    inst, used = folder_inputs(instance, plan_dir, hw)
    with _progress(quiet) as say:
        result = audit_folder(inst, plan_dir, time_limit, seed, progress=say)
    if as_json:
        typer.echo(json.dumps(result.to_dict() | {"hardware": used}, indent=2))
        return
    from .report.tables import print_bounds

    _echo(used)
    print_bounds(f"{inst.name}: audit of {plan_dir}", result.to_dict()["bounds"])
    typer.echo(f"stage furthest from its bound: {result.worst_stage or 'none (no informative bound leaves a gap)'}")


@app.command()
def generate(
    family: Annotated[Family, typer.Argument(metavar="FAMILY", help="matmul, fa, conv, random, chain or ladder")],
    out: Annotated[
        Path, typer.Option("--out", help="Instance file to write (.json, or <case>_Nodes.csv for the CSV pair).")
    ],
    scale: Annotated[
        int, _ranged("--scale", SCALE, f"Size knob of the family (its graph: at most {MAX_GENERATED_NODES:,} nodes)")
    ] = 1,
    seed: Annotated[int, _ranged("--seed", GENERATE_SEED, "Random seed.")] = 0,
) -> None:
    """Write a synthetic instance of a family in the contest format."""
    from .generate import generate_file

    inst = generate_file(family.value, scale, seed, out)
    _echo(f"{out}: {inst.n} nodes, {inst.num_edges} edges, {inst.num_buffers} buffers")


@app.command()
def trace(
    instance: InstanceArg,
    plan_dir: Annotated[
        Path, typer.Option("--plan", help="Folder holding <case>_schedule.txt, _memory.txt and _spill.txt.")
    ],
    out: Annotated[
        Path | None, typer.Option("--out", help="Trace JSON to write (default: <plan>/<case>_trace.json).")
    ] = None,
    freq_ghz: Annotated[
        float, _ranged("--freq-ghz", FREQ_GHZ, "Clock for ts/dur in microseconds (1 GHz: 1 cycle = 1 ns).")
    ] = 1.0,
    png: Annotated[
        Path | None, typer.Option("--png", help="Also draw a Gantt chart of the pipes and per-tier layout heatmaps.")
    ] = None,
    compare: Annotated[
        Path | None,
        typer.Option(
            "--compare", help="Another plan folder (e.g. before CPE), drawn left of --plan in the --png Gantt chart."
        ),
    ] = None,
    hw: HwOption = None,
) -> None:
    """Perfetto trace (Trace Event Format JSON + taskStatistics) of a plan with a layout; optionally a picture."""
    from .report.folder import trace_folder

    with _progress(False) as say:
        say(f"trace: judging the plan in {plan_dir}, then writing its trace")
        inst, used = folder_inputs(instance, plan_dir, hw)
        result = trace_folder(inst, plan_dir, out, freq_ghz, png, compare)
    _echo(used)
    _latency(int(result.evaluation.makespan or 0), freq_ghz)
    for line in result.lines:
        _echo(line)
    _echo(f"trace -> {result.trace}" + (f", picture -> {result.png}" if result.png is not None else ""))


@app.command()
def view(
    instance: InstanceArg,
    plan_dir: PlanFolder,
    out: Annotated[Path | None, typer.Option("--out", help="Page to write (default: <plan>/<case>_view.html).")] = None,
    freq_ghz: Annotated[float, _ranged("--freq-ghz", FREQ_GHZ, "Clock for the times in microseconds.")] = 1.0,
    hw: HwOption = None,
) -> None:
    """One self-contained HTML page to explore a plan: engine timeline, memory maps, summary."""
    from .report.folder import view_folder

    with _progress(False) as say:
        say(f"view: judging the plan in {plan_dir}, then building its page")
        inst, used = folder_inputs(instance, plan_dir, hw)
        page = view_folder(inst, plan_dir, out, freq_ghz)
    _echo(used)
    _echo(f"view -> {page}")


@app.command()
def info(
    instance: InstanceArg,
    png: Annotated[
        Path | None, typer.Option("--png", help="Also draw counts, op/pipe mix, ALLOC-size ECDF and lifetimes.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
    hw: HwOption = None,
) -> None:
    """Instance statistics: node/edge counts, op and pipe mix, ALLOC/FREE counts, ALLOC sizes, buffer lifetimes."""
    from .plan import check_output_file
    from .report.info import instance_info, print_info

    if png is not None:
        check_output_file(png)
    inst = load_inputs(instance, hw)
    facts = instance_info(inst)
    if png is not None:
        from .report.plots import info_png

        info_png(png, facts)
    if as_json:
        typer.echo(json.dumps(facts.to_dict(), indent=2))
    else:
        print_info(facts)


@app.command()
def warm() -> None:
    """Compile the kernels into numba's on-disk cache, so that no later run pays the compile time.

    Once per install (the install step runs it): the evaluator, the simulator, the list scheduler, the memory skeleton, the wave search's ranking and the min-reload victim rule's look-ahead."""
    from .kernels.warm import warm as compile_kernels

    seconds = compile_kernels()
    parts = ", ".join(f"{name} {s:.1f} s" for name, s in seconds.items())
    _echo(f"kernels ready in {sum(seconds.values()):.1f} s ({parts})")


@app.command()
def bench(
    instances: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="INSTANCES",
            help="Instances (default: the official cases in ../shared/instances/official when present, else instances/*.json).",
        ),
    ] = None,
    methods: Annotated[
        str | None,
        typer.Option(
            "--methods",
            help="Comma-separated methods (default: all): base, hmcos, magis, cosma, gbs, lru, mpas-paper, dan-no-cpe, dan-memory-windows, dan-no-time-driven, dan-no-other-rules, dan.",
        ),
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for bench.json, bench.csv and bench.md.")] = Path("bench"),
    jobs: Annotated[int, _ranged("--jobs", JOBS, "Parallel worker processes.")] = 1,
    time_limit: Annotated[
        float,
        _ranged(
            "--time-limit", TIME_LIMIT, "Budget in seconds for each method's optional search (CP-SAT, beam rounds)."
        ),
    ] = 60.0,
    hw: HwOption = None,
    quiet: QuietOption = False,
) -> None:
    """Run baselines, ablations and DAN over instances; judge every plan; write tables (paper Tables 2, 4, 5, Figure 11)."""
    from .bench import bench as run_bench

    chosen = None if methods is None else [m.strip() for m in methods.split(",") if m.strip()]
    with _progress(quiet) as say:
        rows, files = run_bench(instances, chosen, out, jobs, time_limit, hw, progress=say)
    bad = [r for r in rows if not r["valid"]]
    _echo(f"bench: {len(rows)} rows ({len(bad)} invalid) -> {', '.join(str(f) for f in files)}")
    for r in bad:
        _echo(f"dansched: {r['instance']} / {r['method']}: {r['error']}", err=True)
    raise typer.Exit(1 if bad else 0)


@app.command()
def sweep(
    instances: Annotated[
        list[str],
        typer.Argument(
            metavar="INSTANCES", help="Instances: contest .json or <case>_Nodes.csv files, folders, or glob patterns."
        ),
    ],
    sets: Annotated[
        list[str] | None, typer.Option("--set", help="TIER=V1,V2,...: capacities to sweep (repeat for a grid).")
    ] = None,
    hw: Annotated[
        Path | None, typer.Option("--hw", help="Base hardware: TOML file whose keys replace the default model's.")
    ] = None,
    problem: Annotated[int, _ranged("--problem", PROBLEM, "Problem each cell solves.")] = 3,
    traffic_slack: SlackOption = 0.0,
    out: Annotated[
        Path, typer.Option("--out", help="Folder for sweep.jsonl, sweep.csv, sweep.md and the PNGs.")
    ] = Path("sweep"),
    jobs: Annotated[int | None, _ranged("--jobs", JOBS, "Local worker processes (default: the core count).")] = None,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", help="Submit the cells to a running Dask scheduler (tcp://host:port)."),
    ] = None,
    dask_workers: Annotated[
        int | None, _ranged("--dask-workers", DASK_WORKERS, "Start a local Dask cluster of N workers for the run.")
    ] = None,
    connect_timeout: Annotated[
        float,
        _ranged("--connect-timeout", NETWORK_TIMEOUT, "Seconds to wait for the TCP connection to --scheduler."),
    ] = 10.0,
    handshake_timeout: Annotated[
        float,
        _ranged(
            "--handshake-timeout", NETWORK_TIMEOUT, "Seconds to wait for --scheduler's first answer once connected."
        ),
    ] = 10.0,
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed",
            help="On resume, run again every recorded cell that failed (default: only those that failed for a "
            "reason that may pass next time: out of memory, a system error, a timeout).",
        ),
    ] = False,
    quiet: QuietOption = False,
) -> None:
    """Solve every instance on every point of a grid of tier capacities.

    Resumable (DIR/sweep.jsonl): a rerun skips the recorded cells, except those that failed for a reason that may
    pass next time (--retry-failed: all failed cells)."""
    from .executor import ExecutorError, ExecutorOptions
    from .report.sweep import cell_table
    from .report.tables import print_table
    from .sweep import SweepInputError, lost_line
    from .sweep import sweep as run_sweep

    try:
        executor = ExecutorOptions(
            jobs=jobs,
            scheduler=scheduler,
            dask_workers=dask_workers,
            connect_timeout=connect_timeout,
            handshake_timeout=handshake_timeout,
        )
        with _progress(quiet) as say:
            result = run_sweep(
                instances,
                sets or [],
                hw,
                problem,
                traffic_slack,
                out,
                executor,
                progress=say,
                retry_failed=retry_failed,
            )
    except (SweepInputError, ExecutorError) as exc:
        raise InputError(str(exc)) from None
    print_table(*cell_table(result.rows))
    _echo(result.summary_line(executor.describe()))
    if result.note:
        _echo(f"dansched: warning: {result.note}", err=True)
    for cell, why in result.lost:
        _echo(lost_line(cell, why), err=True)
    raise typer.Exit(1 if result.lost else 0)


for _info in app.registered_commands:  # every command: whole summaries, capitals in usage, words kept whole
    _info.cls = Command


def _interrupted(signum: int, _frame: Any) -> None:
    """SIGINT or SIGTERM while :func:`main` runs without :func:`entry` (in a test's
    process): it unwinds like an exception (temporary files are removed on the way out)
    and, unlike a ``KeyboardInterrupt``, is not turned into a bare status by typer."""
    raise Interrupted(signum)


def _error_line(line: str) -> None:
    typer.echo(printable(_with_warnings(line)), err=True)


# typer checks option values with pydantic, whose message for a failed check starts with this
VALIDATION_PREFIX = "Value error, "


# how alike a mistyped option and a real one must be (difflib's ratio, the dashes aside) to suggest it
CLOSE_OPTION = 0.7


def option_suggestions(typed: str, options: Iterable[str]) -> list[str]:
    """The ``options`` close to ``typed`` (:data:`CLOSE_OPTION`), the closest first (ties
    by name): ``--efort`` -> ``["--effort"]``, not ``--out``.

    >>> option_suggestions("--exact-windw", ["--out", "--exact-window-mode", "--exact-window"])
    ['--exact-window', '--exact-window-mode']
    """
    from difflib import SequenceMatcher

    bare = typed.lstrip("-")
    ranked = sorted((-SequenceMatcher(None, bare, o.lstrip("-")).ratio(), o) for o in set(options))
    return [o for score, o in ranked if -score >= CLOSE_OPTION]


def _command_options(exc: Exception) -> list[str]:
    """The long options of the command a usage error is about (its context's), else the
    ones the parser found close."""
    ctx = getattr(exc, "ctx", None)
    command = getattr(ctx, "command", None)
    params = getattr(command, "params", None) or []
    found = [o for p in params for o in getattr(p, "opts", []) + getattr(p, "secondary_opts", []) if o.startswith("--")]
    return found or list(getattr(exc, "possibilities", None) or [])


def usage_message(exc: Exception) -> str:
    """The one line of a click / typer usage error, without the validation library's
    prefix (``Invalid value for '--effort': 'quick' is not one of ...``); an unknown option
    with the options close to it, the closest first (:func:`option_suggestions`)."""
    typed = getattr(exc, "option_name", None)
    if type(exc).__name__ == "NoSuchOption" and isinstance(typed, str):  # click's, or typer's copy of click
        close = option_suggestions(typed, _command_options(exc) + ["--help"])
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        return f"{getattr(exc, 'message', f'No such option: {typed}')}{hint}"
    return str(exc.format_message()).replace(f": {VALIDATION_PREFIX}", ": ", 1)  # type: ignore[attr-defined]


def _interruption(exc: BaseException) -> int | None:
    """The signal that ended the run, when ``exc`` is its consequence: an
    :class:`~dansched.errors.Interrupted`, a ``KeyboardInterrupt`` (a caller without the
    policy), or anything at all once a signal arrived (a library that turned the
    interruption into its own error: OR-Tools' import fails with ``initialization
    failed``). None: not an interruption."""

    if isinstance(exc, Interrupted):
        return exc.signum
    if isinstance(exc, (KeyboardInterrupt, typer.Abort)):
        return signal.SIGINT
    return interrupt.received()


def main() -> None:
    """Run the app with errors mapped to exit statuses (raises SystemExit; tests call it
    in-process). Every error is one line on stderr, with any warning folded into it; an
    interruption is the one line of :func:`dansched.interrupt.line` and 128 + the signal."""

    _pending_warnings.clear()
    restore = {}  # without entry's policy (a caller's process): the two signals for main's duration
    if not interrupt.owned():
        interrupt.new_run()
        if threading.current_thread() is threading.main_thread():
            restore = {s: signal.signal(s, _interrupted) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        _run_app()
    except BaseException as exc:
        signum = _interruption(exc)
        if signum is None:
            raise
        _pending_warnings.clear()
        if interrupt.claim_line():
            _echo(interrupt.line(), err=True)
        sys.exit(interrupt.exit_status(signum))
    finally:
        for s, handler in restore.items():
            signal.signal(s, handler)


def _run_app() -> None:
    """The app, its errors mapped to exit statuses (raises SystemExit)."""
    try:
        rc = app(standalone_mode=False)
    except WriteFailed as exc:  # the write failed after the checks: an I/O failure, not bad input
        _error_line(f"dansched: {exc}")
        sys.exit(1)
    except BAD_INPUT as exc:
        _error_line(f"dansched: error: {exc}")
        sys.exit(2)
    except (Failure, PlanInvalidError, OutOfMemory) as exc:
        _error_line(f"dansched: {exc}")
        sys.exit(1)
    except MemoryError:  # outside a solve (reading a huge file): no graph to size yet
        _error_line("dansched: out of memory")
        sys.exit(1)
    except typer.Exit as exc:
        _flush_warnings()
        sys.exit(exc.exit_code)
    except OSError as exc:  # an output that cannot be written, outside the atomic writers
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        _error_line(f"dansched: error: {where}{exc.strerror or exc}")
        sys.exit(2)
    except Exception as exc:
        if hasattr(exc, "format_message"):  # click / typer usage errors
            _error_line(f"dansched: error: {usage_message(exc)}")
            sys.exit(2)
        raise
    _flush_warnings()
    sys.exit(rc if isinstance(rc, int) else 0)


def _exit_now(code: int) -> None:
    """End the process with ``code`` at once. From here a signal only sets the status:
    SIGTERM and SIGINT are recorded and blocked, the atexit handlers run and the output
    is flushed; a signal that arrived meanwhile turns the status into 143 (SIGTERM) or
    130 (SIGINT), with the interruption line unless the run printed it already. Skipping
    the interpreter's teardown (half a second with the solvers loaded) is what makes the
    status reliable: during that teardown Python has already put the default handlers
    back, and a SIGTERM then killed the process by signal instead of ending it with 143."""
    import atexit

    late: list[int] = []
    held = {signal.SIGTERM, signal.SIGINT}
    for s in held:
        signal.signal(s, lambda signum, _frame: late.append(signum))
    signal.pthread_sigmask(signal.SIG_BLOCK, held)
    atexit._run_exitfuncs()
    pending = signal.sigpending()
    late += [s for s in (signal.SIGTERM, signal.SIGINT) if s in pending]
    if late and interrupt.received() is None:
        code = interrupt.exit_status(late[0])
        if interrupt.claim_line():
            _echo(interrupt.line(), err=True)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def entry() -> None:
    """The process's entry point (the ``dansched`` script and ``python -m dansched.cli``):
    it owns SIGINT and SIGTERM from its first line (:func:`dansched.interrupt.own`), runs
    :func:`main`, then :func:`_exit_now` with its status."""
    interrupt.own(printable)
    try:
        main()
        code = 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException as exc:  # an interruption that landed outside main's own handling
        signum = _interruption(exc)
        if signum is None:
            raise
        if interrupt.claim_line():
            _echo(interrupt.line(), err=True)
        code = interrupt.exit_status(signum)
    _exit_now(code)


if __name__ == "__main__":
    entry()
