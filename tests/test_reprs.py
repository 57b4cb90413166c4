"""Every public object prints in one line of at most 200 characters (dansched/reprs.py): an
instance, a timing, a solve's result and report, the options, the bounds, the judgement of
a folder and everything reachable from them, never their arrays."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import SHIPPED, hw_file

import dansched
from dansched.hardware import load_hardware
from dansched.instance import load_instance
from dansched.reprs import LIMIT, brief, one_line_repr


def _reachable(roots: list[object]) -> list[object]:
    """Every object of a dansched class reachable from ``roots`` through dataclass fields,
    attributes and the first items of lists, tuples and dicts."""
    seen: set[int] = set()
    found: list[object] = []
    todo = [(r, 0) for r in roots]
    while todo:
        obj, depth = todo.pop()
        if id(obj) in seen or depth > 8 or isinstance(obj, (str, bytes, int, float, np.ndarray)):
            continue
        seen.add(id(obj))
        if isinstance(obj, (list, tuple)):
            todo += [(x, depth + 1) for x in obj[:5]]
            continue
        if isinstance(obj, dict):
            todo += [(x, depth + 1) for x in list(obj.values())[:50]]
            continue
        if not (type(obj).__module__ or "").startswith("dansched"):
            continue
        found.append(obj)
        if dataclasses.is_dataclass(obj):
            todo += [(getattr(obj, f.name), depth + 1) for f in dataclasses.fields(obj)]
        else:
            todo += [(v, depth + 1) for v in getattr(obj, "__dict__", {}).values()]
    return found


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reprs")
    hw = load_hardware(hw_file(tmp, L1=1024))  # conv_s2 spills: candidates, a frontier, spill edges
    inst = load_instance(SHIPPED / "conv_s2.json", hw)
    out = tmp / "out"
    sol = dansched.solve(inst, dansched.effort_options("fast", frontier=True), out=out)
    ev = sol.evaluation
    objects: list[object] = [sol, sol.summary(), inst, hw, ev.timing, ev.graph, ev.segments()]
    objects += [dansched.effort_options(e) for e in ("fast", "default", "max")]
    exp = load_instance(SHIPPED / "Exp.json")  # bound and audit solve again: on the smallest graph
    dansched.solve(exp, dansched.effort_options("fast"), out=tmp / "exp")
    objects += [dansched.bound(exp, 1.0, 0), dansched.audit_folder(exp, tmp / "exp", 1.0, 0)]
    objects += [dansched.evaluate_folder(inst, out), dansched.GraphBuilder()]
    objects += [getattr(dansched, n)() for n in dansched.__all__ if n.endswith("Params") or n == "CoverBudget"]
    return objects


def test_every_object_reachable_from_a_solve_prints_in_one_short_line(roots):
    found = _reachable(roots)
    kinds = {type(o).__name__ for o in found}
    assert {"Instance", "Timing", "AugmentedGraph", "SolveResult", "SolveReport", "SolveOptions"} <= kinds
    assert {"Solution", "SolveSummary", "FrontierPoint", "AuditRow", "BoundResult", "Judgement"} <= kinds
    long = {type(o).__name__: len(repr(o)) for o in found if len(repr(o)) > LIMIT or "\n" in repr(o)}
    assert not long, long


def test_an_instance_says_what_it_is():
    inst = load_instance(SHIPPED / "Exp.json")
    assert repr(inst) == "Instance(Exp, 7 nodes, 8 edges, 2 buffers; L1 4,096, UB 1,024, L0A 256, L0B 256, L0C 512)"


def test_brief_values_and_fields_at_their_default_left_out():
    assert brief(np.zeros((57, 2), dtype=np.int64)) == "int64[57x2]"
    assert brief(list(range(1234))) == "[1,234 items]" and brief((1,)) == "(1,)"
    assert brief("x" * 100) == repr("x" * 57 + "...")

    @dataclasses.dataclass
    class Example:
        values: list[int]
        seed: int = 0
        names: tuple[str, ...] = ()
        __repr__ = one_line_repr

    assert repr(Example([1, 2])) == "Example(values=[1, 2])"
    assert repr(Example([1], seed=3)) == "Example(values=[1], seed=3)"
    wide = repr(Example(list(range(3)), names=tuple(f"name{k}" * 9 for k in range(4))))
    assert len(wide) <= LIMIT and wide.endswith(", ...)")
