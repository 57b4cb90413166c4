"""Problem 3's candidate sources: the registry of sources by name (:mod:`.candidates`) and
the engines two of them run, :mod:`.room` (a plan that keeps room for the next tile) and
:mod:`.timed` (the time-driven Stage-2 scheduler with memory)."""
