"""One consistent plan per folder: group writes, stale files, fingerprints,
the folder lock, and kill tests.

Kill tests spawn writers and kill them (SIGTERM or SIGKILL) at seeded random
moments, then check that the folder holds one consistent plan -- or is flagged as
interrupted, which the checkers refuse -- and that the next run leaves one
consistent plan and no temporary file:

- a writer process that calls :func:`write_group` in a loop, each group tagged with
  its generation in every file (so a mixed folder is seen directly), problem-1 and
  problem-3 shaped groups alternating: :data:`LOOP_KILLS` kills in the default
  run, :data:`LOOP_KILLS_SLOW` under ``-m slow``;
- real ``dansched solve`` processes: :data:`SOLVE_KILLS` / :data:`SOLVE_KILLS_SLOW`.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dansched.errors import OutputError
from dansched.plan_folder import (
    LOCK_NAME,
    TMP_TAG,
    MixedPlanError,
    check_folder,
    folder_group,
    group_paths,
    plan_fingerprint,
    write_group,
)

GROUP = folder_group()  # the group a solve writes: contest files, trace, page, report
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SEED = 17
LOOP_KILLS, LOOP_KILLS_SLOW = 4, 60
SOLVE_KILLS, SOLVE_KILLS_SLOW = 2, 10


def group_files(gen: int, full: bool) -> dict[str, str]:
    files = {"schedule": f"{gen}\n" * 50}
    if full:
        files["memory"] = f"{gen}:0\n" * 50
        files["spill"] = f"{gen}:1\n"
    fp = plan_fingerprint({k: v.encode() for k, v in files.items()})
    if full:
        files["trace"] = json.dumps(
            {"traceEvents": [], "otherData": {"gen": gen, "plan_fingerprint": fp["sha256"]}}, indent=1
        )
    files["report"] = json.dumps({"gen": gen, "fingerprint": fp}, indent=2) + "\n"
    return files


def temporaries(folder: Path) -> list[str]:
    if not folder.exists():
        return []
    return sorted(p.name for p in folder.iterdir() if TMP_TAG in p.name or p.name.endswith(".incomplete"))


def generations(folder: Path, case: str) -> set[int]:
    """The generation each present group file carries."""
    gens = set()
    for kind, p in group_paths(folder, case, GROUP).items():
        if not p.exists():
            continue
        text = p.read_text()
        if kind == "report":
            gens.add(json.loads(text)["gen"])
        elif kind == "trace":
            gens.add(json.loads(text)["otherData"]["gen"])
        else:
            gens.add(int(text.split(":")[0].split("\n")[0]))
    return gens


def assert_one_plan_or_flagged(folder: Path, case: str) -> bool:
    """Either check_folder accepts and every file is of one generation, or it refuses."""
    try:
        check_folder(folder, case, GROUP)
    except MixedPlanError:
        return False
    assert len(generations(folder, case)) <= 1, generations(folder, case)
    return True


# ---------------------------------------------------------------------------------
# the group writer and the checker
# ---------------------------------------------------------------------------------


def test_stale_files_are_removed_and_the_fingerprint_matches(tmp_path):
    write_group(tmp_path, "c", group_files(1, True), GROUP)
    assert check_folder(tmp_path, "c", GROUP) is not None and generations(tmp_path, "c") == {1}
    written = write_group(tmp_path, "c", group_files(2, False), GROUP)  # a problem-1 run after a problem-3 run
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["c_report.json", "c_schedule.txt"]  # and no lock file left behind
    assert written == [tmp_path / "c_schedule.txt", tmp_path / "c_report.json"]  # the paths, in rename order
    assert check_folder(tmp_path, "c", GROUP)["files"].keys() == {"schedule"}


@pytest.mark.parametrize("damage", ["edit", "old-memory", "missing", "foreign-trace", "marker"])
def test_checker_refuses_a_mixed_folder(tmp_path, damage):
    write_group(tmp_path, "c", group_files(1, damage != "old-memory"), GROUP)
    p = group_paths(tmp_path, "c", GROUP)
    if damage == "edit":
        p["memory"].write_text("1:8\n")
    elif damage == "old-memory":
        p["memory"].write_text("0:0\n")
    elif damage == "missing":
        p["spill"].unlink()
    elif damage == "foreign-trace":
        p["trace"].write_text(json.dumps({"otherData": {"plan_fingerprint": "0" * 64}}, indent=1))
    else:
        (tmp_path / ".c.incomplete").write_text("")
    with pytest.raises(MixedPlanError, match="mixes two plans|interrupted") as info:
        check_folder(tmp_path, "c", GROUP)
    todo = {  # each refusal says what to do, in the same line
        "edit": "dansched evaluate judges them as they are",
        "old-memory": "dansched evaluate judges them as they are",
        "missing": "dansched evaluate judges them as they are",
        "foreign-trace": "delete c_trace.json or write it again",
        "marker": "run dansched solve again",
    }
    assert todo[damage] in str(info.value) and "\n" not in str(info.value)
    write_group(tmp_path, "c", group_files(2, True), GROUP)  # the next run repairs it
    assert assert_one_plan_or_flagged(tmp_path, "c") and temporaries(tmp_path) == []


def test_leftovers_of_a_killed_run_are_removed_by_the_next(tmp_path):
    write_group(tmp_path, "c", group_files(1, True), GROUP)
    (tmp_path / f".c_schedule.txt{TMP_TAG}dead").write_text("x")
    (tmp_path / ".c.incomplete").write_text("")
    (tmp_path / f".other_schedule.txt{TMP_TAG}dead").write_text("x")  # another case's: left alone
    write_group(tmp_path, "c", group_files(2, False), GROUP)
    assert temporaries(tmp_path) == [f".other_schedule.txt{TMP_TAG}dead"]


def test_a_failed_write_touches_nothing(tmp_path):
    write_group(tmp_path, "c", group_files(1, True), GROUP)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    (tmp_path / "pic.png").mkdir()
    with pytest.raises(Exception, match="is a folder"):
        write_group(tmp_path, "c", group_files(2, True), GROUP, extra={tmp_path / "pic.png": b"png"})
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before


def test_a_failed_write_leaves_no_lock_file_and_no_new_folder(tmp_path):
    """The lock file goes with the run that took it, also when the write fails; a folder
    the failed write created is removed again (nothing half-written)."""
    (tmp_path / "afile").write_text("x")
    below_a_file = {tmp_path / "afile" / "pic.png": b"png"}  # fails while the lock is held
    with pytest.raises(OutputError, match="pic.png: cannot write"):
        write_group(tmp_path / "plans", "c", group_files(1, True), GROUP, extra=below_a_file)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
    with pytest.raises(OutputError, match="pic.png: cannot write"):
        write_group(tmp_path / "new" / "plans", "c", group_files(1, True), GROUP, extra=below_a_file)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
    write_group(tmp_path, "c", group_files(1, True), GROUP)
    with pytest.raises(OutputError, match="pic.png: cannot write"):
        write_group(tmp_path, "c", group_files(2, True), GROUP, extra=below_a_file)
    assert LOCK_NAME not in [p.name for p in tmp_path.iterdir()] and generations(tmp_path, "c") == {1}


def _no_inode_for_the_lock(monkeypatch):
    """Creating the lock file fails as on a file system with no inode left (ENOSPC)."""
    import errno

    import dansched.plan_folder as pf

    real = os.open

    def fake(path, *a, **k):
        if str(path).endswith(LOCK_NAME):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, *a, **k)

    monkeypatch.setattr(pf.os, "open", fake)


def test_a_lock_that_cannot_be_created_removes_the_folders_the_run_made(tmp_path, monkeypatch):
    _no_inode_for_the_lock(monkeypatch)
    with pytest.raises(OutputError, match="No space left on device"):
        write_group(tmp_path / "new" / "deeper", "c", group_files(1, True), GROUP)
    assert list(tmp_path.iterdir()) == []  # both folders it created are gone
    (tmp_path / "kept").mkdir()  # a folder that was there before stays
    with pytest.raises(OutputError):
        write_group(tmp_path / "kept", "c", group_files(1, True), GROUP)
    assert [p.name for p in tmp_path.iterdir()] == ["kept"] and list((tmp_path / "kept").iterdir()) == []


def test_solve_into_a_new_folder_with_no_inode_left_is_one_line_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    """The folder passed the checks before the work; the disk filled up after it: an I/O
    failure (exit 1, the input was fine), one line that says nothing was replaced."""
    from helpers import SHIPPED, run_cli

    _no_inode_for_the_lock(monkeypatch)
    code, _, err = run_cli(monkeypatch, capsys, "solve", SHIPPED / "Exp.json", "--quiet", "--out", tmp_path / "a" / "b")
    assert code == 1 and len(err.strip().splitlines()) == 1 and "No space left on device" in err, err
    assert "nothing was replaced" in err
    assert list(tmp_path.iterdir()) == []


def test_a_waiter_on_a_removed_lock_file_takes_the_current_one(tmp_path):
    """Removing the lock file on release is safe: a writer that was waiting on the old file
    sees it is no longer the folder's lock and locks the current one instead, so two
    writers never hold "the" lock at once."""
    lock = tmp_path / LOCK_NAME
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    got = tmp_path / "got-the-lock"
    code = (
        "from pathlib import Path; from dansched.plan_folder import folder_lock\n"
        f"with folder_lock(Path({str(tmp_path)!r})):\n"
        f"    Path({str(got)!r}).write_text('')\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=_env())
    time.sleep(3.0)  # past its imports: the writer now waits on the old file
    os.unlink(lock)  # what a finishing holder does
    replacement = os.open(lock, os.O_RDWR | os.O_CREAT)  # a third run takes the new file
    fcntl.flock(replacement, fcntl.LOCK_EX)
    os.close(fd)  # the old lock is released: the waiter must not take it as the folder's lock
    time.sleep(1.0)
    assert proc.poll() is None and not got.exists()  # still waiting, now on the current file
    os.close(replacement)
    assert proc.wait(timeout=60) == 0 and got.exists() and not lock.exists()


def test_a_second_writer_waits_for_the_lock(tmp_path):
    fd = os.open(tmp_path / LOCK_NAME, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    code = (
        "from dansched.plan_folder import CONTEST_GROUP, write_group; "
        f"write_group({str(tmp_path)!r}, 'c', {{'schedule': '1\\n'}}, CONTEST_GROUP)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=_env())
    time.sleep(1.0)
    assert proc.poll() is None and not (tmp_path / "c_schedule.txt").exists()  # waiting
    os.close(fd)
    assert proc.wait(timeout=60) == 0 and (tmp_path / "c_schedule.txt").read_text() == "1\n"


# ---------------------------------------------------------------------------------
# kill tests
# ---------------------------------------------------------------------------------

LOOP_WRITER = """
import signal, sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {here!r})
from test_plan_folder import GROUP, group_files
from dansched.plan_folder import write_group
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
gen = {start}
write_group({folder!r}, "c", group_files(gen, gen % 2 == 0), GROUP)
print("ready", flush=True)
while True:
    gen += 1
    write_group({folder!r}, "c", group_files(gen, gen % 2 == 0), GROUP)
"""


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _kill_loop_writer(tmp_path: Path, kills: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    folder = tmp_path / "plans"
    stats = {"kills": 0, "flagged": 0, "term": 0, "leftovers": 0}
    for k in range(kills):
        sig = rng.choice([signal.SIGTERM, signal.SIGKILL])
        code = LOOP_WRITER.format(root=str(ROOT), here=str(HERE), folder=str(folder), start=1000 * k)
        proc = subprocess.Popen([sys.executable, "-c", code], env=_env(), stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"  # past the imports, in the write loop
        time.sleep(rng.random() * 0.2)
        proc.send_signal(sig)
        proc.wait(timeout=60)
        stats["kills"] += 1
        stats["leftovers"] += bool(temporaries(folder))
        if not assert_one_plan_or_flagged(folder, "c"):
            stats["flagged"] += 1
        if sig == signal.SIGTERM:  # a polite kill never lands between renames, and cleans up
            stats["term"] += 1
            assert temporaries(folder) == [], temporaries(folder)
            assert check_folder(folder, "c", GROUP) is not None or not (folder / "c_report.json").exists()
        write_group(folder, "c", group_files(10**6 + k, k % 2 == 0), GROUP)  # the next run
        assert temporaries(folder) == [] and generations(folder, "c") == {10**6 + k}
        assert check_folder(folder, "c", GROUP) is not None
    return stats


def test_killed_writers_leave_one_plan(tmp_path):
    stats = _kill_loop_writer(tmp_path, LOOP_KILLS, SEED)
    assert stats["kills"] == LOOP_KILLS


@pytest.mark.slow
def test_killed_writers_leave_one_plan_many(tmp_path):
    stats = _kill_loop_writer(tmp_path, LOOP_KILLS_SLOW, SEED + 1)
    assert stats["kills"] == LOOP_KILLS_SLOW


def _solve(inst: Path, out: Path, problem: int, *extra: str) -> subprocess.Popen:
    args = [
        sys.executable,
        "-m",
        "dansched.cli",
        "solve",
        str(inst),
        "--problem",
        str(problem),
        "--out",
        str(out),
        "--quiet",
        "--time-limit",
        "2",
        *extra,
    ]
    return subprocess.Popen(args, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _check_real_folder(inst: Path, out: Path) -> None:
    """The shipped evaluator's view: audit-style check, then the plan is valid."""
    from dansched.instance import load_instance
    from dansched.plan import read_plan_dir
    from dansched.simulate import evaluate

    case = inst.stem
    try:
        check_folder(out, case, GROUP)
    except MixedPlanError:
        return
    if not (out / f"{case}_schedule.txt").exists():
        return
    ev = evaluate(load_instance(inst), read_plan_dir(out, case))
    assert ev.valid, ev.errors[:1]


def _kill_solves(tmp_path: Path, kills: int, seed: int) -> int:
    rng = random.Random(seed)
    inst = ROOT / "instances" / "Exp.json"
    out = tmp_path / "plans"
    done = 0
    for _k in range(kills):
        problem = rng.choice([1, 3])
        proc = _solve(inst, out, problem, *(["--trace"] if problem == 3 else []))
        time.sleep(rng.random() * 3.0)
        sig = rng.choice([signal.SIGTERM, signal.SIGKILL])
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        assert "Traceback" not in err, err
        done += 1
        if sig == signal.SIGTERM:
            assert temporaries(out) == []
        _check_real_folder(inst, out)
        nxt = _solve(inst, out, 4 - problem if problem == 3 else 3)  # the next run, the other shape
        _, err = nxt.communicate(timeout=300)
        assert nxt.returncode == 0, err
        assert temporaries(out) == []
        assert check_folder(out, "Exp", GROUP) is not None
        _check_real_folder(inst, out)
    return done


def test_killed_solves_leave_one_plan(tmp_path):
    assert _kill_solves(tmp_path, SOLVE_KILLS, SEED) == SOLVE_KILLS


@pytest.mark.slow
def test_killed_solves_leave_one_plan_many(tmp_path):
    assert _kill_solves(tmp_path, SOLVE_KILLS_SLOW, SEED + 1) == SOLVE_KILLS_SLOW


def test_trace_png_to_an_existing_folder_writes_nothing(tmp_path):
    inst = ROOT / "instances" / "Exp.json"
    out = tmp_path / "plans"
    proc = _solve(inst, out, 3)
    assert proc.wait(timeout=300) == 0
    before = sorted(p.name for p in out.iterdir())
    (tmp_path / "pic").mkdir()
    r = subprocess.run(
        [sys.executable, "-m", "dansched.cli", "trace", str(inst), "--plan", str(out), "--png", str(tmp_path / "pic")],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "is a folder" in r.stderr
    assert sorted(p.name for p in out.iterdir()) == before and list((tmp_path / "pic").iterdir()) == []


@pytest.mark.parametrize("command", ["evaluate", "audit", "trace", "view"])
@pytest.mark.parametrize("damage", ["marker", "edit"])
def test_every_reader_refuses_a_half_written_or_mixed_folder(monkeypatch, capsys, tmp_path, command, damage):
    """`view` checks the folder like `audit` and `trace` (they present the report's plan):
    one line, exit 2, nothing written (no page drawn from a folder an interrupted run
    left). `evaluate` judges the files as they are, with one note on stderr that says how
    they differ from the report's plan."""
    from helpers import run_cli

    inst = ROOT / "instances" / "Exp.json"
    folder = tmp_path / "plans"
    assert run_cli(monkeypatch, capsys, "solve", inst, "--out", folder, "--quiet")[0] == 0
    if damage == "marker":
        (folder / ".Exp.incomplete").write_text("")
    else:
        (folder / "Exp_memory.txt").write_text("0:0\n1:500\n")  # still a valid layout
    before = sorted(p.name for p in folder.iterdir())
    schedule = ["--schedule", folder / "Exp_schedule.txt", "--memory", folder / "Exp_memory.txt"]
    args = schedule if command == "evaluate" else ["--plan", folder]
    code, out, err = run_cli(monkeypatch, capsys, command, inst, *args)
    if command == "evaluate":  # Exp's plan with b1 at 500 still fits the default UB: valid
        assert code == 0 and out.startswith("Exp: full plan (problems 2 and 3) is valid"), (out, err)
        [line] = err.splitlines()
        assert line.startswith("dansched: note: ")
        assert ("interrupted" if damage == "marker" else "Exp_memory.txt does not match the fingerprint") in line
    else:
        assert code == 2 and out == "" and len(err.splitlines()) == 1, err
        assert ("interrupted" if damage == "marker" else "mixes two plans") in err
        assert "dansched evaluate" in err
    assert sorted(p.name for p in folder.iterdir()) == before
