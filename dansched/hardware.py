"""Hardware model: tiers and capacities, pipes, tier roles and spill cost (docs/rules.md, section 2).

The model is data: ``dansched/data/davinci.toml`` is the default, and a file given
with ``--hw`` replaces only the keys it sets (tables merge key by key, lists and
scalars are replaced whole).

>>> hw = load_hardware()
>>> hw.capacity["UB"], hw.spill_cycles(128)
(1024, 406)
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from .errors import HardwareError

__all__ = ["Hardware", "load_hardware", "default_hardware"]


@dataclass(frozen=True)
class Hardware:
    """One NPU core: tier capacities, pipes and the roles of docs/rules.md, section 2."""

    tiers: tuple[str, ...]
    capacity: Mapping[str, int]
    pipes: tuple[str, ...]
    peak_tiers: tuple[str, ...]
    single_residency_tiers: tuple[str, ...]
    spill_out_pipe: str
    spill_in_pipe: str
    spill_fixed_cycles: int
    spill_cycles_per_unit: int
    dma_pipes: tuple[str, ...] = ()  # data-movement pipes (the DMA engine class of trace statistics)

    def spill_cycles(self, size: int) -> int:
        """Latency of one spill transfer of ``size`` units: alpha + beta * size (paper Eq. 8)."""
        return self.spill_fixed_cycles + self.spill_cycles_per_unit * int(size)

    def tier_index(self, name: str) -> int:
        return self.tiers.index(name)

    def pipe_index(self, name: str) -> int:
        return self.pipes.index(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tiers": dict(self.capacity),
            "roles": {
                "peak": list(self.peak_tiers),
                "single_residency": list(self.single_residency_tiers),
                "pipes": list(self.pipes),
                "spill_out_pipe": self.spill_out_pipe,
                "spill_in_pipe": self.spill_in_pipe,
                "dma": list(self.dma_pipes),
            },
            "spill": {
                "fixed_cycles": self.spill_fixed_cycles,
                "cycles_per_unit": self.spill_cycles_per_unit,
            },
        }


def _merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(dict(out[key]), value)
        else:
            out[key] = value
    return out


def _default_table() -> dict[str, Any]:
    text = resources.files("dansched").joinpath("data/davinci.toml").read_text()
    return tomllib.loads(text)


INT_LIMIT = 2**63  # capacities and spill costs must fit in 63 bits, like every instance integer


def _non_negative_int(value: Any, what: str, positive: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < (1 if positive else 0):
        need = "a positive" if positive else "a non-negative"
        raise HardwareError(f"hardware: {what} must be {need} integer, got {value!r}")
    if value >= INT_LIMIT:
        raise HardwareError(f"hardware: {what} is {value}, too large: values must fit in 63 bits (< 2**63)")
    return value


def _names(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise HardwareError(f"hardware: {what} must be a list of names, got {value!r}")
    if len(set(value)) != len(value):
        raise HardwareError(f"hardware: {what} lists a name twice: {value!r}")
    return tuple(value)


def _pipe_role(roles: Mapping[str, Any], key: str, pipes: tuple[str, ...]) -> str:
    """The pipe ``roles[key]`` names; it must be one of ``pipes``."""
    name = roles.get(key)
    if not isinstance(name, str) or name not in pipes:
        raise HardwareError(f"hardware: roles.{key} = {name!r} is not one of roles.pipes {list(pipes)}")
    return name


def hardware_from_table(table: Mapping[str, Any]) -> Hardware:
    """Validate a merged TOML table and build a :class:`Hardware`."""
    tiers_tab = table.get("tiers")
    if not isinstance(tiers_tab, Mapping) or not tiers_tab:
        raise HardwareError("hardware: [tiers] must name at least one tier with its capacity")
    capacity = {str(k): _non_negative_int(v, f"capacity of tier {k}", positive=True) for k, v in tiers_tab.items()}
    roles = table.get("roles", {})
    if not isinstance(roles, Mapping):
        raise HardwareError("hardware: [roles] must be a table")
    pipes = _names(roles.get("pipes"), "roles.pipes")
    if not pipes:
        raise HardwareError("hardware: roles.pipes must name at least one pipe")
    peak = _names(roles.get("peak", []), "roles.peak")
    single = _names(roles.get("single_residency", []), "roles.single_residency")
    for name in peak + single:
        if name not in capacity:
            raise HardwareError(f"hardware: role names tier {name!r}, which [tiers] does not define")
    spill_out = _pipe_role(roles, "spill_out_pipe", pipes)
    spill_in = _pipe_role(roles, "spill_in_pipe", pipes)
    # roles.dma names data-movement pipes; those a file's own roles.pipes drops are left out
    dma = tuple(p for p in _names(roles.get("dma", []), "roles.dma") if p in pipes)
    spill = table.get("spill", {})
    if not isinstance(spill, Mapping):
        raise HardwareError("hardware: [spill] must be a table")
    return Hardware(
        tiers=tuple(capacity),
        capacity=dict(capacity),
        pipes=pipes,
        peak_tiers=peak,
        single_residency_tiers=single,
        spill_out_pipe=spill_out,
        spill_in_pipe=spill_in,
        spill_fixed_cycles=_non_negative_int(spill.get("fixed_cycles"), "spill.fixed_cycles"),
        spill_cycles_per_unit=_non_negative_int(spill.get("cycles_per_unit"), "spill.cycles_per_unit"),
        dma_pipes=dma,
    )


def load_hardware(path: str | Path | None = None) -> Hardware:
    """The default model, with the keys of the TOML file at ``path`` (if any) replacing its own."""
    table = _default_table()
    if path is not None:
        p = Path(path)
        try:
            override = tomllib.loads(p.read_text())
        except FileNotFoundError:
            raise HardwareError(f"hardware: no such file: {p}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise HardwareError(f"hardware: cannot read {p}: {exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise HardwareError(f"hardware: {p} is not valid TOML: {exc}") from None
        table = _merge(table, override)
    return hardware_from_table(table)


_DEFAULT: Hardware | None = None


def default_hardware() -> Hardware:
    """The shipped Davinci-like model (cached)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = load_hardware()
    return _DEFAULT
