"""``mqlog sweep``: a grid of runs as Spark tasks, Parquet by platform, resumable."""

from __future__ import annotations

import tomllib

import pytest

from mqlog.core.errors import MqlogError
from mqlog.spark.report import render_sweep
from mqlog.spark.sweep import BUILTIN_SWEEPS, cells, load_sweep, read_results, run_sweep

SMALL = """
workload = "putget-pairs"
seeds = [1, 2]
[params]
pairs = 1
messages_per_pair = 20
[grid]
message_size = [500, 4000]
[[config]]
name = "dist"
platform = "distributed"
[config.log]
LogFilePages = 64
[[config]]
name = "zos"
platform = "zos"
[config.log]
ACTIVE_LOG_CIS = 16
[config.sweep]
TWOACTV = ["YES", "NO"]
[plot]
x = "workload.message_size"
y = "logical_bytes"
"""


def test_the_grid_is_the_cross_product_with_stable_keys():
    tasks = cells(tomllib.loads(SMALL))
    # dist: 2 sizes x 2 seeds; zos: 2 TWOACTV x 2 sizes x 2 seeds
    assert len(tasks) == 4 + 8
    assert len({t["key"] for t in tasks}) == len(tasks)
    assert [t["key"] for t in cells(tomllib.loads(SMALL))] == [t["key"] for t in tasks]
    zos = [t for t in tasks if t["name"] == "zos"]
    assert {t["sweep"]["log.TWOACTV"] for t in zos} == {"YES", "NO"}


def test_every_builtin_sweep_is_valid():
    for name in BUILTIN_SWEEPS:
        _, doc = load_sweep(name)
        tasks = cells(doc, origin=name)
        assert tasks and doc["plot"]["y"]


def test_hosts_are_an_axis_of_the_grid_and_of_the_key():
    doc = tomllib.loads('hosts = ["v93-xeon", "v91-xeon"]\n' + SMALL)
    tasks = cells(doc)
    assert len(tasks) == 2 * (4 + 8)
    assert {t["host"] for t in tasks} == {"v93-xeon", "v91-xeon"}
    assert len({t["key"] for t in tasks}) == len(tasks)  # a cell of each host, not one cell twice
    # a sweep naming no hosts runs on --host's, else the default
    assert {t["host"] for t in cells(tomllib.loads(SMALL))} == {"v93-xeon"}
    assert {t["host"] for t in cells(tomllib.loads(SMALL), host="v91-xeon")} == {"v91-xeon"}
    with pytest.raises(MqlogError, match="names its hosts; --host v91-xeon would contradict them"):
        cells(doc, host="v91-xeon")
    with pytest.raises(MqlogError, match="test.toml: hosts: .*unknown host profile 'laptop'"):
        cells(tomllib.loads('hosts = ["laptop"]\n' + SMALL), origin="test.toml")


@pytest.mark.parametrize("broken, words", [
    ('workload = "nope"\n[[config]]\nname = "a"\nplatform = "zos"\n', "nope"),
    ('workload = "putget-pairs"\n[grid]\npairs = 3\n[[config]]\nname = "a"\nplatform = "zos"\n', "grid.pairs"),
    ('workload = "putget-pairs"\n[[config]]\nname = "a"\nplatform = "zos"\n[config.log]\nWRTHRSH = 999\n',
     "WRTHRSH"),
    ('workload = "putget-pairs"\n', "'config'"),
    # misspelt or misplaced tables are refused, not ignored (the sweep would be another one)
    ('workload = "putget-pairs"\n[grids]\npairs = [1, 2]\n[[config]]\nname = "a"\nplatform = "zos"\n',
     "unknown field 'grids'"),
    ('workload = "putget-pairs"\n[[config]]\nname = "a"\nplatform = "zos"\n[config.sweeps]\nLOGLOAD = [200]\n',
     "config 'a': unknown field 'sweeps'"),
    ('workload = "putget-pairs"\n[[config]]\nname = "a"\nplatform = "zos"\nrestart_mode = "legacy"\n',
     "no restart_mode"),
    ('workload = "putget-pairs"\n[[config]]\nname = "a"\nplatform = "zos"\nlog = "TWOACTV=NO"\n',
     "'log' must be a table"),
    ('workload = "putget-pairs"\n[grid]\npairs = [1, 2]\n[[config]]\nname = "a"\nplatform = "zos"\n'
     '[plot]\nx = "workload.pair"\ny = "commits"\n', r"plot.x 'workload.pair' is not a parameter.*workload.pairs"),
    ('workload = "putget-pairs"\n[grid]\npairs = [1, 2]\n[[config]]\nname = "a"\nplatform = "zos"\n'
     '[plot]\nx = "workload.pairs"\n', "plot.y must be a string"),
])
def test_a_malformed_sweep_names_the_field(broken, words):
    with pytest.raises(MqlogError, match=words):
        cells(tomllib.loads(broken), origin="test.toml")


def test_a_sweep_runs_writes_parquet_by_platform_and_resumes(spark, tmp_path):
    tasks = cells(tomllib.loads(SMALL))
    ran, skipped = run_sweep(spark, tasks[:6], tmp_path)
    assert (ran, skipped) == (6, 0)
    assert sorted(p.name for p in (tmp_path / "results").iterdir() if p.is_dir()) == \
        ["platform=distributed", "platform=zos"]
    ran, skipped = run_sweep(spark, tasks, tmp_path)  # the rest only
    assert (ran, skipped) == (6, 6)
    rows = read_results(spark, tmp_path)
    assert len(rows) == 12 and {r["cell_key"] for r in rows} == {t["key"] for t in tasks}
    # bigger messages, more log: the sweep's own question answered
    dist = {(r["sweep"]["workload.message_size"], r["seed"]): r["logical_bytes"] for r in rows
            if r["config_name"] == "dist"}
    assert all(dist[(4000, s)] > dist[(500, s)] for s in (1, 2))
    page = render_sweep(rows, title="t", plot=tomllib.loads(SMALL)["plot"])
    assert "<table id=\"sweep\">" in page and "data:image/png;base64," in page
