"""Benchmark: what ``dansched sweep`` costs per cell, and Dask against the local pool.

Targets on the 2-core project machine:

1. **Per-cell overhead** with trivial instances (dispatch, hashing, writing the
   JSON line) under 50 ms locally. ``overhead`` runs a sweep of ``--instances``
   trivial instances (the ``Exp`` example of docs/rules.md, section 9, with one node's Cycles changed, so
   every instance has its own content hash) x ``--points`` UB capacities, three
   ways: the cells' own work alone (:func:`dansched.application.sweep.run_cell` in a loop,
   nothing else), then :func:`dansched.application.sweep.run_sweep` in this process
   (``--jobs 1``) and on the local pool (``--jobs 2``, pool start-up included).
   Overhead per cell = (sweep wall - the cells' own work / workers) / cells.
   The reports (CSV, Markdown, PNGs) are written once per sweep and timed apart.
2. **Grid, local pool vs Dask**: the instances of a folder (default: the five
   official cases) x L1 in {2048, 3072, 4096} x UB in {512, 768, 1024}
   (problem 3; 45 cells for five instances), ``dansched sweep`` with ``--jobs 2``
   and with ``--dask-workers 2``, run one after another in ``--order`` (e.g.
   ``local,dask,local`` to bracket a change of load on a shared machine): the
   wall time of each command, the cells' own seconds, Dask's overhead relative to
   the local pool (target under 10 %), and a check that every run recorded the
   same rows (apart from ``seconds``). On the official cases this is long (each
   Matmul_Case1 cell takes minutes); the L1 PNG of the first run is copied to
   ``benchmarks/results/sweep_L1.png``.

Usage::

    python benchmarks/bench_sweep.py overhead [--instances 10] [--points 20]
    python benchmarks/bench_sweep.py grid [--instances DIR] [--order local,dask,local] [--out-root DIR]

Each mode prints a Markdown table and writes it to
``benchmarks/results/bench_sweep.md`` (the other mode's section is kept).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dansched.application.executor import ExecutorOptions, dask_available
from dansched.application.sweep import (
    SweepOptions,
    grid_points,
    parse_sets,
    plan_cells,
    read_done,
    run_cell,
    run_sweep,
    write_reports,
)
from dansched.hardware import load_hardware

REPO = Path(__file__).resolve().parents[1]
OFFICIAL = REPO.parent / "shared" / "instances" / "official"
RESULTS = REPO / "benchmarks" / "results" / "bench_sweep.md"
OFFICIAL_SETS = ["L1=2048,3072,4096", "UB=512,768,1024"]


def trivial_instances(folder: Path, count: int) -> list[Path]:
    """``count`` copies of ``instances/Exp.json`` with node 1's Cycles set to 10 + k."""
    base = json.loads((REPO / "instances" / "Exp.json").read_text())
    paths = []
    for k in range(count):
        data = json.loads(json.dumps(base))
        op = next(n for n in data["Nodes"] if n["Op"] not in ("ALLOC", "FREE"))
        op["Cycles"] = 10 + k
        p = folder / f"trivial{k:03d}.json"
        p.write_text(json.dumps(data))
        paths.append(p)
    return paths


def measure_overhead(n_inst: int, n_points: int) -> list[str]:
    hw = load_hardware()
    sets = ["UB=" + ",".join(str(1024 + 16 * i) for i in range(n_points))]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        paths = trivial_instances(t, n_inst)
        t0 = time.perf_counter()
        cells = plan_cells(paths, hw, grid_points(hw, parse_sets(sets, hw)), SweepOptions(problem=3))
        plan_s = time.perf_counter() - t0
        n = len(cells)
        for c in cells[:3]:  # warm the imports and caches the workers will also have warm
            run_cell(c.path, c.instance, c.instance_hash, c.hw_table, c.hw_model, c.problem, c.options)
        t0 = time.perf_counter()
        for c in cells:
            r = run_cell(c.path, c.instance, c.instance_hash, c.hw_table, c.hw_model, c.problem, c.options)
            assert r["valid"], r["error"]
        work = time.perf_counter() - t0
        rows.append(("cells' own work (run_cell in a loop)", 1, work, None))
        for label, jobs in (("sweep in this process (--jobs 1)", 1), ("sweep on the local pool (--jobs 2)", 2)):
            out = t / f"out{jobs}"
            t0 = time.perf_counter()
            res = run_sweep(cells, out, ExecutorOptions(jobs=jobs))
            wall = time.perf_counter() - t0
            assert res.ran == n and not res.lost
            t0 = time.perf_counter()
            write_reports(res.rows, out)
            rep = time.perf_counter() - t0
            rows.append((label, jobs, wall, rep))
    lines = [
        "## Per-cell overhead with trivial instances",
        "",
        f"{n_inst} trivial instances (7 nodes) x {n_points} UB capacities = {n} cells, problem 3; "
        f"hashing and cell planning for all cells: {1000 * plan_s:.1f} ms. "
        "Overhead per cell = (wall - own work / workers) / cells; the reports are written once per sweep.",
        "",
        "| Run | Workers | Wall (s) | Per cell (ms) | Overhead per cell (ms) | Reports (s) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, jobs, wall, rep in rows:
        over = "-" if rep is None else f"{1000 * (wall - work / jobs) / n:.1f}"
        lines.append(
            f"| {label} | {jobs} | {wall:.2f} | {1000 * wall / n:.1f} | {over} | {'-' if rep is None else f'{rep:.2f}'} |"
        )
    return lines + [""]


def _strip(rows):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


EXECUTORS = {"local": ["--jobs", "2"], "dask": ["--dask-workers", "2"]}


def run_grid(instances: Path, order: list[str], out_root: Path) -> list[tuple[str, Path, float]]:
    """Run ``dansched sweep`` on the grid once per executor in ``order`` (fresh folders),
    one after another; returns (executor, folder, wall seconds of the command)."""
    runs = []
    for k, name in enumerate(order):
        d = out_root / f"sweep_{name}_{k}"
        shutil.rmtree(d, ignore_errors=True)
        cmd = [
            sys.executable,
            "-m",
            "dansched.cli",
            "sweep",
            str(instances),
            *sum((["--set", s] for s in OFFICIAL_SETS), []),
            "--problem",
            "3",
            "--out",
            str(d),
            "--quiet",
            *EXECUTORS[name],
        ]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
        runs.append((name, d, time.perf_counter() - t0))
        print(f"{name}: {runs[-1][2]:.1f} s", file=sys.stderr)
    return runs


def grid_table(instances: Path, runs: list[tuple[str, Path, float]], png_to: Path | None) -> list[str]:
    rows_of = []
    for _, d, _ in runs:
        rows_of.append(
            sorted(
                read_done(d / "sweep.jsonl").values(),
                key=lambda r: (r["instance"], r["capacity"]["L1"], r["capacity"]["UB"]),
            )
        )
    same = all(_strip(r) == _strip(rows_of[0]) for r in rows_of)
    n_cells = len(rows_of[0])
    lines = [
        f"## Grid {instances.name}/: L1 {{2048, 3072, 4096}} x UB {{512, 768, 1024}} ({n_cells} cells, problem 3), local pool vs Dask",
        "",
        "Runs one after another in the order listed (local, Dask, local again brackets a change of machine load). "
        "Cell seconds: the sum of the cells' own `seconds`; efficiency: (cell seconds / 2 workers) / wall.",
        "",
        "| Run | Executor | Cells | Failed | Wall of the command (s) | Cell seconds (s) | Efficiency |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for k, ((name, _, wall), rows) in enumerate(zip(runs, rows_of)):
        cs = sum(r["seconds"] or 0 for r in rows)
        label = "local pool, --jobs 2" if name == "local" else "local Dask cluster, --dask-workers 2"
        lines.append(
            f"| {k + 1} | {label} | {len(rows)} | {sum(not r['valid'] for r in rows)} | {wall:.1f} | {cs:.1f} | {cs / 2 / wall:.2f} |"
        )
    local = [w for n, _, w in runs if n == "local"]
    dask = [w for n, _, w in runs if n == "dask"]
    if local and dask:
        ref = sum(local) / len(local)
        lines += [
            "",
            f"Dask's overhead: {100 * (sum(dask) / len(dask) - ref) / ref:+.1f} % of the local pool's mean wall time "
            "(target under 10 %).",
        ]
    lines += [
        f"Rows identical across runs apart from `seconds`: {'yes' if same else 'NO'}.",
        "",
        "### Figures per cell (first run)",
        "",
        "| Instance | L1 | UB | maxV_stay | Extra traffic | Spills | Makespan | Seconds |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows_of[0]:

        def f(k: str, r: dict = r) -> str:
            return "-" if r.get(k) is None else f"{r[k]:,}"

        lines.append(
            f"| {r['instance']} | {r['capacity']['L1']} | {r['capacity']['UB']} | {f('max_v_stay')} | "
            f"{f('extra_traffic')} | {f('spill_count')} | {f('makespan') if r['valid'] else 'failed: ' + str(r['error'])} | {r['seconds']:.1f} |"
        )
    png = runs[0][1] / "sweep_L1.png"
    if png_to is not None and png.exists():
        shutil.copyfile(png, png_to)
        lines += ["", f"Makespan and traffic against L1 (UB = 1024): `{png_to.name}`."]
    return lines + [""]


def write_section(title: str, lines: list[str]) -> None:
    """Replace the section ``title`` of the results file (keeping the other one)."""
    head = [
        "# bench_sweep",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        "shared with other jobs while measured (timings inflated by contention).",
        "",
    ]
    sections: dict[str, list[str]] = {}
    if RESULTS.exists():
        cur = None
        for line in RESULTS.read_text().splitlines():
            if line.startswith("## "):
                cur = line
                sections[cur] = []
            if cur is not None:
                sections[cur].append(line)
    sections[title] = lines
    order = sorted(sections, key=lambda s: 0 if "overhead" in s else 1)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(head + [x for s in order for x in sections[s]]).rstrip() + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    o = sub.add_parser("overhead")
    o.add_argument("--instances", type=int, default=10)
    o.add_argument("--points", type=int, default=20)
    g = sub.add_parser("grid")
    g.add_argument("--instances", type=Path, default=OFFICIAL)
    g.add_argument("--order", default="local,dask", help="executors in run order, e.g. local,dask,local")
    g.add_argument("--out-root", type=Path, default=Path(tempfile.gettempdir()))
    a = ap.parse_args()
    if a.mode == "overhead":
        lines = measure_overhead(a.instances, a.points)
    else:
        order = [x.strip() for x in a.order.split(",") if x.strip()]
        if "dask" in order and not dask_available():
            sys.exit("grid with dask needs Dask: pip install -e '.[dist]'")
        png = RESULTS.parent / ("sweep_L1.png" if a.instances == OFFICIAL else f"sweep_L1_{a.instances.name}.png")
        lines = grid_table(a.instances, run_grid(a.instances, order, a.out_root), png)
    print("\n".join(lines))
    write_section(lines[0], lines)


if __name__ == "__main__":
    main()
