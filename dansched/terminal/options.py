"""The option types of the commands: ranged numbers checked as they are parsed
(:mod:`dansched.checks`), the choice enums, and the annotated arguments and options the
commands share."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from ..checks import FREQ_GHZ, SEED, TIME_LIMIT, TRAFFIC_SLACK, Range
from ..stages.dlr.victim import VICTIMS


def in_range(accepted: Range) -> Any:
    """The callback that checks an option against its range (:mod:`dansched.checks`) as it
    is parsed: one line naming the option and the range, exit 2."""

    def check(param: typer.CallbackParam, value: Any) -> Any:
        return accepted.check(value, param.opts[0] if param.opts else str(param.name), optional=True)

    return check


def ranged_option(flag: str, accepted: Range, help: str) -> Any:
    """A numeric ``typer.Option`` checked against ``accepted``, its range stated in the help."""
    return typer.Option(flag, callback=in_range(accepted), help=f"{help.rstrip('.')}. Accepts {accepted.text}.")


class Variant(str, Enum):
    """Stage-1 variants (:data:`dansched.stages.mpas.stage.VARIANTS`; tests/test_cli_options.py checks they agree)."""

    mpas = "mpas"
    mpas_greedy = "mpas-greedy"
    mpas_paper = "mpas-paper"


# Stage-2 victim rules: the registry's choices (:data:`dansched.stages.dlr.victim.VICTIMS`)
Victim = Enum("Victim", {name.replace("-", "_"): name for name in VICTIMS}, type=str)  # type: ignore[misc]


DEFAULT_VICTIM = Victim("cost")


class Effort(str, Enum):
    """``--effort`` (:data:`dansched.pipeline.options.EFFORTS`)."""

    fast = "fast"
    default = "default"
    max = "max"


class WindowMode(str, Enum):
    """``--exact-window-mode`` (:data:`dansched.pipeline.WINDOW_MODES`)."""

    fixed = "fixed"
    memory = "memory"


class Family(str, Enum):
    """Synthetic families (:data:`dansched.generate.FAMILIES`)."""

    matmul = "matmul"
    fa = "fa"
    conv = "conv"
    random = "random"
    chain = "chain"
    ladder = "ladder"


InstanceArg = Annotated[Path, typer.Argument(metavar="INSTANCE", help="Instance: <case>.json or <case>_Nodes.csv")]


HwOption = Annotated[
    Path | None,
    typer.Option("--hw", help="TOML file whose keys replace the default hardware model's (new tiers: [new_tiers])."),
]


JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")]


QuietOption = Annotated[bool, typer.Option("--quiet", help="No progress line (the result is still printed).")]


BoundSeconds = Annotated[float, ranged_option("--time-limit", TIME_LIMIT, "Budget in seconds for CP-SAT bounds.")]


SeedOption = Annotated[int, ranged_option("--seed", SEED, "Seed for CP-SAT.")]


FreqOption = Annotated[float, ranged_option("--freq-ghz", FREQ_GHZ, "Clock for the estimated latency line.")]


SlackOption = Annotated[
    float, ranged_option("--traffic-slack", TRAFFIC_SLACK, "Percent more traffic Stage 3 may trade for makespan.")
]


PlanFolder = Annotated[
    Path, typer.Option("--plan", help="Folder holding <case>_schedule.txt (and _memory.txt, _spill.txt, _report.json).")
]


def with_output_flags(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with one ``--FLAG`` option per optional output of the registry
    (:func:`dansched.application.outputs.optional_outputs`: ``--trace``, ``--html``, ...), passed to it
    as ``outputs``, the kinds asked for. A new output's flag needs no code here."""
    from ..application.outputs import optional_outputs

    flags = {f"output_{o.kind}": o for o in optional_outputs()}
    signature = inspect.signature(command, eval_str=True)
    params = [p for name, p in signature.parameters.items() if name != "outputs"]
    params += [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=False,
            annotation=Annotated[bool, typer.Option(str(o.flag), help=o.help)],
        )
        for name, o in flags.items()
    ]

    @functools.wraps(command)
    def wrapped(*args: Any, **kwargs: Any) -> None:
        asked = tuple(o.kind for name, o in flags.items() if kwargs.pop(name, False))
        command(*args, outputs=asked, **kwargs)

    wrapped.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    wrapped.__annotations__ = {p.name: p.annotation for p in params} | {"return": None}
    return wrapped
