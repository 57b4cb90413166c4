"""Synthetic families (``dansched generate``): well-formed, topologically numbered,
deterministic, round-tripping through JSON and CSV, and shaped as their docstrings say.

Only what :mod:`dansched.generate` promises is asserted: every family passes the
loader's checks on the default hardware model; ids are ``0..N-1`` with every
edge going from a smaller to a larger id; ``random`` keeps at most one live
buffer per L0 tier along the id order (so that order is a feasible problem-1
schedule); the same ``(family, scale, seed)`` gives the same records; and the
structure each family's docstring describes (op mix, pipes, tiers, counts).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

import pytest
from helpers import run_cli

from dansched.generate import FAMILIES, generate
from dansched.hardware import default_hardware
from dansched.instance import instance_from_records, load_instance
from dansched.plan import Plan
from dansched.simulate import evaluate

SCALES = (1, 2)
CASES = [(f, s) for f in FAMILIES for s in SCALES]


def ops_of(nodes) -> list[dict]:
    return [r for r in nodes if r["Op"] not in ("ALLOC", "FREE")]


def tier_of(nodes) -> dict[int, str]:
    return {r["BufId"]: r["Type"] for r in nodes if r["Op"] == "ALLOC"}


# ---------------------------------------------------------------------------------
# well-formed, topological, deterministic
# ---------------------------------------------------------------------------------


def test_families_are_the_four_of_issue_9_and_the_deep_two_of_issue_17():
    assert list(FAMILIES) == ["matmul", "fa", "conv", "random", "chain", "ladder"]


@pytest.mark.parametrize("family,scale", CASES)
def test_generated_instances_load_and_ids_are_topological(family, scale):
    nodes, edges = generate(family, scale, seed=1)
    inst = instance_from_records(f"{family}_s{scale}", nodes, edges)  # every rule of docs/rules.md, section 1.2
    assert inst.warnings == ()  # every Cycles is a non-negative integer
    assert [r["Id"] for r in nodes] == list(range(len(nodes)))
    assert all(u < w for u, w in edges), "an edge goes against the id order"
    assert len({tuple(e) for e in edges}) == len(edges) == inst.num_edges  # no duplicate edges
    # the id order is a schedule: lifetimes in order, every operation inside its buffers' lifetimes
    ev = evaluate(inst, Plan(order=tuple(range(inst.n))))
    assert set(ev.error_counts) <= {"l0-single-residency"}, ev.errors[:3]


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("seed", range(6))
def test_random_id_order_keeps_the_l0_rule(scale, seed):
    """The ``random`` docstring: the id order keeps at most one live buffer per L0 tier."""
    nodes, edges = generate("random", scale, seed)
    single = set(default_hardware().single_residency_tiers)
    live: dict[str, int] = {}
    for r in nodes:  # an independent walk of the id order
        if r["Op"] == "ALLOC" and r["Type"] in single:
            assert r["Type"] not in live, (
                f"seed {seed}: buffers {live[r['Type']]} and {r['BufId']} both live in {r['Type']}"
            )
            live[r["Type"]] = r["BufId"]
        elif r["Op"] == "FREE" and r["Type"] in single:
            assert live.pop(r["Type"]) == r["BufId"]
    # and the evaluator agrees: the id order is a valid problem-1 plan
    inst = instance_from_records("r", nodes, edges)
    ev = evaluate(inst, Plan(order=tuple(range(inst.n))))
    assert ev.valid, ev.errors[:3]


@pytest.mark.parametrize("family,scale", CASES)
def test_same_arguments_same_records(family, scale):
    a = generate(family, scale, seed=3)
    b = generate(family, scale, seed=3)
    assert a == b
    assert json.dumps(a) == json.dumps(b)


def test_random_depends_on_the_seed_and_scale():
    base = generate("random", 1, 0)
    assert all(generate("random", 1, s) != base for s in range(1, 6))
    assert generate("random", 2, 0) != base
    # seeds are not consumed from global state: interleaving calls changes nothing
    import random as stdlib_random

    stdlib_random.seed(99)
    assert generate("random", 1, 0) == base


def test_generate_is_byte_identical_across_hash_seeds(tmp_path):
    """Two real processes with different PYTHONHASHSEED write the same bytes."""
    outs = []
    for hash_seed in ("0", "4242"):
        out = tmp_path / f"r{hash_seed}.json"
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        proc = subprocess.run(
            [sys.executable, "-m", "dansched.cli", "generate", "random", "--scale", "2", "--seed", "5", "--out", out],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert proc.returncode == 0, proc.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_generate_function_rejects_bad_arguments():
    with pytest.raises(ValueError, match="family must be one of .*, got 'nope'"):
        generate("nope", 1, 0)
    for scale in (0, -1):
        with pytest.raises(ValueError, match="scale must be an integer from 1"):
            generate("matmul", scale, 0)


# ---------------------------------------------------------------------------------
# the command line: JSON and CSV pairs that load back to equal instances
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("family", list(FAMILIES))
def test_cli_writes_json_and_csv_that_load_to_equal_instances(monkeypatch, capsys, tmp_path, family):
    nodes, edges = generate(family, 1, 7)
    ref = instance_from_records("ref", nodes, edges)
    code, out, err = run_cli(
        monkeypatch, capsys, "generate", family, "--scale", "1", "--seed", "7", "--out", tmp_path / "g.json"
    )
    assert code == 0 and err == "", err  # what was written is the result: on stdout
    said = " ".join(out.split())  # one line, wrapped between words at the terminal's width
    assert said == f"{tmp_path / 'g.json'}: {ref.n} nodes, {ref.num_edges} edges, {ref.num_buffers} buffers"
    assert json.loads((tmp_path / "g.json").read_text()) == {"Nodes": nodes, "Edges": edges}
    code, _, err = run_cli(
        monkeypatch, capsys, "generate", family, "--seed", "7", "--out", tmp_path / "csv" / "g_Nodes.csv"
    )
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "csv").iterdir()) == ["g_Edges.csv", "g_Nodes.csv"]
    from_json = load_instance(tmp_path / "g.json")
    from_csv = load_instance(tmp_path / "csv" / "g_Nodes.csv")
    assert from_json.name == from_csv.name == "g"
    assert from_json.same_as(ref) and from_csv.same_as(ref) and from_csv.same_as(from_json)
    header = (tmp_path / "csv" / "g_Nodes.csv").read_text().splitlines()[0]
    assert header == "Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs"


def test_cli_defaults_are_scale_1_seed_0(monkeypatch, capsys, tmp_path):
    code, _, err = run_cli(monkeypatch, capsys, "generate", "conv", "--out", tmp_path / "c.json")
    assert code == 0, err
    nodes, edges = generate("conv", 1, 0)
    assert json.loads((tmp_path / "c.json").read_text()) == {"Nodes": nodes, "Edges": edges}


@pytest.mark.parametrize(
    "args,pattern",
    [
        (("nope",), r"FAMILY.*'nope' is not one of 'matmul', 'fa', 'conv', 'random', 'chain', 'ladder'"),
        (("matmul", "--scale", "0"), r"--scale"),
        (("matmul", "--scale", "-2"), r"--scale"),
        (("matmul", "--scale", "two"), r"--scale"),
        (("matmul", "--seed", "x"), r"--seed"),
        (("MATMUL",), r"FAMILY.*'MATMUL' is not one of"),
    ],
)
def test_cli_bad_family_or_scale_exit_2(monkeypatch, capsys, tmp_path, args, pattern):
    import re

    target = tmp_path / "x.json"
    code, out, err = run_cli(monkeypatch, capsys, "generate", *args, "--out", target)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dansched: error: ") and re.search(pattern, lines[0]), err
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_cli_out_is_required(monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "generate", "matmul")
    assert code == 2 and "--out" in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------
# the shape each family's docstring describes
# ---------------------------------------------------------------------------------


def _common_shape(nodes, edges) -> None:
    """Loose resemblance to the official graphs: 1 to 3.5 edges per node (official: 1.5-1.8),
    every buffer used by at least one operation, every operation on a pipe of the model."""
    assert 1.0 <= len(edges) / len(nodes) <= 3.5
    used = {b for r in ops_of(nodes) for b in r["Bufs"]}
    assert used == set(tier_of(nodes))
    assert {r["Pipe"] for r in ops_of(nodes)} <= set(default_hardware().pipes)


@pytest.mark.parametrize("scale", SCALES)
def test_matmul_shape(scale):
    """(2s x 2s) output blocks, a k-loop of 2s: COPY_IN of L1 A/B blocks (once each), MOVE to
    L0A/L0B on MTE1, MATMUL on CUBE accumulating in one L0C buffer per block, out through FIXP."""
    nodes, edges = generate("matmul", scale, 0)
    _common_shape(nodes, edges)
    m = 2 * scale
    ops = ops_of(nodes)
    tiers = tier_of(nodes)
    mix = Counter(r["Op"] for r in ops)
    assert set(mix) == {"COPY_IN", "MOVE", "MATMUL", "COPY_OUT"}  # the official Matmul op set
    assert mix["MATMUL"] == m**3 and mix["MOVE"] == 2 * m**3 and mix["COPY_OUT"] == m**2
    assert mix["COPY_IN"] == 2 * m**2  # every A and B block loaded once
    pipes = {r["Op"]: r["Pipe"] for r in ops}
    assert pipes == {"COPY_IN": "MTE2", "MOVE": "MTE1", "MATMUL": "CUBE", "COPY_OUT": "FIXP"}
    assert Counter(tiers.values())["L0C"] == m**2  # one accumulator per output block
    loaded = Counter(b for r in ops if r["Op"] == "COPY_IN" for b in r["Bufs"])
    assert set(loaded) == {b for b, t in tiers.items() if t == "L1"} and set(loaded.values()) == {1}
    for r in ops:
        if r["Op"] == "MATMUL":
            assert sorted(tiers[b] for b in r["Bufs"]) == ["L0A", "L0B", "L0C"]
    # the k-loop accumulates: the MATMULs of one L0C buffer form a chain of edges
    edge_set = {tuple(e) for e in edges}
    by_acc: dict[int, list[int]] = {}
    for r in ops:
        if r["Op"] == "MATMUL":
            by_acc.setdefault(next(b for b in r["Bufs"] if tiers[b] == "L0C"), []).append(r["Id"])
    assert all(len(chain) == m for chain in by_acc.values())
    assert all((a, b) in edge_set for chain in by_acc.values() for a, b in zip(chain, chain[1:]))


@pytest.mark.parametrize("scale", SCALES)
def test_fa_shape(scale):
    """2s query blocks x 2s key/value blocks: Q K^T and P V on CUBE, softmax pieces on VECTOR
    in UB, a running update, L1 <-> UB traffic."""
    nodes, edges = generate("fa", scale, 0)
    _common_shape(nodes, edges)
    m = 2 * scale
    ops = ops_of(nodes)
    tiers = tier_of(nodes)
    matmuls = [r for r in ops if r["Op"] == "MATMUL"]
    assert len(matmuls) == 2 * m * m and {r["Pipe"] for r in matmuls} == {"CUBE"}
    vector = [r for r in ops if r["Pipe"] == "VECTOR"]
    assert vector and {"EXP", "ADD"} <= {r["Op"] for r in vector}
    assert all(tiers[b] == "UB" for r in vector for b in r["Bufs"])  # softmax pieces live in UB
    assert "UB" in tiers.values() and "L1" in tiers.values()
    # L1 <-> UB traffic: an operation that touches both an L1 and a UB buffer
    assert any({"L1", "UB"} <= {tiers[b] for b in r["Bufs"]} for r in ops)


@pytest.mark.parametrize("scale", SCALES)
def test_conv_shape(scale):
    """1+s layers of 4s tiles: each computed tile reads tiles t-1..t+1 of the previous layer
    (L1) and a kernel block in L1 (moved to L0B), accumulating in L0C."""
    nodes, edges = generate("conv", scale, 0)
    _common_shape(nodes, edges)
    tiles = 4 * scale
    ops = ops_of(nodes)
    tiers = tier_of(nodes)
    convs = [r for r in ops if r["Op"] == "CONV"]
    assert len(convs) == scale * (3 * tiles - 2) and {r["Pipe"] for r in convs} == {"CUBE"}
    for r in convs:
        assert sorted(tiers[b] for b in r["Bufs"]) == ["L0B", "L0C", "L1"]
    copy_in = [r for r in ops if r["Op"] == "COPY_IN"]
    assert len(copy_in) == tiles + scale  # input tiles, then one kernel per computed layer
    assert all(tiers[b] == "L1" for r in copy_in for b in r["Bufs"])
    assert sum(1 for r in ops if r["Op"] == "COPY_OUT") == tiles


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("seed", (0, 1))
def test_random_shape(scale, seed):
    """About 20s operations; each buffer lives across a few operations."""
    nodes, edges = generate("random", scale, seed)
    _common_shape(nodes, edges)
    assert 10 * scale <= len(ops_of(nodes)) <= 30 * scale
    users = Counter(b for r in ops_of(nodes) for b in r["Bufs"])
    assert 1 <= min(users.values()) and max(users.values()) <= 5


def test_the_builder_refuses_a_tier_or_pipe_its_hardware_lacks_at_once():
    """``GraphBuilder().alloc(64, "UBB")`` is refused as it is given, not at build(), with the
    closest name; a builder for hardware with a new tier takes that tier."""
    from dansched.errors import ArgumentError
    from dansched.generate import GraphBuilder
    from dansched.hardware import hardware_from_table

    g = GraphBuilder()
    with pytest.raises(ArgumentError, match=r"tier 'UBB' is not a tier of the hardware model .*: did you mean UB\?$"):
        g.alloc(64, "UBB")
    a = g.alloc(64, "UB")
    with pytest.raises(ArgumentError, match=r"pipe 'VECTR' .*: did you mean VECTOR\?$"):
        g.op("ADD", "VECTR", 1, [a])
    assert repr(g) == "GraphBuilder(1 nodes, 1 buffers, 0 freed)"
    table = GraphBuilder().hw.to_dict()
    table["tiers"] = dict(table["tiers"], SRAM=4096)
    wide = GraphBuilder(hardware_from_table(table))
    b = wide.alloc(64, "SRAM")
    wide.op("ADD", "VECTOR", 1, [b])
    wide.free(b)
    assert wide.build("sram").num_buffers == 1
