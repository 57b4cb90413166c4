"""The package's import graph: no cycles, and every import points down the layer order

    core (errors, checks, interrupt, params, budget, kernels, hardware, instance, graph, addresses, rooms, plan,
          plan_folder, simulate, generate, testing)
      <- models <- stages <- pipeline <- application (the folder dansched/application)
      <- cli (with the folder dansched/terminal), dansched (the public API)

and, inside the application layer, down its own order (lowest first)

    judge <- executor <- audit <- baselines <- report <- outputs <- bench <- sweep <- summary <- solution

Imports are read with ``ast`` from every module, including imports inside functions
and under ``TYPE_CHECKING``; a module may import its own layer or a lower one, never a
higher one, and an application module only itself (its own package) and the application
modules before it. Only the top layer (``cli`` and ``terminal``, and the package ``__init__``, which loads its
exports on first use) may defer imports into functions, to keep ``dansched evaluate``
from loading CP-SAT: that is start-up time, not a dodged cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "dansched"

CORE = {
    "addresses",
    "rooms",
    "errors",
    "checks",
    "reprs",
    "interrupt",
    "params",
    "budget",
    "kernels",
    "hardware",
    "instance",
    "graph",
    "plan",
    "plan_folder",
    "simulate",
    "generate",
    "testing",
}
# the application layer, lowest first: each imports only the ones before it (docs/architecture.md, "Layers")
APPLICATION_ORDER = (
    "judge",
    "executor",
    "audit",
    "baselines",
    "report",
    "outputs",
    "bench",
    "sweep",
    "summary",
    "solution",
)
APPLICATION = set(APPLICATION_ORDER)
LAYERS = {"core": 0, "models": 1, "stages": 2, "pipeline": 3, "application": 4, "top": 5}


def layer_of(module: str) -> str:
    """The layer of a module name such as ``dansched.stages.dlr.scan``."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("cli", "terminal"):
        return "top"
    head = parts[1]
    if head in CORE or head == "data":
        return "core"
    if head in ("models", "stages", "pipeline"):
        return head
    if head == "application" and (len(parts) == 2 or parts[2] in APPLICATION):
        return "application"
    raise AssertionError(f"{module}: no layer assigned; add it to tests/test_layers.py")


def application_rank(module: str) -> int:
    """The place of an application module (``dansched.application.report.folder``) in :data:`APPLICATION_ORDER`."""
    parts = module.split(".")
    return APPLICATION_ORDER.index(parts[2]) if len(parts) > 2 else -1


def application_climbs(edges) -> list[str]:
    """The imports among ``edges`` from an application module to a later one of the order."""
    return [
        f"{u} imports {v}"
        for u, v in edges
        if layer_of(u) == layer_of(v) == "application" and application_rank(v) > application_rank(u)
    ]


def _module_name(path: Path) -> tuple[str, bool]:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _known(module: str) -> bool:
    p = PACKAGE.parent.joinpath(*module.split("."))
    return p.with_suffix(".py").exists() or (p / "__init__.py").exists()


def _targets(module: str, is_pkg: bool, node: ast.AST) -> list[str]:
    """The dansched modules an import statement loads."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "dansched"]
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = module.split(".") if is_pkg else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != "dansched":
        return []
    out = [target]
    out += [f"{target}.{a.name}" for a in node.names if _known(f"{target}.{a.name}")]  # from pkg import submodule
    return out


def import_graph() -> tuple[nx.DiGraph, list[tuple[str, str]]]:
    """``(graph, deferred)``: module -> imported module edges, and the imports made
    inside functions, as (module, target)."""
    g = nx.DiGraph()
    deferred: list[tuple[str, str]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module, is_pkg = _module_name(path)
        g.add_node(module)
        tree = ast.parse(path.read_text(), filename=str(path))
        in_function = {
            id(n)
            for f in ast.walk(tree)
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            for n in ast.walk(f)
            if isinstance(n, (ast.Import, ast.ImportFrom))
        }
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _targets(module, is_pkg, node):
                    if target != module:
                        g.add_edge(module, target)
                        if id(node) in in_function:
                            deferred.append((module, target))
    return g, deferred


def test_every_module_has_a_layer():
    g, _ = import_graph()
    assert len(g) > 50  # the whole package was read
    for module in g:
        layer_of(module)


def test_import_graph_has_no_cycle():
    g, _ = import_graph()
    # a package's __init__ importing its own submodules is how packages export; the
    # reverse edge (a submodule importing its package) would be the cycle
    own = [(u, v) for u, v in g.edges if v.startswith(u + ".")]
    h = g.copy()
    h.remove_edges_from(own)
    cycles = list(nx.simple_cycles(h))
    assert not cycles, f"import cycles: {sorted(cycles, key=len)[:5]}"


def test_imports_only_point_down_the_layers():
    g, _ = import_graph()
    upward = [
        f"{u} ({layer_of(u)}) imports {v} ({layer_of(v)})"
        for u, v in g.edges
        if LAYERS[layer_of(v)] > LAYERS[layer_of(u)]
    ]
    assert not upward, "\n".join(upward)


def test_application_modules_import_only_those_before_them():
    g, _ = import_graph()
    climbs = application_climbs(g.edges)
    assert not climbs, "\n".join(climbs)


def test_the_application_order_catches_a_climb():
    """Imports that once climbed inside the application layer are caught (so the test can fail)."""
    once = [
        ("dansched.application.judge", "dansched.application.report.view"),
        ("dansched.application.judge", "dansched.application.outputs"),
        ("dansched.application.report.folder", "dansched.application.outputs"),
        ("dansched.application.report.folder", "dansched.application.audit"),
        ("dansched.application.audit", "dansched.application.solution"),
    ]
    assert len(application_climbs(once)) == len(once) - 1  # report.folder -> audit points down the order
    assert (
        application_climbs(
            [
                ("dansched.application.solution", "dansched.application.judge"),
                ("dansched.application.report.folder", "dansched.application.report.trace"),
            ]
        )
        == []
    )


def test_no_imports_deferred_into_functions_below_the_top_layer():
    _, deferred = import_graph()
    bad = sorted({f"{u} -> {v}" for u, v in deferred if layer_of(u) != "top"})
    assert not bad, "imports inside functions: " + ", ".join(bad)


@pytest.mark.parametrize(
    "module, layer",
    [
        ("dansched.errors", "core"),
        ("dansched.kernels.evaluate", "core"),
        ("dansched.models.bounds.peak", "models"),
        ("dansched.stages.dlr.scan", "stages"),
        ("dansched.application.report.progress", "application"),
        ("dansched.application.solution", "application"),
        ("dansched.application.judge", "application"),
        ("dansched.cli", "top"),
        ("dansched", "top"),
    ],
)
def test_layer_of_names_the_documented_layers(module, layer):
    assert layer_of(module) == layer


def test_the_check_catches_an_upward_import(tmp_path):
    """The graph builder sees relative imports inside functions (so the test can fail)."""
    src = "def f():\n    from ...pipeline import run\n    return run\n"
    node = ast.parse(src).body[0].body[0]
    assert _targets("dansched.stages.dlr.scan", False, node) == ["dansched.pipeline", "dansched.pipeline.run"]
    assert LAYERS[layer_of("dansched.pipeline")] > LAYERS[layer_of("dansched.stages.dlr.scan")]
