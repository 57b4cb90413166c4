"""Scaling benchmark (issue 9): the full pipeline on generated graphs of about 10k,
100k and 1M nodes; time and peak memory per stage, and the growth exponent.

Each size runs in its own process (so peak RSS is that size's), stage by stage:
generate -> load -> MPAS -> DLR -> CPE (the same calls ``dansched solve`` makes),
and every plan is checked by the evaluator. Writes
``benchmarks/results/bench_scale.md``.

    python3 benchmarks/bench_scale.py            # 10k, 100k, 1M
    python3 benchmarks/bench_scale.py --max 100000
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
NODES_PER_SCALE = 47.5  # random family: about 47.5 nodes per unit of scale


def run_size(target_nodes: int, family: str, seed: int) -> dict:
    """One size, in this process: returns seconds per stage and peak RSS (MiB)."""
    from dansched.generate import generate
    from dansched.instance import instance_from_records
    from dansched.pipeline import _judged
    from dansched.simulate import evaluate
    from dansched.stages.cpe import cpe_refine
    from dansched.stages.dlr import dlr_plan
    from dansched.stages.mpas import mpas_order
    from dansched.plan import Plan

    row: dict = {"family": family}
    t = time.perf_counter()
    nodes, edges = generate(family, max(1, round(target_nodes / NODES_PER_SCALE)), seed)
    row["generate_s"] = time.perf_counter() - t
    t = time.perf_counter()
    inst = instance_from_records(f"{family}_{target_nodes}", nodes, edges)
    del nodes, edges
    row["load_s"] = time.perf_counter() - t
    row["nodes"], row["edges"] = inst.n, inst.num_edges
    t = time.perf_counter()
    s1 = mpas_order(inst)
    row["mpas_s"] = time.perf_counter() - t
    ev1 = evaluate(inst, Plan(order=tuple(s1.order)))
    row["max_v_stay"], row["p1_valid"] = ev1.max_v_stay, ev1.valid
    t = time.perf_counter()
    s2 = dlr_plan(inst, s1.order)
    row["dlr_s"] = time.perf_counter() - t
    ev2 = _judged(inst, s2.plan, "DLR")
    row["extra_traffic"] = ev2.extra_traffic
    t = time.perf_counter()
    s3 = cpe_refine(inst, s2.plan, ev2)
    row["cpe_s"] = time.perf_counter() - t
    ev3 = _judged(inst, s3.plan, "CPE")
    row["makespan_dlr"], row["makespan"] = ev2.makespan, ev3.makespan
    row["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    row["total_s"] = sum(row[k] for k in ("load_s", "mpas_s", "dlr_s", "cpe_s"))
    return row


def exponent(a: dict, b: dict, key: str) -> float | None:
    if a[key] <= 0 or b[key] <= 0:
        return None
    return math.log(b[key] / a[key]) / math.log(b["nodes"] / a["nodes"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--max", type=int, default=None, help="skip sizes above this")
    ap.add_argument("--family", default="random")
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
        try:
            out = subprocess.run(
                [sys.executable, __file__, "--one", str(n), "--family", args.family, "--seed", str(args.seed)],
                capture_output=True, text=True, timeout=args.timeout,
            )
        except subprocess.TimeoutExpired:
            rows.append({"nodes": n, "error": f"did not finish within {args.timeout} s"})
        else:
            if out.returncode != 0:
                last = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"
                rows.append({"nodes": n, "error": last})
            else:
                rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), file=sys.stderr)
        write_table(rows, args)  # after every size, so a long run leaves its figures behind


def write_table(rows: list[dict], args) -> None:
    lines = [
        "# bench_scale",
        "",
        f"Full pipeline (MPAS -> DLR -> CPE) on generated `{args.family}` graphs, seed {args.seed}; "
        "every plan accepted by the evaluator. Seconds per stage; peak RSS of the whole process.",
        "",
        "| nodes | edges | load s | MPAS s | DLR s | CPE s | total s | peak RSS MiB | maxV_stay | traffic | makespan |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    ok = [r for r in rows if "error" not in r]
    for r in rows:
        if "error" in r:
            lines.append(f"| ~{r['nodes']:,} | failed: {r['error']} |||||||||")
            continue
        lines.append(
            f"| {r['nodes']:,} | {r['edges']:,} | {r['load_s']:.1f} | {r['mpas_s']:.1f} | {r['dlr_s']:.1f} | "
            f"{r['cpe_s']:.1f} | {r['total_s']:.1f} | {r['peak_rss_mib']:,.0f} | {r['max_v_stay']:,} | "
            f"{r['extra_traffic']:,} | {r['makespan']:,} |"
        )
    if len(ok) >= 2:
        lines += ["", "Growth exponent (log time ratio / log node ratio; 1.0 is linear, n log n is about 1.1):", ""]
        for a, b in zip(ok, ok[1:]):
            parts = []
            for key in ("mpas_s", "dlr_s", "cpe_s", "total_s"):
                e = exponent(a, b, key)
                parts.append(f"{key[:-2]} {e:.2f}" if e is not None else f"{key[:-2]} -")
            ratio = b["total_s"] / a["total_s"] if a["total_s"] > 0 else float("nan")
            lines.append(f"- {a['nodes']:,} -> {b['nodes']:,}: " + ", ".join(parts) + f"; total time x{ratio:.1f}")
    out_path = HERE / "results" / "bench_scale.md"
    out_path.parent.mkdir(exist_ok=True)
    out_path.write_text("\n".join(lines) + "\n")

if __name__ == "__main__":
    main()
