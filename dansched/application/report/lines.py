"""The one-line summaries the command line prints of a solve beside the report's tables:
its figures, the files written, the traffic budget, an early stop, and the hardware a plan
was judged on."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ...interrupt import CTRL_C, TIME_LIMIT

if TYPE_CHECKING:
    from ...budget import TrafficBudget
    from ...hardware import Hardware
    from ...instance import Instance
    from ...interrupt import Stop


def hardware_line(hw: Hardware, origin: str) -> str:
    """``hardware from ORIGIN: TIER CAP, ...``: where the capacities a plan was judged on
    came from (the default model, a --hw file, the plan folder's report), then each tier's."""
    return f"hardware from {origin}: {hw.capacity_text}"


def figure_lines(inst: Instance, figures: Mapping[str, int], seconds: float) -> list[str]:
    """What ``solve`` prints of its plan: the problem's figures and the time; for a plan
    with a layout, its physical peak beside the capacity of the tiers it counts, and
    ``max_v_stay`` (the logical peak, problem 1's metric) labelled as such."""
    tiers = "+".join(inst.hw.peak_tiers)
    if "makespan" not in figures and "extra_traffic" not in figures:  # problem 1: the order's peak
        return [f"{inst.name}: max_v_stay {figures['max_v_stay']:,} (logical {tiers}) ({seconds:.1f} s)"]
    shown = ", ".join(f"{k} {figures[k]:,}" for k in ("makespan", "extra_traffic", "spill_count") if k in figures)
    capacity = sum(inst.hw.capacity[t] for t in inst.hw.peak_tiers)
    lines = [f"{inst.name}: {shown} ({seconds:.1f} s)"]
    if "physical_peak" in figures:
        lines.append(f"physical peak {figures['physical_peak']:,} of capacity {capacity:,} ({tiers})")
    lines.append(f"max_v_stay {figures['max_v_stay']:,} (logical {tiers}: problem 1's metric, not a capacity check)")
    return lines


def wrote_line(out: Path, files: list[str]) -> str:
    """``wrote N file(s) in OUT: name, name, ...`` (the names of the files in ``out``;
    any other file by its path)."""
    names = [Path(f).name if Path(f).parent == out else f for f in files]
    return f"wrote {len(files)} file(s) in {out}: " + ", ".join(names)


def budget_line(budget: TrafficBudget) -> str:
    """``traffic budget A: the problem-2 plan's traffic B + P% slack`` (problem 3)."""
    return (
        f"traffic budget {budget.allowance:,}: the problem-2 plan's traffic {budget.base:,} "
        f"+ {budget.to_dict()['slack_percent']}% slack (--traffic-slack)"
    )


def stopped_line(stop: Stop) -> str:
    """``stopped early by Ctrl-C after 12.3 s, in "STEP": ...``: what cut a solve short."""
    by = "Ctrl-C" if stop.by == CTRL_C else "its --time-limit" if stop.by == TIME_LIMIT else stop.by
    return (
        f"stopped early by {by} after {stop.seconds:.1f} s, {f'in {stop.step!r}' if stop.step else 'at its start'}: the plan is the "
        "best valid one found by then, and another run may stop elsewhere (docs/guide.md, Stopping early)"
    )
