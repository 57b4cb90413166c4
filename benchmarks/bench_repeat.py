"""Reproducibility under load: solve each case N times at once (the concurrent runs are
the load) and check that the plan files are byte-identical and the reports identical
apart from every key named ``seconds`` (README: "report.json is identical apart from
its seconds fields").

    python3 benchmarks/bench_repeat.py                       # the official cases, 3 at once
    python3 benchmarks/bench_repeat.py instances/Exp.json --runs 4
    python3 benchmarks/bench_repeat.py --compare CASE DIR1 DIR2 ...   # folders already solved

Prints one verdict per case and, for a report that differs, each differing key path.
Exit 1 when any case differs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

OFFICIAL = Path(__file__).resolve().parents[2] / "shared" / "instances" / "official"


def without_seconds(d: Any) -> Any:
    """The report with every key named ``seconds`` dropped, at any depth."""
    if isinstance(d, dict):
        return {k: without_seconds(v) for k, v in d.items() if k != "seconds"}
    if isinstance(d, list):
        return [without_seconds(v) for v in d]
    return d


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Key paths where two reports differ (lists of different lengths count as one)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in differences(a.get(k), b.get(k), f"{path}/{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {json.dumps(a)[:120]} vs {json.dumps(b)[:120]}"]


def compare(case: str, dirs: list[Path]) -> bool:
    """Print the verdict for ``case`` solved into ``dirs``; True when all agree."""
    reports = [without_seconds(json.loads((d / f"{case}_report.json").read_text())) for d in dirs]
    diffs = [(d, differences(reports[0], r)) for d, r in zip(dirs[1:], reports[1:])]
    files_same = all(
        len({(d / f"{case}_{k}.txt").read_bytes() for d in dirs}) == 1 for k in ("schedule", "memory", "spill")
    )
    same = files_same and not any(x for _, x in diffs)
    figures = sorted({(r["makespan"], r["extra_traffic"]) for r in reports})
    print(
        f"{case}: plan files {'identical' if files_same else 'DIFFER'}, reports "
        f"{'identical apart from seconds' if not any(x for _, x in diffs) else 'DIFFER'}; (makespan, traffic) {figures}"
    )
    for d, x in diffs:
        for line in x:
            print(f"  {dirs[0].name} vs {d.name}: {line}")
    return same


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("instances", nargs="*", type=Path)
    ap.add_argument("--runs", type=int, default=3, help="solves of each case at once")
    ap.add_argument("--compare", nargs="+", metavar="CASE DIR", help="only compare folders already solved")
    args = ap.parse_args()
    if args.compare:
        return 0 if compare(args.compare[0], [Path(d) for d in args.compare[1:]]) else 1
    cases = args.instances or sorted(OFFICIAL.glob("*.json"))
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for inst in cases:
            dirs = [Path(tmp) / f"{inst.stem}_run{i}" for i in range(1, args.runs + 1)]
            cmd = [sys.executable, "-m", "dansched.cli", "solve", str(inst), "--quiet", "--out"]
            procs = [subprocess.Popen([*cmd, str(d)]) for d in dirs]
            if any(p.wait() != 0 for p in procs):
                print(f"{inst.stem}: a solve failed")
                ok = False
                continue
            ok = compare(inst.stem, dirs) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
