"""Output targets that are not regular files (dansched/plan.py, check_target): a named
pipe, a device node, a link to one of those (the null device, the process's standard
output) is refused with one line and exit 2 before the work, and never renamed over; a
link to a regular file is replaced by the new file and the linked file left alone."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from helpers import SHIPPED, run_cli, run_proc_cli

from dansched.errors import OutputError
from dansched.plan import Plan, atomic_write_files, check_target, write_plan
from dansched.plan_folder import LOCK_NAME, folder_group, write_group

EXP = SHIPPED / "Exp.json"
EXP_PLAN = Plan(order=(0, 1, 2, 3, 4, 5, 6), offsets=((0, 0), (1, 5)), spills=())  # docs/rules.md, section 9


def kind(p: Path) -> str:
    """What ``p`` is, not following a link (a link: where it points)."""
    mode = os.lstat(p).st_mode
    if stat.S_ISLNK(mode):
        return "link to " + os.readlink(p)
    return "fifo" if stat.S_ISFIFO(mode) else "char" if stat.S_ISCHR(mode) else "file" if stat.S_ISREG(mode) else "?"


def make(p: Path, what: str) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    if what == "fifo":
        os.mkfifo(p)
    elif what == "link to /dev/null":
        os.symlink("/dev/null", p)  # the link is in tmp_path; /dev/null itself is only read (stat)
    elif what == "link to stdout":
        os.symlink("/dev/stdout", p)
    elif what == "char":
        try:
            os.mknod(p, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # a null device of our own, in tmp_path
        except PermissionError:
            pytest.skip("creating a device node needs CAP_MKNOD")
    return p


@pytest.fixture(scope="module")
def plan_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("plan")
    write_plan(EXP_PLAN, d, "Exp")
    return d


# (command line with {t} for the special target and {d} for its folder, the target's name)
COMMANDS = {
    "view --out": (["view", EXP, "--plan", "{plan}", "--out", "{t}"], "page.html"),
    "solve --out (report)": (["solve", EXP, "--problem", "2", "--quiet", "--out", "{d}"], "Exp_report.json"),
    "solve --out (schedule)": (["solve", EXP, "--problem", "1", "--quiet", "--out", "{d}"], "Exp_schedule.txt"),
    "solve --html (page)": (["solve", EXP, "--html", "--quiet", "--out", "{d}"], "Exp_view.html"),
    "trace --out": (["trace", EXP, "--plan", "{plan}", "--out", "{t}"], "t.json"),
    "trace --png": (["trace", EXP, "--plan", "{plan}", "--out", "{d}/t.json", "--png", "{t}"], "t.png"),
    "info --png": (["info", EXP, "--png", "{t}"], "i.png"),
    "generate --out": (["generate", "chain", "--out", "{t}"], "g.json"),
    "generate --out (CSV edges)": (["generate", "chain", "--out", "{d}/g_Nodes.csv"], "g_Edges.csv"),
    "bench --out": (["bench", EXP, "--methods", "base", "--quiet", "--out", "{d}"], "bench.json"),
    "sweep --out (csv)": (["sweep", EXP, "--jobs", "1", "--quiet", "--out", "{d}"], "sweep.csv"),
    "sweep --out (jsonl)": (["sweep", EXP, "--jobs", "1", "--quiet", "--out", "{d}"], "sweep.jsonl"),
    "sweep --out (png)": (
        ["sweep", EXP, "--set", "UB=512,1024", "--jobs", "1", "--quiet", "--out", "{d}"],
        "sweep_UB.png",
    ),
}
CASES = [(c, w) for c in COMMANDS for w in ("fifo", "link to /dev/null")] + [
    ("view --out", "char"),
    ("solve --out (report)", "char"),
]


@pytest.mark.parametrize("command, what", CASES, ids=[f"{c}, {w}" for c, w in CASES])
def test_a_special_target_is_refused_before_the_work(command, what, plan_dir, tmp_path, monkeypatch, capsys):
    args, name = COMMANDS[command]
    folder = tmp_path / "out"
    target = make(folder / name, what)
    before = kind(target)
    monkeypatch.chdir(tmp_path)
    args = [str(a).format(t=target, d=folder, plan=plan_dir) for a in args]
    code, _, err = run_cli(monkeypatch, capsys, *args)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert str(target) in err and "not a regular file" in err
    assert kind(target) == before and sorted(p.name for p in folder.iterdir()) == [name]  # nothing else written
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)  # the system's null device is untouched


def test_a_link_to_the_standard_output_is_refused(plan_dir, tmp_path):
    """In a real process whose standard output is a pipe, as a user's shell gives it."""
    target = make(tmp_path / "page.html", "link to stdout")
    proc = run_proc_cli("view", EXP, "--plan", plan_dir, "--out", target)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "named pipe" in proc.stderr and kind(target) == "link to /dev/stdout"


def test_the_writers_check_again_before_each_rename(tmp_path):
    """A FIFO that appears after the checks (between staging and renaming) is still not
    renamed over: the write fails, one line, and the FIFO stays."""
    target = tmp_path / "a.txt"
    real_mkstemp = __import__("tempfile").mkstemp

    def staged_then_fifo(*a, **k):
        got = real_mkstemp(*a, **k)
        os.mkfifo(target)
        return got

    import dansched.plan as plan_module

    plan_module.tempfile.mkstemp = staged_then_fifo
    try:
        with pytest.raises(OutputError, match="named pipe"):
            atomic_write_files([(target, "text")])
    finally:
        plan_module.tempfile.mkstemp = real_mkstemp
    assert kind(target) == "fifo" and sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_a_link_to_a_regular_file_is_replaced_and_the_linked_file_kept(tmp_path):
    """The documented choice: dansched only ever creates or replaces entries in the folder
    it writes; the file a link there points to is not written."""
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep me")
    link = tmp_path / "out" / "Exp_schedule.txt"
    link.parent.mkdir()
    link.symlink_to(elsewhere)
    check_target(link)  # accepted
    write_group(link.parent, "Exp", {"schedule": "0\n"}, folder_group())
    assert kind(link) == "file" and link.read_text() == "0\n" and elsewhere.read_text() == "keep me"
    dangling = tmp_path / "out" / "x.txt"
    dangling.symlink_to(tmp_path / "missing")
    atomic_write_files([(dangling, "new")])
    assert kind(dangling) == "file" and not (tmp_path / "missing").exists()


@pytest.mark.parametrize("what", ["fifo", "link to /dev/null"])
def test_a_lock_path_that_is_not_a_regular_file_is_refused_and_left_alone(what, tmp_path):
    lock = make(tmp_path / LOCK_NAME, what)
    with pytest.raises(OutputError, match=LOCK_NAME):
        write_group(tmp_path, "Exp", {"schedule": "0\n"}, folder_group())
    assert kind(lock) == what
    assert sorted(p.name for p in tmp_path.iterdir()) == [LOCK_NAME]


# ---- names as long as the file system takes ------------------------------------------------


def _long_named(tmp_path: Path, length: int) -> Path:
    """Exp as an instance file whose case name is ``length`` characters."""
    path = tmp_path / f"{'c' * length}.json"
    path.write_bytes(EXP.read_bytes())
    return path


@pytest.mark.parametrize("length", [200, 230, 236, 241, 242])
@pytest.mark.parametrize("extra", [[], ["--html", "--trace"]], ids=["contest files", "with page and trace"])
def test_a_case_name_is_checked_with_the_longest_name_the_solve_creates(length, extra, tmp_path, monkeypatch, capsys):
    """The temporaries (``.<name>.dansched-tmp-XXXXXXXX``) are the longest names a solve
    creates: a name whose temporary does not fit is refused before the work, one fits
    whole. The oracle: the file system's own limit (pathconf) on the longest of them."""
    inst = _long_named(tmp_path, length)
    out = tmp_path / "out"
    ran = []
    import dansched.application.solution as S

    real = S.run_pipeline
    monkeypatch.setattr(S, "run_pipeline", lambda *a, **k: ran.append(1) or real(*a, **k))
    code, _, err = run_cli(monkeypatch, capsys, "solve", inst, "--problem", "2", "--out", out, "--quiet", *extra)
    longest = 1 + length + len("_schedule.txt") + len(".dansched-tmp-") + 8
    if longest <= os.pathconf(tmp_path, "PC_NAME_MAX"):
        assert code == 0, err
    else:
        assert code == 2 and not ran and len(err.splitlines()) == 1 and "longer than the" in err, err
        assert not out.exists()  # nothing made


def test_a_written_file_is_checked_with_its_temporary(tmp_path, monkeypatch, capsys):
    """``generate --out``: the temporary (``.<name>.XXXXXXXX``) is 10 bytes longer."""
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    name = "g" * (limit - 5 - 10 + 1) + ".json"  # fits, its temporary does not
    code, _, err = run_cli(monkeypatch, capsys, "generate", "chain", "--out", tmp_path / name)
    assert code == 2 and "longer than the" in err and list(tmp_path.iterdir()) == []
    code, _, err = run_cli(monkeypatch, capsys, "generate", "chain", "--out", tmp_path / name[1:])
    assert code == 0, err
