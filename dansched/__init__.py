"""dansched: memory-aware scheduling of operator-level DAGs onto one NPU core.

Three deterministic stages from the DAN-Scheduler paper (MPAS, DLR, CPE), one
shared evaluator and cycle simulator (:mod:`dansched.simulate`), CP-SAT bounds.

The public Python API, for callers that drive dansched from a compiler flow; every
command of the ``dansched`` command line is one of these calls::

    import dansched
    inst = dansched.load_instance("case.json")          # or GraphBuilder().build(name), instance_from_records
    result = dansched.solve(inst, dansched.SolveOptions(problem=3))
    result.evaluation.makespan                          # every plan is judged by dansched.evaluate
    result.write("out", outputs=("trace", "view"))      # the plan folder, as `dansched solve` writes it
    dansched.bound(inst).to_dict()                      # `dansched bound`; audit_folder: `dansched audit`

Names are loaded on first use (``dansched.cli`` stays quick to start: ``dansched
evaluate`` never loads CP-SAT); :data:`__all__` lists them all.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # instances and hardware
    "Instance": "dansched.instance",
    "load_instance": "dansched.instance",
    "instance_from_records": "dansched.instance",
    "write_json": "dansched.instance",
    "write_csv_pair": "dansched.instance",
    "GraphBuilder": "dansched.generate",
    "generate_file": "dansched.generate",
    "Hardware": "dansched.hardware",
    "load_hardware": "dansched.hardware",
    "default_hardware": "dansched.hardware",
    # solving: options, the stages' parameters, the pipeline and what solve returns
    "SolveOptions": "dansched.pipeline",
    "SolveResult": "dansched.pipeline",
    "solve": "dansched.application.solution",
    "Solution": "dansched.application.solution",
    "MpasParams": "dansched.params",
    "DlrParams": "dansched.params",
    "CpeParams": "dansched.params",
    "EffortParams": "dansched.params",
    "EFFORTS": "dansched.pipeline",
    "effort_options": "dansched.pipeline",
    "SolveReport": "dansched.pipeline",
    "BoundParams": "dansched.params",
    "LocalSearchParams": "dansched.params",
    "OrderSearchParams": "dansched.params",
    "WaveParams": "dansched.params",
    "LnsParams": "dansched.params",
    "TimedParams": "dansched.params",
    "MemoryWindowParams": "dansched.params",
    "SearchParams": "dansched.params",
    "PeakBoundParams": "dansched.params",
    "ProductParams": "dansched.params",
    "TrafficParams": "dansched.params",
    "CoverBudget": "dansched.params",
    # plans: the contest files
    "Plan": "dansched.plan",
    "read_plan_dir": "dansched.plan",
    "read_schedule": "dansched.plan",
    "read_memory": "dansched.plan",
    "read_spill": "dansched.plan",
    "write_plan": "dansched.plan",
    "contest_paths": "dansched.plan",
    # judging plans
    "Evaluation": "dansched.simulate",
    "evaluate": "dansched.simulate",
    "evaluate_files": "dansched.application.judge",
    "judge_folder": "dansched.application.judge",
    "evaluate_folder": "dansched.application.judge",
    "folder_hardware": "dansched.application.judge",
    # reports of a plan folder
    "trace_folder": "dansched.application.report.folder",
    "view_folder": "dansched.application.report.folder",
    # lower bounds
    "Bound": "dansched.models.bounds.bound",
    "peak_lower_bound": "dansched.models.bounds.peak",
    "traffic_lower_bound": "dansched.models.bounds.traffic",
    "makespan_lower_bound": "dansched.models.bounds.makespan",
    "audit_plan": "dansched.application.audit",
    "bound": "dansched.application.audit",
    "BoundResult": "dansched.application.audit",
    "audit_folder": "dansched.application.audit",
    "AuditResult": "dansched.application.audit",
    # errors
    "InstanceError": "dansched.errors",
    "HardwareError": "dansched.errors",
    "PlanFormatError": "dansched.errors",
    "PlanInvalidError": "dansched.errors",
    "NoLegalOrderError": "dansched.errors",
}

__all__ = [  # a literal list, so that linters see the names; tests/test_api.py checks it against _EXPORTS
    "__version__",
    "Instance",
    "load_instance",
    "instance_from_records",
    "write_json",
    "write_csv_pair",
    "GraphBuilder",
    "generate_file",
    "Hardware",
    "load_hardware",
    "default_hardware",
    "SolveOptions",
    "SolveResult",
    "solve",
    "Solution",
    "MpasParams",
    "DlrParams",
    "CpeParams",
    "EffortParams",
    "EFFORTS",
    "effort_options",
    "SolveReport",
    "BoundParams",
    "LocalSearchParams",
    "OrderSearchParams",
    "WaveParams",
    "LnsParams",
    "TimedParams",
    "MemoryWindowParams",
    "SearchParams",
    "PeakBoundParams",
    "ProductParams",
    "TrafficParams",
    "CoverBudget",
    "Plan",
    "read_plan_dir",
    "read_schedule",
    "read_memory",
    "read_spill",
    "write_plan",
    "contest_paths",
    "Evaluation",
    "evaluate",
    "evaluate_files",
    "judge_folder",
    "evaluate_folder",
    "folder_hardware",
    "trace_folder",
    "view_folder",
    "Bound",
    "peak_lower_bound",
    "traffic_lower_bound",
    "makespan_lower_bound",
    "audit_plan",
    "bound",
    "BoundResult",
    "audit_folder",
    "AuditResult",
    "InstanceError",
    "HardwareError",
    "PlanFormatError",
    "PlanInvalidError",
    "NoLegalOrderError",
]


def __getattr__(name: str) -> Any:
    """Load an exported name from its module on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dansched' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # the same names for type checkers and editors
    from .application.audit import AuditResult, BoundResult, audit_folder, audit_plan, bound
    from .application.judge import evaluate_files, evaluate_folder, folder_hardware, judge_folder
    from .application.report.folder import trace_folder, view_folder
    from .application.solution import Solution, solve
    from .errors import HardwareError, InstanceError, NoLegalOrderError, PlanFormatError, PlanInvalidError
    from .generate import GraphBuilder, generate_file
    from .hardware import Hardware, default_hardware, load_hardware
    from .instance import Instance, instance_from_records, load_instance, write_csv_pair, write_json
    from .models.bounds.bound import Bound
    from .models.bounds.makespan import makespan_lower_bound
    from .models.bounds.peak import peak_lower_bound
    from .models.bounds.traffic import traffic_lower_bound
    from .params import (
        BoundParams,
        CoverBudget,
        CpeParams,
        DlrParams,
        EffortParams,
        LnsParams,
        LocalSearchParams,
        MemoryWindowParams,
        MpasParams,
        OrderSearchParams,
        PeakBoundParams,
        ProductParams,
        SearchParams,
        TimedParams,
        TrafficParams,
        WaveParams,
    )
    from .pipeline import EFFORTS, SolveOptions, SolveReport, SolveResult, effort_options
    from .plan import Plan, contest_paths, read_memory, read_plan_dir, read_schedule, read_spill, write_plan
    from .simulate import Evaluation, evaluate
