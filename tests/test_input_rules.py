"""One rule for each thing every input file can get wrong, whatever its type.

- A UTF-8 byte-order mark (as some editors write) at the start of a file is ignored in
  every file dansched reads: the instance (JSON, the CSV pair), the hardware file (TOML),
  the plan files and a folder's report (``dansched.checks.TEXT_ENCODING``). The oracle:
  the same file without the mark reads to the same thing.
- A JSON key given twice in one object is refused with one line naming the key and the
  file (``json`` alone keeps the last one silently: a duplicated ``"Nodes"`` dropped
  nodes), as the CSV reader refuses a column named twice.
- A tier or a pipe has a name (``dansched.hardware.check_name``); ``--traffic-slack`` has
  a ceiling (``dansched.checks.TRAFFIC_SLACK``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import SHIPPED, run_cli

import dansched
from dansched.errors import ArgumentError, HardwareError, InstanceError, ViewError
from dansched.params import EffortParams
from dansched.plan_folder import read_report

EXP = SHIPPED / "Exp.json"
BOM = b"\xef\xbb\xbf"


def _with_bom(path: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(BOM + path.read_bytes())
    return target


def test_a_byte_order_mark_is_ignored_in_an_instance_json_and_csv(tmp_path):
    plain = dansched.load_instance(EXP)
    marked = dansched.load_instance(_with_bom(EXP, tmp_path / "json" / "Exp.json"))
    assert marked.to_records() == plain.to_records()
    nodes = dansched.write_csv_pair(plain, tmp_path / "csv", "Exp")
    for name in ("Exp_Nodes.csv", "Exp_Edges.csv"):
        _with_bom(tmp_path / "csv" / name, tmp_path / "csvbom" / name)
    assert dansched.load_instance(tmp_path / "csvbom" / nodes.name).to_records() == plain.to_records()


def test_a_byte_order_mark_is_ignored_in_a_hardware_file(tmp_path):
    text = b"[tiers]\nUB = 512\n\n[new_tiers]\nSRAM = 4096\n"
    (tmp_path / "plain.toml").write_bytes(text)
    (tmp_path / "bom.toml").write_bytes(BOM + text)
    assert dansched.load_hardware(tmp_path / "bom.toml") == dansched.load_hardware(tmp_path / "plain.toml")
    assert dansched.load_hardware(tmp_path / "bom.toml").capacity["UB"] == 512


def test_a_byte_order_mark_is_ignored_in_plan_files_and_reports(tmp_path):
    """The plan files judged with a mark at their start give the verdict and figures of the
    files without it; a report with one reads the same."""
    inst = dansched.load_instance(EXP)
    dansched.solve(inst, dansched.effort_options("fast"), out=tmp_path / "plan", bounds=False)
    plain = dansched.evaluate_files(
        inst, tmp_path / "plan" / "Exp_schedule.txt", tmp_path / "plan" / "Exp_memory.txt"
    ).evaluation
    for kind in ("schedule", "memory", "spill", "report"):
        suffix = ".json" if kind == "report" else ".txt"
        _with_bom(tmp_path / "plan" / f"Exp_{kind}{suffix}", tmp_path / "bom" / f"Exp_{kind}{suffix}")
    marked = dansched.evaluate_files(
        inst,
        tmp_path / "bom" / "Exp_schedule.txt",
        tmp_path / "bom" / "Exp_memory.txt",
        tmp_path / "bom" / "Exp_spill.txt",
    ).evaluation
    assert plain.valid and marked.valid and marked.to_dict() == plain.to_dict()
    report = read_report(tmp_path / "plan", "Exp")
    assert report is not None and report["instance"] == "Exp" and read_report(tmp_path / "bom", "Exp") == report


def _json_with(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "dup.json"
    p.write_text(text)
    return p


def test_a_json_key_given_twice_is_refused_naming_the_key_and_the_file(tmp_path, monkeypatch, capsys):
    """The probe's case: a second, shorter ``"Nodes"`` list after the first, which ``json``
    alone would keep (four nodes dropped, and a plan still written)."""
    data = json.loads(EXP.read_text())
    nodes, edges = json.dumps(data["Nodes"]), json.dumps(data["Edges"])
    path = _json_with(tmp_path, f'{{"Nodes": {nodes}, "Edges": {edges}, "Nodes": {json.dumps(data["Nodes"][:3])}}}')
    with pytest.raises(InstanceError, match="the key 'Nodes' is given twice"):
        dansched.load_instance(path)
    out = tmp_path / "out"
    code, stdout, err = run_cli(monkeypatch, capsys, "solve", path, "--out", out, "--quiet")
    assert code == 2 and stdout == "" and not out.exists()
    [line] = err.splitlines()
    assert (
        line == f"dansched: error: {path}: the key 'Nodes' is given twice in one object (the last would silently win)"
    )


@pytest.mark.parametrize("where", ["Edges", "in a node record"])
def test_a_key_given_twice_anywhere_in_an_instance_is_refused(where, tmp_path):
    data = json.loads(EXP.read_text())
    if where == "Edges":
        text = json.dumps(data)[:-1] + ', "Edges": []}'
        key = "Edges"
    else:
        first = json.dumps(data["Nodes"][0])
        text = json.dumps(data).replace(first, first[:-1] + ', "Size": 99}', 1)
        key = "Size"
    with pytest.raises(InstanceError, match=f"the key '{key}' is given twice"):
        dansched.load_instance(_json_with(tmp_path, text))


def test_a_report_with_a_key_given_twice_is_refused(tmp_path):
    inst = dansched.load_instance(EXP)
    dansched.solve(inst, dansched.effort_options("fast"), out=tmp_path, bounds=False)
    report = tmp_path / "Exp_report.json"
    report.write_text(report.read_text()[:-2] + ',\n  "instance": "other"\n}\n')
    with pytest.raises(ViewError, match="the key 'instance' is given twice"):
        read_report(tmp_path, "Exp")


@pytest.mark.parametrize(
    "text, words",
    [
        ('[new_tiers]\n"" = 5\n', "tier '' is not a name"),
        ('[new_tiers]\n"S RAM" = 5\n', "tier 'S RAM' is not a name"),
        ('[new_tiers]\n"UB=2" = 5\n', "tier 'UB=2' is not a name"),
        ('[new_tiers]\n"L2\\n" = 5\n', "tier 'L2\\\\n' is not a name"),
        ('[new_tiers]\n"' + "T" * 65 + '" = 5\n', "is not a name: use 1 to 64"),
        ('[roles]\npipes = ["MTE1", "MTE2", "MTE3", "FIXP", "CUBE", " "]\n', "' ' in roles.pipes is not a name"),
    ],
)
def test_a_tier_or_pipe_without_a_name_is_refused(text, words, tmp_path, monkeypatch, capsys):
    hw = tmp_path / "hw.toml"
    hw.write_text(text)
    with pytest.raises(HardwareError, match=words.replace("(", r"\(")):
        dansched.load_hardware(hw)
    code, _, err = run_cli(monkeypatch, capsys, "solve", EXP, "--hw", hw, "--out", tmp_path / "out")
    assert code == 2 and len(err.splitlines()) == 1 and str(hw) in err and not (tmp_path / "out").exists()


def test_names_that_are_names_are_kept(tmp_path):
    hw = tmp_path / "hw.toml"
    hw.write_text('[new_tiers]\n"SRAM_2.b-x" = 64\n')
    assert dansched.load_hardware(hw).capacity["SRAM_2.b-x"] == 64


def test_the_traffic_slack_has_a_ceiling_everywhere(monkeypatch, capsys, tmp_path):
    """The probe's case: ``--traffic-slack 1e300`` was accepted, and `view` then refused the
    plan (a 301-digit slack in the report); now one line before the work, and the library's
    options and the frontier's reach say the same."""
    code, _, err = run_cli(monkeypatch, capsys, "solve", EXP, "--traffic-slack", "1e300", "--out", tmp_path / "o")
    assert code == 2 and not (tmp_path / "o").exists()
    assert err == "dansched: error: --traffic-slack must be a number from 0 to 1000000 (percent), got 1e+300\n"
    for make in (lambda: dansched.SolveOptions(traffic_slack=1e300), lambda: EffortParams(frontier_slack=1e7)):
        with pytest.raises(ArgumentError, match="must be a number from 0 to 1000000"):
            make()
    assert dansched.SolveOptions(traffic_slack=10**6).traffic_slack == 10**6
