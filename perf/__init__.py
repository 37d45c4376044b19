"""The perf suites: pytest-benchmark checks of the model's own speed (see perf/README.md)."""
