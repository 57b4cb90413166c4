"""Hardware model: tiers and capacities, pipes, tier roles and spill cost (docs/rules.md, section 2).

The model is data: ``dansched/data/davinci.toml`` is the default, and a file given
with ``--hw`` replaces only the keys it sets (tables merge key by key, lists and
scalars are replaced whole). A key or section the model does not have is a typo, not
a new setting: :func:`load_hardware` refuses it with one line naming it and the
closest known name; a value it cannot use names the file too. A tier the model lacks
is declared in ``[new_tiers]``. A model loaded from a file remembers it
(:attr:`Hardware.source`: its path and sha256), so that a plan folder's report can say
which file its plan was solved on.

>>> hw = load_hardware()
>>> hw.capacity["UB"], hw.spill_cycles(128)
(1024, 406)
"""

from __future__ import annotations

import difflib
import hashlib
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from .checks import TEXT_ENCODING, check_choice, check_integer, check_path
from .errors import HardwareError
from .reprs import cut

__all__ = [
    "Hardware",
    "HardwareFile",
    "load_hardware",
    "default_hardware",
    "hardware_from_table",
    "did_you_mean",
    "spill_traffic",
    "check_capacity",
    "check_name",
    "SUPPORTED_LIMIT",
    "SECTION_KEYS",
]


INT_LIMIT = 2**63  # capacities and spill costs must fit in 63 bits, like every instance integer
# every time and traffic figure a plan of dansched can reach stays below this (docs/rules.md,
# Supported ranges): CP-SAT needs int64 room for sums of a few such figures
SUPPORTED_LIMIT = 2**60


def spill_traffic(size: int, backed: bool) -> int:
    """Extra DDR traffic of one spill of a buffer of ``size`` (docs/rules.md, section 5.3; paper Eq. 28):
    ``Size`` when a COPY_IN uses the buffer (DDR already holds it, the SPILL_OUT writes
    nothing), ``2*Size`` otherwise. The one home of this rule."""
    return int(size) if backed else 2 * int(size)


# the sections of a hardware file and the keys each may set ([tiers] and [new_tiers]: tier names)
SECTION_KEYS: dict[str, tuple[str, ...] | None] = {
    "tiers": None,
    "new_tiers": None,
    "roles": ("peak", "single_residency", "pipes", "spill_out_pipe", "spill_in_pipe", "dma"),
    "spill": ("fixed_cycles", "cycles_per_unit"),
}


@dataclass(frozen=True)
class HardwareFile:
    """The ``--hw`` file a model was loaded from: its path as given and the sha256 of its bytes."""

    path: str
    sha256: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "sha256": self.sha256}


@dataclass(frozen=True)
class Hardware:
    """One NPU core: tier capacities, pipes and the roles of docs/rules.md, section 2.
    ``source`` is the file the model was loaded from (None: the default model, or a model
    built from a table); two models are equal when they describe the same core, whatever
    their source."""

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
    source: HardwareFile | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        """One line: every tier's capacity, the pipes, the spill cost and the file it came from."""
        where = "" if self.source is None else f"; from {self.source.path}"
        return cut(
            f"Hardware({self.capacity_text}; pipes {' '.join(self.pipes)}; spill {self.spill_fixed_cycles} + "
            f"{self.spill_cycles_per_unit}/unit{where})"
        )

    @property
    def capacity_text(self) -> str:
        """Every tier with its capacity: ``L1 4,096, UB 1,024, ...``."""
        return ", ".join(f"{t} {self.capacity[t]:,}" for t in self.tiers)

    def spill_cycles(self, size: int) -> int:
        """Latency of one spill transfer of ``size`` units: alpha + beta * size (paper Eq. 8)."""
        size = check_integer(size, "Hardware.spill_cycles: size", 0)
        return self.spill_fixed_cycles + self.spill_cycles_per_unit * size

    def tier_index(self, name: str) -> int:
        """The index of tier ``name``; :class:`~dansched.errors.ArgumentError` naming the tiers otherwise."""
        if isinstance(name, str) and name in self.tiers:
            return self.tiers.index(name)
        return self.tiers.index(check_choice(name, self.tiers, "Hardware.tier_index: name"))

    def pipe_index(self, name: str) -> int:
        """The index of pipe ``name``; :class:`~dansched.errors.ArgumentError` naming the pipes otherwise."""
        if isinstance(name, str) and name in self.pipes:
            return self.pipes.index(name)
        return self.pipes.index(check_choice(name, self.pipes, "Hardware.pipe_index: name"))

    def to_dict(self) -> dict[str, Any]:
        """The model as the table :func:`hardware_from_table` reads (every capacity, role and
        spill cost; not its source)."""
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


def _non_negative_int(value: Any, what: str, positive: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < (1 if positive else 0):
        need = "a positive" if positive else "a non-negative"
        raise HardwareError(f"hardware: {what} must be {need} integer, got {value!r}")
    if value >= INT_LIMIT:
        raise HardwareError(f"hardware: {what} is {value}, too large: values must fit in 63 bits (< 2**63)")
    return value


def check_capacity(value: Any, tier: str) -> int:
    """A tier's capacity: a positive integer below 2**63 (docs/rules.md, Supported ranges),
    else :class:`HardwareError` naming the tier. The one check of a capacity, whether it
    comes from a hardware file or from ``dansched sweep --set``."""
    return _non_negative_int(value, f"capacity of tier {tier}", positive=True)


def _spill_cost(value: Any, what: str) -> int:
    """A spill cost: a non-negative integer below :data:`SUPPORTED_LIMIT` (one spill alone
    must fit the time horizon of docs/rules.md, Supported ranges)."""
    value = _non_negative_int(value, what)
    if value >= SUPPORTED_LIMIT:
        raise HardwareError(
            f"hardware: {what} is {value}, too large: spill costs must stay below 2**60 = {SUPPORTED_LIMIT} "
            "(docs/rules.md, Supported ranges)"
        )
    return int(value)


NAME_MOST = 64  # characters of a tier's or a pipe's name
NAME_PUNCTUATION = "_-."


def check_name(name: Any, what: str) -> str:
    """A tier's or a pipe's name: 1 to :data:`NAME_MOST` letters, digits, ``_``, ``-`` or
    ``.`` (it names report keys, table columns and ``--set TIER=...``, so no space, no
    ``=``, no control character and never empty), else :class:`HardwareError` saying
    ``what`` (a format of the name: ``"tier {}"``). The one rule of both, whichever
    section names them."""
    if isinstance(name, str) and 0 < len(name) <= NAME_MOST and all(c.isalnum() or c in NAME_PUNCTUATION for c in name):
        return name
    allowed = ", ".join(repr(c) for c in NAME_PUNCTUATION)
    raise HardwareError(
        f"hardware: {what.format(repr(name))} is not a name: use 1 to {NAME_MOST} letters, digits, {allowed}"
    )


def _names(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise HardwareError(f"hardware: {what} must be a list of names, got {value!r}")
    for v in value:
        check_name(v, "{} in " + what)
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
    capacity = {check_name(k, "tier {}"): check_capacity(v, str(k)) for k, v in tiers_tab.items()}
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
        spill_fixed_cycles=_spill_cost(spill.get("fixed_cycles"), "spill.fixed_cycles"),
        spill_cycles_per_unit=_spill_cost(spill.get("cycles_per_unit"), "spill.cycles_per_unit"),
        dma_pipes=dma,
    )


def closest_name(name: str, known: list[str]) -> str | None:
    """The known name closest to ``name`` (case-insensitive ``difflib``), or None."""
    by_lower = {k.lower(): k for k in known}
    hit = difflib.get_close_matches(name.lower(), list(by_lower), n=1)
    return by_lower[hit[0]] if hit else None


def did_you_mean(name: str, known: list[str], shown: str = "{}") -> str:
    """``: did you mean X?`` naming the known name closest to ``name`` (``shown`` formats
    it), else `` (known: A, B, ...)``: the tail of a one-line error about a typo."""
    hit = closest_name(name, known)
    return f": did you mean {shown.format(hit)}?" if hit is not None else f" (known: {', '.join(known)})"


def check_override(override: Mapping[str, Any], base: Mapping[str, Any], where: str) -> None:
    """Raise :class:`HardwareError` (one line) for a key or section of ``override`` that the
    model does not have: an unknown section, an unknown key of ``[roles]`` or ``[spill]``,
    a ``[tiers]`` key that is not a tier of ``base`` (a new tier belongs in ``[new_tiers]``)
    or a ``[new_tiers]`` key that already is one. Each message names the key and the
    closest known name (a typo such as ``UBB = 512`` would otherwise leave UB unchanged)."""
    base_tiers = list(base.get("tiers", {}))
    for key, value in override.items():
        if key not in SECTION_KEYS:
            if isinstance(value, Mapping):
                hint = did_you_mean(key, list(SECTION_KEYS), "[{}]")
                raise HardwareError(f"hardware: {where}: unknown section [{key}]{hint}")
            owner = (
                "tiers" if key in base_tiers else next((s for s, ks in SECTION_KEYS.items() if ks and key in ks), None)
            )
            hint = f": did you mean [{owner}] {key}?" if owner else did_you_mean(key, list(SECTION_KEYS), "[{}]")
            raise HardwareError(f"hardware: {where}: unknown key {key!r} outside any section{hint}")
        if not isinstance(value, Mapping):
            continue  # the type is checked with the merged model
        known = SECTION_KEYS[key]
        for name in value:
            if key == "tiers" and name not in base_tiers:
                hint = did_you_mean(name, base_tiers)
                raise HardwareError(
                    f"hardware: {where}: unknown tier {name!r} in [tiers]{hint} (a tier the model lacks goes in [new_tiers])"
                )
            if key == "new_tiers" and name in base_tiers:
                raise HardwareError(f"hardware: {where}: {name} in [new_tiers] is already a tier: set it in [tiers]")
            if known is not None and name not in known:
                raise HardwareError(
                    f"hardware: {where}: unknown key {name!r} in [{key}]{did_you_mean(name, list(known))}"
                )


def load_hardware(path: str | Path | None = None) -> Hardware:
    """The default model, with the keys of the TOML file at ``path`` (if any) replacing its own
    (:func:`check_override` refuses keys the model does not have; ``[new_tiers]`` adds tiers)."""
    check_path(path, "load_hardware: path", optional=True)
    table = _default_table()
    if path is not None:
        p = Path(path)
        try:
            data = p.read_bytes()
            override = tomllib.loads(data.decode(TEXT_ENCODING))  # a byte-order mark ignored, as everywhere
        except FileNotFoundError:
            raise HardwareError(f"hardware: no such file: {p}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise HardwareError(f"hardware: cannot read {p}: {exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise HardwareError(f"hardware: {p} is not valid TOML: {exc}") from None
        except RecursionError:  # arrays or tables nested thousands deep: no hardware model looks like that
            raise HardwareError(f"hardware: {p} is not a hardware model (TOML nested too deeply)") from None
        check_override(override, table, str(p))
        new_tiers = override.pop("new_tiers", {})
        table = _merge(table, override)
        if isinstance(new_tiers, Mapping) and isinstance(table.get("tiers"), Mapping):
            table["tiers"] = {**table["tiers"], **new_tiers}
        elif not isinstance(new_tiers, Mapping):
            raise HardwareError(f"hardware: {p}: [new_tiers] must be a table of tier capacities")
        try:
            hw = hardware_from_table(table)
        except HardwareError as exc:  # the default model is valid: the file's values are not
            raise HardwareError(f"hardware: {p}: {str(exc).removeprefix('hardware: ')}") from None
        return replace(hw, source=HardwareFile(str(p), hashlib.sha256(data).hexdigest()))
    return hardware_from_table(table)


_DEFAULT: Hardware | None = None


def default_hardware() -> Hardware:
    """The shipped Davinci-like model (cached)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = load_hardware()
    return _DEFAULT
