"""The ``dansched`` command line (contract in DESIGN.md).

Exit codes everywhere: 0 success / valid, 1 a plan is invalid or a target could
not be met, 2 bad input or usage (one line on stderr, no traceback).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from .hardware import Hardware, HardwareError, load_hardware
from .instance import Instance, InstanceError, load_instance
from .plan import Plan, PlanFormatError, read_memory, read_schedule, read_spill

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


class InputError(Exception):
    """Bad input or usage: reported as one line on stderr with exit status 2."""


def load_inputs(instance: Path, hw_path: Optional[Path]) -> tuple[Hardware, Instance]:
    """Hardware model and instance; warnings (e.g. Cycles costed at 1) go to stderr."""
    hw = load_hardware(hw_path)
    inst = load_instance(instance, hw)
    for w in inst.warnings:
        typer.echo(f"dansched: warning: {inst.name}: {w}", err=True)
    return hw, inst


HwOption = typer.Option(None, "--hw", help="TOML file whose keys replace the default hardware model's.")


@app.command()
def evaluate(
    instance: Path = typer.Argument(..., help="Instance: <case>.json or <case>_Nodes.csv"),
    schedule: Path = typer.Option(..., "--schedule", help="<case>_schedule.txt: one node id per line"),
    memory: Optional[Path] = typer.Option(None, "--memory", help="<case>_memory.txt: BufId:Offset per line"),
    spill: Optional[Path] = typer.Option(None, "--spill", help="<case>_spill.txt: BufId:NewOffset per line"),
    hw: Optional[Path] = HwOption,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table."),
    freq_ghz: float = typer.Option(1.0, "--freq-ghz", help="Clock for the estimated latency line."),
) -> None:
    """Judge a plan: a problem-1 order (--schedule alone) or a full plan (--memory, --spill)."""
    from .simulate import evaluate as run_evaluate

    if spill is not None and memory is None:
        raise InputError("--spill needs --memory (a spill list only makes sense with a layout)")
    _, inst = load_inputs(instance, hw)
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
    instance: Path = typer.Argument(..., help="Instance: <case>.json or <case>_Nodes.csv"),
    problem: int = typer.Option(3, "--problem", min=1, max=3, help="1: order only (peak); 2: + layout and spills (traffic); 3: + timing (makespan)."),
    out: Path = typer.Option(Path("."), "--out", help="Folder for <case>_schedule.txt, _memory.txt, _spill.txt and _report.json."),
    hw: Optional[Path] = HwOption,
    exact_window: int = typer.Option(0, "--exact-window", min=0, help="Width W of the CP-SAT timing windows in Stage 3 (0: off)."),
    exact_window_mode: str = typer.Option("fixed", "--exact-window-mode", help="fixed: memory events keep their order; memory: they may move too (problem 3)."),
    time_limit: float = typer.Option(60.0, "--time-limit", min=0.0, help="Budget in seconds for the exact (CP-SAT) parts."),
    seed: int = typer.Option(0, "--seed", help="Seed for CP-SAT (results are deterministic for a given seed)."),
    traffic_slack: float = typer.Option(0.0, "--traffic-slack", min=0.0, help="Percent more traffic Stage 3 may trade for makespan."),
    variant: str = typer.Option("mpas", "--variant", help="Stage-1 variant: mpas, mpas-greedy (no local search) or mpas-paper (literal Algorithm 1)."),
    victim: str = typer.Option("cost", "--victim", help="Stage-2 victim rule: cost (Eqs. 27-31) or lru."),
    trace: bool = typer.Option(False, "--trace", help="Also write <case>_trace.json (Perfetto) for problems 2 and 3."),
    freq_ghz: float = typer.Option(1.0, "--freq-ghz", help="Clock for the estimated latency and the trace."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress output."),
) -> None:
    """Plan the instance: MPAS (problem 1), + DLR (problem 2), + CPE (problem 3, the default)."""
    from .audit import audit_plan, rows_report
    from .pipeline import PlanInvalidError, SolveOptions, solve as run_solve
    from .plan import contest_paths, write_plan
    from .report.progress import progress_reporter

    from .stages.mpas import VARIANTS

    if variant not in VARIANTS:
        raise InputError(f"--variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    if victim not in ("cost", "lru"):
        raise InputError(f"--victim must be cost or lru, got {victim!r}")
    if exact_window_mode not in ("fixed", "memory"):
        raise InputError(f"--exact-window-mode must be fixed or memory, got {exact_window_mode!r}")
    if trace and problem == 1:
        raise InputError("--trace needs timing: use --problem 2 or 3 (a problem-1 order has no layout)")
    if not freq_ghz > 0:
        raise InputError(f"--freq-ghz must be positive, got {freq_ghz}")
    _, inst = load_inputs(instance, hw)
    opts = SolveOptions(
        problem=problem, variant=variant, victim=victim, exact_window=exact_window, exact_window_mode=exact_window_mode,
        time_limit=time_limit, seed=seed, traffic_slack=traffic_slack,
    )
    with progress_reporter(quiet) as say:
        try:
            result = run_solve(inst, opts, progress=say)
        except PlanInvalidError as exc:
            typer.echo(f"dansched: {inst.name}: {exc}", err=True)
            raise typer.Exit(1)
    ev = result.evaluation
    report = dict(result.report)
    report["bounds"] = rows_report(audit_plan(inst, result.plan, ev, time_limit=min(10.0, time_limit), cpsat=False))
    write_plan(result.plan, out, inst.name, report=json.dumps(report, indent=2) + "\n")
    if trace:
        from .report.trace import write_trace

        write_trace(inst, result.plan, ev, contest_paths(out, inst.name)["report"].with_name(f"{inst.name}_trace.json"), freq_ghz)
    if not quiet:
        summary = ", ".join(f"{k} {report[k]:,}" for k in ("max_v_stay", "extra_traffic", "spill_count", "makespan") if report.get(k) is not None)
        typer.echo(f"{inst.name}: {summary} -> {out}", err=True)
        if ev.makespan is not None:
            from .report.stats import estimated_latency_line

            typer.echo(estimated_latency_line(ev.makespan, freq_ghz), err=True)


@app.command()
def bound(
    instance: Path = typer.Argument(..., help="Instance: <case>.json or <case>_Nodes.csv"),
    hw: Optional[Path] = HwOption,
    time_limit: float = typer.Option(30.0, "--time-limit", min=0.0, help="Budget in seconds for CP-SAT bounds."),
    seed: int = typer.Option(0, "--seed", help="Seed for CP-SAT."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table."),
) -> None:
    """Lower bounds on maxV_stay, extra traffic and makespan, with how each was obtained
    (the traffic bound is for the order of dansched's own plan, and says so)."""
    from .audit import audit_plan, rows_report
    from .pipeline import PlanInvalidError, SolveOptions, solve as run_solve

    _, inst = load_inputs(instance, hw)
    try:
        p1 = run_solve(inst, SolveOptions(problem=1))
        p3 = run_solve(inst, SolveOptions(problem=3))
    except PlanInvalidError as exc:
        typer.echo(f"dansched: {inst.name}: {exc}", err=True)
        raise typer.Exit(1)
    rows = audit_plan(inst, p1.plan, p1.evaluation, time_limit, seed)
    rows += [r for r in audit_plan(inst, p3.plan, p3.evaluation, time_limit, seed) if r.metric != "max_v_stay"]
    report = rows_report(rows)
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    _print_rows(f"{inst.name}: lower bounds (plan values from dansched solve)", report)


@app.command()
def audit(
    instance: Path = typer.Argument(..., help="Instance: <case>.json or <case>_Nodes.csv"),
    plan_dir: Path = typer.Option(..., "--plan", help="Folder holding <case>_schedule.txt (and _memory.txt, _spill.txt)."),
    hw: Optional[Path] = HwOption,
    time_limit: float = typer.Option(30.0, "--time-limit", min=0.0, help="Budget in seconds for CP-SAT bounds."),
    seed: int = typer.Option(0, "--seed", help="Seed for CP-SAT."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table."),
) -> None:
    """A plan's figures beside their lower bounds, the gaps, and the stage that loses the most."""
    from .audit import audit_plan, worst_stage
    from .plan import read_plan_dir
    from .simulate import evaluate as run_evaluate

    _, inst = load_inputs(instance, hw)
    plan = read_plan_dir(plan_dir, inst.name)
    ev = run_evaluate(inst, plan)
    if not ev.valid:
        first = ev.errors[0].message if ev.errors else ""
        typer.echo(f"dansched: {inst.name}: the plan in {plan_dir} is invalid ({ev.error_count} violation(s); first: {first})", err=True)
        raise typer.Exit(1)
    rows = audit_plan(inst, plan, ev, time_limit, seed)
    report = {"bounds": [dict(metric=r.metric, **r.to_dict()) for r in rows], "worst_stage": worst_stage(rows)}
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    _print_rows(f"{inst.name}: audit of {plan_dir}", {_row_name(r): r for r in report["bounds"]})
    typer.echo(f"stage furthest from its bound: {report['worst_stage']}")


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
    for col in ("metric", "plan", "bound", "gap", "method", "optimal"):
        table.add_column(col, justify="right" if col in ("plan", "bound", "gap") else "left")
    for k, b in rows.items():
        plan_value = b.get("plan_value")
        g = b.get("gap")
        table.add_row(
            k, "-" if plan_value is None else f"{plan_value:,}", f"{b['value']:,}",
            "-" if g is None else f"{100 * g:.1f}%", b["method"], "yes" if b["optimal"] else "not proven",
        )
    Console().print(table)


@app.command()
def generate(
    family: str = typer.Argument(..., help="matmul, fa, conv or random"),
    out: Path = typer.Option(..., "--out", help="Instance file to write (.json, or <case>_Nodes.csv for the CSV pair)."),
    scale: int = typer.Option(1, "--scale", min=1, help="Size knob of the family (>= 1)."),
    seed: int = typer.Option(0, "--seed", help="Random seed."),
) -> None:
    """Write a synthetic instance of a family in the contest format."""
    from .generate import FAMILIES, generate as run_generate
    from .instance import instance_from_records, instance_name, write_csv_pair
    from .plan import atomic_write_text

    if family not in FAMILIES:
        raise InputError(f"unknown family {family!r}; choose one of {', '.join(FAMILIES)}")
    nodes, edges = run_generate(family, scale, seed)
    inst = instance_from_records(instance_name(out), nodes, edges)  # the generator's output must load
    if out.suffix.lower() == ".csv":
        write_csv_pair(inst, out.parent)
    else:
        atomic_write_text(out, json.dumps({"Nodes": nodes, "Edges": edges}, separators=(",", ":")) + "\n")
    typer.echo(f"{out}: {inst.n} nodes, {inst.num_edges} edges, {inst.num_buffers} buffers", err=True)


@app.command()
def trace(
    instance: Path = typer.Argument(..., help="Instance: <case>.json or <case>_Nodes.csv"),
    plan_dir: Path = typer.Option(..., "--plan", help="Folder holding <case>_schedule.txt, _memory.txt and _spill.txt."),
    out: Optional[Path] = typer.Option(None, "--out", help="Trace JSON to write (default: <plan>/<case>_trace.json)."),
    freq_ghz: float = typer.Option(1.0, "--freq-ghz", help="Clock for ts/dur in microseconds (1 GHz: 1 cycle = 1 ns)."),
    png: Optional[Path] = typer.Option(None, "--png", help="Also draw a Gantt chart of the pipes and per-tier layout heatmaps."),
    compare: Optional[Path] = typer.Option(None, "--compare", help="Another plan folder (e.g. before CPE), drawn left of --plan in the --png Gantt chart."),
    hw: Optional[Path] = HwOption,
) -> None:
    """Perfetto trace (Trace Event Format JSON + taskStatistics) of a plan with a layout; optionally a picture."""
    from .report.stats import estimated_latency_line, format_statistics
    from .report.trace import TraceError, build_trace, plan_statistics, read_timed_plan, timed_tasks, trace_json_text

    if compare is not None and png is None:
        raise InputError("--compare is drawn beside --plan in the picture: give --png FILE too")
    if not freq_ghz > 0:
        raise InputError(f"--freq-ghz must be positive, got {freq_ghz}")
    _, inst = load_inputs(instance, hw)
    plans = []
    for folder in ([compare] if compare is not None else []) + [plan_dir]:
        try:
            plan, ev = read_timed_plan(inst, folder)
        except TraceError as exc:
            raise InputError(str(exc)) from None
        if not ev.valid:
            first = ev.errors[0].message if ev.errors else ""
            typer.echo(f"dansched: {inst.name}: the plan in {folder} is invalid ({ev.error_count} violation(s); first: {first}); see dansched evaluate", err=True)
            raise typer.Exit(1)
        plans.append((folder, plan, ev))
    _, plan, ev = plans[-1]
    text = trace_json_text(build_trace(inst, plan, ev, freq_ghz))
    picture = None
    if png is not None:
        from .report.plots import plan_picture, plan_png_bytes

        picture = plan_png_bytes([plan_picture(inst, p, e, f"{inst.name} ({folder.resolve().name})") for folder, p, e in plans])
    from .plan import atomic_write_text

    target = out if out is not None else plan_dir / f"{inst.name}_trace.json"
    atomic_write_text(target, text)
    if picture is not None:
        from .report.plots import write_bytes_atomic

        write_bytes_atomic(png, picture)
    typer.echo(estimated_latency_line(int(ev.makespan or 0), freq_ghz))
    for line in format_statistics(plan_statistics(timed_tasks(inst, plan, ev), int(ev.makespan or 0)), freq_ghz):
        typer.echo(line)
    typer.echo(f"trace -> {target}" + (f", picture -> {png}" if png is not None else ""))


@app.command()
def info(
    instance: Path = typer.Argument(..., help="Instance: <case>.json or <case>_Nodes.csv"),
    png: Optional[Path] = typer.Option(None, "--png", help="Also draw counts, op/pipe mix, ALLOC-size ECDF and lifetimes."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
    hw: Optional[Path] = HwOption,
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
    instances: Optional[list[Path]] = typer.Argument(None, help="Instances (default: the official cases in ../shared/instances/official when present, else instances/*.json)."),
    methods: Optional[str] = typer.Option(None, "--methods", help="Comma-separated methods (default: all): base, hmcos, magis, cosma, gbs, lru, mpas-paper, dan-no-cpe, dan, dan-memory-windows."),
    out: Path = typer.Option(Path("bench"), "--out", help="Folder for bench.json, bench.csv and bench.md."),
    jobs: int = typer.Option(1, "--jobs", min=1, help="Parallel worker processes."),
    time_limit: float = typer.Option(60.0, "--time-limit", min=0.0, help="Budget in seconds for each method's optional search (CP-SAT, beam rounds)."),
    hw: Optional[Path] = HwOption,
    quiet: bool = typer.Option(False, "--quiet", help="No progress output."),
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
        raise InputError(f"no instances given and none found in {official_dir() or '../shared/instances/official'} or instances/")
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


def main() -> None:
    """Console entry point: typer app with input errors mapped to exit status 2."""
    try:
        rc = app(standalone_mode=False)
    except (InstanceError, HardwareError, PlanFormatError, InputError) as exc:
        typer.echo(f"dansched: error: {exc}", err=True)
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except OSError as exc:  # an output that cannot be written, outside the atomic writers
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        typer.echo(f"dansched: error: {where}{exc.strerror or exc}", err=True)
        sys.exit(2)
    except typer.Abort:
        typer.echo("dansched: aborted", err=True)
        sys.exit(130)
    except Exception as exc:
        if hasattr(exc, "format_message"):  # click / typer usage errors
            typer.echo(f"dansched: error: {exc.format_message()}", err=True)
            sys.exit(2)
        raise
    sys.exit(rc if isinstance(rc, int) else 0)


if __name__ == "__main__":
    main()
