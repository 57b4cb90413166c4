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
quoting files) goes through :func:`dansched.application.report.text.printable`.

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

import json
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
import typer.core

from .application.report.lines import budget_line, figure_lines, stopped_line, wrote_line
from .application.report.text import printable
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
)
from .errors import (
    InputError,
    PlanInvalidError,
)
from .generate import MAX_GENERATED_NODES
from .terminal.exits import Failure, end_stopped, exit_now, interruption, raise_interrupted, run_app
from .terminal.help import Command, Group
from .terminal.inputs import folder_inputs, load_folder_inputs, load_inputs
from .terminal.lines import echo, echo_latency, pending_warnings, progress, watch_work
from .terminal.options import (
    DEFAULT_VICTIM,
    BoundSeconds,
    Effort,
    Family,
    FreqOption,
    HwOption,
    InstanceArg,
    JsonOption,
    PlanFolder,
    QuietOption,
    SeedOption,
    SlackOption,
    Variant,
    Victim,
    WindowMode,
    ranged_option,
    with_output_flags,
)

if TYPE_CHECKING:
    pass


app = typer.Typer(
    cls=Group,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Schedule operator-level DAGs onto one NPU core: MPAS -> DLR -> CPE, with a shared evaluator.",
)

DEFAULT_OUT = Path("dansched-out")  # solve's folder when --out is not given


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
    from .application.judge import evaluate_files, evaluate_folder
    from .instance import instance_name

    if plan_dir is not None and (schedule, memory, spill) != (None, None, None):
        raise InputError("give --plan DIR or the files (--schedule, --memory, --spill), not both")
    with progress(False) as say:
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
        from .application.report.tables import print_evaluation

        if verdict.differs is not None:  # the files are judged as they are: one line says so
            echo(f"dansched: note: {verdict.differs}", err=True)
        ev = verdict.evaluation
        print_evaluation(inst, ev, verdict.notes, violations=verdict.other_case is None)
        if ev.makespan is not None:  # a plan without a timing has no latency
            from .application.report.stats import estimated_latency_line

            typer.echo(f"{estimated_latency_line(ev.makespan, freq_ghz)} {ev.figures_label}".rstrip())
    raise typer.Exit(0 if verdict.valid else 1)


@app.command()
@with_output_flags
def solve(
    instance: InstanceArg,
    problem: Annotated[
        int,
        ranged_option(
            "--problem", PROBLEM, "1: order only (peak); 2: + layout and spills (traffic); 3: + timing (makespan)"
        ),
    ] = 3,
    out: Annotated[
        Path,
        typer.Option(
            "--out", help="Folder for <case>_schedule.txt, _memory.txt, _spill.txt, _report.json (and the trace, page)."
        ),
    ] = DEFAULT_OUT,
    hw: HwOption = None,
    exact_window: Annotated[
        int, ranged_option("--exact-window", EXACT_WINDOW, "Width W of the CP-SAT timing windows in Stage 3; 0: off")
    ] = 0,
    exact_window_mode: Annotated[
        WindowMode,
        typer.Option(
            "--exact-window-mode", help="fixed: memory events keep their order; memory: they may move too (problem 3)."
        ),
    ] = WindowMode.fixed,
    time_limit: Annotated[
        float | None,
        ranged_option(
            "--time-limit",
            TIME_LIMIT,
            "Stop the whole solve after S seconds of wall clock with the best plan found so far (its report says "
            "where it cut; another run may then differ). Default: no limit, the deterministic budgets alone decide "
            "(the CP-SAT parts keep a 60 s safety net)",
        ),
    ] = None,
    seed: Annotated[
        int, ranged_option("--seed", SEED, "Seed for CP-SAT (results are deterministic for a given seed).")
    ] = 0,
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
        float, ranged_option("--freq-ghz", FREQ_GHZ, "Clock for the estimated latency, the trace and the page.")
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
    from .application.outputs import check_outputs, chosen
    from .application.solution import check_destinations, frontier_folder
    from .application.solution import solve as run_solve
    from .instance import instance_name
    from .pipeline import effort_options
    from .pipeline.options import OptionFields

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
    with progress(quiet) as say:
        try:
            watched = watch_work(say, inst.n, effort.value)
            solution = run_solve(inst, opts, watched, out=out, outputs=outputs, freq_ghz=freq_ghz)
        except PlanInvalidError as exc:
            raise Failure(f"{inst.name}: {exc}") from None
    summary = solution.summary()
    if as_json:
        typer.echo(json.dumps(summary.to_dict()))
        end_stopped(solution.stopped)
        return
    for line in figure_lines(inst, summary.figures, say.elapsed):
        echo(line)
    if solution.stopped is not None:
        echo(stopped_line(solution.stopped))
    echo_latency(summary.makespan, freq_ghz)
    if summary.traffic_budget is not None:
        echo(budget_line(summary.traffic_budget))
    files = list(summary.files)
    if summary.frontier:
        from .application.report.tables import print_frontier

        print_frontier([r.to_dict() for r in summary.frontier], list(summary.frontier_folders))
        echo(summary.frontier_note or "")
        base = str(frontier_folder(out, inst.name))
        files = [f for f in files if not f.startswith(base)]
        same = [i for i, r in enumerate(summary.frontier, start=1) if r.point.plan == solution.plan]
        ours = f"; {out} holds row {same[0]}'s plan" if same else ""
        echo(
            f"wrote the frontier's {len(summary.frontier_folders)} plan folder(s) under {base}: each a whole "
            f"plan folder to view, evaluate or submit{ours}"
        )
    echo(wrote_line(out, files))
    if "view" in outputs:
        from .plan_folder import folder_paths

        echo(f"open {folder_paths(out, inst.name)['view']} in a browser to explore the plan")
    end_stopped(solution.stopped)


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
    from .application.audit import bound as run_bound

    inst = load_inputs(instance, hw)
    with progress(quiet) as say:
        try:
            result = run_bound(inst, time_limit, seed, progress=say)
        except PlanInvalidError as exc:
            raise Failure(f"{inst.name}: {exc}") from None
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
        return
    from .application.report.tables import print_bounds

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
    from .application.audit import audit_folder

    inst, used = folder_inputs(instance, plan_dir, hw)
    with progress(quiet) as say:
        result = audit_folder(inst, plan_dir, time_limit, seed, progress=say)
    if as_json:
        typer.echo(json.dumps(result.to_dict() | {"hardware": used}, indent=2))
        return
    from .application.report.tables import print_bounds

    echo(used)
    print_bounds(f"{inst.name}: audit of {plan_dir}", result.to_dict()["bounds"])
    typer.echo(f"stage furthest from its bound: {result.worst_stage or 'none (no informative bound leaves a gap)'}")


@app.command()
def generate(
    family: Annotated[Family, typer.Argument(metavar="FAMILY", help="matmul, fa, conv, random, chain or ladder")],
    out: Annotated[
        Path, typer.Option("--out", help="Instance file to write (.json, or <case>_Nodes.csv for the CSV pair).")
    ],
    scale: Annotated[
        int,
        ranged_option("--scale", SCALE, f"Size knob of the family (its graph: at most {MAX_GENERATED_NODES:,} nodes)"),
    ] = 1,
    seed: Annotated[int, ranged_option("--seed", GENERATE_SEED, "Random seed.")] = 0,
) -> None:
    """Write a synthetic instance of a family in the contest format."""
    from .generate import generate_file

    inst = generate_file(family.value, scale, seed, out)
    echo(f"{out}: {inst.n} nodes, {inst.num_edges} edges, {inst.num_buffers} buffers")


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
        float, ranged_option("--freq-ghz", FREQ_GHZ, "Clock for ts/dur in microseconds (1 GHz: 1 cycle = 1 ns).")
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
    from .application.report.folder import trace_folder

    with progress(False) as say:
        say(f"trace: judging the plan in {plan_dir}, then writing its trace")
        inst, used = folder_inputs(instance, plan_dir, hw)
        result = trace_folder(inst, plan_dir, out, freq_ghz, png, compare)
    echo(used)
    echo_latency(int(result.evaluation.makespan or 0), freq_ghz)
    for line in result.lines:
        echo(line)
    echo(f"trace -> {result.trace}" + (f", picture -> {result.png}" if result.png is not None else ""))


@app.command()
def view(
    instance: InstanceArg,
    plan_dir: PlanFolder,
    out: Annotated[Path | None, typer.Option("--out", help="Page to write (default: <plan>/<case>_view.html).")] = None,
    freq_ghz: Annotated[float, ranged_option("--freq-ghz", FREQ_GHZ, "Clock for the times in microseconds.")] = 1.0,
    hw: HwOption = None,
) -> None:
    """One self-contained HTML page to explore a plan: engine timeline, memory maps, summary."""
    from .application.report.folder import view_folder

    with progress(False) as say:
        say(f"view: judging the plan in {plan_dir}, then building its page")
        inst, used = folder_inputs(instance, plan_dir, hw)
        page = view_folder(inst, plan_dir, out, freq_ghz)
    echo(used)
    echo(f"view -> {page}")


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
    from .application.report.info import instance_info, print_info
    from .plan import check_output_file

    if png is not None:
        check_output_file(png)
    inst = load_inputs(instance, hw)
    facts = instance_info(inst)
    if png is not None:
        from .application.report.plots import info_png

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
    echo(f"kernels ready in {sum(seconds.values()):.1f} s ({parts})")


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
    jobs: Annotated[int, ranged_option("--jobs", JOBS, "Parallel worker processes.")] = 1,
    time_limit: Annotated[
        float,
        ranged_option(
            "--time-limit", TIME_LIMIT, "Budget in seconds for each method's optional search (CP-SAT, beam rounds)."
        ),
    ] = 60.0,
    hw: HwOption = None,
    quiet: QuietOption = False,
) -> None:
    """Run baselines, ablations and DAN over instances; judge every plan; write tables (paper Tables 2, 4, 5, Figure 11)."""
    from .application.bench import bench as run_bench

    chosen = None if methods is None else [m.strip() for m in methods.split(",") if m.strip()]
    with progress(quiet) as say:
        rows, files = run_bench(instances, chosen, out, jobs, time_limit, hw, progress=say)
    bad = [r for r in rows if not r["valid"]]
    echo(f"bench: {len(rows)} rows ({len(bad)} invalid) -> {', '.join(str(f) for f in files)}")
    for r in bad:
        echo(f"dansched: {r['instance']} / {r['method']}: {r['error']}", err=True)
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
    problem: Annotated[int, ranged_option("--problem", PROBLEM, "Problem each cell solves.")] = 3,
    traffic_slack: SlackOption = 0.0,
    out: Annotated[
        Path, typer.Option("--out", help="Folder for sweep.jsonl, sweep.csv, sweep.md and the PNGs.")
    ] = Path("sweep"),
    jobs: Annotated[
        int | None, ranged_option("--jobs", JOBS, "Local worker processes (default: the core count).")
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", help="Submit the cells to a running Dask scheduler (tcp://host:port)."),
    ] = None,
    dask_workers: Annotated[
        int | None,
        ranged_option("--dask-workers", DASK_WORKERS, "Start a local Dask cluster of N workers for the run."),
    ] = None,
    connect_timeout: Annotated[
        float,
        ranged_option("--connect-timeout", NETWORK_TIMEOUT, "Seconds to wait for the TCP connection to --scheduler."),
    ] = 10.0,
    handshake_timeout: Annotated[
        float,
        ranged_option(
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
    from .application.executor import ExecutorError, ExecutorOptions
    from .application.report.sweep import cell_table
    from .application.report.tables import print_table
    from .application.sweep import SweepInputError, lost_line
    from .application.sweep import sweep as run_sweep

    try:
        executor = ExecutorOptions(
            jobs=jobs,
            scheduler=scheduler,
            dask_workers=dask_workers,
            connect_timeout=connect_timeout,
            handshake_timeout=handshake_timeout,
        )
        with progress(quiet) as say:
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
    echo(result.summary_line(executor.describe()))
    if result.note:
        echo(f"dansched: warning: {result.note}", err=True)
    for cell, why in result.lost:
        echo(lost_line(cell, why), err=True)
    raise typer.Exit(1 if result.lost else 0)


for _info in app.registered_commands:  # every command: whole summaries, capitals in usage, words kept whole
    _info.cls = Command


def main() -> None:
    """Run the app with errors mapped to exit statuses (raises SystemExit; tests call it
    in-process). Every error is one line on stderr, with any warning folded into it; an
    interruption is the one line of :func:`dansched.interrupt.line` and 128 + the signal."""

    pending_warnings.clear()
    restore = {}  # without entry's policy (a caller's process): the two signals for main's duration
    if not interrupt.owned():
        interrupt.new_run()
        if threading.current_thread() is threading.main_thread():
            restore = {s: signal.signal(s, raise_interrupted) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        run_app(app)
    except BaseException as exc:
        signum = interruption(exc)
        if signum is None:
            raise
        pending_warnings.clear()
        if interrupt.claim_line():
            echo(interrupt.line(), err=True)
        sys.exit(interrupt.exit_status(signum))
    finally:
        for s, handler in restore.items():
            signal.signal(s, handler)


def entry() -> None:
    """The process's entry point (the ``dansched`` script and ``python -m dansched.cli``):
    it owns SIGINT and SIGTERM from its first line (:func:`dansched.interrupt.own`), runs
    :func:`main`, then :func:`exit_now` with its status."""
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
        signum = interruption(exc)
        if signum is None:
            raise
        if interrupt.claim_line():
            echo(interrupt.line(), err=True)
        code = interrupt.exit_status(signum)
    exit_now(code)


if __name__ == "__main__":
    entry()
