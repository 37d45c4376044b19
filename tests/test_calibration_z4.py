"""Z4-Z6, IBM's z/OS single-log figures by message size, on three of their runs (2, 64 and
256 KB, and dual logging at 2 KB): CI checks that the logger task's mechanisms give IBM's I/O
time per write, commit time and log rate there (``mqlog calibrate --only Z4,Z5,Z6`` runs all
ten sizes; docs/calibration.md has every figure)."""

from __future__ import annotations

import pytest

from mqlog.calibration.cases import figures_of, load_cases, run_one

RUNS = ("s2", "s64", "s256", "d2")


@pytest.fixture(scope="module")
def z4():
    cases = load_cases(only=["Z4", "Z5", "Z6"])
    metrics = {name: run_one(cases["Z4"], name) for name in RUNS}
    return cases, metrics


def _figures(cases, metrics, case_id):
    """The case's figures whose runs are all among those run here."""
    case = cases[case_id]
    keep = [f for f in case["figures"]
            if all(f.get(k) in RUNS for k in ("run", "num", "den") if k in f)]
    return figures_of(dict(case, figures=keep), metrics)


@pytest.mark.parametrize("case_id, expected", [("Z4", 4), ("Z5", 3), ("Z6", 5)])
def test_z4_to_z6_figures_at_2_64_and_256_kb_are_within_ibms_tolerance(z4, case_id, expected):
    cases, metrics = z4
    figures = _figures(cases, metrics, case_id)
    assert len(figures) == expected
    missed = {name: (f["ibm"], f["model"], f["tolerance"]) for name, f in figures.items() if not f["ok"]}
    assert not missed


def test_dual_logging_on_ibms_dasd_leaves_copy_1s_writes_as_they_were(z4):
    """S6: the I/O time per write to LOGCOPY1 is "almost unchanged" with dual logs: the
    device never splits a CI, so copy 2's writes go beside copy 1's and none is held back."""
    _, m = z4
    single = m["s2"]["measured_primary_write_time_us"] / m["s2"]["measured_primary_writes"]
    dual = m["d2"]["measured_primary_write_time_us"] / m["d2"]["measured_primary_writes"]
    assert dual == pytest.approx(single, rel=0.02)
    assert m["d2"]["ordered_writes"] == 0 and m["d2"]["concurrent_writes"] > 0
