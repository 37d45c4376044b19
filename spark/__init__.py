"""Spark jobs: comparison runs, sweeps and reports (issue 7)."""
