"""Draw the README's picture of a traffic-makespan frontier (``docs/frontier.png``).

Solves the instance with the ``dansched`` importable here, as a user would (``dansched
solve INSTANCE --frontier`` in a temporary folder, so the plan folders are
``dansched-out/...``), or reads a folder such a solve wrote (``--plan``), and draws the
plot the ``dansched view`` page shows of its report's frontier: makespan against extra
traffic, one dot per point (the knee filled, the plan of the solve's folder ringed), the
floor for each point's traffic dashed under them (``dansched.application.report.plots.frontier_png_bytes``).
Beside the picture it writes what it shows (``docs/frontier.json``: the instance, the
command, the rows, what the command printed); the README's frontier section is made from
that record (``benchmarks/make_doc_figures.py``, run at the end;
``tests/test_doc_figures.py`` checks the section against the record).

Needs matplotlib (``pip install -e '.[plot]'``): checked first, one line and exit 2 without
it, before any solve. Usage (from the repository root)::

    python3 docs/frontier_picture.py                          # FlashAttention_Case1 -> docs/frontier.png
    python3 docs/frontier_picture.py --instance CASE.json [--hw FILE] [--traffic-slack PCT] --out PICTURE.png
    python3 docs/frontier_picture.py --plan FOLDER --instance CASE.json   # a folder solve --frontier wrote
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_INSTANCE = REPO.parent / "shared" / "instances" / "official" / "FlashAttention_Case1.json"
DEFAULT_OUT = REPO / "docs" / "frontier.png"
COLUMNS = "80"  # the screen the record keeps is what an 80-column terminal shows


def shown(path: Path) -> str:
    """``path`` as a user at the repository root types it (relative when it can be)."""
    try:
        return os.path.relpath(os.path.abspath(path), REPO)  # a link stays as the user named it
    except ValueError:  # another drive
        return str(path)


def solve(instance: Path, extra: list[str], folder: Path) -> tuple[Path, str]:
    """``dansched solve INSTANCE --frontier EXTRA`` run in ``folder`` (its plan folder:
    ``folder/dansched-out``); the folder and what the command printed."""
    cmd = [sys.executable, "-m", "dansched.cli", "solve", str(instance.resolve()), "--frontier", *extra]
    env = {**os.environ, "COLUMNS": COLUMNS, "PYTHONPATH": str(REPO)}
    got = subprocess.run(cmd, cwd=folder, stdout=subprocess.PIPE, text=True, env=env, check=False)
    if got.returncode != 0:
        sys.exit(f"frontier_picture: dansched solve failed (exit {got.returncode})")
    return folder / "dansched-out", got.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instance", type=Path, default=DEFAULT_INSTANCE, help="instance to solve and draw")
    parser.add_argument("--hw", type=Path, help="hardware file for the solve")
    parser.add_argument("--traffic-slack", help="--traffic-slack of the solve")
    parser.add_argument("--plan", type=Path, help="a folder that solve --frontier wrote, drawn instead of solving")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="PNG to write (its record: the .json beside it)")
    args = parser.parse_args(argv)
    if importlib.util.find_spec("matplotlib") is None:  # before any solve: the picture needs it
        print("frontier_picture: matplotlib is not installed: pip install -e '.[plot]'", file=sys.stderr)
        return 2
    if not args.instance.is_file():
        print(f"frontier_picture: {shown(args.instance)}: no such instance (give --instance)", file=sys.stderr)
        return 2
    sys.path.insert(0, str(REPO))
    from dansched.application.report.plots import frontier_png_bytes, write_bytes_atomic
    from dansched.instance import instance_name

    case = instance_name(args.instance)
    extra = [*(["--hw", str(args.hw.resolve())] if args.hw else [])]
    extra += ["--traffic-slack", args.traffic_slack] if args.traffic_slack else []
    command = " ".join(["dansched solve", shown(args.instance), "--frontier"])
    command += (f" --hw {shown(args.hw)}" if args.hw else "") + (
        f" --traffic-slack {args.traffic_slack}" if args.traffic_slack else ""
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder, screen = (args.plan, "") if args.plan is not None else solve(args.instance, extra, Path(tmp))
        report = json.loads((folder / f"{case}_report.json").read_text())
    rows = report.get("frontier") or []
    if not rows:
        print(f"frontier_picture: {case}_report.json holds no frontier (solve it with --frontier)", file=sys.stderr)
        return 2
    chosen = next(
        (
            k
            for k, r in enumerate(rows)
            if (r["traffic"], r["makespan"]) == (report["extra_traffic"], report["makespan"])
        ),
        None,
    )
    write_bytes_atomic(args.out, frontier_png_bytes(rows, f"{case}: traffic-makespan frontier", chosen))
    record = {
        "instance": case,
        "command": command,
        "picture": shown(args.out),
        "points": len(rows),
        "chosen": chosen,
        "rows": [{k: r[k] for k in ("traffic", "over_problem2", "makespan", "knee")} for r in rows],
        "screen": screen.rstrip("\n").splitlines(),
    }
    args.out.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"{shown(args.out)}: {args.out.stat().st_size:,} bytes, {len(rows)} point(s)")
    if args.out.resolve() == DEFAULT_OUT:  # the README's picture: its section follows the record
        subprocess.run([sys.executable, str(REPO / "benchmarks" / "make_doc_figures.py")], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
