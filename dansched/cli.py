"""The ``dansched`` command line (contract in DESIGN.md).

Exit codes everywhere: 0 success / valid, 1 a plan is invalid or a target could
not be met, 2 bad input or usage (one line on stderr, no traceback).
"""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from .errors import HardwareError, InputError, InstanceError, PlanFormatError
from .hardware import Hardware, load_hardware
from .instance import Instance, load_instance
from .plan import Plan, read_memory, read_schedule, read_spill
from .stages.dlr.victim import VICTIMS

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Schedule operator-level DAGs onto one NPU core: MPAS -> DLR -> CPE, with a shared evaluator.",
)


@app.callback()
def _root() -> None:
    """Schedule operator-level DAGs onto one NPU core: MPAS -> DLR -> CPE, with a shared evaluator."""


class Failure(Exception):
    """No valid plan, or an invalid one: one line on stderr (``dansched: <message>``), exit 1."""


_pending_warnings: list[str] = []  # printed when the command ends, or folded into its error line


def load_inputs(instance: Path, hw_path: Path | None) -> tuple[Hardware, Instance]:
    """Hardware model and instance; warnings (e.g. Cycles costed at 1) are printed when the
    command ends, or folded into its one error line."""
    hw = load_hardware(hw_path)
    inst = load_instance(instance, hw)
    _pending_warnings.extend(f"{inst.name}: {w}" for w in inst.warnings)
    return hw, inst


class Variant(str, Enum):
    """Stage-1 variants (:data:`dansched.stages.mpas.stage.VARIANTS`; tests/test_cli_options.py checks they agree)."""

    mpas = "mpas"
    mpas_greedy = "mpas-greedy"
    mpas_paper = "mpas-paper"


# Stage-2 victim rules: the registry's choices (:data:`dansched.stages.dlr.victim.VICTIMS`)
Victim = Enum("Victim", {name.replace("-", "_"): name for name in VICTIMS}, type=str)  # type: ignore[misc]


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


HwOption = Annotated[
    Path | None, typer.Option("--hw", help="TOML file whose keys replace the default hardware model's.")
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
        typer.echo(f"dansched: warning: {w}", err=True)
    _pending_warnings.clear()


def _check_plan_folder(folder: Path, case: str) -> dict | None:
    """:func:`dansched.plan_folder.check_folder`: a folder mixing two plans is bad input (exit 2)."""
    from .plan_folder import check_folder

    return check_folder(folder, case)


@app.command()
def evaluate(
    instance: Annotated[Path, typer.Argument(help="Instance: <case>.json or <case>_Nodes.csv")],
    schedule: Annotated[Path, typer.Option("--schedule", help="<case>_schedule.txt: one node id per line")],
    memory: Annotated[Path | None, typer.Option("--memory", help="<case>_memory.txt: BufId:Offset per line")] = None,
    spill: Annotated[Path | None, typer.Option("--spill", help="<case>_spill.txt: BufId:NewOffset per line")] = None,
    hw: HwOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")] = False,
    freq_ghz: Annotated[float, typer.Option("--freq-ghz", help="Clock for the estimated latency line.")] = 1.0,
) -> None:
    """Judge a plan: a problem-1 order (--schedule alone) or a full plan (--memory, --spill)."""
    from .simulate import evaluate as run_evaluate

    if spill is not None and memory is None:
        raise InputError("--spill needs --memory (a spill list only makes sense with a layout)")
    _, inst = load_inputs(instance, hw)
    if schedule.name == f"{inst.name}_schedule.txt":
        _check_plan_folder(schedule.parent, inst.name)
    order = read_schedule(schedule)
    plan = Plan(order=order)
    if memory is not None:
        plan = Plan(order=order, offsets=read_memory(memory), spills=read_spill(spill) if spill else ())
    ev = run_evaluate(inst, plan)
    if as_json:
        typer.echo(json.dumps(ev.to_dict(), indent=2))
    else:
        from .report.tables import print_evaluation

        print_evaluation(inst, ev)
        if ev.makespan is not None and freq_ghz > 0:
            from .report.stats import estimated_latency_line

            typer.echo(estimated_latency_line(ev.makespan, freq_ghz), err=True)
    raise typer.Exit(0 if ev.valid else 1)


@app.command()
def solve(
    instance: Annotated[Path, typer.Argument(help="Instance: <case>.json or <case>_Nodes.csv")],
    problem: Annotated[
        int,
        typer.Option(
            "--problem",
            min=1,
            max=3,
            help="1: order only (peak); 2: + layout and spills (traffic); 3: + timing (makespan).",
        ),
    ] = 3,
    out: Annotated[
        Path, typer.Option("--out", help="Folder for <case>_schedule.txt, _memory.txt, _spill.txt and _report.json.")
    ] = Path("."),
    hw: HwOption = None,
    exact_window: Annotated[
        int, typer.Option("--exact-window", min=0, help="Width W of the CP-SAT timing windows in Stage 3 (0: off).")
    ] = 0,
    exact_window_mode: Annotated[
        WindowMode,
        typer.Option(
            "--exact-window-mode", help="fixed: memory events keep their order; memory: they may move too (problem 3)."
        ),
    ] = WindowMode.fixed,
    time_limit: Annotated[
        float, typer.Option("--time-limit", min=0.0, help="Budget in seconds for the exact (CP-SAT) parts.")
    ] = 60.0,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed for CP-SAT (results are deterministic for a given seed).")
    ] = 0,
    traffic_slack: Annotated[
        float, typer.Option("--traffic-slack", min=0.0, help="Percent more traffic Stage 3 may trade for makespan.")
    ] = 0.0,
    variant: Annotated[
        Variant,
        typer.Option(
            "--variant",
            help="Stage-1 variant: mpas, mpas-greedy (no local search) or mpas-paper (literal Algorithm 1).",
        ),
    ] = Variant.mpas,
    victim: Annotated[
        Victim, typer.Option("--victim", help="Stage-2 victim rule: cost (Eqs. 27-31) or lru.")
    ] = Victim.cost,
    trace: Annotated[
        bool, typer.Option("--trace", help="Also write <case>_trace.json (Perfetto) for problems 2 and 3.")
    ] = False,
    html: Annotated[
        bool, typer.Option("--html", help="Also write <case>_view.html (dansched view) for problems 2 and 3.")
    ] = False,
    freq_ghz: Annotated[float, typer.Option("--freq-ghz", help="Clock for the estimated latency and the trace.")] = 1.0,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress output.")] = False,
) -> None:
    """Plan the instance: MPAS (problem 1), + DLR (problem 2), + CPE (problem 3, the default)."""
    from .audit import audit_plan, rows_report
    from .errors import PlanInvalidError
    from .pipeline import SolveOptions
    from .pipeline import solve as run_solve
    from .plan import plan_texts
    from .plan_folder import plan_fingerprint, write_group
    from .report.progress import progress_reporter

    if (trace or html) and problem == 1:
        raise InputError(
            f"--{'trace' if trace else 'html'} needs timing: use --problem 2 or 3 (a problem-1 order has no layout)"
        )
    if not freq_ghz > 0:
        raise InputError(f"--freq-ghz must be positive, got {freq_ghz}")
    _, inst = load_inputs(instance, hw)
    opts = SolveOptions(
        problem=problem,
        variant=variant.value,
        victim=victim.value,
        exact_window=exact_window,
        exact_window_mode=exact_window_mode.value,
        time_limit=time_limit,
        seed=seed,
        traffic_slack=traffic_slack,
    )
    with progress_reporter(quiet) as say:
        try:
            result = run_solve(inst, opts, progress=say)
        except PlanInvalidError as exc:
            raise Failure(f"{inst.name}: {exc}") from None
    ev = result.evaluation
    report = dict(result.report)
    report["bounds"] = rows_report(audit_plan(inst, result.plan, ev, time_limit=min(10.0, time_limit), cpsat=False))
    files: dict[str, str] = dict(plan_texts(result.plan))
    fingerprint = plan_fingerprint({k: t.encode() for k, t in files.items()})
    report["fingerprint"] = fingerprint
    if trace:
        from .report.trace import build_trace, trace_json_text

        trace_obj = build_trace(inst, result.plan, ev, freq_ghz)
        trace_obj.setdefault("otherData", {})["plan_fingerprint"] = fingerprint["sha256"]
        files["trace"] = trace_json_text(trace_obj)
    if html:
        from .report.view import build_view_data, view_html

        files["view"] = view_html(build_view_data(inst, result.plan, ev, report, freq_ghz))
    files["report"] = json.dumps(report, indent=2) + "\n"
    write_group(out, inst.name, files)
    if not quiet:
        summary = ", ".join(
            f"{k} {report[k]:,}"
            for k in ("max_v_stay", "extra_traffic", "spill_count", "makespan")
            if report.get(k) is not None
        )
        typer.echo(f"{inst.name}: {summary} -> {out}", err=True)
        if ev.makespan is not None:
            from .report.stats import estimated_latency_line

            typer.echo(estimated_latency_line(ev.makespan, freq_ghz), err=True)


@app.command()
def bound(
    instance: Annotated[Path, typer.Argument(help="Instance: <case>.json or <case>_Nodes.csv")],
    hw: HwOption = None,
    time_limit: Annotated[
        float, typer.Option("--time-limit", min=0.0, help="Budget in seconds for CP-SAT bounds.")
    ] = 30.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed for CP-SAT.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")] = False,
) -> None:
    """Lower bounds on maxV_stay, extra traffic and makespan, with how each was obtained
    (the traffic bound is for the order of dansched's own plan, and says so)."""
    from .audit import audit_plan, rows_report
    from .errors import PlanInvalidError
    from .pipeline import SolveOptions
    from .pipeline import solve as run_solve
    from .simulate import judged

    _, inst = load_inputs(instance, hw)
    try:
        p3 = run_solve(inst, SolveOptions(problem=3))
        # the problem-1 plan is problem 3's Stage-1 order; without one, solving problem 1 says why
        plan1 = p3.stage1 or run_solve(inst, SolveOptions(problem=1)).stage1
        ev1 = judged(inst, plan1, "Stage 1 (MPAS)")
    except PlanInvalidError as exc:
        raise Failure(f"{inst.name}: {exc}") from None
    rows = audit_plan(inst, plan1, ev1, time_limit, seed)
    rows += audit_plan(inst, p3.plan, p3.evaluation, time_limit, seed, with_peak=False)
    report = rows_report(rows)
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    _print_rows(f"{inst.name}: lower bounds (plan values from dansched solve)", report)


@app.command()
def audit(
    instance: Annotated[Path, typer.Argument(help="Instance: <case>.json or <case>_Nodes.csv")],
    plan_dir: Annotated[
        Path, typer.Option("--plan", help="Folder holding <case>_schedule.txt (and _memory.txt, _spill.txt).")
    ],
    hw: HwOption = None,
    time_limit: Annotated[
        float, typer.Option("--time-limit", min=0.0, help="Budget in seconds for CP-SAT bounds.")
    ] = 30.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed for CP-SAT.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")] = False,
) -> None:
    """A plan's figures beside their lower bounds, the gaps, and the stage that loses the most."""
    from .audit import audit_plan, worst_stage
    from .plan import read_plan_dir
    from .simulate import evaluate as run_evaluate

    _, inst = load_inputs(instance, hw)
    _check_plan_folder(plan_dir, inst.name)
    plan = read_plan_dir(plan_dir, inst.name)
    ev = run_evaluate(inst, plan)
    if not ev.valid:
        first = ev.first_violation("")
        raise Failure(f"{inst.name}: the plan in {plan_dir} is invalid ({ev.error_count} violation(s); first: {first})")
    rows = audit_plan(inst, plan, ev, time_limit, seed)
    report = {"bounds": [dict(metric=r.metric, **r.to_dict()) for r in rows], "worst_stage": worst_stage(rows)}
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    _print_rows(f"{inst.name}: audit of {plan_dir}", {_row_name(r): r for r in report["bounds"]})
    typer.echo(f"stage furthest from its bound: {report['worst_stage'] or 'none (no informative bound leaves a gap)'}")


def _row_name(r: dict) -> str:
    """Table label of one audit row: metric, floor name (makespan floors) and scope."""
    floor = f" {r['floor']}" if "floor" in r else ""
    return f"{r['metric']}{floor} ({r['scope']})"


def _print_rows(title: str, rows: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    floors = rows.get("makespan_floors")
    if floors is not None:  # `bound`: the floors as rows of their own, beside the best per metric
        rows = {k: v for k, v in rows.items() if k != "makespan_floors"}
        plan_value = rows.get("makespan", {}).get("plan_value")
        for name, f in floors.items():
            if isinstance(f, dict):
                rows[f"makespan floor {name} ({f['scope']})"] = dict(f, plan_value=plan_value, optimal=False)

    table = Table(title=title, title_justify="left")
    for col in ("metric", "plan", "bound", "gap", "strength", "method", "optimal"):
        table.add_column(col, justify="right" if col in ("plan", "bound", "gap") else "left")
    for k, b in rows.items():
        plan_value = b.get("plan_value")
        g = b.get("gap")
        table.add_row(
            k,
            "-" if plan_value is None else f"{plan_value:,}",
            f"{b['value']:,}",
            "-" if g is None else f"{100 * g:.1f}%",
            b.get("strength", "-"),
            b["method"],
            "yes" if b["optimal"] else "not proven",
        )
    Console().print(table)


@app.command()
def generate(
    family: Annotated[Family, typer.Argument(help="matmul, fa, conv, random, chain or ladder")],
    out: Annotated[
        Path, typer.Option("--out", help="Instance file to write (.json, or <case>_Nodes.csv for the CSV pair).")
    ],
    scale: Annotated[int, typer.Option("--scale", min=1, help="Size knob of the family (>= 1).")] = 1,
    seed: Annotated[int, typer.Option("--seed", help="Random seed.")] = 0,
) -> None:
    """Write a synthetic instance of a family in the contest format."""
    from .generate import generate as run_generate
    from .instance import instance_from_records, instance_name, write_csv_pair
    from .plan import atomic_write_text

    nodes, edges = run_generate(family.value, scale, seed)
    inst = instance_from_records(instance_name(out), nodes, edges)  # the generator's output must load
    if out.suffix.lower() == ".csv":
        write_csv_pair(inst, out.parent)
    else:
        atomic_write_text(out, json.dumps({"Nodes": nodes, "Edges": edges}, separators=(",", ":")) + "\n")
    typer.echo(f"{out}: {inst.n} nodes, {inst.num_edges} edges, {inst.num_buffers} buffers", err=True)


@app.command()
def trace(
    instance: Annotated[Path, typer.Argument(help="Instance: <case>.json or <case>_Nodes.csv")],
    plan_dir: Annotated[
        Path, typer.Option("--plan", help="Folder holding <case>_schedule.txt, _memory.txt and _spill.txt.")
    ],
    out: Annotated[
        Path | None, typer.Option("--out", help="Trace JSON to write (default: <plan>/<case>_trace.json).")
    ] = None,
    freq_ghz: Annotated[
        float, typer.Option("--freq-ghz", help="Clock for ts/dur in microseconds (1 GHz: 1 cycle = 1 ns).")
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
    from .errors import TraceError
    from .report.stats import estimated_latency_line, format_statistics
    from .report.trace import build_trace, plan_statistics, read_timed_plan, timed_tasks, trace_json_text
    from .report.waits import busiest_pipe, format_waits, pipe_waits

    if compare is not None and png is None:
        raise InputError("--compare is drawn beside --plan in the picture: give --png FILE too")
    if not freq_ghz > 0:
        raise InputError(f"--freq-ghz must be positive, got {freq_ghz}")
    from .instance import instance_name
    from .plan import plan_texts
    from .plan_folder import group_paths, plan_fingerprint, write_group

    target = out if out is not None else plan_dir / f"{instance_name(instance)}_trace.json"
    for p in (target, png):  # checked before anything is read or written
        if p is not None and p.is_dir():
            raise InputError(f"{p}: is a folder, not a file name")
    _, inst = load_inputs(instance, hw)
    plans = []
    for folder in ([compare] if compare is not None else []) + [plan_dir]:
        _check_plan_folder(folder, inst.name)
        try:
            plan, ev = read_timed_plan(inst, folder)
        except TraceError as exc:
            raise InputError(str(exc)) from None
        if not ev.valid:
            first = ev.first_violation("")
            raise Failure(
                f"{inst.name}: the plan in {folder} is invalid ({ev.error_count} violation(s); first: {first}); see dansched evaluate"
            )
        plans.append((folder, plan, ev))
    _, plan, ev = plans[-1]
    trace_obj = build_trace(inst, plan, ev, freq_ghz)
    fingerprint = plan_fingerprint({k: t.encode() for k, t in plan_texts(plan).items()})["sha256"]
    trace_obj.setdefault("otherData", {})["plan_fingerprint"] = fingerprint
    text = trace_json_text(trace_obj)
    picture = None
    if png is not None:
        from .report.plots import plan_picture, plan_png_bytes

        picture = plan_png_bytes(
            [plan_picture(inst, p, e, f"{inst.name} ({folder.resolve().name})") for folder, p, e in plans]
        )
    extra = {png: picture} if picture is not None else {}
    if target.resolve() == group_paths(plan_dir, inst.name)["trace"].resolve():
        write_group(plan_dir, inst.name, {"trace": text}, extra=extra, replace_group=False)
    else:
        from .plan import atomic_write_files

        atomic_write_files([(target, text), *extra.items()])
    typer.echo(estimated_latency_line(int(ev.makespan or 0), freq_ghz))
    for line in format_statistics(plan_statistics(timed_tasks(inst, plan, ev), int(ev.makespan or 0)), freq_ghz):
        typer.echo(line)
    for line in format_waits(pipe_waits(inst, plan, ev, busiest_pipe(inst, ev))):
        typer.echo(line)
    typer.echo(f"trace -> {target}" + (f", picture -> {png}" if png is not None else ""))


@app.command()
def view(
    instance: Annotated[Path, typer.Argument(help="Instance: <case>.json or <case>_Nodes.csv")],
    plan_dir: Annotated[
        Path,
        typer.Option("--plan", help="Folder holding <case>_schedule.txt, _memory.txt, _spill.txt (and _report.json)."),
    ],
    out: Annotated[Path | None, typer.Option("--out", help="Page to write (default: <plan>/<case>_view.html).")] = None,
    freq_ghz: Annotated[float, typer.Option("--freq-ghz", help="Clock for the times in microseconds.")] = 1.0,
    hw: HwOption = None,
) -> None:
    """One self-contained HTML page to explore a plan: engine timeline, memory maps, summary."""
    from .report.trace import TraceError, read_timed_plan
    from .report.view import ViewError, read_report, view_path, write_view

    if not freq_ghz > 0:
        raise InputError(f"--freq-ghz must be positive, got {freq_ghz}")
    _, inst = load_inputs(instance, hw)
    try:
        plan, ev = read_timed_plan(inst, plan_dir)
        report = read_report(plan_dir, inst.name)
    except (TraceError, ViewError) as exc:
        raise InputError(str(exc)) from None
    if not ev.valid:
        typer.echo(
            f"dansched: {inst.name}: the plan in {plan_dir} is invalid ({ev.error_count} violation(s); first: {ev.first_violation('')}); see dansched evaluate",
            err=True,
        )
        raise typer.Exit(1)
    target = write_view(
        inst, plan, ev, out if out is not None else view_path(plan_dir, inst.name), report=report, freq_ghz=freq_ghz
    )
    typer.echo(f"view -> {target}")


@app.command()
def info(
    instance: Annotated[Path, typer.Argument(help="Instance: <case>.json or <case>_Nodes.csv")],
    png: Annotated[
        Path | None, typer.Option("--png", help="Also draw counts, op/pipe mix, ALLOC-size ECDF and lifetimes.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
    hw: HwOption = None,
) -> None:
    """Instance statistics: node/edge counts, op and pipe mix, ALLOC/FREE counts, ALLOC sizes, buffer lifetimes."""
    from .report.info import instance_info, print_info

    _, inst = load_inputs(instance, hw)
    facts = instance_info(inst)
    if png is not None:
        from .report.plots import info_png

        info_png(png, facts)
    if as_json:
        typer.echo(json.dumps(facts.to_dict(), indent=2))
    else:
        print_info(facts)


@app.command()
def bench(
    instances: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Instances (default: the official cases in ../shared/instances/official when present, else instances/*.json)."
        ),
    ] = None,
    methods: Annotated[
        str | None,
        typer.Option(
            "--methods",
            help="Comma-separated methods (default: all): base, hmcos, magis, cosma, gbs, lru, mpas-paper, dan-no-cpe, dan-memory-windows, dan-no-timed, dan-no-portfolio, dan.",
        ),
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for bench.json, bench.csv and bench.md.")] = Path("bench"),
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="Parallel worker processes.")] = 1,
    time_limit: Annotated[
        float,
        typer.Option(
            "--time-limit", min=0.0, help="Budget in seconds for each method's optional search (CP-SAT, beam rounds)."
        ),
    ] = 60.0,
    hw: HwOption = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress output.")] = False,
) -> None:
    """Run baselines, ablations and DAN over instances; judge every plan; write tables (paper Tables 2, 4, 5, Figure 11)."""
    from .baselines import METHODS
    from .bench import default_instances, official_dir, run_bench, write_bench

    chosen = list(METHODS) if not methods else [m.strip() for m in methods.split(",") if m.strip()]
    unknown = [m for m in chosen if m not in METHODS]
    if unknown or not chosen:
        raise InputError(f"unknown method(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(METHODS)}")
    paths = list(instances) if instances else default_instances()
    if not paths:
        raise InputError(
            f"no instances given and none found in {official_dir() or '../shared/instances/official'} or instances/"
        )
    for p in paths:
        if not p.is_file() and not (p.suffix.lower() == ".csv" and p.parent.is_dir()):
            raise InputError(f"{p}: no such instance file")
    if hw is not None:
        load_hardware(hw)  # a bad hardware file is bad input (exit 2), not n failed rows
    rows = run_bench(paths, chosen, jobs=jobs, time_limit=time_limit, hw_path=hw, progress=not quiet)
    files = write_bench(rows, out)
    bad = [r for r in rows if not r["valid"]]
    if not quiet:
        typer.echo(f"bench: {len(rows)} rows ({len(bad)} invalid) -> {', '.join(str(f) for f in files)}", err=True)
        for r in bad:
            typer.echo(f"dansched: {r['instance']} / {r['method']}: {r['error']}", err=True)
    raise typer.Exit(1 if bad else 0)


@app.command()
def sweep(
    instances: Annotated[
        list[str], typer.Argument(help="Instances: contest .json or <case>_Nodes.csv files, folders, or glob patterns.")
    ],
    sets: Annotated[
        list[str] | None, typer.Option("--set", help="TIER=V1,V2,...: capacities to sweep (repeat for a grid).")
    ] = None,
    hw: Annotated[
        Path | None, typer.Option("--hw", help="Base hardware: TOML file whose keys replace the default model's.")
    ] = None,
    problem: Annotated[int, typer.Option("--problem", min=1, max=3, help="Problem each cell solves.")] = 3,
    traffic_slack: Annotated[
        float, typer.Option("--traffic-slack", min=0.0, help="Percent more traffic Stage 3 may trade for makespan.")
    ] = 0.0,
    out: Annotated[
        Path, typer.Option("--out", help="Folder for sweep.jsonl, sweep.csv, sweep.md and the PNGs.")
    ] = Path("sweep"),
    jobs: Annotated[
        int | None, typer.Option("--jobs", min=1, help="Local worker processes (default: the core count).")
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", help="Submit the cells to a running Dask scheduler (tcp://host:port)."),
    ] = None,
    dask_workers: Annotated[
        int | None,
        typer.Option("--dask-workers", min=1, help="Start a local Dask cluster of N workers for the run."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar or summary.")] = False,
) -> None:
    """Solve every instance on every point of a grid of tier capacities; resumable (DIR/sweep.jsonl)."""
    from .executor import ExecutorError, ExecutorOptions
    from .sweep import SweepInputError
    from .sweep import sweep as run_sweep

    try:
        result = run_sweep(
            instances,
            sets or [],
            hw,
            problem,
            traffic_slack,
            out,
            ExecutorOptions(jobs=jobs, scheduler=scheduler, dask_workers=dask_workers),
            quiet,
        )
    except (SweepInputError, ExecutorError) as exc:
        raise InputError(str(exc)) from None
    except KeyboardInterrupt:
        typer.echo(
            f"dansched: sweep interrupted; finished cells are kept in {out / 'sweep.jsonl'} (rerun to finish)", err=True
        )
        raise typer.Exit(130) from None
    raise typer.Exit(1 if result.lost else 0)


def _terminated(signum, _frame) -> None:
    """SIGTERM unwinds like an exception, so temporary files are removed on the way out."""
    raise SystemExit(128 + signum)


def main() -> None:
    """Console entry point: typer app with input errors mapped to exit status 2. Every
    error is one line on stderr, with any warning folded into it."""
    import signal

    _pending_warnings.clear()
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminated)
    try:
        rc = app(standalone_mode=False)
    except (InstanceError, HardwareError, PlanFormatError, InputError) as exc:
        typer.echo(_with_warnings(f"dansched: error: {exc}"), err=True)
        sys.exit(2)
    except Failure as exc:
        typer.echo(_with_warnings(f"dansched: {exc}"), err=True)
        sys.exit(1)
    except typer.Exit as exc:
        _flush_warnings()
        sys.exit(exc.exit_code)
    except OSError as exc:  # an output that cannot be written, outside the atomic writers
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        typer.echo(_with_warnings(f"dansched: error: {where}{exc.strerror or exc}"), err=True)
        sys.exit(2)
    except typer.Abort:
        typer.echo(_with_warnings("dansched: aborted"), err=True)
        sys.exit(130)
    except Exception as exc:
        if hasattr(exc, "format_message"):  # click / typer usage errors
            typer.echo(_with_warnings(f"dansched: error: {exc.format_message()}"), err=True)
            sys.exit(2)
        raise
    _flush_warnings()
    sys.exit(rc if isinstance(rc, int) else 0)


if __name__ == "__main__":
    main()
