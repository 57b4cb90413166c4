"""Room rules (dansched.rooms): which free range a placed or reloaded segment takes, by hand."""

from __future__ import annotations

import pytest

from dansched.addresses import ReleaseMap
from dansched.rooms import ROOM_RULES, choose_room


def _released_map() -> ReleaseMap:
    """A UB of 16 units: [0, 4) released at 9, [4, 8) at 2, [8, 12) at 7, [12, 16) never."""
    rel = ReleaseMap(never=-1)
    rel.release(0, 4, 9)
    rel.release(4, 4, 2)
    rel.release(8, 4, 7)
    return rel


def test_best_fit_takes_the_tightest_range_at_its_lowest_address():
    # free [0, 8) (slack 4 for 4 units) and [12, 16) (slack 0): best fit takes 12
    assert choose_room([(0, 8), (12, 16)], 4, "best-fit") == 12
    assert choose_room([(0, 8), (12, 16)], 5, "best-fit") == 0  # only [0, 8) is long enough
    assert choose_room([(0, 8), (12, 16)], 9, "best-fit") is None


def test_earliest_released_takes_the_room_left_earliest_at_either_end_of_a_range():
    rel = _released_map()
    # candidates: 0 (released 9), 4 (the right end of [0, 8): released 2), 12 (never: -1)
    assert choose_room([(0, 8), (12, 16)], 4, "earliest-released", rel.last_release) == 12
    # without [12, 16): the right end of [0, 8), released at 2, beats its left end (9)
    assert choose_room([(0, 8)], 4, "earliest-released", rel.last_release) == 4
    # a room over two pieces was released when the later of them was: [2, 6) at 9, [4, 8) at 2
    assert rel.last_release(2, 4) == 9


def test_least_late_ties_on_time_then_fits_best():
    rel = _released_map()
    # wanted at 8: [0, 4) is 1 late (9), [4, 8) and [12, 16) are not; best fit among those: 12
    assert choose_room([(0, 8), (12, 16)], 4, "least-late", rel.last_release, want=8) == 12
    # wanted at 1: 0 is 8 late, 4 is 1 late, 12 never held anything
    assert choose_room([(0, 8)], 4, "least-late", rel.last_release, want=1) == 4


@pytest.mark.parametrize("rule", sorted(set(ROOM_RULES) - {"best-fit"}))
def test_time_rules_need_the_release_times(rule):
    with pytest.raises(ValueError, match="release times"):
        choose_room([(0, 8)], 4, rule)
