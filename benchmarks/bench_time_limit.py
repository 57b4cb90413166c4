"""How close ``dansched solve --time-limit S`` ends to S (docs/guide.md, *Stopping early*):
each official case at S = 1, 2, 4, 8, 16 seconds, one real process each; the command's wall
time, where the stop landed (the report's ``stopped``) and the evaluator's verdict on the
folder it wrote. Writes benchmarks/results/bench_time_limit.md (the load average beside it:
a wall clock measured on a busy machine says little).

    python3 benchmarks/bench_time_limit.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OFFICIAL = next(
    (
        p / "shared" / "instances" / "official"
        for p in REPO.parents
        if (p / "shared" / "instances" / "official").is_dir()
    ),
    REPO.parent / "shared" / "instances" / "official",
)
CASES = ["Conv_Case0", "FlashAttention_Case0", "FlashAttention_Case1", "Matmul_Case0", "Matmul_Case1"]
LIMITS = [1, 2, 4, 8, 16]
RESULT = REPO / "benchmarks" / "results" / "bench_time_limit.md"


def dansched(*args: object) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "dansched.cli", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)


def main() -> int:
    if not OFFICIAL.is_dir():
        print(f"no official instances at {OFFICIAL}")
        return 1
    rows = []
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            inst = OFFICIAL / f"{case}.json"
            for limit in LIMITS:
                out = Path(tmp) / f"{case}-{limit}"
                t0 = time.monotonic()
                proc = dansched("solve", inst, "--time-limit", limit, "--out", out, "--quiet", "--json")
                wall = time.monotonic() - t0
                stopped = json.loads(proc.stdout).get("stopped") if proc.returncode == 0 else None
                verdict = dansched("evaluate", inst, "--plan", out, "--json")
                valid = verdict.returncode == 0 and json.loads(verdict.stdout)["valid"]
                step = stopped["step"][:44] or "before its first step" if stopped else ""
                where = f"{stopped['seconds']:.1f} s, {step}" if stopped else "not stopped: finished"
                rows.append(f"| {case} | {limit} | {proc.returncode} | {wall:.1f} | {where} | {valid} |")
                print(rows[-1], flush=True)
    text = [
        "# `solve --time-limit S`: where the stop lands and when the command ends",
        "",
        f"Measured by `benchmarks/bench_time_limit.py` (2-core machine, load average {load:.2f} at the start).",
        "Wall: the whole command, start-up and the write included; the clock of S starts with the command.",
        "",
        "| case | S | exit | wall (s) | stopped (report) | valid |",
        "|---|---:|---:|---:|---|---|",
        *rows,
        "",
    ]
    RESULT.write_text("\n".join(text))
    print(f"wrote {RESULT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
