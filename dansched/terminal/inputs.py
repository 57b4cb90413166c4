"""Reading a command's inputs: the instance on the default hardware, on a --hw file, or on
the hardware a plan folder's report records; their warnings wait in :mod:`.lines`."""

from __future__ import annotations

from pathlib import Path

from ..application.report.lines import hardware_line
from ..errors import PlanFormatError
from ..hardware import Hardware, load_hardware
from ..instance import Instance, load_instance
from .lines import pending_warnings


def _loaded(instance: Path, hw: Hardware) -> Instance:
    """The instance on ``hw``; its warnings (e.g. Cycles costed at 1) are printed when the
    command ends, or folded into its one error line."""
    inst = load_instance(instance, hw)
    pending_warnings.extend(f"{inst.name}: {w}" for w in inst.warnings)
    return inst


def load_inputs(instance: Path, hw_path: Path | None) -> Instance:
    """The instance on the default hardware model, or the one ``--hw`` gives."""
    return _loaded(instance, load_hardware(hw_path))


def load_folder_inputs(instance: Path, folder: Path, hw_path: Path | None) -> Instance:
    """The instance on the hardware the plan folder's report records (``--hw`` is checked
    against it; see :func:`dansched.application.judge.folder_hardware`)."""
    return folder_inputs(instance, folder, hw_path)[0]


def folder_inputs(instance: Path, folder: Path, hw_path: Path | None) -> tuple[Instance, str]:
    """:func:`load_folder_inputs` and the line saying which hardware that is and where it
    came from (:func:`hardware_line`: audit, trace and view print it)."""
    from ..application.judge import folder_hardware
    from ..instance import instance_name

    try:
        found = folder_hardware(folder, instance_name(instance), hw_path)
    except PlanFormatError:  # no plan of the case there: a bad instance is said first
        load_instance(instance, load_hardware(hw_path))
        raise
    if found.warning is not None:
        pending_warnings.append(found.warning)
    return _loaded(instance, found.hardware), hardware_line(found.hardware, found.origin)
