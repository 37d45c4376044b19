"""The fast slice while editing (conftest.py): Spark tests and tests recorded as slow are
left out by ``-m "not slow and not spark and not stress"``; the rest stay in."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAST = "not slow and not spark and not stress"
SLOW = 0.3  # conftest.SLOW_SECONDS


def collected(*args: str) -> list[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 5), done.stdout + done.stderr  # 5: every test deselected
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_the_fast_slice_leaves_out_spark_and_the_recorded_slow_tests():
    recorded = json.loads((ROOT / "tests" / "durations.json").read_text())
    # a Spark module without any marker of its own, and a module of recorded-slow tests
    assert collected("tests/spark/test_sweep.py") and not collected("tests/spark/test_sweep.py", "-m", FAST)
    assert all(recorded.get(n, 0) >= SLOW for n in collected("tests/test_docs_check.py"))
    assert not collected("tests/test_docs_check.py", "-m", FAST)
    # a module of quick unit tests stays whole
    every = collected("tests/zos/test_config.py")
    assert every and collected("tests/zos/test_config.py", "-m", FAST) == every
    # a mixed module keeps exactly its tests below the threshold
    mixed = collected("tests/test_torture.py")
    kept = collected("tests/test_torture.py", "-m", FAST)
    assert kept == [n for n in mixed if recorded.get(n, 0) < SLOW] and 0 < len(kept) < len(mixed)


def test_a_test_that_shares_a_slow_tests_fixture_is_left_out_with_it():
    # R1's module fixture runs the case's restarts (about 10 s, recorded as the first test's);
    # its second test took 0 s itself, but kept alone in the slice it would pay for the fixture
    recorded = json.loads((ROOT / "tests" / "durations.json").read_text())
    every = collected("tests/test_calibration_r1.py")
    assert len(every) >= 2 and any(recorded.get(n, 0) >= SLOW for n in every)
    assert any(recorded.get(n, 1) < SLOW for n in every)  # a quick test that shares the fixture
    assert not collected("tests/test_calibration_r1.py", "-m", FAST)


# -- the README's test command runs under pytest-xdist (conftest.py's scheduling) ----------

def _root_conftest():
    """The root conftest.py as a module of its own (``import conftest`` finds tests/conftest.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mqlog_root_conftest", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


conftest = _root_conftest()


def test_ci_runs_exactly_the_readmes_test_command():
    readme = (ROOT / "README.md").read_text()
    blocks = [b.strip() for b in readme.split("```")[1::2]]
    command = next(b for b in blocks if "'.[test]'" in b)
    assert "pytest -n auto" in command and "pytest perf --benchmark-enable" in command
    ci_lines = [ln for ln in (ROOT / ".ci" / "run").read_text().splitlines() if ln and not ln.startswith("#")]
    assert ci_lines[-1] == command


def test_a_work_unit_is_a_module_and_every_spark_test_is_one():
    assert conftest.work_unit("tests/zos/test_config.py::test_a") == "tests/zos/test_config.py"
    assert conftest.work_unit("tests/core/test_x.py::TestY::test_z[1]") == "tests/core/test_x.py"
    assert conftest.work_unit("tests/spark/test_sweep.py::test_a") == conftest.work_unit(
        "tests/spark/test_compare.py::test_b")
    assert conftest.work_unit("perf/test_opcodes.py::test_a") == "perf/test_opcodes.py"


def test_units_go_out_longest_first_with_their_tests_in_order():
    ids = ["tests/a.py::t1", "tests/a.py::t2", "tests/b.py::t1", "tests/spark/test_s.py::t1",
           "tests/c.py::t1", "tests/c.py::t2", "tests/b.py::t2"]
    recorded = {"tests/a.py::t1": 1.0, "tests/a.py::t2": 1.0, "tests/b.py::t1": 5.0, "tests/c.py::t2": 3.0,
                "tests/spark/test_s.py::t1": 0.5}
    ordered = conftest.longest_first(ids, recorded)
    # Spark: 0.5 s recorded + the session's start; then b (5 s), c (3 s), a (2 s)
    assert ordered == ["tests/spark/test_s.py::t1", "tests/b.py::t1", "tests/b.py::t2",
                       "tests/c.py::t1", "tests/c.py::t2", "tests/a.py::t1", "tests/a.py::t2"]
    # equal costs (nothing recorded) keep the collection's order of units
    assert conftest.longest_first(["tests/x.py::t", "tests/w.py::t"], {}) == ["tests/x.py::t", "tests/w.py::t"]


def test_the_suite_runs_on_two_workers():
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider",
                           "tests/zos/test_config.py", "tests/test_markers.py::test_a_work_unit_is_a_module_and_every_spark_test_is_one"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "bringing up nodes" in done.stdout and " passed" in done.stdout and "failed" not in done.stdout
