"""``dansched bench``: rows for every (instance, method), the three output
files, failures as rows, the command line."""

from __future__ import annotations

import csv
import json

import pytest
from helpers import SHIPPED
from typer.testing import CliRunner

from dansched.application import bench as B
from dansched.application.baselines import METHODS, MethodResult
from dansched.cli import app
from dansched.plan import Plan

TWO = [SHIPPED / "Exp.json", SHIPPED / "conv_s2.json"]


@pytest.fixture(scope="module")
def rows():
    return B.run_bench(TWO, list(METHODS), jobs=1, time_limit=5.0)


@pytest.mark.slow
def test_one_valid_row_per_instance_and_method(rows):
    assert [(r["instance"], r["method"]) for r in rows] == [(p.stem, m) for p in TWO for m in METHODS]
    for r in rows:
        assert r["valid"], (r["instance"], r["method"], r["error"])
        for key in ("max_v_stay", "physical_peak", "extra_traffic", "spill_count", "makespan", "seconds"):
            assert r[key] is not None
    dan = next(r for r in rows if r["instance"] == "Exp" and r["method"] == "dan")
    assert (dan["max_v_stay"], dan["extra_traffic"], dan["makespan"]) == (10, 0, 60)  # docs/rules.md, section 9
    assert set(dan["stage_seconds"]) >= {"mpas", "dlr", "cpe"}


@pytest.mark.slow
def test_write_bench_produces_the_three_files(rows, tmp_path):
    files = B.write_bench(rows, tmp_path, anchors={})
    assert sorted(f.name for f in files) == ["bench.csv", "bench.json", "bench.md"]
    data = json.loads((tmp_path / "bench.json").read_text())
    assert len(data) == len(TWO) * len(METHODS)
    with open(tmp_path / "bench.csv") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == len(data) and table[0]["method"] == "base"
    md = (tmp_path / "bench.md").read_text()
    for heading in ("Table 2", "Table 4", "Table 5", "Figure 11", "Δ vs best external"):
        assert heading in md


def test_markdown_ratios_delta_and_anchor_column():
    def row(inst, method, peak, traffic, spills, makespan):
        return {
            "instance": inst,
            "method": method,
            "valid": True,
            "error": None,
            "max_v_stay": peak,
            "physical_peak": peak,
            "extra_traffic": traffic,
            "spill_count": spills,
            "makespan": makespan,
            "seconds": 1.0,
            "stage_seconds": {"mpas": 0.5},
            "info": {},
        }

    rows = [
        row("Case", "base", 200, 100, 10, 1000),
        row("Case", "hmcos", 100, 50, 5, 800),
        row("Case", "lru", 80, 60, 6, 700),
        row("Case", "dan-no-cpe", 80, 40, 4, 700),
        row("Case", "dan", 80, 40, 4, 600),
    ]
    md = B.bench_markdown(rows, {"Case": {"p1": 70, "p2": 30, "p3": 500, "p3_traffic": 30}})
    assert "| Case | hmcos | 0.500 | 0.500 | 0.500 | 0.800 |" in md
    assert "| Case | Makespan |" not in md  # the workload name only on its first line
    assert "20.0% ↓ vs hmcos" in md and "25.0% ↓ vs hmcos" in md
    assert "best public" in md and "500 (traffic 30)" in md
    assert "| Case | -33.3% | -33.3% | -14.3% |" in md  # Table 4: dan vs lru
    assert "| Case | 700 | 600 | 14.3% |" in md  # Table 5
    assert "None: `dan` is best" in md
    rows.append(row("Case", "magis", 50, 45, 3, 900))
    cells = B.not_best_cells(rows)
    assert [(c["metric"], c["by"]) for c in cells] == [("max_v_stay", ["magis"]), ("spill_count", ["magis"])]


def test_a_crashing_or_invalid_method_is_a_row(monkeypatch, tmp_path):
    def crash(inst, time_limit):
        raise RuntimeError("boom")

    def invalid(inst, time_limit):
        return MethodResult(Plan(order=tuple(range(inst.n)), offsets=(), spills=()), {})

    monkeypatch.setitem(METHODS, "crash", crash)
    monkeypatch.setitem(METHODS, "invalid", invalid)
    rows = B.run_bench([SHIPPED / "Exp.json"], ["base", "crash", "invalid"])
    assert [r["valid"] for r in rows] == [True, False, False]
    assert rows[1]["error"] == "RuntimeError: boom"
    assert rows[2]["error"].startswith("invalid plan")
    B.write_bench(rows, tmp_path, anchors={})
    assert "crash: RuntimeError: boom" in (tmp_path / "bench.md").read_text()


@pytest.mark.slow
def test_parallel_jobs_give_the_same_rows(rows):
    par = B.run_bench(TWO, ["base", "magis", "gbs"], jobs=2, time_limit=5.0)
    serial = [r for r in rows if r["method"] in ("base", "magis", "gbs")]

    def strip(rs):
        return [{k: v for k, v in r.items() if k not in ("seconds", "stage_seconds")} for r in rs]

    assert strip(par) == strip(serial)


def test_cli_bench(tmp_path):
    res = CliRunner().invoke(
        app, ["bench", str(SHIPPED / "Exp.json"), "--methods", "base,dan", "--out", str(tmp_path), "--quiet"]
    )
    assert res.exit_code == 0, res.output
    assert len(json.loads((tmp_path / "bench.json").read_text())) == 2
    bad = CliRunner().invoke(app, ["bench", str(SHIPPED / "Exp.json"), "--methods", "nope", "--out", str(tmp_path)])
    assert bad.exit_code != 0


def test_default_instances_prefer_the_official_cases():
    found = B.default_instances()
    official = B.official_dir()
    if official is not None:
        assert found and all(p.parent == official for p in found)
    else:
        assert all(p.parent == SHIPPED for p in found)
