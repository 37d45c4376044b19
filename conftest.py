"""Markers the whole test run shares (``tests/`` and ``perf/``'s smoke runs): which tests need
Spark and which are slow, so that a fast slice can run while editing.

- ``spark``: every test that uses the session's SparkSession (the ``spark`` fixture) or lives
  under ``tests/spark/`` – marked here, so no module has to remember to.
- ``slow``: every test whose recorded duration (``tests/durations.json``: setup, call and
  teardown of the last recorded full run) is at least :data:`SLOW_SECONDS`, and every test
  that shares a module- or session-scoped fixture with such a test (the fixture's setup is
  recorded as the first user's, and would move to the next one left in). A new test is not
  in the file and counts as fast until the file is recorded again.
- ``stress``: the customer-scale stress table (marked in its module).

``pytest`` alone runs everything, as CI does (the README's test command). While editing:

    .venv/bin/pytest -m "not slow and not spark and not stress"      # the fast slice

``pytest --store-durations`` records ``tests/durations.json`` from the run (run it on the whole
suite, so every test has its figure).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

#: where each test's last recorded duration is kept (node id -> seconds)
DURATIONS = Path(__file__).with_name("tests") / "durations.json"
#: a test at least this slow (as recorded) is ``slow``. The file's figures were recorded on the
#: 2-core CI machine while other work shared it, about twice a quiet run's. At 0.5 s the slice
#: took 80 CPU seconds one morning and 141 (2 min 11 s alone) that afternoon, the machine
#: slower by a third: at 0.3 s it keeps about 2,000 of 2,900 tests and stays under two minutes
#: in the slow state too.
SLOW_SECONDS = 0.3


def pytest_addoption(parser):
    parser.addoption("--store-durations", action="store_true", default=False,
                     help=f"record each test's duration (setup + call + teardown) in {DURATIONS.name}")


def _recorded() -> dict[str, float]:
    try:
        return json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        return {}


def _shared_fixtures(item) -> list[tuple[str, str]]:
    """The fixtures ``item`` uses that outlive it (module, class, package or session scope),
    defined by the test tree (not pytest's own), as (where, name)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    return [(defs[-1].baseid, name) for name, defs in info.name2fixturedefs.items()
            if defs and defs[-1].scope != "function" and defs[-1].baseid and name != "spark"]


def pytest_collection_modifyitems(config, items):
    recorded = _recorded()
    slow_fixtures = set()
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()) or "tests/spark/" in item.nodeid:
            item.add_marker(pytest.mark.spark)
        if recorded.get(item.nodeid, 0.0) >= SLOW_SECONDS:
            item.add_marker(pytest.mark.slow)
            slow_fixtures.update(_shared_fixtures(item))
    # A shared fixture is set up by the first test that needs it, and its cost is recorded as
    # that test's: left out as slow, it would hand the cost to the next test, which the slice
    # keeps (28 s of R1's runs landed on a 'fast' test so). A test that shares a fixture with a
    # recorded-slow test is slow too: the slice pays for no fixture a slow test set up.
    for item in items:
        if not item.get_closest_marker("slow") and slow_fixtures.intersection(_shared_fixtures(item)):
            item.add_marker(pytest.mark.slow)


_measured: dict[str, float] | None = None  # a dict only under --store-durations


def pytest_configure(config):
    global _measured
    _measured = {} if config.getoption("--store-durations") else None


def pytest_runtest_logreport(report):
    if _measured is not None:
        _measured[report.nodeid] = _measured.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session, exitstatus):
    if not _measured:
        return
    merged = _recorded()
    merged.update({node: round(seconds, 3) for node, seconds in _measured.items()})
    DURATIONS.write_text(json.dumps(merged, indent=0, sort_keys=True) + "\n")
