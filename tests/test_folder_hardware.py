"""A plan folder remembers what its plan was solved on, and the commands that read it
honour that: the report records the case, every capacity, role and cost of the
hardware (and the ``--hw`` file with its sha256) and the options; ``view``, ``audit``,
``trace`` and ``evaluate --plan`` read the plan on that hardware without ``--hw``, and
refuse with one line when ``--hw`` disagrees; a folder of an older dansched keeps the
default model, said once; a folder of another case says whose plan it holds.

The oracle for "on that hardware" is the evaluator itself, called here with the
hardware built from the file: the figures the commands print are its figures, and
differ from the default model's (the file makes every spill cost 999 cycles more).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from helpers import SHIPPED, run_cli

from dansched.hardware import default_hardware, load_hardware
from dansched.instance import load_instance
from dansched.plan import read_plan_dir
from dansched.simulate import evaluate

MATMUL = SHIPPED / "matmul_s2.json"
HW = "[tiers]\nL1 = 2048\n\n[spill]\nfixed_cycles = 1149\n"  # spills (L1 halved), each 999 cycles dearer


@pytest.fixture(scope="module")
def solved(tmp_path_factory) -> tuple[Path, Path]:
    """matmul_s2 solved (fast) on the hardware file: (plan folder, hardware file)."""
    from helpers import run_proc_cli

    d = tmp_path_factory.mktemp("hw")
    hw = d / "small_l1.toml"
    hw.write_text(HW)
    folder = d / "plan"
    proc = run_proc_cli("solve", MATMUL, "--hw", hw, "--effort", "fast", "--out", folder, "--quiet")
    assert proc.returncode == 0, proc.stderr
    return folder, hw


def _report(folder: Path) -> dict:
    return json.loads((folder / "matmul_s2_report.json").read_text())


def test_the_report_records_the_case_the_hardware_and_the_options(solved):
    folder, hw = solved
    report = _report(folder)
    assert report["instance"] == "matmul_s2"
    expected = load_hardware(hw)
    assert report["hardware"]["tiers"] == {"L1": 2048, "UB": 1024, "L0A": 256, "L0B": 256, "L0C": 512}
    assert report["hardware"]["spill"] == {"fixed_cycles": 1149, "cycles_per_unit": 2}
    assert report["hardware"]["roles"]["pipes"] == list(expected.pipes)
    assert report["hardware"]["file"] == {"path": str(hw), "sha256": hashlib.sha256(hw.read_bytes()).hexdigest()}
    opts = report["options"]
    assert (opts["problem"], opts["effort_name"], opts["traffic_slack"], opts["seed"]) == (3, "fast", 0.0, 0)
    assert opts["effort"]["stage3_runs"] == 1 and opts["search"] == [] and opts["cpe"]["width"] > 0


def _plan_on(folder: Path, hw) -> tuple[int, int]:
    """(makespan, spill count) of the folder's plan, judged by the evaluator on ``hw``."""
    inst = load_instance(MATMUL, hw)
    ev = evaluate(inst, read_plan_dir(folder, "matmul_s2"))
    assert ev.valid
    return int(ev.makespan), int(ev.spill_count)


def test_the_folder_readers_use_its_hardware(solved, monkeypatch, capsys, tmp_path):
    folder, hw = solved
    makespan, spills = _plan_on(folder, load_hardware(hw))
    default_makespan, _ = _plan_on(folder, default_hardware())
    assert spills > 0 and makespan > default_makespan  # the file's spills are dearer: the oracle tells them apart
    assert _report(folder)["makespan"] == makespan
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", MATMUL, "--plan", folder, "--json")
    assert code == 0 and err == "" and json.loads(out)["makespan"] == makespan
    code, out, err = run_cli(monkeypatch, capsys, "audit", MATMUL, "--plan", folder, "--json", "--time-limit", "1")
    assert code == 0 and err == ""
    assert {r["plan_value"] for r in json.loads(out)["bounds"] if r["metric"] == "makespan"} == {makespan}
    code, out, err = run_cli(monkeypatch, capsys, "trace", MATMUL, "--plan", folder, "--out", tmp_path / "t.json")
    assert code == 0 and err == "" and f"({makespan:,} cycles at 1 GHz)" in out
    first = out.splitlines()[0]  # where the hardware came from first, then its capacities, no nested parentheses
    assert first.startswith(f"hardware from {MATMUL.stem}_report.json in the plan folder: L1 2,048,"), first
    code, out, err = run_cli(monkeypatch, capsys, "view", MATMUL, "--plan", folder, "--out", tmp_path / "v.html")
    assert code == 0 and err == "" and f'"makespan":{makespan}' in (tmp_path / "v.html").read_text()
    # the files given one by one, from the solve's folder: the same hardware
    files = [f"--{k}={folder / f'matmul_s2_{k}.txt'}" for k in ("schedule", "memory", "spill")]
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", MATMUL, *files, "--json")
    assert code == 0 and json.loads(out)["makespan"] == makespan
    # the same file given again agrees with the report
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", MATMUL, "--plan", folder, "--hw", hw, "--json")
    assert code == 0 and json.loads(out)["makespan"] == makespan


@pytest.mark.parametrize("command", ["evaluate", "audit", "trace", "view"])
def test_another_hardware_is_refused_with_one_line(solved, monkeypatch, capsys, tmp_path, command):
    folder, _ = solved
    other = tmp_path / "default.toml"
    other.write_text("")  # the default model: L1 4096, spills 150 cycles
    before = sorted(p.name for p in folder.iterdir())
    code, out, err = run_cli(monkeypatch, capsys, command, MATMUL, "--plan", folder, "--hw", other)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"dansched: error: {folder}: its plan of matmul_s2 was solved on other hardware")
    assert "tiers.L1 is 2048 in matmul_s2_report.json, 4096 in --hw" in err
    assert sorted(p.name for p in folder.iterdir()) == before  # nothing written


def test_a_folder_of_an_older_dansched_keeps_the_default_and_says_so_once(solved, monkeypatch, capsys, tmp_path):
    folder, _ = solved
    old = tmp_path / "old"
    old.mkdir()
    for p in folder.iterdir():
        (old / p.name).write_bytes(p.read_bytes())
    report = _report(old)
    for key in ("hardware", "options", "instance"):
        del report[key]
    (old / "matmul_s2_report.json").write_text(json.dumps(report, indent=2) + "\n")
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", MATMUL, "--plan", old, "--json")
    assert code == 0 and json.loads(out)["makespan"] == _plan_on(old, default_hardware())[0]
    assert err.splitlines() == [
        f"dansched: warning: {old / 'matmul_s2_report.json'} records no hardware (written by an older dansched): "
        "using the default model; give --hw if the plan was solved on another"
    ]


@pytest.mark.parametrize("command", ["evaluate", "audit", "trace", "view"])
def test_a_folder_of_another_case_says_whose_plan_it_holds(solved, monkeypatch, capsys, command):
    folder, _ = solved
    code, out, err = run_cli(monkeypatch, capsys, command, SHIPPED / "fa_s2.json", "--plan", folder)
    assert code == 2 and out == ""
    assert err == (
        f"dansched: error: {folder}: holds a plan of matmul_s2, not of fa_s2 (no fa_s2_schedule.txt): "
        "give that instance, or a folder with a plan of fa_s2\n"
    )


def test_evaluate_of_another_cases_files_says_so_in_one_line(solved, monkeypatch, capsys):
    """matmul_s2's files judged against Exp (7 nodes): one line for all the ids Exp does
    not have, one note naming the case the report beside them names."""
    folder, _ = solved
    files = [f"--{k}={folder / f'matmul_s2_{k}.txt'}" for k in ("schedule", "memory", "spill")]
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", SHIPPED / "Exp.json", *files)
    assert code == 1 and err == ""
    lines = out.splitlines()
    above = lines[1 : next(i for i, line in enumerate(lines) if line.startswith("metric"))]  # verdict first
    note = " ".join(line.strip() for line in above)  # one note, wrapped at 80 columns
    assert above[0].startswith("  note: ") and all(line.startswith("    ") for line in above[1:])
    assert "schedule entries name nodes Exp does not have" in note
    assert lines[-1] == "no makespan: the schedule is not a permutation of the plan's nodes"
    assert note.endswith(
        "these files are a plan of matmul_s2 (the report beside them, matmul_s2_report.json, names it)"
    )


def test_evaluate_plan_is_the_verdict_on_the_folders_files(solved, monkeypatch, capsys):
    """``evaluate --plan DIR`` judges what ``--schedule/--memory/--spill`` name in DIR;
    giving both is bad input."""
    folder, _ = solved
    files = [f"--{k}={folder / f'matmul_s2_{k}.txt'}" for k in ("schedule", "memory", "spill")]
    _, by_files, _ = run_cli(monkeypatch, capsys, "evaluate", MATMUL, *files, "--json")
    code, by_folder, _ = run_cli(monkeypatch, capsys, "evaluate", MATMUL, "--plan", folder, "--json")
    assert code == 0 and json.loads(by_folder) == json.loads(by_files)
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", MATMUL, "--plan", folder, files[0])
    assert (
        code == 2
        and out == ""
        and err == ("dansched: error: give --plan DIR or the files (--schedule, --memory, --spill), not both\n")
    )
