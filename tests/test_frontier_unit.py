"""A plan folder and its frontier's point folders are one unit (dansched/plan_folder.py,
``write_unit``; ``Solution.write``): staged whole, then swapped in together under one lock,
so that after any signal, kill or error ``OUT`` holds the earlier run whole or the new run
whole (or, after SIGKILL between renames, a unit its markers flag), the report lists
exactly the point folders there, and the next run removes what a killed one left.

Most tests write units of made-up groups, each file tagged with its run (its
*generation*), so a mixed unit is seen directly: the folder's report lists the points of
its run, each point folder's files name the run too. The solve-level tests check the same
on real plans: the point folders are exactly the report's rows, each passes the evaluator.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO, SHIPPED, hw_file, run_cli

import dansched
import dansched.application.solution
import dansched.plan_folder as pf
from dansched.errors import WriteFailed
from dansched.plan_folder import (
    LOCK_NAME,
    TMP_TAG,
    FolderWrite,
    Members,
    MixedPlanError,
    check_folder,
    folder_group,
    group_paths,
    plan_fingerprint,
    write_unit,
)

GROUP = folder_group()
CASE = "c"
HERE = Path(__file__).resolve().parent


def group(gen: int, point: int | None, points: list[int]) -> dict[str, str]:
    """A problem-3 shaped group of run ``gen``: the folder's own (``point`` None: its report
    lists ``points``) or point ``point``'s."""
    files = {"schedule": f"{gen}\n" * 20, "memory": f"{gen}:0\n" * 20, "spill": f"{gen}:1\n"}
    fp = plan_fingerprint({k: v.encode() for k, v in files.items()})
    report: dict = {"gen": gen, "fingerprint": fp}
    if point is None:
        report["frontier"] = [{"traffic": t} for t in points]
    else:
        report["frontier_point"] = points.index(point)
    files["report"] = json.dumps(report, indent=2) + "\n"
    return files


def unit(out: Path, gen: int, points: list[int]) -> list[FolderWrite]:
    base = out / f"{CASE}_frontier"
    return [FolderWrite(out, group(gen, None, points))] + [
        FolderWrite(base / f"traffic-{t}", group(gen, t, points)) for t in points
    ]


def members(out: Path) -> Members:
    return Members(out / f"{CASE}_frontier", "traffic-")


def write(out: Path, gen: int, points: list[int]) -> list[Path]:
    return write_unit(CASE, unit(out, gen, points), GROUP, members(out))


def leftovers(out: Path) -> list[str]:
    """Temporaries, markers and lock files anywhere in the unit."""
    if not out.exists():
        return []
    return sorted(
        str(p.relative_to(out))
        for p in out.rglob("*")
        if TMP_TAG in p.name or p.name.endswith(".incomplete") or p.name == LOCK_NAME
    )


def generations(folder: Path) -> set[int]:
    gens = set()
    for kind, p in group_paths(folder, CASE, GROUP).items():
        if p.exists():
            text = p.read_text()
            gens.add(json.loads(text)["gen"] if kind == "report" else int(text.split(":")[0].split("\n")[0]))
    return gens


def unit_state(out: Path, clean: bool = True) -> tuple[int, list[int]] | None:
    """``(run, its points)`` when ``out`` holds one run's unit whole: every folder one run's
    group that its checker accepts, and plans in exactly the point folders its report
    lists (and, ``clean``, no marker, no temporary: a SIGKILL while staging leaves
    temporaries, even a point folder holding nothing else, for the next run to remove);
    None when the unit is flagged (a marker: a SIGKILL between renames); an AssertionError
    when it mixes runs unflagged."""
    try:
        check_folder(out, CASE, GROUP)
        base = out / f"{CASE}_frontier"
        for sub in sorted(base.iterdir()) if base.is_dir() else []:
            check_folder(sub, CASE, GROUP)
    except MixedPlanError:
        return None
    report = json.loads((out / f"{CASE}_report.json").read_text())
    gen, points = report["gen"], [r["traffic"] for r in report["frontier"]]
    base = out / f"{CASE}_frontier"
    planned = [p for p in base.iterdir() if (p / f"{CASE}_report.json").exists()] if base.is_dir() else []
    there = sorted(int(p.name.removeprefix("traffic-")) for p in planned)
    assert there == sorted(points), (gen, points, there)
    assert generations(out) == {gen}
    for k, t in enumerate(points):
        sub = base / f"traffic-{t}"
        assert generations(sub) == {gen}, (sub, generations(sub), gen)
        assert json.loads((sub / f"{CASE}_report.json").read_text())["frontier_point"] == k
    assert not clean or not [name for name in leftovers(out) if not name.endswith(LOCK_NAME)], leftovers(out)
    return gen, points


def test_a_unit_replaces_the_earlier_one_whole(tmp_path):
    """Points come and go with their run: one the new frontier lacks is removed (its
    folder too), a new one appears, a kept one is rewritten; the folder's own files are
    renamed last."""
    out = tmp_path / "out"
    write(out, 1, [5, 7])
    assert unit_state(out) == (1, [5, 7])
    paths = write(out, 2, [7, 9])
    assert unit_state(out) == (2, [7, 9]) and leftovers(out) == []
    assert paths[-1] == out / f"{CASE}_report.json" and paths[0].parent.name == "traffic-7"
    write_unit(CASE, [FolderWrite(out, group(3, None, []))], GROUP, members(out))  # a solve without --frontier
    assert unit_state(out) == (3, []) and not (out / f"{CASE}_frontier").exists()


def test_a_point_folder_holding_other_files_is_cleared_not_removed(tmp_path):
    out = tmp_path / "out"
    write(out, 1, [5, 7])
    (out / f"{CASE}_frontier" / "traffic-5" / "notes.txt").write_text("mine\n")
    (out / f"{CASE}_frontier" / "traffic-5" / "other_schedule.txt").write_text("0\n")  # another case's
    write(out, 2, [7])
    kept = out / f"{CASE}_frontier" / "traffic-5"
    assert sorted(p.name for p in kept.iterdir()) == ["notes.txt", "other_schedule.txt"]


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler, the signal unblocked, for one test (a library caller's
    process), whatever an earlier test of the same worker left installed; restored after."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


@pytest.mark.parametrize("at", range(15))  # the unit below renames 3 groups of 4 files, then removes 4
def test_a_signal_at_any_moment_of_the_swap_lands_after_the_whole_unit(at, tmp_path, monkeypatch, python_sigint):
    """SIGINT sent at the ``at``-th rename or removal of the swap (the first: a point's
    schedule; the last ones: the folder's own report, the earlier run's point files) is
    acted on only once the whole unit is in place (the probe's case: Ctrl-C just after the
    folder's own group was written left a point of the earlier run and lacked a new one)."""
    out = tmp_path / "out"
    write(out, 1, [5, 7])
    calls = {"n": 0}
    real_replace, real_unlink = os.replace, os.unlink

    def counted(real):
        def call(*args, **kwargs):
            if calls["n"] == at:
                os.kill(os.getpid(), signal.SIGINT)
            calls["n"] += 1
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(pf.os, "replace", counted(real_replace))
    monkeypatch.setattr(pf.Path, "unlink", lambda self, *a, **k: counted(real_unlink)(self))
    with pytest.raises(KeyboardInterrupt):  # Python's own handler (a library caller): after the swap
        write(out, 2, [7, 9])
    assert calls["n"] > at
    assert unit_state(out) == (2, [7, 9])


@pytest.mark.parametrize("where", ["a point's file", "the folder's own report"])
def test_a_full_disk_after_the_checks_keeps_the_earlier_unit(where, tmp_path, monkeypatch):
    """Writing a temporary fails as on a full disk: WriteFailed, one line saying nothing was
    replaced, the earlier unit whole, no temporary, no lock file, no new folder."""
    out = tmp_path / "out"
    write(out, 1, [5])
    real = os.fdopen
    victim = "traffic-9" if where == "a point's file" else f"{CASE}_report.json"

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    def fdopen(fd, *a, **k):
        fh = real(fd, *a, **k)
        path = os.readlink(f"/proc/self/fd/{fd}")
        return Full(fh) if victim in path else fh

    monkeypatch.setattr(pf.os, "fdopen", fdopen)
    with pytest.raises(WriteFailed) as info:
        write(out, 2, [5, 9])
    message = str(info.value)
    assert len(message.splitlines()) == 1 and "No space left on device" in message and "nothing was replaced" in message
    assert unit_state(out) == (1, [5]) and leftovers(out) == []
    assert not (out / f"{CASE}_frontier" / "traffic-9").exists()


def test_an_obstacle_put_at_a_point_path_after_the_checks_keeps_the_earlier_unit(tmp_path, monkeypatch):
    """A folder appears where a point's schedule goes once the files are staged: the check
    before the swap finds it; nothing was replaced."""
    out = tmp_path / "out"
    write(out, 1, [5])
    obstacle = out / f"{CASE}_frontier" / "traffic-5" / f"{CASE}_schedule.txt"
    real = pf.os.fsync

    def fsync(fd):  # once a point's file is staged, a folder takes the place of its schedule
        real(fd)
        if "traffic-5" in os.readlink(f"/proc/self/fd/{fd}") and not obstacle.is_dir():
            obstacle.unlink()
            obstacle.mkdir()

    monkeypatch.setattr(pf.os, "fsync", fsync)
    with pytest.raises(WriteFailed, match="is a folder, not a file name.*nothing was replaced"):
        write(out, 2, [5])
    assert obstacle.is_dir() and leftovers(out) == []
    assert json.loads((out / f"{CASE}_report.json").read_text())["gen"] == 1


def test_leftovers_of_killed_runs_are_removed_from_every_folder_of_the_unit(tmp_path):
    """The guide's promise, for the points too: a temporary a killed run left in a point
    folder the next frontier lacks used to stay for good (the folder could not go)."""
    out = tmp_path / "out"
    write(out, 1, [5, 7])
    base = out / f"{CASE}_frontier"
    for sub in (base / "traffic-5", base / "traffic-7", out):
        (sub / f".{CASE}_schedule.txt{TMP_TAG}deadbeef").write_text("x")
        (sub / f".{CASE}.incomplete").write_text("")
    (base / "traffic-3").mkdir()  # a point folder a killed run made and left with only a temporary
    (base / "traffic-3" / f".{CASE}_report.json{TMP_TAG}deadbeef").write_text("x")
    write(out, 2, [7])
    assert unit_state(out) == (2, [7]) and leftovers(out) == []
    assert sorted(p.name for p in base.iterdir()) == ["traffic-7"]


UNIT_WRITER = """
import signal, sys
sys.path.insert(0, {here!r})
from pathlib import Path
from test_frontier_unit import write
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
out, gen = Path({out!r}), {start}
shapes = [[1], [1, 2], [2, 3], []]
write(out, gen, shapes[gen % 4])
print("ready", flush=True)
while True:
    gen += 1
    write(out, gen, shapes[gen % 4])
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _writer(out: Path, start: int) -> subprocess.Popen:
    code = UNIT_WRITER.format(here=str(HERE), out=str(out), start=start)
    proc = subprocess.Popen([sys.executable, "-c", code], env=_env(), stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def _holding_the_lock(out: Path) -> tuple[int, list[int]] | None:
    """The unit's state read while holding its lock, as a third writer does
    (:func:`dansched.plan_folder.folder_lock`): no writer is in the middle of a unit then."""
    with pf.folder_lock(out):
        return unit_state(out)


def test_two_writers_into_one_folder_never_mix_their_units(tmp_path):
    """Two processes write units of different point sets into one folder as fast as they
    can (the probe's two concurrent ``--frontier`` solves, without the solves); while the
    test holds the unit's lock, the unit is always one run's whole: the lock covers the
    folder and its points together."""
    out = tmp_path / "out"
    first, second = _writer(out, 10), _writer(out, 10**6)
    try:
        seen = set()
        for _ in range(20):
            state = _holding_the_lock(out)
            assert state is not None  # no SIGKILL here: never flagged
            seen.add(state[0] >= 10**6)
    finally:
        for proc in (first, second):
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
    assert unit_state(out) is not None and not [n for n in leftovers(out) if not n.endswith(LOCK_NAME)]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_killed_writer_leaves_a_whole_or_flagged_unit_and_the_next_run_one_whole(sig, tmp_path):
    """Killed once its loop runs (the moment is wherever the unit writer is then; no wait
    on the clock decides the outcome): SIGTERM never lands inside a swap and cleans up;
    after SIGKILL the unit is whole or flagged by its markers. The next write leaves one
    run's unit whole and nothing of the killed one."""
    out = tmp_path / "out"
    proc = _writer(out, 100)
    proc.send_signal(sig)
    proc.wait(timeout=60)
    state = unit_state(out, clean=False)
    if sig == signal.SIGTERM:
        assert state is not None and leftovers(out) == []
    write(out, 7, [4, 8])
    assert unit_state(out) == (7, [4, 8]) and leftovers(out) == []


@pytest.mark.slow
def test_writers_killed_at_many_moments_leave_whole_or_flagged_units(tmp_path):
    """As above, at 30 seeded moments of the writer's loop (the moment varies; what each
    must leave does not)."""
    import random

    rng = random.Random(11)
    out = tmp_path / "out"
    for k in range(30):
        sig = rng.choice([signal.SIGTERM, signal.SIGKILL])
        proc = _writer(out, 1000 * (k + 1))
        time.sleep(rng.random() * 0.2)
        proc.send_signal(sig)
        proc.wait(timeout=60)
        state = unit_state(out, clean=sig == signal.SIGTERM)
        assert sig == signal.SIGKILL or state is not None
        write(out, 10**7 + k, [k % 3, 3])
        assert unit_state(out) == (10**7 + k, sorted({k % 3, 3})) and leftovers(out) == []


# ---- real solves -----------------------------------------------------------------------------

EXP = SHIPPED / "Exp.json"


def _reports(out: Path, case: str) -> list[dict]:
    """The unit's reports: the folder's, then each point folder's."""
    base = out / f"{case}_frontier"
    folders = [out] + (sorted(base.iterdir()) if base.is_dir() else [])
    return [json.loads((f / f"{case}_report.json").read_text()) for f in folders]


def _one_run(out: Path, case: str) -> dict:
    """The unit of a real solve, whole: every folder passes its checker and the evaluator,
    the point folders are exactly the report's frontier rows, every report one solve's."""
    inst = dansched.load_instance(SHIPPED / f"{case}.json") if case == "Exp" else None
    reports = _reports(out, case)
    main = reports[0]
    base = out / f"{case}_frontier"
    if main["options"]["frontier"]:
        assert sorted(p.name for p in base.iterdir()) == sorted(f"traffic-{r['traffic']}" for r in main["frontier"])
    else:
        assert not base.exists()
    for report in reports:
        assert report["options"] == main["options"] and report["instance"] == case
    for folder in [out] + (sorted(base.iterdir()) if base.is_dir() else []):
        assert check_folder(folder, case, GROUP) is not None
        if inst is not None:
            _, ev = dansched.judge_folder(inst, folder)
            assert ev.valid
    return main


def test_a_solve_writes_its_frontier_as_one_unit_and_the_next_solve_replaces_it(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    code, _, err = run_cli(
        monkeypatch, capsys, "solve", EXP, "--frontier", "--traffic-slack", "5", "--out", out, "--quiet"
    )
    assert code == 0, err
    assert _one_run(out, "Exp")["options"]["traffic_slack"] == 5
    code, _, err = run_cli(monkeypatch, capsys, "solve", EXP, "--out", out, "--quiet", "--effort", "fast")
    assert code == 0, err
    assert _one_run(out, "Exp")["options"]["frontier"] is False  # the earlier run's points went with it


def test_a_point_folder_path_taken_by_a_file_is_refused_before_the_work(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    (out / "Exp_frontier").mkdir(parents=True)
    (out / "Exp_frontier" / "traffic-0").write_text("in the way\n")
    ran = []
    real = dansched.application.solution.run_pipeline
    monkeypatch.setattr(dansched.application.solution, "run_pipeline", lambda *a, **k: ran.append(1) or real(*a, **k))
    code, stdout, err = run_cli(monkeypatch, capsys, "solve", EXP, "--frontier", "--out", out, "--quiet")
    assert code == 2 and stdout == "" and not ran
    assert (
        err
        == f"dansched: error: {out / 'Exp_frontier' / 'traffic-0'}: is not a folder, where the frontier's plan folders go: remove it\n"
    )


def test_a_point_folder_that_cannot_be_written_after_the_work_is_exit_1_and_keeps_the_earlier_unit(
    tmp_path, monkeypatch, capsys
):
    """The probe's case: a point folder that could not be written failed only after OUT was
    replaced, exit 2. Now: nothing replaced, exit 1, one line saying so."""
    out = tmp_path / "out"
    assert (
        run_cli(monkeypatch, capsys, "solve", EXP, "--frontier", "--traffic-slack", "5", "--out", out, "--quiet")[0]
        == 0
    )
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    real = os.open

    def full(path, *a, **k):
        if "Exp_frontier" in str(path) and TMP_TAG in str(path):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, *a, **k)

    monkeypatch.setattr(pf.os, "open", full)
    code, stdout, err = run_cli(
        monkeypatch, capsys, "solve", EXP, "--frontier", "--traffic-slack", "9", "--out", out, "--quiet"
    )
    assert code == 1 and stdout == "", err
    [line] = err.splitlines()
    assert "traffic-0/Exp_schedule.txt: cannot write: No space left on device (nothing was replaced" in line
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_signal_while_a_frontier_is_written_leaves_one_run_whole(tmp_path):
    """A real ``solve --frontier`` process, signalled once it reports writing its folders
    (its progress lines; whether the signal lands before or during the swap is the
    machine's, and either way the unit is one run's): the earlier run whole, or the new
    one, and the line says which."""
    out, err = tmp_path / "out", tmp_path / "err"
    first = subprocess.run(
        [
            sys.executable,
            "-m",
            "dansched.cli",
            "solve",
            str(EXP),
            "--frontier",
            "--traffic-slack",
            "5",
            "--out",
            str(out),
        ],
        env=_env(),
        capture_output=True,
        timeout=300,
    )
    assert first.returncode == 0, first.stderr
    with open(err, "wb") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dansched.cli", "solve", str(EXP), "--frontier", "--traffic-slack", "9"]
            + ["--out", str(out)],
            env=_env() | {"DANSCHED_HEARTBEAT": "0.01"},
            stdout=subprocess.DEVNULL,
            stderr=fh,
        )
    try:
        deadline = time.monotonic() + 120
        while "Writing the plan folder" not in err.read_text() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    last = err.read_text().splitlines()[-1]
    slack = _one_run(out, "Exp")["options"]["traffic_slack"]
    assert leftovers(out) == []
    if code == 130:
        assert (last, slack) in (
            (f"dansched: interrupted (kept: {out})", 9),
            ("dansched: interrupted (nothing written)", 5),
        )
    else:
        assert code == 0 and slack == 9


@pytest.mark.slow
def test_conv_s2_frontier_points_are_its_report_rows(tmp_path, monkeypatch, capsys):
    """A frontier of two points (conv_s2 with L1 = 1024, --traffic-slack 100), written over
    a one-point frontier of the same case (slack 0): the points of the second run alone."""
    conv, hw = SHIPPED / "conv_s2.json", hw_file(tmp_path, L1=1024)
    out = tmp_path / "out"
    inst = dansched.load_instance(conv, dansched.load_hardware(hw))
    for slack in ("0", "100"):
        args = ["solve", conv, "--hw", hw, "--frontier", "--traffic-slack", slack, "--out", out, "--quiet"]
        code, _, err = run_cli(monkeypatch, capsys, *args)
        assert code == 0, err
        main = _reports(out, "conv_s2")[0]
        rows = main["frontier"]
        assert sorted(p.name for p in (out / "conv_s2_frontier").iterdir()) == sorted(
            f"traffic-{r['traffic']}" for r in rows
        )
        for k, r in enumerate(rows):
            folder = out / "conv_s2_frontier" / f"traffic-{r['traffic']}"
            report = json.loads((folder / "conv_s2_report.json").read_text())
            assert report["frontier_point"] == k and report["options"] == main["options"]
            _, ev = dansched.judge_folder(inst, folder)
            assert ev.valid and (ev.extra_traffic, ev.makespan) == (r["traffic"], r["makespan"])
    assert len(rows) >= 2
