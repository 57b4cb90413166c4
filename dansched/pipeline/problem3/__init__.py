"""Problem 3: the fastest plan within one traffic budget, by a search over complete plans
(order, memory and time together). Unlike Stage 3's CPE (:mod:`dansched.stages.cpe`, which
never changes memory behaviour), everything here may move memory: new victims, reload times,
offsets, memory-event orders.

Its folders follow the flow, :mod:`.loop` on top:

- :mod:`.loop` -- the six steps: budget, candidates, screen, Stage 3 on the best few, the
  makespan search, the polish;
- :mod:`.sources` -- where the candidates come from: :mod:`.sources.candidates` (the
  sources by name) with their engines :mod:`.sources.reservation` (rooms kept aside: double buffering) and
  :mod:`.sources.timed` (the time-driven scheduler with memory);
- :mod:`.stage3` -- what Stage 3 does to a candidate: :mod:`.stage3.screen` (one
  list-scheduling pass that ranks the candidates), :mod:`.stage3.run` (a full Stage-3 run:
  CPE alternated with the timing-aware rounds :mod:`.stage3.resequence`, memory events
  reordered, and :mod:`.stage3.relayout`, new offsets and late-segment moves) and
  :mod:`.stage3.polish` (the memory-aware CP-SAT windows along the critical chain);
- :mod:`.search` -- the makespan search: the layout it edits, its moves, the ALNS driver.

The package exports nothing itself: :mod:`dansched.pipeline.options` reads the registry of
:mod:`.sources.candidates` to check the source names it is given, and :mod:`.loop` reads
those options, so the loop is imported by name (``dansched.pipeline.problem3.loop``).
"""
