"""Determinism and end to end: the same command twice, with different
PYTHONHASHSEED, gives byte-identical contest files, and the plan passes the evaluator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import SHIPPED, official_path

from dansched.instance import load_instance
from dansched.plan import read_plan_dir
from dansched.simulate import evaluate


def _solve(instance: Path, out: Path, hashseed: str, *extra: str) -> None:
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    cmd = [sys.executable, "-m", "dansched.cli", "solve", str(instance), "--out", str(out), "--quiet", *extra]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr


def _without_seconds(obj):
    if isinstance(obj, dict):
        return {k: _without_seconds(v) for k, v in obj.items() if not k.endswith("seconds")}
    if isinstance(obj, list):
        return [_without_seconds(v) for v in obj]
    return obj


def _same_outputs(case: str, a: Path, b: Path) -> None:
    for suffix in ("schedule.txt", "memory.txt", "spill.txt"):
        assert (a / f"{case}_{suffix}").read_bytes() == (b / f"{case}_{suffix}").read_bytes(), suffix
    ra = json.loads((a / f"{case}_report.json").read_text())
    rb = json.loads((b / f"{case}_report.json").read_text())
    assert _without_seconds(ra) == _without_seconds(rb)


@pytest.mark.parametrize(
    "name, effort",
    [
        ("random_s5", "fast"),
        pytest.param("random_s5", "default", marks=pytest.mark.slow),
        pytest.param("conv_s2", "default", marks=pytest.mark.slow),
    ],
)
def test_solve_is_byte_identical_across_hash_seeds(name, effort, tmp_path):
    inst_path = SHIPPED / f"{name}.json"
    _solve(inst_path, tmp_path / "a", "1", "--effort", effort)
    _solve(inst_path, tmp_path / "b", "2024", "--effort", effort)
    _same_outputs(name, tmp_path / "a", tmp_path / "b")


@pytest.mark.parametrize("effort", ["fast", pytest.param("default", marks=pytest.mark.slow)])
def test_official_end_to_end_flashattention_case0(tmp_path, effort):
    """The full pipeline on a real contest graph, as a user runs it: valid plan, report
    figures equal to the evaluator's, no worse than the problem-2 plan (``--effort fast`` in
    the default run, the default effort under ``-m slow``)."""
    path = official_path("FlashAttention_Case0")
    _solve(path, tmp_path / "a", "0", "--effort", effort)
    inst = load_instance(path)
    ev = evaluate(inst, read_plan_dir(tmp_path / "a", "FlashAttention_Case0"))
    assert ev.valid, ev.errors[:3]
    report = json.loads((tmp_path / "a" / "FlashAttention_Case0_report.json").read_text())
    for key in ("max_v_stay", "physical_peak", "extra_traffic", "spill_count", "makespan"):
        assert report[key] == getattr(ev, key)
    assert report["extra_traffic"] <= report["stages"]["dlr"]["extra_traffic"]
    assert report["makespan"] <= report["stages"]["dlr"]["makespan"]


@pytest.mark.slow
def test_official_flashattention_case0_is_byte_identical_across_hash_seeds(tmp_path):
    path = official_path("FlashAttention_Case0")
    _solve(path, tmp_path / "a", "0")
    _solve(path, tmp_path / "b", "77")
    _same_outputs("FlashAttention_Case0", tmp_path / "a", tmp_path / "b")
