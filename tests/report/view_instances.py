"""Small timed plans built by hand for the tests of the plan pictures and the view page."""

from __future__ import annotations

from dansched.instance import Instance, instance_from_records
from dansched.plan import Plan
from dansched.simulate import Evaluation, evaluate


def backed_spills_instance(k: int) -> tuple[Instance, Plan, Evaluation]:
    """A buffer a COPY_IN fills (so DDR holds it: every SPILL_OUT of it takes 0 cycles),
    spilled and brought back ``k`` times before the ADD that reads it; the plan and its
    evaluation. MTE3 runs only the k zero-cycle SPILL_OUTs; MTE2 the COPY_IN and the k
    SPILL_INs, which take time."""
    nodes = [
        {"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 32, "Type": "UB"},
        {"Id": 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [0]},
        {"Id": 2, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 7, "Bufs": [0]},
        {"Id": 3, "Op": "FREE", "BufId": 0, "Size": 32, "Type": "UB"},
    ]
    inst = instance_from_records("backed", nodes, [[0, 1], [1, 2], [2, 3]])
    order = (0, 1, *range(inst.n, inst.n + 2 * k), 2, 3)
    plan = Plan(order=order, offsets=((0, 0),), spills=((0, 0),) * k)
    ev = evaluate(inst, plan)
    assert ev.valid and ev.spill_count == k
    return inst, plan, ev
