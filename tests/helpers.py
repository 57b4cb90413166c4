"""Helpers shared by the tests: where the shipped and official instances are.
``tests/`` is on the import path (``pythonpath`` in pyproject.toml), so any test
module, at any depth, can ``from helpers import ...``. Instance builders shared
with the benchmark scripts live in :mod:`dansched.testing`."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dansched.cli import main
from dansched.generate import generate
from dansched.hardware import default_hardware, hardware_from_table, load_hardware
from dansched.instance import instance_from_records
from dansched.params import MpasParams
from dansched.plan import Plan
from dansched.stages.dlr.stage import dlr_plan
from dansched.stages.mpas.stage import mpas_order

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "instances"
OFFICIAL = REPO.parent / "shared" / "instances" / "official"
OFFICIAL_CASES = ["Conv_Case0", "FlashAttention_Case0", "FlashAttention_Case1", "Matmul_Case0", "Matmul_Case1"]


def run_cli(monkeypatch, capsys, *args) -> tuple[int, str, str]:
    """Run ``dansched ARGS`` in-process through the console entry point; ``(exit status,
    stdout, stderr)``."""
    monkeypatch.setattr(sys, "argv", ["dansched", *map(str, args)])
    with pytest.raises(SystemExit) as info:
        main()
    out, err = capsys.readouterr()
    code = info.value.code
    return (0 if code is None else code), out, err


def run_proc_cli(
    *args, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """Run ``python -m dansched.cli ARGS`` as a real process (this checkout first on the
    path), the way a user meets it: exit status, stdout and stderr as text."""
    full = dict(os.environ, **(env or {}))
    full["PYTHONPATH"] = str(REPO) + os.pathsep + full.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-m", "dansched.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full,
        timeout=timeout,
    )


def run_cli_here(*args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run ``dansched ARGS`` in this process through the console entry point, with
    ``python -m dansched.cli``'s result: exit status, stdout and stderr as text (the same
    code path as :func:`run_proc_cli`, without a new interpreter's start-up)."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    old_argv, old_cwd = sys.argv, os.getcwd()
    sys.argv = ["dansched", *map(str, args)]
    code: int | str | None = 0
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as exc:
                code = exc.code
    finally:
        sys.argv = old_argv
        os.chdir(old_cwd)
    status = code if isinstance(code, int) else (0 if code is None else 1)
    return subprocess.CompletedProcess(
        ["python3", "-m", "dansched.cli", *map(str, args)], status, out.getvalue(), err.getvalue()
    )


def official_path(case: str) -> Path:
    """Path of an official contest case; skips the test cleanly when it is absent."""
    p = OFFICIAL / f"{case}.json"
    if not p.is_file():
        pytest.skip(f"official instance {case} not available at {OFFICIAL}")
    return p


# ---------------------------------------------------------------------------------
# records and hardware overrides
# ---------------------------------------------------------------------------------


def hw_file(tmp_path: Path, **caps: int) -> Path:
    """A --hw override TOML setting only the given tier capacities."""
    p = tmp_path / "hw.toml"
    p.write_text("[tiers]\n" + "".join(f"{k} = {v}\n" for k, v in caps.items()))
    return p


def alloc(i, b, size, tier="UB"):
    return {"Id": i, "Op": "ALLOC", "BufId": b, "Size": size, "Type": tier}


def free(i, b, size, tier="UB"):
    return {"Id": i, "Op": "FREE", "BufId": b, "Size": size, "Type": tier}


def op(i, name, pipe, cycles, bufs):
    return {"Id": i, "Op": name, "Pipe": pipe, "Cycles": cycles, "Bufs": list(bufs)}


# ---------------------------------------------------------------------------------
# docs/rules.md, section 9: the Exp example, and malformed variants of it (regex of the message)
# ---------------------------------------------------------------------------------

EXP_NODES = [
    {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 5, "Type": "UB"},
    {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 15, "Bufs": [0]},
    {"Id": 2, "Op": "ALLOC", "BufId": 1, "Size": 5, "Type": "UB"},
    {"Id": 3, "Op": "EXP", "Pipe": "VECTOR", "Cycles": 30, "Bufs": [1, 0]},
    {"Id": 4, "Op": "FREE", "BufId": 0, "Size": 5, "Type": "UB"},
    {"Id": 5, "Op": "COPY_OUT", "Pipe": "MTE3", "Cycles": 15, "Bufs": [1]},
    {"Id": 6, "Op": "FREE", "BufId": 1, "Size": 5, "Type": "UB"},
]


EXP_EDGES = [[0, 1], [1, 3], [2, 3], [3, 4], [0, 4], [3, 5], [5, 6], [2, 6]]


def exp_records():
    return copy.deepcopy(EXP_NODES), copy.deepcopy(EXP_EDGES)


def _set(i, **fields):
    def f(nodes, edges):
        nodes[i].update(fields)

    return f


def _set_each(ids, **fields):
    def f(nodes, edges):
        for i in ids:
            nodes[i].update(fields)

    return f


def _del(i, key):
    def f(nodes, edges):
        del nodes[i][key]

    return f


def _edges(*extra):
    def f(nodes, edges):
        edges.extend(list(e) for e in extra)

    return f


def _add_nodes(*recs):
    def f(nodes, edges):
        nodes.extend(copy.deepcopy(list(recs)))

    return f


# (name, mutation of the Exp records, regex the message must match)
MALFORMED = [
    ("ids not contiguous", _set(6, Id=9), r"node 9: ids must be exactly 0\.\.6"),
    ("duplicate id", _set(6, Id=5), r"node 5: id appears twice"),
    ("id not an integer", _set(0, Id="0"), r"'Id' must be an integer"),
    ("missing id", _del(2, "Id"), r"missing field 'Id'"),
    ("edge to a missing node", _edges([3, 7]), r"edge #8 \[3, 7\]: node 7 does not exist"),
    ("edge from a negative node", _edges([-1, 3]), r"node -1 does not exist"),
    ("cycle", _edges([5, 1]), r"the edges close a cycle: 1 -> 3 -> 5 -> 1 "),  # Exp has 1 -> 3 -> 5
    ("self loop", _edges([3, 3]), r"node 3 depends on itself"),
    (
        "two ALLOCs",
        _add_nodes({"Id": 7, "Op": "ALLOC", "BufId": 0, "Size": 5, "Type": "UB"}),
        r"buffer 0: more than one ALLOC \(nodes 0 and 7\)",
    ),
    (
        "two FREEs",
        _add_nodes({"Id": 7, "Op": "FREE", "BufId": 1, "Size": 5, "Type": "UB"}),
        r"buffer 1: more than one FREE \(nodes 6 and 7\)",
    ),
    ("no FREE", _set(6, Op="ALLOC", BufId=2), r"buffer 1: has an ALLOC \(node 2\) but no FREE"),
    ("FREE without ALLOC", _set(2, Op="FREE", BufId=2), r"buffer 2: has a FREE \(node 2\) but no ALLOC"),
    ("mismatched Size", _set(4, Size=6), r"buffer 0: ALLOC \(node 0\) says 5 in UB, FREE \(node 4\) says 6 in UB"),
    ("mismatched Type", _set(6, Type="L1"), r"buffer 1: ALLOC \(node 2\) says 5 in UB, FREE \(node 6\) says 5 in L1"),
    ("Bufs id without ALLOC", _set(5, Bufs=[1, 9]), r"node 5 \(COPY_OUT\): uses buffer 9, which has no ALLOC"),
    ("Bufs not a list", _set(5, Bufs=1), r"node 5 \(COPY_OUT\): 'Bufs' must be a list"),
    ("Bufs id not an integer", _set(5, Bufs=["1"]), r"node 5 \(COPY_OUT\): each id in 'Bufs' must be an integer"),
    ("Size zero", _set(0, Size=0), r"node 0 \(ALLOC\) of buffer 0: Size must be > 0, got 0"),
    ("Size negative", _set(4, Size=-5), r"node 4 \(FREE\) of buffer 0: Size must be > 0, got -5"),
    ("Size not an integer", _set(0, Size=5.5), r"node 0 \(ALLOC\) of buffer 0: 'Size' must be an integer"),
    ("missing Size", _del(0, "Size"), r"node 0 \(ALLOC\): missing field 'Size'"),
    ("missing BufId", _del(0, "BufId"), r"node 0 \(ALLOC\): missing field 'BufId'"),
    ("unknown Type", _set(0, Type="L2"), r"node 0 \(ALLOC\) of buffer 0: Type 'L2' is not a tier"),
    ("Type not a string", _set(0, Type=["UB"]), r"node 0 \(ALLOC\) of buffer 0: Type \['UB'\] is not a tier"),
    ("unknown Pipe", _set(3, Pipe="GPU"), r"node 3 \(EXP\): Pipe 'GPU' is not a pipe"),
    ("missing Pipe", _del(3, "Pipe"), r"node 3 \(EXP\): Pipe None is not a pipe"),
    ("missing Op", _del(3, "Op"), r"node 3: 'Op' must be a non-empty string"),
    (
        "buffer larger than its tier",
        _set_each((0, 4), Size=2000),
        r"buffer 0 \(ALLOC node 0\): Size 2000 is larger than tier UB \(1024\)",
    ),
    (
        "operation's buffers exceed a tier",
        _set_each((0, 2, 4, 6), Size=600),
        r"node 3 \(EXP\): its buffers in UB need 1200, the tier holds 1024",
    ),
    ("edge not a pair", _edges([1, 2, 3]), r"edge #8: must be a pair"),
]


# ---------------------------------------------------------------------------------
# hand-computed spill cases (derivations in tests/test_simulate.py)
# ---------------------------------------------------------------------------------

# UB holds 16.  X (8, backed: COPY_IN fills it) and Y (6, made by VEC1) are both
# spilled so that Z (16) can use the whole tier, then both come back for ADD.
SPILL_ONCE_NODES = [
    alloc(0, 0, 8),  # X
    op(1, "COPY_IN", "MTE2", 20, [0]),
    alloc(2, 1, 6),  # Y
    op(3, "VEC1", "VECTOR", 30, [1]),
    alloc(4, 2, 16),  # Z
    op(5, "FILL", "VECTOR", 5, [2]),
    free(6, 2, 16),
    op(7, "ADD", "VECTOR", 40, [0, 1]),
    free(8, 0, 8),
    free(9, 1, 6),
]

SPILL_ONCE_EDGES = [[0, 1], [1, 7], [2, 3], [3, 7], [7, 8], [7, 9], [4, 5], [5, 6]]

# UB holds 8.  W (4, unbacked, made by MAKE) is used three times; P and Q (8 each)
# need the whole tier in between, so W goes out twice and comes back at 4, then 0.
SPILL_TWICE_NODES = [
    alloc(0, 10, 4),  # W
    op(1, "MAKE", "VECTOR", 10, [10]),
    op(2, "USE1", "VECTOR", 10, [10]),
    op(3, "USE2", "VECTOR", 10, [10]),
    free(4, 10, 4),
    alloc(5, 20, 8),  # P
    op(6, "P1", "CUBE", 3, [20]),
    free(7, 20, 8),
    alloc(8, 30, 8),  # Q
    op(9, "Q1", "CUBE", 3, [30]),
    free(10, 30, 8),
]

SPILL_TWICE_EDGES = [[0, 1], [1, 2], [2, 3], [3, 4], [5, 6], [6, 7], [8, 9], [9, 10]]

SPILL_TWICE_ORDER = (0, 1, 11, 5, 6, 7, 12, 2, 13, 8, 9, 10, 14, 3, 4)

SPILL_TWICE_PLAN = Plan(order=SPILL_TWICE_ORDER, offsets=((10, 0), (20, 0), (30, 0)), spills=((10, 4), (10, 0)))


def spill_twice_instance(tmp_path):
    return instance_from_records("spill2", SPILL_TWICE_NODES, SPILL_TWICE_EDGES, load_hardware(hw_file(tmp_path, UB=8)))


# ---------------------------------------------------------------------------------
# problem-2 plans without the order search (the LNS tests start from them)
# ---------------------------------------------------------------------------------


def dlr_only_plan(inst):
    """The valid plan of MPAS then DLR alone (no order search) and its evaluation."""
    from dansched.pipeline import SolveOptions, run_pipeline

    res = run_pipeline(inst, SolveOptions(problem=2, order_search=None))
    assert res.evaluation.valid
    return res.plan, res.evaluation


def traffic_key(ev):
    """(extra traffic, spill count): how problem 2 ranks two plans."""
    return (ev.extra_traffic, ev.spill_count)


# ---------------------------------------------------------------------------------
# the smallest instance every order must spill in (joint model and global bound tests)
# ---------------------------------------------------------------------------------


def one_spill_instance(tmp_path: Path, backed: bool):
    """UB holds 10. Buffer a (6) is written by P, then Q uses b (6), then R reads a again;
    P -> Q -> R. At Q both a and b are live: 12 > 10, so every order needs a spill of a
    (b is live only around Q), and one is enough. P is a COPY_IN when ``backed``."""
    hw = load_hardware(hw_file(tmp_path, UB=10))
    p_op = (
        {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [0]}
        if backed
        else {"Id": 1, "Op": "DUP", "Pipe": "VECTOR", "Cycles": 10, "Bufs": [0]}
    )
    nodes = [
        {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 6, "Type": "UB"},
        p_op,
        {"Id": 2, "Op": "ALLOC", "BufId": 1, "Size": 6, "Type": "UB"},
        {"Id": 3, "Op": "EXP", "Pipe": "VECTOR", "Cycles": 10, "Bufs": [1]},
        {"Id": 4, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 10, "Bufs": [0]},
        {"Id": 5, "Op": "FREE", "BufId": 0, "Size": 6, "Type": "UB"},
        {"Id": 6, "Op": "FREE", "BufId": 1, "Size": 6, "Type": "UB"},
    ]
    edges = [[0, 1], [1, 3], [3, 4], [0, 4], [4, 5], [0, 5], [2, 3], [3, 6], [2, 6]]
    return instance_from_records("one-spill", nodes, edges, hw)


def report_schema_errors(path: Path) -> list[str]:
    """What breaks dansched/data/report.schema.json in the solve report at ``path`` (empty when
    it conforms). A file that is not JSON or carries no ``problem`` (a report a test wrote by
    hand, e.g. to break a folder's fingerprint on purpose) is not a solve's report: no errors."""
    import json

    import jsonschema

    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    if not isinstance(report, dict) or "problem" not in report:
        return []
    schema = json.loads((REPO / "dansched" / "data" / "report.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(report)]


QUICK_MPAS = MpasParams(ls_evaluations=200, restart_work=0)


def stage2_reference(inst):
    """A Stage-2 plan (DLR's scan on an MPAS order, small budgets: the reference only has
    to be a good order, not the best) and its order without spill ids."""
    s2 = dlr_plan(inst, mpas_order(inst, params=QUICK_MPAS).order, other_orders=False)
    return s2, [v for v in s2.plan.order if v < inst.n]


def capacities(**caps: int):
    """The default core with the given tier capacities."""
    table = default_hardware().to_dict()
    return hardware_from_table({**table, "tiers": {**table["tiers"], **caps}})


def generated(family: str, scale: int, seed: int, tight: bool = True):
    """A generated graph; ``tight``: L1 and UB cut to 1024 and 256 units, so it spills."""
    nodes, edges = generate(family, scale, seed=seed)
    hw = capacities(L1=1024, UB=256) if tight else None
    return instance_from_records(f"{family}_s{scale}_{seed}", nodes, edges, hw)


# ---------------------------------------------------------------------------------
# two chains on a free UB (the screen, resequencing and Stage 3, by hand)
# ---------------------------------------------------------------------------------

# A: COPY_IN (MTE2, 10) -> VEC (VECTOR, 10) -> COPY_OUT (MTE3, 100); B: COPY_IN (MTE2, 10)
# -> VEC (VECTOR, 50). The longest path is A's, 10 + 10 + 100 = 120: no order is faster.
TWO_CHAINS_NODES = [
    alloc(0, 0, 10),
    op(1, "COPY_IN", "MTE2", 10, [0]),
    op(2, "VEC", "VECTOR", 10, [0]),
    op(3, "COPY_OUT", "MTE3", 100, [0]),
    free(4, 0, 10),
    alloc(5, 1, 10),
    op(6, "COPY_IN", "MTE2", 10, [1]),
    op(7, "VEC", "VECTOR", 50, [1]),
    free(8, 1, 10),
]
TWO_CHAINS_EDGES = [[0, 1], [1, 2], [2, 3], [3, 4], [5, 6], [6, 7], [7, 8]]
# B's VEC before A's: A's loads 0-10, B's 10-20, B's VEC 20-70, A's VEC 70-80, its COPY_OUT 80-180
TWO_CHAINS_SLOW = Plan(order=(0, 5, 1, 6, 7, 2, 3, 4, 8), offsets=((0, 0), (1, 10)), spills=())
# A's VEC at 10-20, B's 20-70, A's COPY_OUT 20-120: the longest path, 120
TWO_CHAINS_FAST = Plan(order=(0, 5, 1, 6, 2, 7, 3, 4, 8), offsets=((0, 0), (1, 10)), spills=())


def two_chains():
    return instance_from_records("two-chains", TWO_CHAINS_NODES, TWO_CHAINS_EDGES)
