"""Fuzz: hostile instances, plans and hardware files through the real command line.

Valid inputs (Exp, small generated instances, their id-order problem-1 plans and
simple full plans) are mutated by a seeded random loop -- truncated files, wrong
types in every field, zero/negative/huge numbers, unknown tiers and pipes,
duplicate ids, cycles, self loops, empty graphs, a single node, NaN, strings,
booleans, null, non-object JSON, CSV variants -- and run through
``dansched evaluate`` and ``dansched info`` (``dansched.cli:main`` in-process,
plus a few real processes). The contract checked for every run:

- exit status 0 (valid), 1 (invalid plan) or 2 (bad input), never anything else;
- status 2: exactly one ``dansched: error:`` line on stderr (``dansched: warning:``
  lines may precede it) and nothing on stdout;
- status 0/1: no error line, and ``--json`` output that says ``valid`` accordingly;
- never a traceback, and the working folder is left exactly as it was.

Mutations whose verdict is certain (a cycle, a duplicate id, a truncated JSON
file, garbage in a plan file, ...) also assert the exact status. Output files
(``dansched generate --out``, :func:`write_plan`, the CSV pair) are checked to be
all-or-nothing: a failure leaves no file and no temporary file behind.

Everything is deterministic (fixed seeds); the whole file runs in a few seconds.
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import exp_records

from dansched.cli import main
from dansched.errors import OutputError
from dansched.generate import generate
from dansched.instance import NODE_FIELDS, instance_from_records, load_instance, write_csv_pair
from dansched.plan import Plan, atomic_write_text, write_plan

SEED = 20240609
BIG_HW = (
    "[tiers]\nL1 = 1099511627776\nUB = 1099511627776\nL0A = 1099511627776\nL0B = 1099511627776\nL0C = 1099511627776\n"
)

# values that replace a field: wrong types, NaN, zero, negatives, huge numbers, unknown names
HOSTILE_VALUES: list[Any] = [
    None,
    True,
    False,
    "",
    "x",
    "5",
    "UB",
    "GPU",
    "L2",
    "ALLOC",
    "FREE",
    1.5,
    3.0,
    float("nan"),
    float("inf"),
    0,
    -1,
    1,
    7,
    2**31,
    2**63 - 1,
    2**63,
    -(2**63) - 1,
    10**30,
    -(10**30),
    [],
    [0],
    [[1]],
    {},
    {"a": 1},
]
# plan-file lines that are not integers (or not BufId:Value pairs): always exit 2
GARBAGE_LINES = ["x", "1.5", "0x10", "1e3", "--1", "1 2", "NaN", "1" * 5000, "\x00", "é"]
GARBAGE_PAIRS = ["5", "a:b", "1:2:3", ":", "1:", ":1", "1;2", "1:x", "1:" + "9" * 5000]
# parseable but odd plan lines: never exit 2
ODD_INTS = ["-1", "007", " 3 ", str(10**30), str(-(10**30)), str(2**63), "+2"]


# ---------------------------------------------------------------------------------
# running the command line and checking its contract
# ---------------------------------------------------------------------------------


class Runner:
    """``dansched.cli:main`` in-process, with the contract checked on every call."""

    def __init__(self, monkeypatch, capsys, folder: Path) -> None:
        self.monkeypatch, self.capsys, self.folder = monkeypatch, capsys, folder
        self.calls = 0

    def __call__(self, *args: Any, expect: int | set[int] | None = None) -> tuple[int, str, str]:
        before = listing(self.folder)
        self.monkeypatch.setattr(sys, "argv", ["dansched", *map(str, args)])
        with pytest.raises(SystemExit) as info:
            main()
        out, err = self.capsys.readouterr()
        code = 0 if info.value.code is None else info.value.code
        self.calls += 1
        check_contract(code, out, err, args)
        if expect is not None:
            allowed = {expect} if isinstance(expect, int) else expect
            assert code in allowed, (args, code, out[-300:], err[-300:])
        if args[0] in ("evaluate", "info"):
            assert listing(self.folder) == before, f"{args[0]} changed the folder"
        return code, out, err


def listing(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*") if p.is_file()}


def check_contract(code: Any, out: str, err: str, args: tuple = ()) -> None:
    where = f"{args!r}: exit {code}\nstdout: {out[-500:]}\nstderr: {err[-500:]}"
    assert code in (0, 1, 2), where
    assert "Traceback" not in out and "Traceback" not in err, where
    lines = err.splitlines()
    errors = [s for s in lines if s.startswith("dansched: error: ")]
    others = [s for s in lines if not s.startswith(("dansched: error: ", "dansched: warning: ", "Estimated latency"))]
    if code == 2 or args[:1] in (("evaluate",), ("info",)):  # generate reports what it wrote on stdout
        assert not others, where
    if code == 2:
        assert len(errors) == 1 and lines[-1] == errors[0], where
        assert out == "", where
    else:
        assert not errors, where
        if "--json" in args:
            d = json.loads(out)
            if args[0] == "evaluate":
                assert d["valid"] is (code == 0), where
                assert (d["error_count"] == 0) is (code == 0), where
            else:
                assert code == 0 and d["nodes"] >= 1, where


@pytest.fixture
def run(monkeypatch, capsys, tmp_path) -> Runner:
    return Runner(monkeypatch, capsys, tmp_path)


def run_proc(*args: Any, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dansched.cli", *map(str, args)], capture_output=True, text=True, timeout=60, cwd=cwd
    )


# the default run draws a sample of each fuzz loop (the same rng, the first rounds); the
# slow run draws them all
SHARES = pytest.mark.parametrize(
    "share", [pytest.param(0.4, id="sample"), pytest.param(1.0, id="all", marks=pytest.mark.slow)]
)


def rounds(count: int, share: float) -> int:
    """The rounds of a fuzz loop of ``count`` rounds drawn at ``share``."""
    return max(1, round(count * share))


# ---------------------------------------------------------------------------------
# valid starting points
# ---------------------------------------------------------------------------------


def base_cases() -> dict[str, tuple[list[dict], list[list[int]]]]:
    return {
        "Exp": exp_records(),
        "random": generate("random", 1, 3),
        "matmul": generate("matmul", 1, 0),
        "conv": generate("conv", 1, 1),
    }


def id_order_plan(nodes: list[dict]) -> tuple[str, str]:
    """The id order, and offsets stacking every buffer of a tier (valid on BIG_HW)."""
    top: dict[str, int] = {}
    memory = []
    for rec in nodes:
        if rec["Op"] == "ALLOC":
            memory.append(f"{rec['BufId']}:{top.get(rec['Type'], 0)}\n")
            top[rec["Type"]] = top.get(rec["Type"], 0) + rec["Size"]
    return "".join(f"{rec['Id']}\n" for rec in nodes), "".join(memory)


def write_json_text(path: Path, nodes: Any, edges: Any) -> Path:
    path.write_text(json.dumps({"Nodes": nodes, "Edges": edges}))  # NaN / Infinity as Python writes them
    return path


# ---------------------------------------------------------------------------------
# instance mutations
# ---------------------------------------------------------------------------------


def mutate_instance(rng: random.Random, nodes: list[dict], edges: list[list[int]]) -> tuple[str, Any, Any, int | None]:
    """One random mutation: (name, nodes, edges, certain exit status or None)."""
    nodes, edges = copy.deepcopy(nodes), copy.deepcopy(edges)
    n = len(nodes)
    ops = [i for i, r in enumerate(nodes) if r["Op"] not in ("ALLOC", "FREE")]
    cache = [i for i, r in enumerate(nodes) if r["Op"] in ("ALLOC", "FREE")]
    kind = rng.randrange(16)
    if kind <= 3:  # any field of any node -> a hostile value
        v = rng.randrange(n)
        key = rng.choice(NODE_FIELDS)
        val = rng.choice(HOSTILE_VALUES)
        nodes[v][key] = val
        return f"node {v} {key}={val!r}", nodes, edges, None
    if kind == 4:  # drop a field
        v = rng.randrange(n)
        key = rng.choice(sorted(nodes[v]))
        del nodes[v][key]
        certain = 2 if key in ("Id", "Op", "BufId", "Size", "Type", "Pipe") else None
        return f"node {v} without {key}", nodes, edges, certain
    if kind == 5:  # duplicate id
        v, w = rng.sample(range(n), 2)
        nodes[w]["Id"] = nodes[v]["Id"]
        return f"node {w} takes id {v}", nodes, edges, 2
    if kind == 6:  # cycle: reverse a path's edge, or close a path back to its start
        u, w = rng.choice(edges)
        edges.append([w, u])
        return f"edge {w}->{u} closes a cycle", nodes, edges, 2
    if kind == 7:  # self loop
        v = rng.randrange(n)
        edges.append([v, v])
        return f"self loop {v}", nodes, edges, 2
    if kind == 8:  # edge to a node that does not exist / a hostile endpoint
        e = rng.choice(
            [[0, n], [-1, 0], [0, 10**30], [0, "1"], [0, None], [0, 1.0], [True, 1], [0], [0, 1, 2], "0-1", {}]
        )
        edges.append(e)
        return f"edge {e!r}", nodes, edges, 2
    if kind == 9:  # a second ALLOC / FREE of a buffer, or a buffer without one
        v = rng.choice(cache)
        if rng.random() < 0.5:
            nodes.append(dict(nodes[v], Id=n))
            return f"node {v} copied as {n}", nodes, edges, 2
        nodes[v]["Op"] = "FREE" if nodes[v]["Op"] == "ALLOC" else "ALLOC"
        return f"node {v} flips ALLOC/FREE", nodes, edges, 2
    if kind == 10:  # unknown tier or pipe
        if rng.random() < 0.5:
            b = nodes[rng.choice(cache)]["BufId"]
            t = rng.choice(["L2", "SRAM", "ub", "", "L0D"])
            for r in nodes:
                if r.get("BufId") == b and r["Op"] in ("ALLOC", "FREE"):
                    r["Type"] = t
            return f"buffer {b} in tier {t!r}", nodes, edges, 2
        v = rng.choice(ops)
        nodes[v]["Pipe"] = rng.choice(["GPU", "mte2", "", "DMA", 3])
        return f"node {v} on an unknown pipe", nodes, edges, 2
    if kind == 11:  # sizes: zero, negative, huge, larger than the tier
        b = nodes[rng.choice(cache)]["BufId"]
        size = rng.choice([0, -1, -(10**30), 10**30, 2**63, 5000, 2**62])
        for r in nodes:
            if r.get("BufId") == b and r["Op"] in ("ALLOC", "FREE"):
                r["Size"] = size
        return f"buffer {b} Size {size}", nodes, edges, None if size == 5000 else 2  # 5000 fits the big hardware
    if kind == 12:  # huge Cycles / BufId / Id
        what = rng.choice(["Cycles", "BufId", "Id", "Bufs"])
        big = rng.choice([10**30, 2**63, -(10**30), -(2**63) - 1])
        if what == "Cycles":
            v = rng.choice(ops)
            nodes[v]["Cycles"] = big
            return f"node {v} Cycles {big}", nodes, edges, 2 if big > 0 else None
        if what == "BufId":
            v = rng.choice(cache)
            nodes[v]["BufId"] = big
            return f"node {v} BufId {big}", nodes, edges, 2
        if what == "Bufs":
            v = rng.choice(ops)
            nodes[v]["Bufs"] = list(nodes[v].get("Bufs", [])) + [big]
            return f"node {v} Bufs + {big}", nodes, edges, 2
        v = rng.randrange(n)
        nodes[v]["Id"] = big
        return f"node {v} Id {big}", nodes, edges, 2
    if kind == 13:  # drop a node (ids no longer 0..N-1, or a buffer loses an event)
        v = rng.randrange(n)
        del nodes[v]
        edges = [e for e in edges if v not in e]
        return f"node {v} removed", nodes, edges, 2 if v != n - 1 else None
    if kind == 14:  # the whole structure
        choice = rng.randrange(8)
        if choice == 0:
            return "no nodes", [], [], 2
        if choice == 1:
            return "no edges", nodes, [], None
        if choice == 2:
            return "Edges null", nodes, None, 2
        if choice == 3:
            return "Nodes an object", {str(r["Id"]): r for r in nodes}, edges, 2
        if choice == 4:
            return "a node is a list", [list(r.values()) if i == 0 else r for i, r in enumerate(nodes)], edges, 2
        if choice == 5:
            return "Edges an object", nodes, {"0": 1}, 2
        if choice == 6:
            return "a node is null", [None] + nodes[1:], edges, 2
        return "Nodes a string", "0,1,2", edges, 2
    # kind 15: many hostile values at once
    for _ in range(rng.randint(2, 6)):
        v = rng.randrange(n)
        nodes[v][rng.choice(NODE_FIELDS)] = rng.choice(HOSTILE_VALUES)
    return "several hostile fields", nodes, edges, None


@SHARES
def test_fuzz_instances_through_evaluate_and_info(run, tmp_path, share):
    """Several hundred mutated instances: evaluate (problem 1 and full plan) and info."""
    rng = random.Random(SEED)
    hw = tmp_path / "big.toml"
    hw.write_text(BIG_HW)
    codes: dict[int, int] = {}
    for name, (nodes, edges) in base_cases().items():
        sched, memory = id_order_plan(nodes)
        (tmp_path / "s.txt").write_text(sched)
        (tmp_path / "m.txt").write_text(memory)
        ok = write_json_text(tmp_path / f"{name}.json", nodes, edges)
        # sanity: the unmutated case and its plans are valid
        run("evaluate", ok, "--schedule", tmp_path / "s.txt", "--json", expect=0)
        run(
            "evaluate",
            ok,
            "--schedule",
            tmp_path / "s.txt",
            "--memory",
            tmp_path / "m.txt",
            "--hw",
            hw,
            "--json",
            expect=0,
        )
        run("info", ok, "--json", expect=0)
        for k in range(rounds(60 if name == "Exp" else 35, share)):
            what, mn, me, certain = mutate_instance(rng, nodes, edges)
            path = write_json_text(tmp_path / "case.json", mn, me)
            args = [
                ("evaluate", path, "--schedule", tmp_path / "s.txt", "--json"),
                (
                    "evaluate",
                    path,
                    "--schedule",
                    tmp_path / "s.txt",
                    "--memory",
                    tmp_path / "m.txt",
                    "--hw",
                    hw,
                    "--json",
                ),
                ("info", path, "--json"),
            ][k % 3]
            code, _, err = run(*args, expect=certain)
            codes[code] = codes.get(code, 0) + 1
            if certain == 2 and args[0] == "info":
                assert "error" in err, what
    # both outcomes are reached: most mutations are bad input, some still load (valid or not)
    assert codes.get(2, 0) > 50 * share and codes.get(0, 0) + codes.get(1, 0) >= 10 * share, codes


def test_certain_instance_errors_name_the_culprit(run, tmp_path):
    """A few hand-picked mutations and the words their one-line message must contain."""
    cases = []
    nodes, edges = exp_records()
    nodes[0]["BufId"] = nodes[4]["BufId"] = 10**30
    cases.append((nodes, edges, ["node 0 (ALLOC)", "BufId", "63 bits"]))
    nodes, edges = exp_records()
    nodes[0]["Size"] = nodes[4]["Size"] = 10**30
    cases.append((nodes, edges, ["node 0 (ALLOC) of buffer 0", "Size", "63 bits"]))
    nodes, edges = exp_records()
    nodes[3]["Cycles"] = 10**30
    cases.append((nodes, edges, ["node 3 (EXP)", "Cycles", "63 bits"]))
    nodes, edges = exp_records()
    nodes[6]["Id"] = 2**63
    cases.append((nodes, edges, ["'Id'", "63 bits"]))
    nodes, edges = exp_records()
    nodes[1]["Cycles"] = nodes[3]["Cycles"] = 2**62
    cases.append((nodes, edges, ["Cycles of all operations add up to", "63 bits"]))
    nodes, edges = exp_records()
    nodes[0]["Type"] = nodes[4]["Type"] = "SRAM"  # a tier the hardware model lacks
    cases.append((nodes, edges, ["node 0 (ALLOC) of buffer 0", "'SRAM'", "not a tier"]))
    nodes, edges = exp_records()
    nodes[3]["Pipe"] = "DMA"
    cases.append((nodes, edges, ["node 3 (EXP)", "'DMA'", "not a pipe"]))
    nodes, edges = exp_records()
    nodes[5]["Bufs"] = ["x" * 1000]
    cases.append((nodes, edges, ["node 5 (COPY_OUT)", "characters)"]))  # shortened, still one line
    (tmp_path / "s.txt").write_text("".join(f"{i}\n" for i in range(7)))
    for nodes, edges, words in cases:
        path = write_json_text(tmp_path / "case.json", nodes, edges)
        for cmd in (("evaluate", path, "--schedule", tmp_path / "s.txt"), ("info", path)):
            _, _, err = run(*cmd, expect=2)
            assert all(w in err for w in words), (words, err)
            assert len(err) < 400, err


def test_negative_buffer_ids_are_kept_apart():
    """BufIds may be negative; -1 used to be mistaken for 'no buffer' and mapped the
    ALLOC of buffer -1 onto another buffer."""
    nodes, edges = exp_records()
    for r in nodes:
        if r.get("BufId") == 0:
            r["BufId"] = -1
        if "Bufs" in r:
            r["Bufs"] = [-1 if b == 0 else b for b in r["Bufs"]]
    inst = instance_from_records("neg", nodes, edges)
    assert inst.buf_id.tolist() == [-1, 1]
    assert inst.node_buf.tolist() == [0, -1, 1, -1, 0, -1, 1]
    assert inst.to_records() == (nodes, sorted(edges))


def test_single_node_and_no_buffer_instances(run, tmp_path):
    one = write_json_text(tmp_path / "one.json", [{"Id": 0, "Op": "NOP", "Pipe": "CUBE", "Cycles": 3, "Bufs": []}], [])
    (tmp_path / "s.txt").write_text("0\n")
    (tmp_path / "m.txt").write_text("")
    run("evaluate", one, "--schedule", tmp_path / "s.txt", "--json", expect=0)
    _, out, _ = run(
        "evaluate", one, "--schedule", tmp_path / "s.txt", "--memory", tmp_path / "m.txt", "--json", expect=0
    )
    assert json.loads(out)["makespan"] == 3
    run("info", one, expect=0)
    run("info", one, "--json", expect=0)
    (tmp_path / "s.txt").write_text("")
    run("evaluate", one, "--schedule", tmp_path / "s.txt", "--json", expect=1)
    # a lone cache node is not well formed (an ALLOC without its FREE)
    lone = write_json_text(tmp_path / "lone.json", [{"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 1, "Type": "UB"}], [])
    run("info", lone, expect=2)
    # a JSON instance needs both keys: a missing Edges key is bad input, not "no edges"
    (tmp_path / "noedges.json").write_text(json.dumps({"Nodes": [{"Id": 0, "Op": "NOP", "Pipe": "CUBE", "Cycles": 1}]}))
    _, _, err = run("info", tmp_path / "noedges.json", "--json", expect=2)
    assert "no Edges key" in err
    (tmp_path / "noedges.json").write_text(
        json.dumps({"Nodes": [{"Id": 0, "Op": "NOP", "Pipe": "CUBE", "Cycles": 1}], "Edges": []})
    )
    run("info", tmp_path / "noedges.json", "--json", expect=0)


# ---------------------------------------------------------------------------------
# file-level damage: truncated, non-object, nested, binary, CSV variants
# ---------------------------------------------------------------------------------


@SHARES
def test_fuzz_damaged_json_files(run, tmp_path, share):
    rng = random.Random(SEED + 1)
    (tmp_path / "s.txt").write_text("".join(f"{i}\n" for i in range(7)))
    nodes, edges = generate("random", 1, 5)
    good = json.dumps({"Nodes": nodes, "Edges": edges}, indent=rng.choice([None, 1]))
    path = tmp_path / "case.json"
    texts: list[tuple[str, int | None]] = []
    for _ in range(rounds(30, share)):  # truncated at a random byte
        cut = rng.randrange(len(good) - 2)
        texts.append((good[:cut], 2))
    for _ in range(rounds(20, share)):  # a random byte replaced
        i = rng.randrange(len(good))
        text = good[:i] + rng.choice('{}[]",:0-9 aZ\x00') + good[i + 1 :]
        try:
            json.loads(text)
            texts.append((text, None))
        except ValueError:
            texts.append((text, 2))
    texts += [
        ("", 2),
        ("null", 2),
        ("0", 2),
        ('"Nodes"', 2),
        ("[]", 2),
        ("[{}]", 2),
        ("{}", 2),
        ('{"Edges": []}', 2),
        ("true", 2),
        ("NaN", 2),
        ('{"Nodes": null}', 2),
        ('{"Nodes": [null]}', 2),
        ('{"Nodes": [[]]}', 2),
        ('{"Nodes": [{"Id": NaN}]}', 2),
        ('{"Nodes": [{"Id": Infinity}]}', 2),
        ('{"Nodes": [{"Id": 1e400}]}', 2),
        ("[" * 100_000 + "]" * 100_000, 2),
        ('{"Nodes": ' + "[" * 5000 + "]" * 5000 + "}", 2),
        ('{"Nodes": [{"Id": ' + "1" * 5000 + "}]}", 2),
        ('{"Nodes": [{"Id": 0, "Op": "' + "A" * 100_000 + '"}]}', 2),
        ("\ufeff" + good, None),
        ('{"Nodes": [], "Edges": []}', 2),
    ]
    for text, certain in texts:
        path.write_text(text)
        run("info", path, "--json", expect=certain)
        run("evaluate", path, "--schedule", tmp_path / "s.txt", "--json", expect=certain)
    path.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00\x00" + bytes(range(256)))
    run("info", path, expect=2)
    run("info", tmp_path, expect=2)  # a folder
    run("info", tmp_path / "missing.json", expect=2)


def _csv_pair_text(nodes, edges) -> tuple[str, str]:
    import csv
    import io

    a, b = io.StringIO(), io.StringIO()
    w = csv.writer(a)
    w.writerow(NODE_FIELDS)
    for r in nodes:
        w.writerow(
            [r.get(k, "") if k != "Bufs" else ",".join(map(str, r["Bufs"])) if "Bufs" in r else "" for k in NODE_FIELDS]
        )
    w = csv.writer(b)
    w.writerow(["StartNodeId", "EndNodeId"])
    w.writerows(edges)
    return a.getvalue(), b.getvalue()


@SHARES
def test_fuzz_csv_pairs(run, tmp_path, share):
    rng = random.Random(SEED + 2)
    nodes, edges = exp_records()
    good_nodes, good_edges = _csv_pair_text(nodes, edges)
    # the reference pair loads and equals the JSON form
    npath, epath = tmp_path / "c_Nodes.csv", tmp_path / "c_Edges.csv"
    npath.write_text(good_nodes)
    epath.write_text(good_edges)
    assert load_instance(npath).same_as(instance_from_records("c", nodes, edges))
    variants: list[tuple[str, str, int | None]] = [
        (good_nodes.replace("\r\n", "\n"), good_edges, 0),  # Unix line ends
        ("\ufeff" + good_nodes, "\ufeff" + good_edges, 0),  # byte-order marks
        (good_nodes.replace(",15,", ",15.0,"), good_edges, 0),  # integral floats
        (good_nodes + "\r\n\r\n", good_edges + "\r\n", 0),  # trailing blank lines
        (good_nodes.replace('"1,0"', '"[1, 0]"'), good_edges, 0),  # bracketed Bufs
        (good_nodes.replace(",15,", ",-15,"), good_edges, 0),  # negative Cycles: cost 1, a warning
        (good_nodes.replace(",15,", ",abc,"), good_edges, 0),  # non-integer Cycles: cost 1, a warning
        (good_nodes.replace(",15,", ",1e30,"), good_edges, 2),  # huge Cycles
        (good_nodes.replace("ALLOC,0,5,", "ALLOC,0,1e30,"), good_edges, 2),  # huge Size
        (good_nodes.replace("ALLOC,0,5,", "ALLOC,0,nan,"), good_edges, 2),
        (good_nodes.replace("ALLOC,0,5,", "ALLOC,0,5.5,"), good_edges, 2),
        (good_nodes.replace(",UB,", ",L2,", 1), good_edges, 2),
        (good_nodes.replace(",VECTOR,", ",GPU,"), good_edges, 2),
        (good_nodes.replace('"1,0"', '"1;0"'), good_edges, 2),
        (good_nodes.replace('"1,0"', '"1,0'), good_edges, 2),  # unbalanced quote swallows the rest
        (good_nodes.replace("Id,Op", "ID,OP"), good_edges, 2),
        (good_nodes.replace(",Bufs", ""), good_edges, 2),  # a column short: extra fields
        (good_nodes.split("\r\n", 1)[0] + "\r\n", good_edges, 2),  # header only: no nodes
        ("", good_edges, 2),
        (good_nodes, "", 2),
        (good_nodes, "StartNodeId,EndNodeId\r\n0,1,2\r\n", 2),
        (good_nodes, "StartNodeId,EndNodeId\r\n0,x\r\n", 2),
        (good_nodes, "StartNodeId,EndNodeId\r\n0,99\r\n", 2),
        (good_nodes, "StartNodeId,EndNodeId\r\n3,3\r\n", 2),
        (good_nodes, good_edges + "6,0\r\n", 2),  # a cycle
        (good_nodes, "From,To\r\n0,1\r\n", 2),
        (good_nodes + "7,NOP,,,,CUBE,1,\r\n7,NOP,,,,CUBE,1,\r\n", good_edges, 2),  # duplicate id
        (good_nodes.replace("Bufs\r\n", "Bufs\x00\r\n", 1), good_edges, 2),  # a misspelt column
        (good_nodes.replace("Bufs\r\n", "Buffers\r\n", 1), good_edges, 2),
        (
            good_nodes.replace("Id,Op,BufId,Size", "Op,Id,Size,BufId").replace("0,ALLOC,0,5", "ALLOC,0,5,0"),
            good_edges,
            None,
        ),
        (good_nodes.replace("\r\n2,", "\x00\r\n2,", 1), good_edges, None),  # a NUL byte
        (good_nodes.replace("Id,Op", " Id , Op "), good_edges, 0),  # spaces around header names
    ]
    for _ in range(rounds(25, share)):  # truncated at a random byte (blank last fields may still load)
        cut = rng.randrange(len(good_nodes))
        variants.append((good_nodes[:cut], good_edges, None))
    for _ in range(rounds(15, share)):
        cut = rng.randrange(len(good_edges))
        variants.append((good_nodes, good_edges[:cut], None))
    (tmp_path / "s.txt").write_text("".join(f"{i}\n" for i in range(7)))
    for ntext, etext, certain in variants:
        npath.write_text(ntext, newline="")
        epath.write_text(etext, newline="")
        run("info", npath, "--json", expect=certain)
        run("evaluate", epath, "--schedule", tmp_path / "s.txt", "--json", expect=certain)
    npath.write_bytes(b"Id,Op\r\n\xff\xfe\x00binary")
    run("info", npath, expect=2)
    epath.unlink()
    run("info", npath, expect=2)  # the Edges file is missing
    run("info", tmp_path / "c.csv", expect=2)  # not named <case>_Nodes.csv


# ---------------------------------------------------------------------------------
# plan mutations
# ---------------------------------------------------------------------------------


def mutate_lines(rng: random.Random, lines: list[str], garbage: list[str], extra_ids: int) -> tuple[list[str], Any]:
    """One mutation of a plan file's lines: (lines, expected exit status): 2 for garbage,
    0 or 1 for lines that still parse, None when it depends."""
    lines = list(lines)
    kind = rng.randrange(9)
    if kind == 0 and lines:
        del lines[rng.randrange(len(lines))]
    elif kind == 1 and lines:
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(lines))
    elif kind == 2 and len(lines) > 1:
        i, j = rng.sample(range(len(lines)), 2)
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 3:
        lines = lines[: rng.randrange(len(lines) + 1)]
    elif kind == 4:
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(garbage))
        return lines, 2
    elif kind == 5:
        lines.reverse()
    elif kind == 6:
        lines.insert(rng.randrange(len(lines) + 1), str(extra_ids + rng.randrange(3)))
    elif kind == 7:
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(ODD_INTS))
    else:
        return [s.replace("0", "") for s in lines], None  # may leave ':' or an empty BufId
    return lines, {0, 1}


@SHARES
def test_fuzz_plans(run, tmp_path, share):
    """Mutated schedules, memory files and spill lists on Exp (with spills) and generated
    instances: garbage is exit 2, anything parseable is judged (0 or 1), never a crash."""
    rng = random.Random(SEED + 3)
    hw = tmp_path / "big.toml"
    hw.write_text(BIG_HW)
    ub10 = tmp_path / "ub10.toml"
    ub10.write_text("[tiers]\nUB = 10\n")
    cases = []
    nodes, edges = exp_records()
    cases.append(
        (
            "Exp",
            write_json_text(tmp_path / "Exp.json", nodes, edges),
            ub10,
            ["0", "1", "2", "3", "4", "7", "8", "5", "6"],
            ["0:0", "1:5"],
            ["1:0"],
        )
    )
    for fam, seed in (("random", 7), ("matmul", 0)):
        nodes, edges = generate(fam, 1, seed)
        sched, memory = id_order_plan(nodes)
        # one spill of the first L1/UB buffer, right after its ALLOC and back at once
        first = next(r for r in nodes if r["Op"] == "ALLOC" and r["Type"] in ("L1", "UB"))
        order = sched.split()
        k = order.index(str(first["Id"]))
        order[k + 1 : k + 1] = [str(len(nodes)), str(len(nodes) + 1)]
        off = dict(s.split(":") for s in memory.split())[str(first["BufId"])]
        cases.append(
            (
                fam,
                write_json_text(tmp_path / f"{fam}.json", nodes, edges),
                hw,
                order,
                memory.split(),
                [f"{first['BufId']}:{off}"],
            )
        )
    s_path, m_path, p_path = tmp_path / "s.txt", tmp_path / "m.txt", tmp_path / "p.txt"
    seen: dict[int, int] = {}
    for name, inst, hw_path, sched, memory, spill in cases:
        n = len(json.loads(inst.read_text())["Nodes"])
        full = (
            "evaluate",
            inst,
            "--schedule",
            s_path,
            "--memory",
            m_path,
            "--spill",
            p_path,
            "--hw",
            hw_path,
            "--json",
        )
        s_path.write_text("\n".join(sched) + "\n")
        m_path.write_text("\n".join(memory) + "\n")
        p_path.write_text("\n".join(spill) + "\n")
        _, out, _ = run(*full, expect=0)
        assert json.loads(out)["spill_count"] == 1, name
        for k in range(rounds(45, share)):
            which = k % 3
            s_lines, m_lines, p_lines = list(sched), list(memory), list(spill)
            if which == 0:
                s_lines, certain = mutate_lines(rng, s_lines, GARBAGE_LINES, n)
            elif which == 1:
                m_lines, certain = mutate_lines(rng, m_lines, GARBAGE_PAIRS, 0)
                m_lines = [s if ":" in s or s in GARBAGE_PAIRS else f"{s}:0" for s in m_lines]
            else:
                p_lines, certain = mutate_lines(rng, p_lines, GARBAGE_PAIRS, 0)
                p_lines = [s if ":" in s or s in GARBAGE_PAIRS else f"{s}:0" for s in p_lines]
            if rng.random() < 0.3:  # and sometimes a second spill of a random buffer, its ids somewhere
                b = rng.choice(memory).split(":")[0]
                p_lines.append(f"{b}:{rng.choice([0, 3, -1, 2**40, 10**30])}")
                k2 = len(p_lines)
                for v in (n + 2 * (k2 - 1), n + 2 * (k2 - 1) + 1):
                    s_lines.insert(rng.randrange(len(s_lines) + 1), str(v))
            s_path.write_text("\n".join(s_lines) + "\n")
            m_path.write_text("\n".join(m_lines) + "\n")
            p_path.write_text("\n".join(p_lines) + "\n")
            code, _, _ = run(*full, expect=certain)
            seen[code] = seen.get(code, 0) + 1
            if which == 0:  # the same schedule as a problem-1 order
                run("evaluate", inst, "--schedule", s_path, "--json", expect=certain)
    assert seen.get(1, 0) > 20 * share and seen.get(2, 0) > 5 * share, seen
    # a problem-1 order that names spill ids, and plan files that are folders or missing
    s_path.write_text("".join(f"{i}\n" for i in range(9)))
    run("evaluate", cases[0][1], "--schedule", s_path, "--json", expect=1)
    run("evaluate", cases[0][1], "--schedule", tmp_path, expect=2)
    run("evaluate", cases[0][1], "--schedule", s_path, "--memory", tmp_path / "none.txt", expect=2)
    p_path.write_bytes(b"\xff\xfe\x00\x01")
    run("evaluate", cases[0][1], "--schedule", s_path, "--memory", m_path, "--spill", p_path, expect=2)


# ---------------------------------------------------------------------------------
# hardware files
# ---------------------------------------------------------------------------------

HW_FILES: list[tuple[str, int | str]] = [
    ("", 0),
    ("[tiers]\nUB = 10\n", 0),
    ("[tiers]\nUB = 9223372036854775807\n", 0),  # huge tiers: the evaluator must not allocate per unit
    ("[tiers]\nUB = 9223372036854775808\n", "63 bits"),
    ("[tiers]\nUB = 100000000000000000000000000000\n", "63 bits"),
    ("[spill]\nfixed_cycles = 100000000000000000000000000000\n", "63 bits"),
    ("[spill]\ncycles_per_unit = -1\n", "cycles_per_unit"),
    ("[tiers]\nUB = 0\n", "capacity of tier UB"),
    ("[tiers]\nUB = -3\n", "capacity of tier UB"),
    ("[tiers]\nUB = 1.5\n", "capacity of tier UB"),
    ("[tiers]\nUB = true\n", "capacity of tier UB"),
    ('[tiers]\nUB = "10"\n', "capacity of tier UB"),
    ("[tiers]\nUB = nan\n", "capacity of tier UB"),
    ("[tiers]\nUB = 9\n", "UB need 10, the tier holds 9"),
    ("[tiers]\nUB = 4\n", "larger than tier UB"),
    ("[tiers.UB]\nsize = 4\n", "capacity of tier UB"),
    ("tiers = 5\n", "[tiers]"),
    ("roles = 5\n", "[roles]"),
    ("spill = []\n", "[spill]"),
    ("[roles]\npipes = []\n", "roles.pipes"),
    ('[roles]\npipes = "MTE2"\n', "roles.pipes"),
    ('[roles]\npipes = ["MTE2", "MTE2"]\n', "twice"),
    ('[roles]\npeak = ["SRAM"]\n', "'SRAM'"),
    ('[roles]\nspill_in_pipe = "DMA"\n', "'DMA'"),
    # renamed pipes: the instance's VECTOR is gone
    ('[roles]\npipes = ["MTE2", "MTE3", "DMA"]\nspill_out_pipe = "DMA"\nspill_in_pipe = "DMA"\n', "'VECTOR'"),
    ("[tiers\nUB = 10\n", "not valid TOML"),
    ("[tiers]\nUB = 10\nUB = 11\n", "not valid TOML"),
    ("\x00\x01", "not valid TOML"),
]


@pytest.mark.parametrize("text,expect", HW_FILES, ids=[f"hw{i}" for i in range(len(HW_FILES))])
def test_hostile_hardware_files(run, tmp_path, exp_path, text, expect):
    hw = tmp_path / "hw.toml"
    hw.write_text(text)
    (tmp_path / "s.txt").write_text("".join(f"{i}\n" for i in range(7)))
    (tmp_path / "m.txt").write_text("0:0\n1:5\n")
    code, out, err = run(
        "evaluate",
        exp_path,
        "--schedule",
        tmp_path / "s.txt",
        "--memory",
        tmp_path / "m.txt",
        "--hw",
        hw,
        "--json",
        expect=0 if expect == 0 else 2,
    )
    if expect == 0:
        assert json.loads(out)["makespan"] == 60
    else:
        assert expect in err, err


def test_tier_missing_from_the_hardware_is_an_input_error_naming_it(run, tmp_path):
    """An instance whose buffers live in a tier the model lacks: exit 2 naming the tier;
    a --hw file that adds the tier makes it load (and a plan on it evaluate)."""
    nodes, edges = exp_records()
    for r in nodes:
        if r["Op"] in ("ALLOC", "FREE") and r["BufId"] == 1:
            r["Type"] = "SRAM"
    inst = write_json_text(tmp_path / "sram.json", nodes, edges)
    (tmp_path / "s.txt").write_text("".join(f"{i}\n" for i in range(7)))
    (tmp_path / "m.txt").write_text("0:0\n1:0\n")
    for hw_text in (None, "[tiers]\nUB = 10\n", '[roles]\npeak = ["L1", "UB"]\n'):
        args = ["info", inst]
        if hw_text is not None:
            (tmp_path / "hw.toml").write_text(hw_text)
            args += ["--hw", tmp_path / "hw.toml"]
        _, _, err = run(*args, expect=2)
        assert "'SRAM'" in err and "buffer 1" in err and "not a tier" in err, err
    (tmp_path / "hw.toml").write_text("[new_tiers]\nSRAM = 5\n")
    _, out, _ = run(
        "evaluate",
        inst,
        "--schedule",
        tmp_path / "s.txt",
        "--memory",
        tmp_path / "m.txt",
        "--hw",
        tmp_path / "hw.toml",
        "--json",
        expect=0,
    )
    assert json.loads(out)["makespan"] == 60


# ---------------------------------------------------------------------------------
# outputs: all or nothing
# ---------------------------------------------------------------------------------


def _no_temporaries(folder: Path) -> None:
    assert not [p for p in folder.rglob(".*") if p.is_file()], list(folder.rglob(".*"))


def test_generate_never_leaves_a_partial_file(run, tmp_path):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "keep.txt").write_text("x")
    before = listing(tmp_path)
    # into a folder
    _, _, err = run("generate", "matmul", "--out", out_dir, expect=2)
    assert "is a folder" in err
    # below a file
    _, _, err = run("generate", "matmul", "--out", out_dir / "keep.txt" / "x.json", expect=2)
    assert "cannot write" in err
    # a CSV pair whose Edges file would land on a folder: neither file appears
    (out_dir / "g_Edges.csv").mkdir()
    _, _, err = run("generate", "random", "--out", out_dir / "g_Nodes.csv", expect=2)
    assert "g_Edges.csv" in err and not (out_dir / "g_Nodes.csv").exists()
    # bad family, bad scale, a CSV name without _Nodes: nothing written, an existing file untouched
    (out_dir / "old.json").write_text("old")
    for args in (
        ("nope", "--out", out_dir / "old.json"),
        ("matmul", "--scale", "0", "--out", out_dir / "old.json"),
        ("matmul", "--scale", "x", "--out", out_dir / "old.json"),
        ("matmul", "--out", out_dir / "old.csv"),
    ):
        run("generate", *args, expect=2)
    assert (out_dir / "old.json").read_text() == "old" and not (out_dir / "old.csv").exists()
    (out_dir / "g_Edges.csv").rmdir()
    (out_dir / "old.json").unlink()
    assert listing(tmp_path) == before
    _no_temporaries(tmp_path)
    # and a good run writes exactly its file(s), which load
    run("generate", "fa", "--out", out_dir / "f.json", expect=0)
    run("generate", "conv", "--out", out_dir / "new" / "c_Nodes.csv", expect=0)
    assert load_instance(out_dir / "f.json").n > 0 and load_instance(out_dir / "new" / "c_Edges.csv").n > 0
    assert sorted(listing(tmp_path)) == sorted(
        list(before) + ["out/f.json", "out/new/c_Nodes.csv", "out/new/c_Edges.csv"]
    )
    _no_temporaries(tmp_path)


def test_plan_and_instance_writers_are_all_or_nothing(tmp_path):
    inst = instance_from_records("c", *exp_records())
    # write_plan: the memory file's place is taken by a folder -> nothing written at all
    (tmp_path / "c_memory.txt").mkdir()
    with pytest.raises(OutputError, match="c_memory.txt: is a folder"):
        write_plan(Plan(order=tuple(range(7)), offsets=((0, 0), (1, 5))), tmp_path, "c")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c_memory.txt"]
    # an existing schedule is not replaced by a failed write
    (tmp_path / "c_schedule.txt").write_text("old\n")
    with pytest.raises(OutputError):
        write_plan(Plan(order=tuple(range(7)), offsets=((0, 0), (1, 5))), tmp_path, "c")
    assert (tmp_path / "c_schedule.txt").read_text() == "old\n"
    (tmp_path / "c_memory.txt").rmdir()
    write_plan(Plan(order=tuple(range(7)), offsets=((0, 0), (1, 5))), tmp_path, "c")
    assert (tmp_path / "c_memory.txt").read_text() == "0:0\n1:5\n"
    # the CSV pair
    (tmp_path / "c_Edges.csv").mkdir()
    with pytest.raises(OutputError, match="c_Edges.csv"):
        write_csv_pair(inst, tmp_path)
    assert not (tmp_path / "c_Nodes.csv").exists()
    with pytest.raises(OutputError, match="cannot write"):
        atomic_write_text(tmp_path / "c_schedule.txt" / "x.txt", "x")
    _no_temporaries(tmp_path)
    # OutputError is an input-class error: the CLI maps it to exit 2
    assert issubclass(OutputError, ValueError)


# ---------------------------------------------------------------------------------
# real processes
# ---------------------------------------------------------------------------------


def test_hostile_inputs_in_real_processes(tmp_path, exp_path):
    """The real entry point: exit status, one line, no traceback (a handful of cases)."""
    nodes, edges = exp_records()
    nodes[0]["BufId"] = nodes[4]["BufId"] = 10**30
    huge = write_json_text(tmp_path / "huge.json", nodes, edges)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "s.txt").write_text("".join(f"{i}\n" for i in range(7)) + "1" * 5000 + "\n")
    (tmp_path / "out").mkdir()
    for args in (
        ("info", huge),
        ("info", deep),
        ("evaluate", exp_path, "--schedule", tmp_path / "s.txt"),
        ("generate", "random", "--out", tmp_path / "out"),
    ):
        proc = run_proc(*args)
        check_contract(proc.returncode, proc.stdout, proc.stderr, args)
        assert proc.returncode == 2, (args, proc.stderr)
    assert list((tmp_path / "out").iterdir()) == []


# ---------------------------------------------------------------------------------
# legal-but-odd graphs through solve: a valid plan or one line, exit 1
# ---------------------------------------------------------------------------------


def _lifetimes(nodes: list[dict]) -> tuple[dict[int, int], dict[int, int], dict[int, list[int]], dict[int, str]]:
    alloc = {r["BufId"]: r["Id"] for r in nodes if r["Op"] == "ALLOC"}
    free = {r["BufId"]: r["Id"] for r in nodes if r["Op"] == "FREE"}
    tier = {r["BufId"]: r["Type"] for r in nodes if r["Op"] == "ALLOC"}
    users: dict[int, list[int]] = {b: [] for b in alloc}
    for r in nodes:
        for b in r.get("Bufs", []):
            users[b].append(r["Id"])
    return alloc, free, users, tier


def odd_graph(
    rng: random.Random, nodes: list[dict], edges: list[list[int]]
) -> tuple[str, list[dict], list[list[int]], Any]:
    """One legal-but-odd mutation: edges against a buffer's lifetime (the loader accepts them,
    no order can keep them: certain exit 1), or an operation using two buffers of one L0
    tier (no problem-1 order: exit 1 there; problems 2 and 3 must plan it). When the
    instance already has the opposite edge the new one closes a cycle of edges: the
    loader rejects it (exit 2), so lifetime mutations expect {1, 2}."""
    nodes, edges = copy.deepcopy(nodes), copy.deepcopy(edges)
    alloc, free, users, tier = _lifetimes(nodes)
    used = [b for b in sorted(users) if users[b]]
    kind = rng.choice(["free->user", "user->alloc", "two-l0", "two-l0", "free->other-alloc"])
    b = rng.choice(used)
    u = rng.choice(users[b])
    if kind == "free->user":
        edges.append([free[b], u])
        return kind, nodes, edges, {1, 2}
    if kind == "user->alloc":
        edges.append([u, alloc[b]])
        return kind, nodes, edges, {1, 2}
    if kind == "free->other-alloc":  # a relative that is legal: a later buffer waits for b's FREE
        later = [c for c in used if alloc[c] > free[b]]
        if later:
            edges.append([free[b], alloc[rng.choice(later)]])
        return kind, nodes, edges, None
    l0 = [c for c in used if tier[c].startswith("L0")]
    ops = [r for r in nodes if r["Op"] not in ("ALLOC", "FREE")]
    op = rng.choice(ops)
    same = [c for c in l0 if c not in op["Bufs"] and any(tier[x] == tier[c] for x in op["Bufs"])]
    if not same:  # no op with an L0 buffer here: give it two new buffers of one L0 tier
        t = rng.choice(["L0A", "L0B", "L0C"])
        nid = max(r["Id"] for r in nodes) + 1
        bid = max(alloc) + 1
        for k in range(2):
            nodes.append({"Id": nid + 2 * k, "Op": "ALLOC", "BufId": bid + k, "Size": 8, "Type": t})
            nodes.append({"Id": nid + 2 * k + 1, "Op": "FREE", "BufId": bid + k, "Size": 8, "Type": t})
            edges += [[nid + 2 * k, op["Id"]], [op["Id"], nid + 2 * k + 1]]
            op["Bufs"].append(bid + k)
    else:
        op["Bufs"].append(rng.choice(same))
    return kind, nodes, edges, None


def _check_solve(run, tmp_path: Path, path: Path, problem: int, expect: Any, kind: str) -> None:
    out = tmp_path / f"out{problem}"
    code, stdout, err = run(
        "solve",
        path,
        "--problem",
        problem,
        "--out",
        out,
        "--quiet",
        "--time-limit",
        2,
        expect=expect if expect is not None else {0, 1},
    )
    assert "Traceback" not in err
    if code == 2:  # bad input (checked by the runner: one line)
        return
    if code == 1:
        assert len(err.splitlines()) == 1 and err.startswith("dansched: "), (kind, problem, err)
        return
    assert code == 0, (kind, problem, err)
    case = path.stem
    args = ["evaluate", path, "--schedule", out / f"{case}_schedule.txt", "--json"]
    if problem > 1:
        args += ["--memory", out / f"{case}_memory.txt", "--spill", out / f"{case}_spill.txt"]
    run(*args, expect=0)


ODD_CASES_DEFAULT = 2  # instances x problems 1-3 in the default run; more under -m slow
ODD_CASES_SLOW = 40


def _odd_graph_cases(count: int, seed: int) -> list[tuple[str, list[dict], list[list[int]], int | None]]:
    rng = random.Random(seed)
    bases = list(base_cases().values())
    return [odd_graph(rng, *bases[i % len(bases)]) for i in range(count)]


def _run_odd(run, tmp_path: Path, cases) -> int:
    runs = 0
    for i, (kind, nodes, edges, certain) in enumerate(cases):
        path = write_json_text(tmp_path / f"odd{i}.json", nodes, edges)
        for problem in (1, 2, 3):
            expect = certain if certain is not None else (1 if kind == "two-l0" and problem == 1 else None)
            _check_solve(run, tmp_path, path, problem, expect, kind)
            runs += 1
    return runs


def test_solve_on_the_two_odd_graphs_of_issue_17(run, tmp_path):
    """The two graphs of the issue: FREE -> user (and user -> ALLOC) is one line, exit 1 for
    every problem and for bound; an op with two L0A buffers gets a valid plan in problems 2
    and 3 (its report's peak bound does not raise) and one line, exit 1, in problem 1."""
    a = lambda i, b, t="UB": {"Id": i, "Op": "ALLOC", "BufId": b, "Size": 8, "Type": t}  # noqa: E731
    f = lambda i, b, t="UB": {"Id": i, "Op": "FREE", "BufId": b, "Size": 8, "Type": t}  # noqa: E731
    op = lambda i, bufs: {"Id": i, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 5, "Bufs": bufs}  # noqa: E731
    cases = {
        "free_user": ([a(0, 0), op(1, [0]), f(2, 0)], [[0, 1], [0, 2], [2, 1]]),
        "user_alloc": ([a(0, 0), op(1, [0]), f(2, 0)], [[1, 0], [0, 2]]),
    }
    for name, (nodes, edges) in cases.items():
        path = write_json_text(tmp_path / f"{name}.json", nodes, edges)
        for problem in (1, 2, 3):
            _check_solve(run, tmp_path, path, problem, 1, name)
        _, _, err = run("bound", path, "--time-limit", 1, expect=1)
        assert len(err.splitlines()) == 1 and "no legal order" in err
    two = write_json_text(
        tmp_path / "two_l0a.json",
        [a(0, 0, "L0A"), a(1, 1, "L0A"), op(2, [0, 1]), f(3, 0, "L0A"), f(4, 1, "L0A")],
        [[0, 2], [1, 2], [2, 3], [2, 4]],
    )
    _check_solve(run, tmp_path, two, 1, 1, "two-l0")
    for problem in (2, 3):
        _check_solve(run, tmp_path, two, problem, 0, "two-l0")
        report = json.loads((tmp_path / f"out{problem}" / "two_l0a_report.json").read_text())
        assert report["bounds"]["max_v_stay"]["value"] == 0  # L0 buffers do not count towards maxV_stay


def test_fuzz_odd_graphs_through_solve(run, tmp_path):
    assert _run_odd(run, tmp_path, _odd_graph_cases(ODD_CASES_DEFAULT, SEED + 17)) == 3 * ODD_CASES_DEFAULT


@pytest.mark.slow
def test_fuzz_odd_graphs_through_solve_many(run, tmp_path):
    assert _run_odd(run, tmp_path, _odd_graph_cases(ODD_CASES_SLOW, SEED + 170)) == 3 * ODD_CASES_SLOW


def test_warning_is_folded_into_the_one_error_line(run, tmp_path):
    """An instance that triggers the Cycles warning and then fails: one line on stderr."""
    nodes, edges = exp_records()
    for r in nodes:
        if r["Op"] not in ("ALLOC", "FREE"):
            r["Cycles"] = -3
            break
    path = write_json_text(tmp_path / "warn.json", nodes, edges)
    (tmp_path / "bad.txt").write_text("x\n")
    _, _, err = run("evaluate", path, "--schedule", tmp_path / "bad.txt", expect=2)
    assert len(err.splitlines()) == 1 and err.startswith("dansched: error: ") and "(warning: warn: " in err
    _, _, err = run("info", path, "--json", expect=0)  # on success the warning is its own line
    assert err.startswith("dansched: warning: warn: ")
