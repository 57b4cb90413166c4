"""Problem 3's Stage 3: the screen that ranks the candidates (:mod:`.screen`), a full
Stage-3 run (:mod:`.run`: CPE alternated with the timing-aware rounds :mod:`.resequence`
and :mod:`.relayout`, then the fixed exact windows) and the memory-aware CP-SAT windows
(:mod:`.polish`)."""
