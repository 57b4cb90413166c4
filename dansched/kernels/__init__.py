"""The compiled inner loops of dansched (numba) on flat int64 arrays, one module per concept:

- :mod:`.evaluate`: the evaluator's fast path for a full plan (problems 2 and 3);
- :mod:`.timing`: the cycle simulator (Eqs. 9-10);
- :mod:`.list_schedule`: non-delay list scheduling inside a memory skeleton;
- :mod:`.skeleton`: the memory skeleton's order constraints (Eq. 14);
- :mod:`.belady`: farthest-next-use replacement (the wave search's first ranking);
- :mod:`.min_reload`: two farthest-next-use continuations side by side (the ``min-reload``
  victim rule);
- :mod:`.heads`: heads that respect one pipe (the makespan floors' one-machine bound applied
  recursively) and Jackson's preemptive bound;
- :mod:`.csr`: adjacency lists as CSR arrays and back (plain numpy);
- :mod:`.warm`: compile every kernel once (``dansched warm``);
- :mod:`.jit`: the decorator they share (numba's ``njit`` with the on-disk cache).

Rules every kernel keeps:

- arguments are C-contiguous int64 arrays and Python ints (:func:`.csr.int64_array`), so
  each kernel compiles once; no Python objects inside;
- a kernel calls only kernels of its own module: numba's cache checks the caller's source
  file alone, so a call into another file could run that file's stale code after an edit.
  Callers chain kernels of two modules in Python (``simulate.evaluate`` runs the evaluate
  kernel, then the timing kernel);
- the readable Python code stays the reference: ``simulate.evaluate_reference``, the
  ``_reference`` oracles of the tests; property tests check that both agree.
"""
