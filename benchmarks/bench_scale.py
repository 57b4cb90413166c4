"""Scaling benchmark: the full pipeline on generated graphs of about 10k,
100k and 1M nodes; time and peak memory per stage, and the growth exponent.

Each size runs in its own process (so peak RSS is that size's): generate, load,
then :func:`dansched.pipeline.run_pipeline` for problem 3 -- exactly what ``dansched
solve --problem 3`` runs (MPAS, DLR, CPE with its Stage-2 rounds), every stage's
plan checked by the evaluator. Writes ``benchmarks/results/bench_scale.md``
(``bench_scale_<family>.md`` for ``--family`` other than ``random``).

    python3 benchmarks/bench_scale.py            # 10k, 100k, 1M
    python3 benchmarks/bench_scale.py --max 100000
    python3 benchmarks/bench_scale.py --family matmul --sizes 10000,100000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# nodes ~ c * scale**p per family (measured on scales 1-8), to pick the scale for a size
NODES_OF_SCALE = {
    "random": (47.5, 1),
    "matmul": (60.5, 3),
    "fa": (131.0, 2),
    "conv": (69.0, 2),
    "chain": (192.0, 1),
    "ladder": (192.0, 1),
}


def scale_for(family: str, target_nodes: int) -> int:
    c, p = NODES_OF_SCALE[family]
    return max(1, round((target_nodes / c) ** (1 / p)))


def run_size(target_nodes: int, family: str, seed: int) -> dict:
    """One size, in this process: ``dansched solve --problem 3`` (:func:`dansched.pipeline.run_pipeline`)
    on a generated graph; seconds per stage from its report, peak RSS (MiB) at each stage's end."""
    from dansched.generate import generate
    from dansched.instance import instance_from_records
    from dansched.pipeline import SolveOptions, run_pipeline

    row: dict = {"family": family}
    rss: list[float] = []
    t = time.perf_counter()
    nodes, edges = generate(family, scale_for(family, target_nodes), seed)
    row["generate_s"] = time.perf_counter() - t
    t = time.perf_counter()
    inst = instance_from_records(f"{family}_{target_nodes}", nodes, edges)
    del nodes, edges
    row["load_s"] = time.perf_counter() - t
    row["nodes"], row["edges"] = inst.n, inst.num_edges
    res = run_pipeline(inst, SolveOptions(problem=3), progress=lambda _msg: rss.append(peak_rss_mib()))
    rss.append(peak_rss_mib())  # rss[k]: peak so far when stage k+1 starts; the last: at the end
    report = res.report.to_dict()
    stages = report["stages"]
    for key in ("mpas", "dlr", "cpe"):
        row[f"{key}_s"] = stages[key]["seconds"]
    row["rss_mpas"], row["rss_dlr"], row["rss_cpe"] = rss[1], rss[2], rss[3]
    row["peak_rss_mib"] = rss[-1]
    row["mpas_variant"] = stages["mpas"]["variant"]
    row["stage3_steps"] = stages.get("relayout", {}).get("steps", [])
    row["max_v_stay"] = stages["mpas"]["max_v_stay"]
    row["extra_traffic"] = report["extra_traffic"]
    row["makespan_dlr"], row["makespan"] = stages["dlr"]["makespan"], report["makespan"]
    row["total_s"] = sum(row[k] for k in ("load_s", "mpas_s", "dlr_s", "cpe_s"))
    return row


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def exponent(a: dict, b: dict, key: str) -> float | None:
    if a[key] <= 0 or b[key] <= 0:
        return None
    return math.log(b[key] / a[key]) / math.log(b["nodes"] / a["nodes"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--max", type=int, default=None, help="skip sizes above this")
    ap.add_argument("--family", default="random", choices=sorted(NODES_OF_SCALE))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=int, default=1800, help="seconds allowed per size")
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(run_size(args.one, args.family, args.seed)))
        return
    sizes = [int(s) for s in args.sizes.split(",") if args.max is None or int(s) <= args.max]
    rows: list[dict] = []
    for n in sizes:
        print(f"size {n:,} ...", file=sys.stderr, flush=True)
        before = os.getloadavg()[0]
        try:
            out = subprocess.run(
                [sys.executable, __file__, "--one", str(n), "--family", args.family, "--seed", str(args.seed)],
                capture_output=True,
                text=True,
                timeout=args.timeout,
            )
        except subprocess.TimeoutExpired:
            rows.append({"nodes": n, "error": f"did not finish within {args.timeout} s"})
        else:
            if out.returncode != 0:
                last = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"
                rows.append({"nodes": n, "error": last})
            else:
                rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        rows[-1] |= {"load_before": before, "load_after": os.getloadavg()[0]}  # idle or shared: said beside the times
        print(json.dumps(rows[-1]), file=sys.stderr)
        write_table(rows, args)  # after every size, so a long run leaves its figures behind


def write_table(rows: list[dict], args) -> None:
    lines = [
        "# bench_scale",
        "",
        f"`dansched solve --problem 3` (MPAS -> DLR -> CPE with its Stage-2 rounds) on generated "
        f"`{args.family}` graphs, seed {args.seed}; every stage's plan accepted by the evaluator. "
        "Seconds per stage (from the solve report; load = building the instance from the generated "
        "records); peak RSS of the process at the end of each stage. "
        + (
            f"Machine: {os.cpu_count()} cores, load average {rows[0]['load_before']:.1f} before, "
            f"{rows[-1]['load_after']:.1f} after."
            if rows and "load_before" in rows[0]
            else ""
        ),
        "",
        "| nodes | edges | load s | MPAS s | DLR s | CPE s | total s | peak RSS MiB after MPAS / DLR / CPE "
        "| maxV_stay | traffic | makespan after DLR -> CPE |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    ok = [r for r in rows if "error" not in r]
    for r in rows:
        if "error" in r:
            lines.append(f"| ~{r['nodes']:,} | failed: {r['error']} |||||||||")
            continue
        lines.append(
            f"| {r['nodes']:,} | {r['edges']:,} | {r['load_s']:.1f} | {r['mpas_s']:.1f} | {r['dlr_s']:.1f} | "
            f"{r['cpe_s']:.1f} | {r['total_s']:.1f} | {r['rss_mpas']:,.0f} / {r['rss_dlr']:,.0f} / "
            f"{r['rss_cpe']:,.0f} | {r['max_v_stay']:,} | {r['extra_traffic']:,} | "
            f"{r['makespan_dlr']:,} -> {r['makespan']:,} |"
        )
    if ok:
        lines += [
            "",
            "What ran at each size (the pipeline bounds its work by graph size, so the "
            "exponents below mix cost and work):",
            "",
        ]
        for r in ok:
            steps = ", ".join(r.get("stage3_steps", [])) or "none"
            lines.append(f"- {r['nodes']:,} nodes: Stage 1 `{r['mpas_variant']}`; Stage-3 rounds: {steps}")
    if len(ok) >= 2:
        lines += ["", "Growth exponent (log time ratio / log node ratio; 1.0 is linear, n log n is about 1.1):", ""]
        for a, b in zip(ok, ok[1:]):
            parts = []
            for key in ("mpas_s", "dlr_s", "cpe_s", "total_s"):
                e = exponent(a, b, key)
                parts.append(f"{key[:-2]} {e:.2f}" if e is not None else f"{key[:-2]} -")
            ratio = b["total_s"] / a["total_s"] if a["total_s"] > 0 else float("nan")
            lines.append(f"- {a['nodes']:,} -> {b['nodes']:,}: " + ", ".join(parts) + f"; total time x{ratio:.1f}")
    out_path = HERE / "results" / ("bench_scale.md" if args.family == "random" else f"bench_scale_{args.family}.md")
    out_path.parent.mkdir(exist_ok=True)
    out_path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
