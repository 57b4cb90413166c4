"""Deep graphs: the first-free bound stays within its member budget, and
what it falls back to is still a valid bound."""

from __future__ import annotations

import pytest

from dansched.generate import generate
from dansched.instance import instance_from_records
from dansched.models.bounds.peak import peak_lower_bound, working_set_bound
from dansched.params import BoundParams as DepthParams
from dansched.pipeline import SolveOptions, run_pipeline


@pytest.mark.parametrize("family", ["chain", "ladder"])
def test_first_free_bound_falls_back_past_its_budget(family):
    inst = instance_from_records(family, *generate(family, 2, 0))
    full = peak_lower_bound(inst, params=DepthParams(ff_members_base=10**9))
    tight = peak_lower_bound(inst, params=DepthParams(ff_members_base=0, ff_members_per_node=1))
    assert "skipped" not in full.method and "skipped" in tight.method
    assert tight.value == working_set_bound(inst).value <= full.value
    plan = run_pipeline(inst, SolveOptions(problem=1))
    assert full.value <= plan.evaluation.max_v_stay


def test_depth_params_are_validated():
    with pytest.raises(ValueError, match="ff_members_per_node"):
        DepthParams(ff_members_per_node=-1)
    with pytest.raises(ValueError, match="ff_members_base"):
        DepthParams(ff_members_base=1.5)


def test_chain_shape():
    nodes, edges = generate("chain", 1, 0)
    assert len(nodes) == 192
    assert {tuple(e) for e in edges} >= {(i, i + 1) for i in range(191)}  # every id linked to the next
    sizes = [r["Size"] for r in nodes if r["Op"] == "ALLOC"]
    assert sizes == list(range(1, 65))
