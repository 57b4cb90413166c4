"""Benchmark: ``dansched view`` pages opened in headless Chromium.

For each plan: the time to build the page in Python (data + HTML), the file size,
and, in Chromium driven by Playwright, the time from navigation start until the
page's first draw has finished (the ``data-ready`` attribute the page sets, read
as ``performance.now()``: it includes reading and parsing the HTML and the inline
JSON, decoding the columns and drawing every panel), the wall time the Playwright
client waited for it (browser start excluded), the time of one full redraw at the
whole-plan view and at a 1 % zoom, and the console errors (must be none).

Plans. By default: Matmul_Case1 from ``../shared/instances/official`` (about 35k
nodes with its spills), the random family at ``--scale 6000`` (about 288k nodes,
no spills) and the matmul family at ``--scale 17`` (about 286k nodes, with
spills), seed 0, each solved with ``--problem 3`` into ``--work`` unless its plan
files are already there. ``--plan INSTANCE DIR`` (repeatable) measures given plans
instead.

Targets: Matmul_Case1 opens and draws in under 3 s and its file is under 10 MB;
a 300k-node plan opens and draws in under 10 s.

Usage::

    python benchmarks/bench_view.py [--plan INSTANCE DIR ...] [--work DIR] [--repeat 3]

Needs the ``chromium`` executable and ``playwright`` (``pip install -e '.[view]'``).
Prints Markdown and writes it to ``benchmarks/results/bench_view.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path

from dansched.application.judge import judge_folder
from dansched.application.report.view import build_view_data, view_html
from dansched.generate import generate
from dansched.instance import instance_from_records, load_instance
from dansched.pipeline import SolveOptions, run_pipeline
from dansched.plan import atomic_write_text, contest_paths, write_plan
from dansched.plan_folder import read_report

REPO = Path(__file__).resolve().parents[1]
OFFICIAL = REPO.parent / "shared" / "instances" / "official"
RESULTS = REPO / "benchmarks" / "results" / "bench_view.md"
TARGET_S = {"Matmul_Case1": 3.0}
BIG_TARGET_S, BIG_NODES, SIZE_TARGET_MB = 10.0, 250_000, 10.0
GENERATED = (("random", 6000), ("matmul", 17))  # about 288k and 286k nodes; the matmul plan spills


def ensure_plan(instance: Path, work: Path) -> Path:
    """Plan folder of ``instance`` under ``work``, solved with problem 3 when missing."""
    inst = load_instance(instance)
    folder = work / inst.name
    if not contest_paths(folder, inst.name)["memory"].is_file():
        print(f"solving {inst.name} ({inst.n:,} nodes) with --problem 3 ...", file=sys.stderr)
        result = run_pipeline(inst, SolveOptions(problem=3))
        write_plan(result.plan, folder, inst.name, report=json.dumps(result.report.to_dict(), indent=2) + "\n")
    return folder


def default_plans(work: Path) -> list[tuple[Path, Path]]:
    work.mkdir(parents=True, exist_ok=True)
    pairs = []
    mm1 = OFFICIAL / "Matmul_Case1.json"
    if mm1.is_file():
        pairs.append((mm1, ensure_plan(mm1, work)))
    else:
        print(f"skipping Matmul_Case1: {mm1} not found", file=sys.stderr)
    for family, scale in GENERATED:
        path = work / f"{family}_{scale}.json"
        if not path.is_file():
            nodes, edges = generate(family, scale, 0)
            instance_from_records(path.stem, nodes, edges)  # must load
            atomic_write_text(path, json.dumps({"Nodes": nodes, "Edges": edges}, separators=(",", ":")) + "\n")
        pairs.append((path, ensure_plan(path, work)))
    return pairs


def build_page(instance: Path, folder: Path, out: Path) -> dict:
    t0 = time.perf_counter()
    inst = load_instance(instance)
    plan, ev = judge_folder(inst, folder)  # the folder checked as every reader does
    assert ev.valid, f"{folder}: invalid plan"
    t1 = time.perf_counter()
    html = view_html(build_view_data(inst, plan, ev, read_report(folder, inst.name)))
    t2 = time.perf_counter()
    atomic_write_text(out, html)
    return {
        "case": inst.name,
        "nodes": len(plan.order),
        "tasks": None,
        "spills": ev.spill_count,
        "eval_s": t1 - t0,
        "build_s": t2 - t1,
        "bytes": out.stat().st_size,
        "path": out,
    }


def measure_in_browser(browser, path: Path, repeat: int) -> dict:
    ready, wall, full, zoom, errors = [], [], [], [], []
    tasks = 0
    for _ in range(repeat):
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        t = time.perf_counter()
        page.goto(path.resolve().as_uri(), timeout=120_000)
        page.wait_for_selector("body[data-ready]", timeout=120_000)
        wall.append(time.perf_counter() - t)
        ready.append(float(page.get_attribute("body", "data-ready")) / 1000)
        full.append(
            page.evaluate("""() => { const v = window.dansched.view(); const t = performance.now();
            window.dansched.setView(v.t0, v.t1); return performance.now() - t; }""")
            / 1000
        )
        zoom.append(
            page.evaluate("""() => { const m = window.dansched.data.makespan, t = performance.now();
            window.dansched.setView(0.5 * m, 0.51 * m); return performance.now() - t; }""")
            / 1000
        )
        tasks = page.evaluate("window.dansched.data.tasks.id.length")
        page.close()
    med = statistics.median
    return {
        "ready_s": med(ready),
        "wall_s": med(wall),
        "redraw_s": med(full),
        "zoom_s": med(zoom),
        "errors": len(errors),
        "tasks": tasks,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--plan", nargs=2, action="append", metavar=("INSTANCE", "DIR"), help="measure this plan (repeatable)"
    )
    ap.add_argument(
        "--work", type=Path, default=Path("/tmp/dansched_bench_view"), help="folder for solved plans and pages"
    )
    ap.add_argument("--repeat", type=int, default=3, help="page loads per plan (the median is reported)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    exe = shutil.which("chromium")
    if exe is None:
        sys.exit("bench_view: no chromium executable on PATH (apt-get install chromium)")
    pairs = [(Path(a), Path(b)) for a, b in args.plan] if args.plan else default_plans(args.work)
    rows = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        for instance, folder in pairs:
            row = build_page(instance, folder, args.work / f"{instance.stem}_view.html")
            row.update(measure_in_browser(browser, row["path"], args.repeat))
            rows.append(row)
            print(f"{row['case']}: {row['ready_s']:.2f} s to first draw, {row['bytes'] / 1e6:.1f} MB", file=sys.stderr)
        version = browser.version
        browser.close()
    lines = [
        "# bench_view: `dansched view` pages in headless Chromium",
        "",
        "Generated by `python3 benchmarks/bench_view.py"
        + (" --plan ..." if args.plan else "")
        + f" --repeat {args.repeat}`"
        f" (median of {args.repeat} loads). Chromium {version}, viewport 1400x1000, machine {platform.machine()},"
        f" Python {platform.python_version()}, load average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
        " (a shared host inflates every time below).",
        "",
        "*first draw*: navigation start to the end of the first draw of every panel (`data-ready`);"
        " *client wait*: what the Playwright client waited from `goto` to `data-ready`;"
        " *redraw*: one full redraw of all panels at the whole-plan view, and at a 1 % window of the makespan.",
        "",
        "| plan | nodes (with spill nodes) | tasks | spills | page build (s) | file (MB) | first draw (s) | client wait (s) | redraw (ms) | redraw 1 % (ms) | console errors | target | met |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in rows:
        limit = TARGET_S.get(r["case"], BIG_TARGET_S if r["nodes"] >= BIG_NODES else None)
        size_ok = r["case"] not in TARGET_S or r["bytes"] / 1e6 < SIZE_TARGET_MB
        target = (
            "-" if limit is None else f"< {limit:g} s" + (f", < {SIZE_TARGET_MB:g} MB" if r["case"] in TARGET_S else "")
        )
        met = "-" if limit is None else ("yes" if r["wall_s"] < limit and size_ok and not r["errors"] else "no")
        lines.append(
            f"| {r['case']} | {r['nodes']:,} | {r['tasks']:,} | {r['spills']:,} | {r['build_s']:.1f} | {r['bytes'] / 1e6:.2f} |"
            f" {r['ready_s']:.2f} | {r['wall_s']:.2f} | {1000 * r['redraw_s']:.0f} | {1000 * r['zoom_s']:.0f} | {r['errors']} | {target} | {met} |"
        )
    lines += [
        "",
        "A target is met when the client wait (the larger of the two load times) is under it, the file is small"
        " enough and the console shows no error.",
    ]
    text = "\n".join(lines) + "\n"
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
