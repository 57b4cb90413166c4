"""Hardware model (docs/rules.md, section 2): the shipped default, --hw overrides, and bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from dansched.errors import HardwareError
from dansched.hardware import Hardware, default_hardware, load_hardware


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "hw.toml"
    p.write_text(text)
    return p


def test_default_matches_spec_table():
    hw = load_hardware()
    assert dict(hw.capacity) == {"L1": 4096, "UB": 1024, "L0A": 256, "L0B": 256, "L0C": 512}
    assert hw.tiers == ("L1", "UB", "L0A", "L0B", "L0C")
    assert set(hw.pipes) == {"MTE1", "MTE2", "MTE3", "FIXP", "CUBE", "VECTOR"}
    assert hw.peak_tiers == ("L1", "UB")
    assert hw.single_residency_tiers == ("L0A", "L0B", "L0C")
    assert hw.spill_out_pipe == "MTE3" and hw.spill_in_pipe == "MTE2"
    assert (hw.spill_fixed_cycles, hw.spill_cycles_per_unit) == (150, 2)
    assert default_hardware() == hw


def test_spill_cycles_is_alpha_plus_beta_size():
    hw = default_hardware()
    assert hw.spill_cycles(0) == 150
    assert hw.spill_cycles(5) == 160
    assert hw.spill_cycles(128) == 2 * 128 + 150


def test_override_replaces_only_the_keys_it_sets(tmp_path):
    hw = load_hardware(write(tmp_path, "[tiers]\nUB = 10\n\n[spill]\nfixed_cycles = 7\n"))
    assert hw.capacity["UB"] == 10
    assert hw.capacity["L1"] == 4096 and hw.capacity["L0C"] == 512
    assert hw.spill_fixed_cycles == 7 and hw.spill_cycles_per_unit == 2
    assert hw.spill_cycles(5) == 17
    assert hw.pipes == default_hardware().pipes


def test_override_lists_are_replaced_whole(tmp_path):
    hw = load_hardware(write(tmp_path, '[roles]\npeak = ["L1"]\n'))
    assert hw.peak_tiers == ("L1",)
    assert hw.single_residency_tiers == ("L0A", "L0B", "L0C")


def test_override_can_add_a_tier(tmp_path):
    hw = load_hardware(write(tmp_path, "[tiers]\nL2 = 65536\n"))
    assert hw.capacity["L2"] == 65536 and "L2" in hw.tiers and hw.capacity["UB"] == 1024


def test_to_dict_round_trips(tmp_path):
    hw = load_hardware(write(tmp_path, "[tiers]\nUB = 10\n"))
    d = hw.to_dict()
    lines = ["[tiers]"] + [f"{k} = {v}" for k, v in d["tiers"].items()]
    lines += ["[roles]"] + [f"{k} = {v!r}".replace("'", '"') for k, v in d["roles"].items()]
    lines += ["[spill]"] + [f"{k} = {v}" for k, v in d["spill"].items()]
    assert load_hardware(write(tmp_path, "\n".join(lines) + "\n")) == hw


BAD = [
    ("not TOML", "[tiers\n", r"is not valid TOML"),
    ("capacity zero", "[tiers]\nUB = 0\n", r"capacity of tier UB must be a positive integer, got 0"),
    ("capacity negative", "[tiers]\nL1 = -4\n", r"capacity of tier L1 must be a positive integer"),
    ("capacity not an integer", '[tiers]\nL1 = "big"\n', r"capacity of tier L1 must be a positive integer"),
    ("capacity float", "[tiers]\nL1 = 1.5\n", r"capacity of tier L1"),
    ("tiers not a table", "tiers = 5\n", r"\[tiers\] must name at least one tier"),
    ("roles not a table", "roles = 5\n", r"\[roles\] must be a table"),
    ("pipes not a list", '[roles]\npipes = "MTE1"\n', r"roles.pipes must be a list of names"),
    ("pipes empty", "[roles]\npipes = []\n", r"roles.pipes must name at least one pipe"),
    ("pipe twice", '[roles]\npipes = ["MTE2", "MTE3", "MTE2"]\n', r"roles.pipes lists a name twice"),
    ("role names unknown tier", '[roles]\npeak = ["L1", "L3"]\n', r"role names tier 'L3'"),
    (
        "spill pipe unknown",
        '[roles]\nspill_out_pipe = "DMA"\n',
        r"roles.spill_out_pipe = 'DMA' is not one of roles.pipes",
    ),
    ("spill-in pipe dropped", '[roles]\npipes = ["MTE3", "CUBE"]\n', r"roles.spill_in_pipe = 'MTE2'"),
    ("spill not a table", "spill = 3\n", r"\[spill\] must be a table"),
    ("alpha negative", "[spill]\nfixed_cycles = -1\n", r"spill.fixed_cycles must be a non-negative integer"),
    ("beta bool", "[spill]\ncycles_per_unit = true\n", r"spill.cycles_per_unit must be a non-negative integer"),
]


@pytest.mark.parametrize("name,text,pattern", BAD, ids=[b[0] for b in BAD])
def test_bad_hardware_file(tmp_path, name, text, pattern):
    with pytest.raises(HardwareError, match=pattern) as info:
        load_hardware(write(tmp_path, text))
    assert "\n" not in str(info.value)


def test_missing_or_unreadable_hardware_file(tmp_path):
    with pytest.raises(HardwareError, match="no such file"):
        load_hardware(tmp_path / "absent.toml")
    with pytest.raises(HardwareError, match="cannot read"):
        load_hardware(tmp_path)  # a directory
    p = tmp_path / "bin.toml"
    p.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(HardwareError, match="cannot read"):
        load_hardware(p)


def test_zero_spill_cost_is_allowed(tmp_path):
    hw = load_hardware(write(tmp_path, "[spill]\nfixed_cycles = 0\ncycles_per_unit = 0\n"))
    assert isinstance(hw, Hardware) and hw.spill_cycles(100) == 0
