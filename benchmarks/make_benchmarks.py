"""Write BENCHMARKS.md: ``dansched bench`` over the official cases, all methods.

Runs every method of :data:`dansched.application.baselines.METHODS` on every official case in
``../shared/instances/official`` (``--jobs 2`` by default), keeps the raw
``bench.json`` / ``bench.csv`` / ``bench.md`` (and ``meta.json``: wall clock, options) in ``benchmarks/results/bench/`` and
writes ``BENCHMARKS.md`` at the repository root: the bench tables (paper Table 2
layout with ratios to ``base`` and the Δ vs the best external method, absolute
figures with the best public figures of ``../shared/anchors.json`` in their own
column, Tables 4 and 5, Figure 11 as a table) and, for every metric where ``dan``
is not the best on some case, a short note saying where and why.

BENCHMARKS.md is a function of the result files alone (:func:`render`: the rows, their
``meta.json`` with the machine they were measured on, the other result files and the
anchors), so ``tests/test_doc_figures.py`` can check it against them without a solve.

Usage::

    python benchmarks/make_benchmarks.py [--jobs 2] [--time-limit 60] [--methods LIST]
    python benchmarks/make_benchmarks.py --from benchmarks/results/bench/bench.json  # redraw only
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

from dansched.application.baselines import METHODS
from dansched.application.bench import (
    METRIC_TITLES,
    bench_markdown,
    load_anchors,
    not_best_cells,
    official_dir,
    run_bench,
    write_bench,
)
from dansched.plan import atomic_write_text

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results" / "bench"
TARGET = REPO / "BENCHMARKS.md"

SHORT = {"max_v_stay": "maxV_stay", "extra_traffic": "traffic", "spill_count": "spills", "makespan": "makespan"}
# Why dan can lose a cell, per metric; printed under the facts for every metric where it does.
WHY = {
    "max_v_stay": (
        "`dan` is a problem-3 plan: Stage 2 picks the order (among the tightened MPAS order, "
        "the input order and reuse-aware list schedules) for the least *traffic*, not the least "
        "logical peak; Stage 3 re-interleaves ALLOC/FREE events for timing, which keeps the layout, "
        "spills and physical behaviour but can raise the logical peak (compare `dan-no-cpe`); and "
        "MPAS keeps the problem-1 rule of one live buffer per L0 tier, which problems 2 and 3 do "
        "not impose. `hmcos` and `magis` minimise the L1+UB peak of an order "
        "that ignores the L0 tiers, so their peaks can be far lower while their L0 buffers thrash "
        "(see their traffic and spill rows). `dan`'s Stage-1 figure (problem 1, L0 rule enforced) is "
        "given with each case."
    ),
    "extra_traffic": (
        "Stage 2 is a heuristic search over a handful of orders and placements; a method that "
        "solves the placement of one fixed order exactly (`cosma`, CP-SAT) or uses a different "
        "order can find less traffic on that order."
    ),
    "spill_count": (
        "`dan` minimises traffic first and spill count only second (docs/rules.md, section 8.2: problem 2 minimises "
        "traffic): a plan with fewer but larger spills can carry more traffic."
    ),
    "makespan": (
        "Stage 3 keeps Stage 2's traffic and spills (problem 3 may not raise traffic without "
        "`--traffic-slack`), and Stage 2 picks the least-traffic plan; a plan with a different "
        "memory behaviour (often more traffic, as below) can give the engines more to overlap."
    ),
}


def notes(rows: list[dict]) -> list[str]:
    """Per metric where ``dan`` is not the best: why, then each cell with what the better
    method carried on the other metrics (so the trade is visible)."""
    cells = not_best_cells(rows)
    out = ["## Where `dan` is not the best, and why", ""]
    if not cells:
        return out + ["`dan` is best or tied-best on every case x metric cell against every method here.", ""]
    by = {(r["instance"], r["method"]): r for r in rows}
    for metric in [m for m in METRIC_TITLES if any(c["metric"] == m for c in cells)]:
        out.append(f"- **{METRIC_TITLES[metric]}**: {WHY.get(metric, '')}")
        for c in (c for c in cells if c["metric"] == metric):
            dan = by[(c["instance"], "dan")]
            for m in c["by"]:
                other = by[(c["instance"], m)]
                rest = ", ".join(
                    f"{SHORT[k]} {other[k]:,} (dan {dan[k]:,})"
                    for k in ("max_v_stay", "extra_traffic", "spill_count", "makespan")
                    if k != metric and dan.get(k) is not None
                )
                v = "invalid" if c["value"] is None else f"{c['value']:,}"
                s1 = ((dan.get("info") or {}).get("stages") or {}).get("mpas", {}).get("max_v_stay")
                stage1 = (
                    f" dan's Stage-1 order (problem 1): {s1:,}." if metric == "max_v_stay" and s1 is not None else ""
                )
                out.append(f"  - {c['instance']}: dan {v}, {m} {c['best']:,}; {m} carries {rest}.{stage1}")
    return out + [""]


def machine() -> str:
    """The machine this process runs on, as ``meta.json`` records it."""
    return f"{platform.machine()}, {os.cpu_count()} CPU(s) (shared), Python {platform.python_version()}"


def header(
    rows: list[dict],
    seconds: float | None,
    jobs: int,
    time_limit: float,
    refreshed: str | None = None,
    measured_on: str | None = None,
) -> list[str]:
    cases = sorted({r["instance"] for r in rows})
    lines = [
        "# Benchmarks",
        "",
        "Generated by `python benchmarks/make_benchmarks.py` (do not edit by hand): "
        f"{len(cases)} official cases x {len({r['method'] for r in rows})} methods, every plan judged "
        "by the shared evaluator. Raw rows: `benchmarks/results/bench/bench.json` (and `.csv`, `.md`; "
        "`meta.json`: wall clock and options).",
        "",
        f"- Machine: {measured_on or machine()};"
        f" `--jobs {jobs}`, `--time-limit {time_limit:g}`"
        + (f"; whole bench {seconds / 60:.1f} min wall clock." if seconds is not None else "."),
        *([f"- Partly refreshed: {refreshed}."] if refreshed else []),
        "- Methods: `base` (input order, best fit, LRU), `hmcos`, `magis`, `cosma`, `gbs` (external"
        " baselines, no timing stage; see `dansched/application/baselines/`), `lru` (DAN with the LRU victim rule),"
        " `mpas-paper` (DAN with the literal Stage 1), `dan-no-cpe` (problem-2 plan), `dan-memory-windows`, `dan-no-time-driven` and `dan-no-other-rules` (the problem-3 ablations), `dan` (full pipeline)."
        " EDA (Pao et al., 2025), the paper's fourth baseline, is left out: no public description we could"
        " re-implement.",
        "- Peak is the logical `maxV_stay` over L1+UB of the plan's order (problems 2 and 3 do not"
        " enforce the problem-1 L0 rule, so orders that ignore it can score lower); the paper's ratios"
        " in Table 2 are not directly comparable (other rules, other replay backend).",
        "",
    ]
    return lines


def _section(path: Path, heading: str) -> list[str]:
    """The lines of ``path`` from ``heading`` up to the next heading of the same level."""
    if not path.is_file():
        return []
    lines = path.read_text().splitlines()
    if heading not in lines:
        return []
    i = lines.index(heading) + 1
    level = heading.split(" ")[0] + " "
    out = []
    while i < len(lines) and not lines[i].startswith(level):
        out.append(lines[i])
        i += 1
    return out


def other_results() -> list[str]:
    """The heuristic-vs-exact audit, the scaling runs, the bounds,
    the makespan floors and the sweeps, copied from their own result files
    (regenerate those with benchmarks/bench_audit.py, bench_scale.py, bench_bounds.py,
    bench_timing.py and bench_sweep.py)."""
    out: list[str] = []
    audit = RESULTS.parent / "bench_audit.md"
    gaps = _section(audit, "## Gap distribution (pipeline traffic against the joint optimum)")
    if gaps:
        out += [
            "## Heuristic vs exact optimum on small graphs (problem 2)",
            "",
            "From `benchmarks/results/bench_audit.md` (per-seed rows and set-up there): the pipeline's "
            "problem-2 traffic against the exact joint CP-SAT optimum (`dansched/models/exact/joint.py`) on "
            "38-40-node random graphs with tight tiers.",
        ] + gaps
    for scale in sorted(RESULTS.parent.glob("bench_scale*.md")):
        body = scale.read_text().splitlines()[2:]
        family = scale.stem.removeprefix("bench_scale").lstrip("_") or "random"
        out += (
            [
                f"## Scaling (full pipeline on generated `{family}` graphs)",
                "",
                f"From `benchmarks/results/{scale.name}`:",
                "",
            ]
            + body
            + [""]
        )
    bounds = RESULTS.parent / "bench_bounds.md"
    if bounds.is_file():  # lower bounds over all orders, and `dansched bound`'s wall time
        out += [
            "## Lower bounds over all orders",
            "",
            "From `benchmarks/results/bench_bounds.md` (regenerate with `python3 benchmarks/bench_bounds.py`):",
            "",
        ]
        out += [
            line.replace("## ", "### ", 1) if line.startswith("## ") else line
            for line in bounds.read_text().splitlines()[2:]
        ] + [""]
    timing = RESULTS.parent / "bench_timing.md"
    if timing.is_file():  # problem-3 makespan at three traffic allowances, beside its floors
        out += [
            "## Problem-3 makespan against its floors (traffic slack 0, 20, 100 %)",
            "",
            "From `benchmarks/results/bench_timing.md` (regenerate with `python3 benchmarks/bench_timing.py`):",
            "",
        ]
        out += timing.read_text().splitlines()[2:] + [""]
    sweep = RESULTS.parent / "bench_sweep.md"
    if sweep.is_file():  # dansched sweep, local pool vs Dask
        body = [
            line.replace("## ", "### ", 1) if line.startswith("## ") else line
            for line in sweep.read_text().splitlines()[2:]
        ]
        out += (
            ["## Hardware sweeps (`dansched sweep`)", "", "From `benchmarks/results/bench_sweep.md`:", ""] + body + [""]
        )
        for png in sorted(RESULTS.parent.glob("sweep_L1*.png")):
            out += [f"![{png.stem}](benchmarks/results/{png.name})", ""]
    return out


def render(source: Path = RESULTS / "bench.json") -> str:
    """The text of BENCHMARKS.md from the result files: the rows in ``source``, its
    ``meta.json`` (wall clock, options, the machine, which rows were re-run), the other
    result files of ``benchmarks/results/`` and the anchors."""
    rows = json.loads(source.read_text())
    meta = source.with_name("meta.json")  # how the rows were produced, when known
    m = json.loads(meta.read_text()) if meta.is_file() else {}
    head = header(
        rows,
        m.get("seconds"),
        m.get("jobs", 1),
        m.get("time_limit", 60.0),
        m.get("refreshed"),  # rows of some methods re-run after the whole bench
        m.get("machine"),
    )
    body = bench_markdown(rows, load_anchors()).split("\n", 1)[1]  # drop the generic title
    text = "\n".join(head) + body.rstrip() + "\n\n" + "\n".join(notes(rows))
    text += "\n" + "\n".join(other_results())
    return text.rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--from", dest="source", type=Path, help="redraw from an existing bench.json instead of running")
    args = ap.parse_args(argv)
    if args.source:
        atomic_write_text(TARGET, render(args.source))
        print(f"make_benchmarks: {TARGET} redrawn from {args.source}", file=sys.stderr)
        return 0
    d = official_dir()
    if d is None:
        print("make_benchmarks: ../shared/instances/official not found", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    rows = run_bench(
        sorted(d.glob("*.json")),
        [m.strip() for m in args.methods.split(",")],
        jobs=args.jobs,
        time_limit=args.time_limit,
        on_row=lambda r: print(
            f"  {r['instance']} {r['method']}: {'valid' if r['valid'] else 'INVALID'} {r['seconds']}s",
            file=sys.stderr,
        ),
    )
    seconds = time.perf_counter() - t0
    write_bench(rows, RESULTS)
    meta = {"seconds": round(seconds, 1), "jobs": args.jobs, "time_limit": args.time_limit, "machine": machine()}
    atomic_write_text(RESULTS / "meta.json", json.dumps(meta, indent=2) + "\n")
    atomic_write_text(TARGET, render())
    print(f"make_benchmarks: {len(rows)} rows -> {TARGET} in {seconds / 60:.1f} min", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
