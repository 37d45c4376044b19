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

``pytest -n auto`` runs everything, as CI does (the README's test command). While editing:

    .venv/bin/pytest -n auto -m "not slow and not spark and not stress"      # the fast slice

``pytest --store-durations`` records ``tests/durations.json`` from the run (run it on the whole
suite, so every test has its figure).

The README's test command runs the tests on every core (``pytest -n auto``, pytest-xdist), in
whole modules: a module's tests stay on one worker, so a module-scoped fixture (a simulated run
several tests read) is built once, not once a worker; every Spark test goes to one worker, so
the run starts one SparkSession (tests/spark/conftest.py), as the guide asks; and the modules
go out longest first by their recorded durations, so no long module starts last and leaves a
core idle at the end. ``pytest perf --benchmark-enable`` (the perf gate) never runs under xdist:
pytest-benchmark turns timing off in workers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

try:  # the test extra installs pytest-xdist; without it, the run is in one process as before
    from xdist.scheduler import LoadScopeScheduling
except ImportError:  # pragma: no cover - a bare `pip install -e .` plus pytest
    LoadScopeScheduling = None

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
    # Under xdist the controller records (it sees every worker's reports); a worker does not,
    # or each would write the file with its own half.
    worker = hasattr(config, "workerinput")
    _measured = {} if config.getoption("--store-durations") and not worker else None


#: the work unit every Spark test belongs to: one worker, one SparkSession
SPARK_SCOPE = "tests/spark/"
#: what a Spark worker pays before its first test (the JVM and the session), in seconds
SPARK_START_SECONDS = 15.0


def work_unit(nodeid: str) -> str:
    """The unit ``nodeid`` is scheduled in under xdist: its module, or every Spark test."""
    return SPARK_SCOPE if nodeid.startswith(SPARK_SCOPE) else nodeid.split("::", 1)[0]


def longest_first(nodeids: list[str], recorded: dict[str, float]) -> list[str]:
    """``nodeids`` with whole work units ordered by their recorded durations, longest first
    (a unit's tests keep their order; a test not recorded counts as nothing)."""
    cost: dict[str, float] = {}
    first_seen: dict[str, int] = {}
    for node in nodeids:
        unit = work_unit(node)
        cost[unit] = cost.get(unit, 0.0) + recorded.get(node, 0.0)
        first_seen.setdefault(unit, len(first_seen))
    if SPARK_SCOPE in cost:
        cost[SPARK_SCOPE] += SPARK_START_SECONDS
    return sorted(nodeids, key=lambda node: (-cost[work_unit(node)], first_seen[work_unit(node)]))


if LoadScopeScheduling is not None:
    class ModulesLongestFirst(LoadScopeScheduling):
        """xdist's scope scheduling with :func:`work_unit`'s units, handed out longest first."""

        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def schedule(self) -> None:
            if self.collection is None and self.collection_is_completed:
                recorded = _recorded()
                for node, ids in self.registered_collections.items():
                    self.registered_collections[node] = longest_first(ids, recorded)
                self.config.option.loadscopereorder = False  # keep that order
            super().schedule()

    def pytest_xdist_make_scheduler(config, log):
        return ModulesLongestFirst(config, log)


def pytest_runtest_logreport(report):
    if _measured is not None:
        _measured[report.nodeid] = _measured.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session, exitstatus):
    if not _measured:
        return
    merged = _recorded()
    merged.update({node: round(seconds, 3) for node, seconds in _measured.items()})
    DURATIONS.write_text(json.dumps(merged, indent=0, sort_keys=True) + "\n")
