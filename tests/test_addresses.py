"""The addresses of a tier (dansched.addresses): the free ranges of occupied segments and the
address-release map, both kept per range so that their cost follows the segments, not the
capacity. Each is checked against a per-address brute force (a Python list with one cell per
address) on random operation sequences, and by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import SETTINGS

from dansched.addresses import ReleaseMap, free_ranges

BIG = 2**70  # release times beyond 64 bits: the map must stay exact


def runs(free: list[bool]) -> list[tuple[int, int]]:
    """Maximal runs [lo, hi) of True cells, by address (the brute-force free ranges)."""
    out, lo = [], None
    for a, f in enumerate(free + [False]):
        if f and lo is None:
            lo = a
        elif not f and lo is not None:
            out.append((lo, a))
            lo = None
    return out


@st.composite
def _releases(draw):
    cap = draw(st.integers(1, 40))
    ops = []
    for _ in range(draw(st.integers(0, 30))):
        off = draw(st.integers(0, cap - 1))
        size = draw(st.integers(1, cap - off))
        ops.append((off, size, draw(st.sampled_from([0, 1, 7, 7, 30, BIG, BIG + 1]) | st.integers(0, 100))))
    queries = []
    for _ in range(draw(st.integers(1, 20))):
        off = draw(st.integers(0, cap - 1))
        queries.append((off, draw(st.integers(1, cap - off))))
    return cap, ops, queries


@SETTINGS
@given(_releases())
def test_the_release_map_answers_like_a_per_address_array(case):
    cap, ops, queries = case
    rel = ReleaseMap()
    cells = [0] * cap
    for off, size, at in ops:
        rel.release(off, size, at)
        cells[off : off + size] = [at] * size
        for qoff, qsize in queries:
            assert rel.last_release(qoff, qsize) == max(cells[qoff : qoff + qsize])
    pieces = rel.pieces()
    assert pieces[0][0] == 0 and pieces[-1][1] is None and pieces[-1][2] == 0
    assert [at for lo, hi, at in pieces[:-1] for _ in range(hi - lo)] == cells[: pieces[-1][0]]
    assert all(a[2] != b[2] for a, b in zip(pieces, pieces[1:]))  # equal neighbours are merged
    assert len(pieces) <= 2 * len(ops) + 1  # grows with the releases, not the addresses


def test_the_release_map_by_hand_and_on_a_huge_address_space():
    rel = ReleaseMap(never=-1)
    assert rel.last_release(0, 10) == -1
    rel.release(4, 4, 9)  # [4, 8) at 9
    rel.release(6, 4, 3)  # [6, 10) at 3: [4, 6) keeps 9
    assert [rel.last_release(a, 1) for a in range(11)] == [-1] * 4 + [9, 9, 3, 3, 3, 3, -1]
    assert rel.last_release(0, 5) == 9 and rel.last_release(6, 100) == 3
    huge = ReleaseMap()
    huge.release(2**50, 2**45, 7)
    assert huge.last_release(2**50 + 2**44, 10) == 7 and huge.last_release(0, 2**50) == 0
    assert huge.last_release(0, 2**51) == 7
    for bad in ((-1, 4), (3, 0)):
        with pytest.raises(ValueError, match="not a non-empty range"):
            huge.release(*bad, 1)
        with pytest.raises(ValueError, match="not a non-empty range"):
            huge.last_release(*bad)


@SETTINGS
@given(st.integers(1, 40), st.lists(st.tuples(st.integers(0, 39), st.integers(1, 12)), max_size=12))
def test_free_ranges_of_overlapping_segments(cap, segs):
    """Segments that overlap each other (residencies of different times): the free ranges
    are the gaps of their union, in address order."""
    segs = [(off % cap, min(s, cap - off % cap)) for off, s in segs]
    busy = [False] * cap
    for off, s in segs:
        busy[off : off + s] = [True] * s
    assert free_ranges(cap, segs) == runs([not b for b in busy])


def test_free_ranges_by_hand():
    assert free_ranges(10, []) == [(0, 10)]
    assert free_ranges(10, [(0, 10)]) == []
    assert free_ranges(10, [(7, 1), (1, 2), (2, 3)]) == [(0, 1), (5, 7), (8, 10)]
    assert free_ranges(2**41, [(2**40, 2**39)]) == [(0, 2**40), (2**40 + 2**39, 2**41)]
