"""Instance statistics: ``dansched info`` (the seed paper's Figures 5 and 6)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import OFFICIAL_CASES, official_path, run_cli

from dansched.application.report.info import ecdf_points, instance_info, smallest_id_topological_order, summary
from dansched.instance import instance_from_records, load_instance

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_exp_counts_mixes_and_lifetimes(exp_path):
    info = instance_info(load_instance(exp_path))
    assert (info.nodes, info.edges, info.operations, info.allocs, info.frees) == (7, 8, 3, 2, 2)
    assert info.op_mix == {"COPY_IN": 1, "COPY_OUT": 1, "EXP": 1}
    assert info.pipe_mix == {
        "MTE2": {"operations": 1, "cycles": 15},
        "MTE3": {"operations": 1, "cycles": 15},
        "VECTOR": {"operations": 1, "cycles": 30},
    }
    assert info.tier_mix == {"UB": {"buffers": 2, "total_size": 10, "max_size": 5}}
    assert info.lifetimes.tolist() == [4, 4]  # ALLOC 0 -> FREE 4, ALLOC 2 -> FREE 6
    assert info.ids_topological
    d = info.to_dict()
    assert d["alloc_size_ecdf"] == [[5, 1.0]]
    assert d["lifetime"]["median"] == 4.0 and d["lifetime"]["unit"] == "schedule positions"


def test_lifetimes_use_smallest_id_topological_order_when_ids_are_not_topological():
    nodes = [
        {"Id": 0, "Op": "FREE", "BufId": 9, "Size": 2, "Type": "L1"},
        {"Id": 1, "Op": "MOVE", "Pipe": "MTE1", "Cycles": 3, "Bufs": [9]},
        {"Id": 2, "Op": "ALLOC", "BufId": 9, "Size": 2, "Type": "L1"},
    ]
    inst = instance_from_records("rev", nodes, [[2, 1], [1, 0]])
    assert smallest_id_topological_order(inst) == [2, 1, 0]
    info = instance_info(inst)
    assert not info.ids_topological
    assert info.lifetimes.tolist() == [2]


def test_ecdf_and_summary():
    values = np.array([4, 1, 4, 2])
    assert ecdf_points(values) == [[1, 0.25], [2, 0.5], [4, 1.0]]
    s = summary(values)
    assert (s["count"], s["min"], s["max"], s["median"]) == (4, 1, 4, 3.0)
    assert summary(np.array([], dtype=int)) == {"count": 0}


@pytest.mark.slow
@pytest.mark.parametrize("case", OFFICIAL_CASES)
def test_info_on_every_official_case(case):
    inst = load_instance(official_path(case))
    info = instance_info(inst)
    assert info.nodes == inst.n and info.edges == inst.num_edges
    assert info.allocs == info.frees == inst.num_buffers  # 1:1 lifecycle closure (Figure 5b)
    assert info.operations + info.allocs + info.frees == info.nodes
    assert sum(info.op_mix.values()) == info.operations
    assert sum(v["operations"] for v in info.pipe_mix.values()) == info.operations
    assert sum(v["buffers"] for v in info.tier_mix.values()) == inst.num_buffers
    assert len(info.lifetimes) == inst.num_buffers and (info.lifetimes > 0).all()
    d = json.loads(json.dumps(info.to_dict()))
    assert d["alloc_size_ecdf"][-1][1] == 1.0
    assert d["alloc_size"]["count"] == inst.num_buffers


def test_cli_info_table_json_and_png(exp_path, tmp_path, monkeypatch, capsys):
    rc, out, _ = run_cli(monkeypatch, capsys, "info", exp_path)
    assert rc == 0 and "COPY_IN" in out and "lifetime" in out
    png = tmp_path / "pics" / "exp_info.png"
    rc, out, _ = run_cli(monkeypatch, capsys, "info", exp_path, "--json", "--png", png)
    assert rc == 0
    assert json.loads(out)["nodes"] == 7
    data = png.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 1000


@pytest.mark.slow
def test_cli_info_png_of_an_official_case(tmp_path, monkeypatch, capsys):
    path = official_path("FlashAttention_Case0")
    png = tmp_path / "fa0.png"
    rc, _, err = run_cli(monkeypatch, capsys, "info", path, "--json", "--png", png)
    assert rc == 0, err
    assert png.read_bytes().startswith(PNG_MAGIC)


def test_cli_info_bad_instance_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"Nodes": [{"Id": 0, "Op": "ALLOC", "BufId": 1, "Size": 4, "Type": "UB"}], "Edges": []}')
    png = tmp_path / "bad.png"
    rc, out, err = run_cli(monkeypatch, capsys, "info", bad, "--png", png)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "buffer 1" in err
    assert not png.exists()
