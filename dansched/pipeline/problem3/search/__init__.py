"""The makespan search over complete plans (problem 3): moves that change the memory
skeleton, driven by adaptive large-neighbourhood search (:mod:`.makespan_search`)."""
