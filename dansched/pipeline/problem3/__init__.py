"""Problem 3: the fastest plan within one traffic budget, by a search over complete plans
(order, memory and time together). Unlike Stage 3's CPE (:mod:`dansched.stages.cpe`, which
never changes memory behaviour), everything here may move memory: new victims, reload times,
offsets, memory-event orders.

- :mod:`.loop` -- the six steps: budget, candidates, screen, Stage 3 on the best few, the
  makespan search, the polish;
- :mod:`.candidates` -- the candidate sources by name, with their engines :mod:`.room`
  (room for the next tile) and :mod:`.timed` (the time-driven scheduler with memory);
- :mod:`.screen` -- one list-scheduling pass that ranks the candidates;
- :mod:`.stage3` -- a full Stage-3 run: CPE alternated with the timing-aware rounds
  :mod:`.resequence` (memory events reordered), :mod:`.relayout` (new offsets, late-segment
  moves);
- :mod:`.polish` -- the memory-aware CP-SAT windows along the critical chain;
- :mod:`.search` -- the makespan search: the layout it edits, its moves, the ALNS driver.

The package exports nothing itself: :mod:`dansched.pipeline.options` reads the registry of
:mod:`.candidates` to check the source names it is given, and :mod:`.loop` reads those
options, so the loop is imported by name (``dansched.pipeline.problem3.loop``).
"""
