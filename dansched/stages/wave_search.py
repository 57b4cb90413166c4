"""placeholder"""
from __future__ import annotations
from dataclasses import dataclass

@dataclass(frozen=True)
class WaveParams:
    pass

def wave_search(inst, params, deadline=None):
    return None
