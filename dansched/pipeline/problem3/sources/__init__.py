"""Problem 3's candidate sources: the registry of sources by name (:mod:`.candidates`) and
the engines two of them run, :mod:`.reservation` (a plan that keeps capacity aside for the next tile) and
:mod:`.timed` (the time-driven Stage-2 scheduler with memory)."""
