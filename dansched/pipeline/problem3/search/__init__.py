"""The makespan search over complete plans (problem 3): moves that change the memory
skeleton, driven by adaptive large-neighbourhood search (:func:`.driver.makespan_search`)."""
