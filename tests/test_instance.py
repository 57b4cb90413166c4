"""Instance loading: the structure, JSON and CSV forms, and every well-formedness rule of docs/rules.md, section 1.2."""

from __future__ import annotations

import json

import pytest
from helpers import EXP_EDGES, EXP_NODES, MALFORMED, OFFICIAL_CASES, exp_records, official_path, run_cli

from dansched.errors import ArgumentError, InstanceError
from dansched.hardware import load_hardware
from dansched.instance import (
    KIND_ALLOC,
    KIND_FREE,
    KIND_OP,
    instance_from_records,
    instance_name,
    load_instance,
    write_csv_pair,
    write_json,
)


def test_shipped_exp_matches_spec_section_6(exp_path):
    data = json.loads(exp_path.read_text())
    assert data["Nodes"] == EXP_NODES
    assert sorted(map(tuple, data["Edges"])) == sorted(map(tuple, EXP_EDGES))


def test_exp_structure(exp_path):
    inst = load_instance(exp_path)
    assert inst.name == "Exp" and inst.n == 7 and inst.num_buffers == 2 and inst.num_edges == 8
    assert inst.op == ("ALLOC", "COPY_IN", "ALLOC", "EXP", "FREE", "COPY_OUT", "FREE")
    assert inst.kind.tolist() == [KIND_ALLOC, KIND_OP, KIND_ALLOC, KIND_OP, KIND_FREE, KIND_OP, KIND_FREE]
    hw = inst.hw
    assert inst.pipe.tolist() == [-1, hw.pipe_index("MTE2"), -1, hw.pipe_index("VECTOR"), -1, hw.pipe_index("MTE3"), -1]
    assert inst.cycles.tolist() == [0, 15, 0, 30, 0, 15, 0]
    # buffer table
    assert inst.buf_id.tolist() == [0, 1]
    assert inst.buf_size.tolist() == [5, 5]
    assert [hw.tiers[t] for t in inst.buf_tier] == ["UB", "UB"]
    assert inst.buf_alloc.tolist() == [0, 2] and inst.buf_free.tolist() == [4, 6]
    assert inst.buf_backed.tolist() == [True, False]  # b0 is filled by COPY_IN
    assert inst.users(0).tolist() == [1, 3] and inst.users(1).tolist() == [3, 5]
    assert sorted(inst.bufs(3).tolist()) == [0, 1] and inst.bufs(0).tolist() == []
    assert inst.node_buf.tolist() == [0, -1, 1, -1, 0, -1, 1]
    # adjacency
    assert sorted(inst.succ(3).tolist()) == [4, 5] and sorted(inst.pred(3).tolist()) == [1, 2]
    assert sorted(inst.succ(0).tolist()) == [1, 4] and inst.pred(0).tolist() == []
    L = inst.lists()
    for v in range(inst.n):
        assert sorted(L.succ[v]) == sorted(inst.succ(v).tolist())
        assert sorted(L.pred[v]) == sorted(inst.pred(v).tolist())
    assert inst.is_peak_buffer().tolist() == [True, True]
    assert inst.warnings == ()


def test_buffer_ids_need_not_be_contiguous():
    nodes, edges = exp_records()
    for rec in nodes:
        if "BufId" in rec:
            rec["BufId"] = {0: 40, 1: 7}[rec["BufId"]]
        if "Bufs" in rec:
            rec["Bufs"] = [{0: 40, 1: 7}[b] for b in rec["Bufs"]]
    inst = instance_from_records("x", nodes, edges)
    assert inst.buf_id.tolist() == [7, 40]
    assert inst.buffer_index(40) == 1 and inst.buffer_index(7) == 0
    with pytest.raises(ArgumentError, match="x has no buffer with BufId 8"):  # a documented class, one line
        inst.buffer_index(8)
    assert inst.buf_alloc.tolist() == [2, 0]
    assert inst.buf_backed.tolist() == [False, True]


def test_duplicate_edges_and_bufs_are_collapsed():
    nodes, edges = exp_records()
    nodes[3]["Bufs"] = [1, 0, 1]
    inst = instance_from_records("x", nodes, edges + [[0, 1], [3, 4]])
    assert inst.num_edges == 8
    assert sorted(inst.bufs(3).tolist()) == [0, 1]


def test_round_trip_to_records(exp_path, tmp_path):
    inst = load_instance(exp_path)
    write_json(inst, tmp_path / "copy.json")
    again = load_instance(tmp_path / "copy.json")
    assert again.same_as(inst) and again.name == "copy"


def test_csv_pair_of_exp_equals_json(exp_path, tmp_path):
    inst = load_instance(exp_path)
    nodes_csv = write_csv_pair(inst, tmp_path)
    assert nodes_csv.name == "Exp_Nodes.csv" and (tmp_path / "Exp_Edges.csv").is_file()
    header = nodes_csv.read_text().splitlines()[0]
    assert header == "Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs"
    assert '"1,0"' in nodes_csv.read_text()  # Bufs is a quoted id list
    for p in (nodes_csv, tmp_path / "Exp_Edges.csv"):
        csv_inst = load_instance(p)
        assert csv_inst.name == "Exp"
        assert csv_inst.same_as(inst)
    assert instance_name(tmp_path / "Exp_Edges.csv") == "Exp"


def test_csv_written_by_hand_loads(tmp_path):
    (tmp_path / "h_Nodes.csv").write_text(
        'Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs\n0,ALLOC,3,5,UB,,,\n1,COPY_IN,,,,MTE2,15,"3"\n2,FREE,3,5,UB,,,\n'
    )
    (tmp_path / "h_Edges.csv").write_text("StartNodeId,EndNodeId\n0,1\n1,2\n")
    inst = load_instance(tmp_path / "h_Nodes.csv")
    ref = instance_from_records(
        "h",
        [
            {"Id": 0, "Op": "ALLOC", "BufId": 3, "Size": 5, "Type": "UB"},
            {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 15, "Bufs": [3]},
            {"Id": 2, "Op": "FREE", "BufId": 3, "Size": 5, "Type": "UB"},
        ],
        [[0, 1], [1, 2]],
    )
    assert inst.same_as(ref)


def test_same_as_notices_differences():
    a = instance_from_records("a", *exp_records())
    nodes, edges = exp_records()
    nodes[3]["Cycles"] = 31
    assert not a.same_as(instance_from_records("b", nodes, edges))
    nodes, edges = exp_records()
    assert not a.same_as(instance_from_records("b", nodes, edges[:-1]))
    assert a.same_as(instance_from_records("b", *exp_records()))


@pytest.mark.parametrize(
    "case", [pytest.param(c, marks=pytest.mark.slow) if c != "Matmul_Case0" else c for c in OFFICIAL_CASES]
)
def test_official_json_and_csv_forms_are_equal(case, tmp_path):
    inst = load_instance(official_path(case))
    write_csv_pair(inst, tmp_path)
    csv_inst = load_instance(tmp_path / f"{case}_Nodes.csv")
    assert csv_inst.name == case
    assert csv_inst.same_as(inst)
    # and against the JSON text itself, field by field
    data = json.loads(official_path(case).read_text())
    nodes, edges = csv_inst.to_records()
    by_id = {rec["Id"]: rec for rec in data["Nodes"]}
    assert [
        by_id[i] | ({"Bufs": list(dict.fromkeys(by_id[i]["Bufs"]))} if "Bufs" in by_id[i] else {})
        for i in range(len(nodes))
    ] == nodes
    assert sorted(map(tuple, edges)) == sorted(set(map(tuple, data["Edges"])))


# ---------------------------------------------------------------------------------
# Cycles: missing or invalid -> cost 1 and a warning (not an error)
# ---------------------------------------------------------------------------------


def test_missing_or_negative_cycles_cost_one_with_a_counting_warning():
    nodes, edges = exp_records()
    nodes[1]["Cycles"] = -3  # COPY_IN
    del nodes[3]["Cycles"]  # EXP
    nodes[5]["Cycles"] = "15"  # COPY_OUT: not an integer
    inst = instance_from_records("w", nodes, edges)
    assert inst.cycles.tolist() == [0, 1, 0, 1, 0, 1, 0]
    assert len(inst.warnings) == 1
    w = inst.warnings[0]
    assert w.startswith("3 operation node(s)")
    assert "COPY_IN: 1" in w and "COPY_OUT: 1" in w and "EXP: 1" in w


def test_warning_counts_per_op():
    nodes, edges = exp_records()
    nodes[1]["Cycles"] = -1
    nodes[5]["Op"] = "COPY_IN"
    nodes[5]["Cycles"] = 2.5
    inst = instance_from_records("w", nodes, edges)
    assert inst.warnings[0].startswith("2 operation node(s)") and "(COPY_IN: 2)" in inst.warnings[0]


def test_zero_cycles_is_fine():
    nodes, edges = exp_records()
    nodes[3]["Cycles"] = 0
    inst = instance_from_records("z", nodes, edges)
    assert inst.cycles[3] == 0 and inst.warnings == ()


# ---------------------------------------------------------------------------------
# Malformed instances (docs/rules.md, section 1.2): InstanceError naming the node / buffer
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name,mutate,pattern", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_instance_is_rejected(name, mutate, pattern):
    nodes, edges = exp_records()
    mutate(nodes, edges)
    with pytest.raises(InstanceError, match=pattern) as info:
        instance_from_records("bad", nodes, edges)
    assert "\n" not in str(info.value)


def test_unmutated_exp_records_load():
    """Guard for the table above: each error comes from its mutation alone."""
    instance_from_records("ok", *exp_records())


def test_hardware_decides_tiers_and_pipes(tmp_path):
    p = tmp_path / "hw.toml"
    p.write_text("[tiers]\nUB = 8\n")
    with pytest.raises(InstanceError, match=r"node 3 \(EXP\): its buffers in UB need 10, the tier holds 8"):
        instance_from_records("x", *exp_records(), hw=load_hardware(p))
    p.write_text("[tiers]\nUB = 4\n")
    with pytest.raises(InstanceError, match=r"Size 5 is larger than tier UB \(4\)"):
        instance_from_records("x", *exp_records(), hw=load_hardware(p))
    p.write_text(
        '[new_tiers]\nSRAM = 64\n[roles]\npipes = ["MTE2", "MTE3", "VECTOR", "DMA"]\nspill_out_pipe = "DMA"\nspill_in_pipe = "DMA"\n'
    )
    nodes, edges = exp_records()
    nodes[0]["Type"] = nodes[4]["Type"] = "SRAM"
    inst = instance_from_records("x", nodes, edges, hw=load_hardware(p))
    assert inst.hw.tiers[inst.buf_tier[0]] == "SRAM"
    nodes[3]["Pipe"] = "CUBE"  # no longer a pipe of this model
    with pytest.raises(InstanceError, match=r"Pipe 'CUBE' is not a pipe"):
        instance_from_records("x", nodes, edges, hw=load_hardware(p))


# ---------------------------------------------------------------------------------
# File-level problems
# ---------------------------------------------------------------------------------


def test_file_errors(tmp_path):
    with pytest.raises(InstanceError, match="no such file"):
        load_instance(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"Nodes": [')
    with pytest.raises(InstanceError, match=r"not valid JSON .* line 1"):
        load_instance(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(InstanceError, match="expected an object with 'Nodes' and 'Edges'"):
        load_instance(bad)
    bad.write_text('{"Nodes": {}, "Edges": []}')
    with pytest.raises(InstanceError, match="'Nodes' must be a list"):
        load_instance(bad)
    bad.write_text('{"Nodes": [], "Edges": []}')
    with pytest.raises(InstanceError, match="no nodes"):
        load_instance(bad)
    bad.write_text(json.dumps({"Nodes": EXP_NODES, "Edges": 5}))
    with pytest.raises(InstanceError, match="'Edges' must be a list"):
        load_instance(bad)
    bad.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(InstanceError, match="cannot read"):
        load_instance(bad)


def test_csv_file_errors(tmp_path):
    inst = instance_from_records("c", *exp_records())
    write_csv_pair(inst, tmp_path)
    nodes_p, edges_p = tmp_path / "c_Nodes.csv", tmp_path / "c_Edges.csv"
    with pytest.raises(InstanceError, match="named <case>_Nodes.csv"):
        load_instance(tmp_path / "c.csv")
    good_edges = edges_p.read_text()
    edges_p.write_text("From,To\n0,1\n")
    with pytest.raises(InstanceError, match="header must be StartNodeId,EndNodeId"):
        load_instance(nodes_p)
    edges_p.write_text("StartNodeId,EndNodeId\n0,1,2\n")
    with pytest.raises(InstanceError, match=r"c_Edges.csv:2: an edge is two node ids"):
        load_instance(nodes_p)
    edges_p.write_text("StartNodeId,EndNodeId\n0,x\n")
    with pytest.raises(InstanceError, match=r"edge #0: target must be an integer"):
        load_instance(nodes_p)
    edges_p.write_text(good_edges)
    good_nodes = nodes_p.read_text()
    nodes_p.write_text("Foo,Bar\n1,2\n")
    with pytest.raises(InstanceError, match="header must be Id,Op"):
        load_instance(nodes_p)
    nodes_p.write_text(good_nodes.replace("0,ALLOC,0,5,UB,,,", "0,ALLOC,0,5,UB,,,,9"))
    with pytest.raises(InstanceError, match=r"c_Nodes.csv:2: more fields than the header"):
        load_instance(nodes_p)
    nodes_p.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe binary")
    with pytest.raises(InstanceError, match="cannot read as a CSV instance"):
        load_instance(nodes_p)
    nodes_p.write_text(good_nodes)
    edges_p.unlink()
    with pytest.raises(InstanceError, match="needs both c_Nodes.csv and c_Edges.csv"):
        load_instance(nodes_p)


HAND_NODES = 'Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs\n0,ALLOC,3,5,UB,,,\n1,COPY_IN,,,,MTE2,{c},"3"\n2,FREE,3,5,UB,,,\n'


@pytest.mark.parametrize(
    "cell, cycles",
    [("15", 15), ("15.0", 15), ("1e3", 1000), ("9007199254740992.0", 2**53), ("-0.0", 0)],
)
def test_an_integral_float_up_to_2_53_is_read_exactly(tmp_path, cell, cycles):
    (tmp_path / "h_Nodes.csv").write_text(HAND_NODES.format(c=cell))
    (tmp_path / "h_Edges.csv").write_text("StartNodeId,EndNodeId\n0,1\n1,2\n")
    assert load_instance(tmp_path / "h_Nodes.csv").cycles.tolist()[1] == cycles


@pytest.mark.parametrize("cell", ["12345678901234567.0", "9007199254740993.0", "1e17", "-1E+20", "1.0e300"])
def test_an_integral_float_beyond_2_53_is_refused_naming_the_cell(tmp_path, cell, monkeypatch, capsys):
    """Never rounded: 12345678901234567.0 would read as 12345678901234568."""
    (tmp_path / "h_Nodes.csv").write_text(HAND_NODES.format(c=cell))
    (tmp_path / "h_Edges.csv").write_text("StartNodeId,EndNodeId\n0,1\n1,2\n")
    code, out, err = run_cli(monkeypatch, capsys, "info", tmp_path / "h_Nodes.csv")
    line = (
        f"dansched: error: {tmp_path / 'h_Nodes.csv'}:3: Cycles is {cell}, an integral float beyond 2**53, "
        "which a float cannot hold exactly: write it as an integer"
    )
    assert code == 2 and out == "" and err.splitlines() == [line]
    (tmp_path / "h_Nodes.csv").write_text(HAND_NODES.format(c=15))
    (tmp_path / "h_Edges.csv").write_text(f"StartNodeId,EndNodeId\n0,1\n{cell},2\n")
    with pytest.raises(InstanceError, match=r"h_Edges.csv:3: StartNodeId is .*beyond 2\*\*53"):
        load_instance(tmp_path / "h_Nodes.csv")


@pytest.mark.parametrize("field", ["Cycles", "Size", "Id"])
def test_an_integral_json_float_beyond_2_53_is_refused_as_written(tmp_path, field):
    nodes, edges = exp_records()
    text = json.dumps({"Nodes": nodes, "Edges": edges})
    node = next(r for r in nodes if field in r)
    written = json.dumps(node).replace(f'"{field}": {node[field]}', f'"{field}": 12345678901234567.0')
    path = tmp_path / "big.json"
    path.write_text(text.replace(json.dumps(node), written, 1))
    with pytest.raises(InstanceError, match=rf"'{field}' is 12345678901234567.0, an integral float beyond 2\*\*53"):
        load_instance(path)


def test_a_header_naming_a_column_twice_is_refused(tmp_path):
    """The second Cycles column would win silently (makespan 297 instead of 60)."""
    (tmp_path / "h_Nodes.csv").write_text(
        "Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs,Cycles\n0,ALLOC,3,5,UB,,,,\n1,COPY_IN,,,,MTE2,60,3,297\n"
        "2,FREE,3,5,UB,,,,\n"
    )
    (tmp_path / "h_Edges.csv").write_text("StartNodeId,EndNodeId\n0,1\n1,2\n")
    with pytest.raises(InstanceError, match="h_Nodes.csv: the header names 'Cycles' twice"):
        load_instance(tmp_path / "h_Nodes.csv")


@pytest.mark.parametrize("seed", range(6))
def test_a_cycle_error_names_a_cycle_of_the_graph(seed):
    """A generated graph with one edge turned back (so a cycle exists): the message names
    a cycle whose every step is an edge of the records (the oracle), closed at its
    smallest node, which comes first."""
    import random
    import re

    from dansched.generate import generate

    nodes, edges = generate("random", 2, seed)
    u, w = random.Random(seed).choice(edges)
    edges = [*edges, [w, u]]
    with pytest.raises(InstanceError) as info:
        instance_from_records("loop", nodes, edges)
    m = re.search(r"the edges close a cycle: ([\d -> ]+) \(the graph must be acyclic\)", str(info.value))
    assert m, str(info.value)
    cycle = [int(v) for v in m.group(1).split(" -> ")]
    assert cycle[0] == cycle[-1] == min(cycle) and len(set(cycle)) == len(cycle) - 1
    present = {(a, b) for a, b in edges}
    assert all((a, b) in present for a, b in zip(cycle, cycle[1:]))


def test_a_typo_in_an_instance_file_names_the_file_and_the_closest_name(tmp_path):
    """An unknown pipe or tier in a file: the error names the file first and, as a --hw typo
    does, the closest known name (none when nothing is close)."""
    import json

    nodes, edges = exp_records()
    nodes[3]["Pipe"] = "VECTR"
    path = tmp_path / "typo.json"
    path.write_text(json.dumps({"Nodes": nodes, "Edges": edges}))
    with pytest.raises(InstanceError) as info:
        load_instance(path)
    assert str(info.value).startswith(f"{path}: node 3 (EXP): Pipe 'VECTR' is not a pipe")
    assert str(info.value).endswith(": did you mean VECTOR?")
    nodes[3]["Pipe"], nodes[0]["Type"], nodes[4]["Type"] = "VECTOR", "UBB", "UBB"
    path.write_text(json.dumps({"Nodes": nodes, "Edges": edges}))
    with pytest.raises(
        InstanceError, match=r"typo.json: node 0 \(ALLOC\) of buffer 0: Type 'UBB' .*: did you mean UB\?"
    ):
        load_instance(path)
    nodes[0]["Type"], nodes[4]["Type"], nodes[3]["Pipe"] = "UB", "UB", "GPU"
    path.write_text(json.dumps({"Nodes": nodes, "Edges": edges}))
    with pytest.raises(InstanceError) as info:
        load_instance(path)
    assert "did you mean" not in str(info.value)
