"""Re-run the reproductions of a reliability probe of dansched, and more of the same kinds,
printing for each the command and what it prints now (the closing note of the probe is
drawn from this output).

    python3 benchmarks/repro_reliability.py            # everything (a few minutes)
    python3 benchmarks/repro_reliability.py unit api   # some sections

Sections: ``unit`` (a plan folder and its frontier's point folders as one unit),
``memory`` (capacities far past the graph's buffers), ``inputs`` (duplicate JSON keys,
byte-order marks, names, the slack's ceiling), ``api`` (the Python API's door),
``anytime`` (a solve that stops with its best plan; the official FlashAttention_Case1
when ``../shared/instances/official`` is there). Every run is a real ``dansched``
process in a temporary folder; the checks print ``ok`` or what failed, and the script
exits 1 when one failed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "instances"
# ../shared beside the checkout (a worktree of /work/wt/NAME: two folders up)
OFFICIAL = next(
    (
        p / "shared" / "instances" / "official"
        for p in REPO.parents
        if (p / "shared" / "instances" / "official").is_dir()
    ),
    REPO.parent / "shared" / "instances" / "official",
)
FAILED: list[str] = []


def env(**extra: str) -> dict[str, str]:
    out = dict(os.environ, **extra)
    out["PYTHONPATH"] = str(REPO) + os.pathsep + out.get("PYTHONPATH", "")
    return out


def shown(args: list) -> str:
    return "dansched " + " ".join(str(a) for a in args)


def run(*args, quiet: bool = True) -> subprocess.CompletedProcess:
    """``dansched ARGS`` as a process; prints the command, its exit status and its output
    (progress lines left out)."""
    args = [str(a) for a in args]
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "dansched.cli", *args], capture_output=True, text=True, env=env(), timeout=900
    )
    took = time.monotonic() - started
    print(f"$ {shown(args)}   # exit {proc.returncode}, {took:.1f} s")
    for line in proc.stdout.splitlines()[: 12 if quiet else None]:
        print(f"  {line}")
    for line in proc.stderr.splitlines():
        if "elapsed; now:" not in line:
            print(f"  (stderr) {line}")
    return proc


def check(what: str, ok: bool, detail: object = "") -> None:
    print(f"  -> {'ok' if ok else 'FAILED'}: {what}" + (f" ({detail})" if detail and not ok else ""))
    if not ok:
        FAILED.append(what)


def started(args: list, err: Path) -> subprocess.Popen:
    print(f"$ {shown(args)} &")
    fh = open(err, "wb")
    return subprocess.Popen(
        [sys.executable, "-m", "dansched.cli", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=fh,
        env=env(DANSCHED_HEARTBEAT="0.01"),
        text=True,
        start_new_session=True,
    )


def wait_for(proc: subprocess.Popen, err: Path, words: str, timeout: float = 300) -> bool:
    deadline = time.monotonic() + timeout
    while words not in err.read_text() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    return words in err.read_text()


def lines_of(err: Path) -> list[str]:
    return [s for s in err.read_text().splitlines() if "elapsed; now:" not in s]


def unit_of(out: Path, case: str) -> tuple[bool, str]:
    """Whether ``out`` holds one run's unit whole: the point folders are exactly its
    report's frontier rows (with --frontier), every report has the same options, every
    folder passes the checker, no temporary, marker or lock file; and a summary."""
    sys.path.insert(0, str(REPO))
    from dansched.plan_folder import check_folder, folder_group

    report = json.loads((out / f"{case}_report.json").read_text())
    base = out / f"{case}_frontier"
    there = sorted(p.name for p in base.iterdir()) if base.is_dir() else []
    rows = (
        sorted(f"traffic-{r['traffic']}" for r in report.get("frontier", [])) if report["options"]["frontier"] else []
    )
    reports = [json.loads((base / t / f"{case}_report.json").read_text()) for t in there if (base / t).is_dir()]
    same = all(r["options"] == report["options"] for r in reports)
    junk = [str(p) for p in out.rglob(".*")]
    try:
        for folder in [out] + [base / t for t in there]:
            check_folder(folder, case, folder_group())
        checked = True
    except Exception as exc:  # MixedPlanError
        checked = bool(print(f"  checker: {exc}"))
    slack = report["options"]["traffic_slack"]
    return there == rows and same and not junk and checked, f"slack {slack}, points {there}, report rows {rows}"


# ---- the frontier's folders ------------------------------------------------------------------


def section_unit(tmp: Path) -> None:
    print("\n## The frontier's folders as one unit\n")
    conv = SHIPPED / "conv_s2.json"
    hw = tmp / "hw1024.toml"
    hw.write_text("[tiers]\nL1 = 1024\n")
    many = tmp / "hw768.toml"  # a tighter L1: a frontier of several points (one at 1024)
    many.write_text("[tiers]\nL1 = 768\n")
    out = tmp / "unit"
    base_args = ["solve", conv, "--hw", hw, "--frontier", "--out", out, "--quiet"]
    many_args = ["solve", conv, "--hw", many, "--frontier", "--out", out, "--quiet"]

    print("1. A signal just after the folder's own group is written (the probe: a point of the")
    print("   earlier run left, a new one missing). Earlier run: L1 768 (several points), then L1 1024.")
    run(*many_args)
    err = tmp / "err1"
    proc = started([*base_args[:-1], "--traffic-slack", "0"], err)
    wait_for(proc, err, "Writing the plan folder")
    proc.send_signal(signal.SIGINT)
    code = proc.wait(timeout=300)
    print(f"  (exit {code}) {lines_of(err)[-1] if lines_of(err) else ''}")
    whole, what = unit_of(out, "conv_s2")
    check("OUT is one run's unit whole: the point folders are its report's rows", whole, what)
    print(f"  {what}")

    print("\n2. A point folder path taken by a file: refused before the work.")
    (out / "conv_s2_frontier").mkdir(exist_ok=True)
    blocker = out / "conv_s2_frontier" / "traffic-99"
    blocker.write_text("in the way\n")
    proc2 = run(*base_args, "--traffic-slack", "100")
    check("exit 2, one line, before the work", proc2.returncode == 2 and len(proc2.stderr.splitlines()) == 1)
    blocker.unlink()
    print("   A point folder that cannot be written after the work (the disk filled up): the")
    print("   library call, with the write of the point folder's files failing (ENOSPC).")
    probe = f"""
import errno, os, sys
sys.path.insert(0, {str(REPO)!r})
import dansched, dansched.plan_folder as pf
inst = dansched.load_instance({str(conv)!r}, dansched.load_hardware({str(hw)!r}))
real = os.open
def full(path, *a, **k):
    if "_frontier" in str(path) and ".dansched-tmp-" in str(path):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))
    return real(path, *a, **k)
pf.os.open = full
try:
    dansched.solve(inst, dansched.effort_options("default", frontier=True, traffic_slack=100), out={str(out)!r})
except dansched.errors.WriteFailed as exc:
    print(type(exc).__name__ + ": " + str(exc))
"""
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    got = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env(), timeout=600)
    print(f"  {got.stdout.strip()}")
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    check("WriteFailed (exit 1 on the command line), nothing replaced", "nothing was replaced" in got.stdout)
    check("the folder and its points are as they were, byte for byte", before == after)

    print("\n3. A temporary file a killed run left in a point folder the next frontier lacks.")
    run(*many_args)
    points = sorted(p.name for p in (out / "conv_s2_frontier").iterdir())
    left = out / "conv_s2_frontier" / points[-1] / ".conv_s2_schedule.txt.dansched-tmp-deadbeef"
    left.write_text("left by a killed run\n")
    run(*base_args, "--traffic-slack", "0")
    now = sorted(str(p.relative_to(out)) for p in (out / "conv_s2_frontier").rglob("*"))
    print(f"  OUT/conv_s2_frontier now: {now}")
    check("the leftover and its folder are gone", not left.exists() and not left.parent.exists())

    print("\n4. Two concurrent --frontier solves into one OUT (L1 768 and L1 1024: other points), twice.")
    for trial in range(2):
        errs = [tmp / f"c{trial}a", tmp / f"c{trial}b"]
        procs = [started(args[:-1], e) for args, e in zip((many_args, base_args), errs)]
        codes = [p.wait(timeout=600) for p in procs]
        whole, what = unit_of(out, "conv_s2")
        print(f"  exits {codes}: {what}")
        check("one run's unit whole after both", whole and codes == [0, 0], what)

    print("\n   More of the kind: SIGKILL while the unit is written, then the next run.")
    err = tmp / "err5"
    proc = started(many_args[:-1], err)
    wait_for(proc, err, "Writing the plan folder")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    run(*base_args, "--traffic-slack", "0")
    whole, what = unit_of(out, "conv_s2")
    check("the next run leaves its unit whole, no leftover", whole, what)


# ---- memory ------------------------------------------------------------------------------------


def _solve_rss(args: list) -> tuple[int, float, int]:
    """(exit status, seconds, peak RSS in MiB) of the process ``dansched ARGS``."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dansched.cli", *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env(),
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, time.monotonic() - start, usage.ru_maxrss // 1024


def section_memory(tmp: Path) -> None:
    print("\n## Memory and time scale with the graph, not with capacities\n")
    print(f"  (load average {os.getloadavg()[0]:.2f}; each line is a fresh process and its peak RSS)")
    for case, effort in (("matmul_s2", "fast"), ("matmul_s2", "default"), ("conv_s2", "default")):
        for tiers in ("", "L1 = 1000000000000", "L1 = 100000000", "L1 = 9223372036854775807\nUB = 9223372036854775807"):
            hw = tmp / "hw_mem.toml"
            hw.write_text(f"[tiers]\n{tiers}\n")
            args = ["solve", SHIPPED / f"{case}.json", "--effort", effort, "--out", tmp / "mem", "--quiet"]
            if tiers:
                args += ["--hw", hw]
            code, took, rss = _solve_rss(args)
            label = tiers.replace("\n", ", ") or "default hardware"
            print(f"$ dansched solve {case}.json --effort {effort} ({label})   # exit {code}, {took:.1f} s, {rss} MiB")
            check(f"{case} {effort} {label}: a plan", code == 0)


# ---- inputs ------------------------------------------------------------------------------------


def section_inputs(tmp: Path) -> None:
    print("\n## Inputs never silently changed\n")
    data = json.loads((SHIPPED / "Exp.json").read_text())
    dup = tmp / "dup.json"
    nodes = json.dumps(data["Nodes"])
    dup.write_text(
        f'{{"Nodes": {nodes}, "Edges": {json.dumps(data["Edges"])}, "Nodes": {json.dumps(data["Nodes"][:3])}}}'
    )
    p = run("solve", dup, "--out", tmp / "dup_out", "--quiet")
    check(
        "a duplicated 'Nodes' is refused, naming key and file",
        p.returncode == 2 and "'Nodes' is given twice" in p.stderr,
    )
    first = json.dumps(data["Nodes"][0])
    rec = tmp / "dup_record.json"
    rec.write_text(json.dumps(data).replace(first, first[:-1] + ', "Size": 99}', 1))
    p = run("info", rec)
    check("a key given twice in a node record too", p.returncode == 2 and "'Size' is given twice" in p.stderr)

    bom = tmp / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf[tiers]\nUB = 512\n")
    p = run("solve", SHIPPED / "Exp.json", "--hw", bom, "--out", tmp / "bom_out", "--quiet", "--effort", "fast")
    check("a TOML hardware file with a byte-order mark is read, as CSV and JSON are", p.returncode == 0)
    for name in ("Exp_schedule.txt", "Exp_memory.txt"):
        path = tmp / "bom_out" / name
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    p = run("evaluate", SHIPPED / "Exp.json", "--schedule", tmp / "bom_out" / "Exp_schedule.txt", "--memory",
            tmp / "bom_out" / "Exp_memory.txt", "--hw", bom)  # fmt: skip
    check("plan files with a byte-order mark are judged as without", p.returncode == 0 and "is valid" in p.stdout)

    for text, what in (('[new_tiers]\n"" = 5\n', 'a tier named ""'), ('[new_tiers]\n"S RAM" = 5\n', "a tier with a space"),
                       ('[roles]\npipes = ["MTE1", "MTE2", "MTE3", "FIXP", "CUBE", " "]\n', "a pipe named ' '")):  # fmt: skip
        hw = tmp / "names.toml"
        hw.write_text(text)
        p = run("solve", SHIPPED / "Exp.json", "--hw", hw, "--out", tmp / "names_out", "--quiet")
        check(f"{what} is refused in one line", p.returncode == 2 and len(p.stderr.splitlines()) == 1)
    for slack in ("1e300", "1000001"):
        p = run("solve", SHIPPED / "Exp.json", "--traffic-slack", slack, "--out", tmp / "slack_out")
        check(f"--traffic-slack {slack} is refused in one line", p.returncode == 2 and len(p.stderr.splitlines()) == 1)


# ---- the API -----------------------------------------------------------------------------------

API = """
import sys, math
sys.path.insert(0, {repo!r})
import dansched
inst = dansched.load_instance({exp!r})
solved = dansched.solve(inst, dansched.effort_options("fast"), bounds=False)
ev = solved.evaluation
calls = [
    ("dansched.solve(inst, outputs=None)", lambda: dansched.solve(inst, outputs=None)),
    ("dansched.solve(inst, outputs=5)", lambda: dansched.solve(inst, outputs=5)),
    ("dansched.solve(inst, outputs='view')", lambda: dansched.solve(inst, outputs="view")),
    ("dansched.solve(inst, outputs=('html',))", lambda: dansched.solve(inst, outputs=("html",))),
    ("dansched.makespan_lower_bound(inst, ev.graph)", lambda: dansched.makespan_lower_bound(inst, ev.graph)),
    ("dansched.makespan_lower_bound(inst, ev.graph, [6, 5, 4, 3, 2, 1, 0])",
     lambda: dansched.makespan_lower_bound(inst, ev.graph, [6, 5, 4, 3, 2, 1, 0])),
    ("solved.point_report(-1)", lambda: solved.point_report(-1)),
    ("solved.point_report(5)", lambda: solved.point_report(5)),
    ("solved.point_report('0')", lambda: solved.point_report("0")),
    ("inst.succ(None)", lambda: inst.succ(None)),
    ("inst.buffer_index(99)", lambda: inst.buffer_index(99)),
    ("inst.hw.spill_cycles(math.nan)", lambda: inst.hw.spill_cycles(math.nan)),
    ("inst.hw.tier_index('UBB')", lambda: inst.hw.tier_index("UBB")),
    ("dansched.bound(inst, params=True)", lambda: dansched.bound(inst, params=True)),
    ("dansched.read_spill('a\\\\rb')", lambda: dansched.read_spill("a\\rb")),
]
documented = tuple(getattr(dansched.errors, n) for n in dansched.errors.__all__ if n[0].isupper() and n != "Interrupted")
for text, call in calls:
    try:
        got = call()
        print(f"{{text}} -> {{str(got)[:70]}}")
    except documented as exc:
        lines = len(str(exc).splitlines())
        print(f"{{text}} -> {{type(exc).__name__}}: {{exc}}" + ("" if lines == 1 else f"  [{{lines}} LINES]"))
    except Exception as exc:
        print(f"{{text}} -> UNDOCUMENTED {{type(exc).__name__}}: {{exc}}")
"""


def section_api(tmp: Path) -> None:
    print("\n## The Python API checked at the door\n")
    got = subprocess.run(
        [sys.executable, "-c", API.format(repo=str(REPO), exp=str(SHIPPED / "Exp.json"))],
        capture_output=True,
        text=True,
        env=env(),
        timeout=600,
        cwd=tmp,
    )
    for line in got.stdout.splitlines():
        print(f"  >>> {line}")
    check("only documented errors, each one line", "UNDOCUMENTED" not in got.stdout and "LINES]" not in got.stdout
          and got.returncode == 0, got.stderr[-300:])  # fmt: skip
    print("  (the class as a whole: python3 -m pytest tests/test_api_misuse.py, every parameter of every")
    print("   public call and of every public method of the objects they return, with random values)")


# ---- anytime -----------------------------------------------------------------------------------


def section_anytime(tmp: Path) -> None:
    print("\n## A solve that stops with its best plan\n")
    print(f"  (load average {os.getloadavg()[0]:.2f})")
    fa1 = OFFICIAL / "FlashAttention_Case1.json"
    if fa1.exists():
        out = tmp / "fa1"
        p = run("solve", fa1, "--time-limit", "4", "--out", out)
        report = json.loads((out / "FlashAttention_Case1_report.json").read_text())
        print(f"  report stopped: {report.get('stopped')}")
        check(
            "--time-limit 4: exit 0, a valid folder whose report says it was cut",
            p.returncode == 0 and "stopped" in report,
        )
        q = run("evaluate", fa1, "--plan", out)
        check("the folder's plan is valid", q.returncode == 0)
    else:
        print("  (no ../shared/instances/official here: FlashAttention_Case1 skipped)")
    fa = SHIPPED / "fa_s2.json"
    out, err = tmp / "ctrl_c", tmp / "ctrl_c.err"
    proc = started(["solve", fa, "--out", out], err)
    wait_for(proc, err, "Makespan search")
    print("  (Ctrl-C once the makespan search runs)")
    proc.send_signal(signal.SIGINT)
    stdout, _ = proc.communicate(timeout=300)
    for line in stdout.splitlines():
        print(f"  {line}")
    for line in lines_of(err):
        print(f"  (stderr) {line}")
    report = json.loads((out / "fa_s2_report.json").read_text()) if (out / "fa_s2_report.json").exists() else {}
    check("exit 130, the best plan written, its report says Ctrl-C stopped it", proc.returncode == 130
          and report.get("stopped", {}).get("by") == "Ctrl-C")  # fmt: skip
    q = run("evaluate", fa, "--plan", out)
    check("the folder's plan is valid", q.returncode == 0)

    print("\n  A second Ctrl-C, while the run waits to write (this script holds the folder's lock):")
    sys.path.insert(0, str(REPO))
    from dansched.plan_folder import folder_lock

    out, err = tmp / "twice", tmp / "twice.err"
    proc = started(["solve", fa, "--out", out], err)
    wait_for(proc, err, "Makespan search")
    with folder_lock(out):
        proc.send_signal(signal.SIGINT)
        wait_for(proc, err, "Writing the plan folder")
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=300)
    for line in lines_of(err):
        print(f"  (stderr) {line}")
    check("exit 130, nothing written", proc.returncode == 130 and not list(out.iterdir()))


SECTIONS = {
    "unit": section_unit,
    "memory": section_memory,
    "inputs": section_inputs,
    "api": section_api,
    "anytime": section_anytime,
}


def main() -> int:
    chosen = sys.argv[1:] or list(SECTIONS)
    tmp = Path(tempfile.mkdtemp(prefix="dansched-repro-"))
    try:
        for name in chosen:
            SECTIONS[name](tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n{len(FAILED)} check(s) failed" + (f": {FAILED}" if FAILED else ""))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
