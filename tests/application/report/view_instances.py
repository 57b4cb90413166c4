"""Small timed plans built by hand for the tests of the plan pictures and the view page."""

from __future__ import annotations

from dansched.instance import Instance, instance_from_records
from dansched.plan import Plan
from dansched.simulate import Evaluation, evaluate


def backed_spills_instance(k: int) -> tuple[Instance, Plan, Evaluation]:
    """``k`` UB buffers, one after another, each filled by a COPY_IN (so DDR holds it and
    its SPILL_OUT takes 0 cycles), spilled once and brought back before the ADD that reads
    it; the plan and its evaluation. MTE3 runs only the k zero-cycle SPILL_OUTs; MTE2 the
    COPY_INs and the SPILL_INs, which take time."""
    nodes, edges, order, spills = [], [], [], []
    for i in range(k):
        v = 4 * i
        nodes += [
            {"Id": v, "Op": "ALLOC", "BufId": i, "Size": 32, "Type": "UB"},
            {"Id": v + 1, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [i]},
            {"Id": v + 2, "Op": "ADD", "Pipe": "VECTOR", "Cycles": 7, "Bufs": [i]},
            {"Id": v + 3, "Op": "FREE", "BufId": i, "Size": 32, "Type": "UB"},
        ]
        edges += [[v, v + 1], [v + 1, v + 2], [v + 2, v + 3]]
        order += [v, v + 1, 4 * k + 2 * i, 4 * k + 2 * i + 1, v + 2, v + 3]
        spills.append((i, 0))
    inst = instance_from_records("backed", nodes, edges)
    plan = Plan(order=tuple(order), offsets=tuple((i, 0) for i in range(k)), spills=tuple(spills))
    ev = evaluate(inst, plan)
    assert ev.valid and ev.spill_count == k
    return inst, plan, ev
