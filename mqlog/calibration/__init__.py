"""Calibration against IBM's published figures (``mqlog calibrate``, issue 19).

The cases are data (:mod:`.cases`: a TOML table per case, IBM's figures and the runs that
should reproduce them, the built-ins in ``cases.toml``); the figures come out of the runs'
metrics through a fixed registry of computations; :mod:`.report` prints the table, gives
the JSON and writes calibration.md with its plot. The Spark job that runs one task per case
is :mod:`mqlog.spark.calibrate`.
"""

from mqlog.calibration.cases import COMPUTATIONS, figures_of, load_cases, parse_cases, run_case

__all__ = ["COMPUTATIONS", "figures_of", "load_cases", "parse_cases", "run_case"]
