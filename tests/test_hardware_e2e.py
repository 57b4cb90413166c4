"""Other hardware end to end: renamed pipes, smaller and larger tiers."""

from __future__ import annotations

import json

import pytest
from helpers import SHIPPED

from dansched.hardware import load_hardware
from dansched.instance import load_instance
from dansched.pipeline import SolveOptions, run_pipeline
from dansched.simulate import evaluate

RENAME = {"MTE1": "M1", "MTE2": "M2", "MTE3": "M3", "FIXP": "FX", "CUBE": "CU", "VECTOR": "VE"}


@pytest.mark.slow
def test_renamed_pipes_end_to_end(tmp_path):
    data = json.loads((SHIPPED / "conv_s2.json").read_text())
    for node in data["Nodes"]:
        if "Pipe" in node:
            node["Pipe"] = RENAME[node["Pipe"]]
    inst_path = tmp_path / "renamed.json"
    inst_path.write_text(json.dumps(data))
    hw_path = tmp_path / "renamed.toml"
    hw_path.write_text(
        "[tiers]\nL1 = 1024\n[roles]\npipes = "
        + json.dumps(list(RENAME.values()))
        + '\nspill_out_pipe = "M3"\nspill_in_pipe = "M2"\n'
    )
    inst = load_instance(inst_path, load_hardware(hw_path))
    res = run_pipeline(inst, SolveOptions(problem=3))
    ev = evaluate(inst, res.plan)
    assert ev.valid and ev.extra_traffic > 0  # L1 = 1024 makes Stage 2 spill, on the renamed pipes
    spill_pipes = {ev.graph.pipe[v] for v in range(inst.n, ev.graph.n)}
    assert spill_pipes == {inst.hw.pipe_index("M3"), inst.hw.pipe_index("M2")}


@pytest.mark.parametrize("scale", [pytest.param(0.75, marks=pytest.mark.slow), pytest.param(4, marks=pytest.mark.slow)])
def test_smaller_and_larger_tiers(scale, tmp_path):
    inst0 = load_instance(SHIPPED / "fa_s2.json")
    caps = {t: int(inst0.hw.capacity[t] * scale) for t in ("L1", "UB")}  # e.g. 3072/768 and 16384/4096
    hw_path = tmp_path / "hw.toml"
    hw_path.write_text("[tiers]\n" + "".join(f"{t} = {c}\n" for t, c in caps.items()))
    inst = load_instance(SHIPPED / "fa_s2.json", load_hardware(hw_path))
    res = run_pipeline(inst, SolveOptions(problem=3))
    assert evaluate(inst, res.plan).valid
