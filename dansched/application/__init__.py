"""The application layer: judging, auditing, baselines, reports, outputs, benchmarks, sweeps and the solve entry point (docs/architecture.md, "Layers")."""
