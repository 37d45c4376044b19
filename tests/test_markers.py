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
