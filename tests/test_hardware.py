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
    hw = load_hardware(write(tmp_path, "[new_tiers]\nL2 = 65536\n"))
    assert hw.capacity["L2"] == 65536 and "L2" in hw.tiers and hw.capacity["UB"] == 1024


TYPOS = [
    (
        "tier typo",
        "[tiers]\nUBB = 512\n",
        "unknown tier 'UBB' in [tiers]: did you mean UB? (a tier the model lacks goes in [new_tiers])",
    ),
    (
        "tier in lower case",
        "[tiers]\nub = 512\n",
        "unknown tier 'ub' in [tiers]: did you mean UB? (a tier the model lacks goes in [new_tiers])",
    ),
    ("section typo", "[tier]\nUB = 512\n", "unknown section [tier]: did you mean [tiers]?"),
    (
        "spill key typo",
        "[spill]\nfixed_cycle = 7\n",
        "unknown key 'fixed_cycle' in [spill]: did you mean fixed_cycles?",
    ),
    ("roles key typo", '[roles]\npipe = ["MTE2"]\n', "unknown key 'pipe' in [roles]: did you mean pipes?"),
    ("key outside a section", "UB = 512\n", "unknown key 'UB' outside any section: did you mean [tiers] UB?"),
    (
        "unlike anything",
        "[tiers]\nSRAM = 5\n",
        "unknown tier 'SRAM' in [tiers] (known: L1, UB, L0A, L0B, L0C) (a tier the model lacks goes in [new_tiers])",
    ),
    ("new tier already a tier", "[new_tiers]\nUB = 5\n", "UB in [new_tiers] is already a tier: set it in [tiers]"),
    ("new tiers not a table", "new_tiers = 5\n", "[new_tiers] must be a table of tier capacities"),
]


@pytest.mark.parametrize("name,text,message", TYPOS, ids=[t[0] for t in TYPOS])
def test_unknown_keys_and_sections_are_refused_with_a_suggestion(tmp_path, name, text, message):
    """A typo would otherwise leave the default in place (UBB = 512 keeps UB at 1024)."""
    path = write(tmp_path, text)
    with pytest.raises(HardwareError) as info:
        load_hardware(path)
    assert str(info.value) == f"hardware: {path}: {message}"


def test_a_hardware_typo_is_bad_input_at_the_command_line(tmp_path, exp_path):
    """The way a user meets it: exit 2, one line naming the key and the suggestion."""
    import subprocess
    import sys

    hw = write(tmp_path, "[tiers]\nUBB = 512\n")
    out = tmp_path / "plan"
    r = subprocess.run(
        [sys.executable, "-m", "dansched.cli", "solve", str(exp_path), "--hw", str(hw), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and r.stdout == "", r
    assert r.stderr.splitlines() == [
        f"dansched: error: hardware: {hw}: unknown tier 'UBB' in [tiers]: did you mean UB? (a tier the model lacks goes in [new_tiers])"
    ]
    assert not out.exists()


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
    path = write(tmp_path, text)
    with pytest.raises(HardwareError, match=pattern) as info:
        load_hardware(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)  # every message names the file


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


@pytest.mark.parametrize(
    "text", ["x = " + "[" * 10_000 + "]" * 10_000 + "\n", "x = " + "{a = " * 10_000 + "1" + "}" * 10_000 + "\n"]
)
@pytest.mark.parametrize("command", ["info", "sweep"])
def test_a_hardware_file_nested_10000_deep_is_one_line(text, command, tmp_path, exp_path, monkeypatch, capsys):
    from helpers import run_cli

    hw = write(tmp_path, text)
    args = ["info", exp_path] if command == "info" else ["sweep", exp_path, "--quiet", "--out", tmp_path / "out"]
    code, out, err = run_cli(monkeypatch, capsys, *args, "--hw", hw)
    assert (
        code == 2
        and out == ""
        and err.splitlines() == [f"dansched: error: hardware: {hw} is not a hardware model (TOML nested too deeply)"]
    )
