"""``mqlog sweep``: a grid of runs as Spark tasks, Parquet by platform, resumable."""

from __future__ import annotations

import tomllib

import pytest

from mqlog.core.errors import MqlogError
from mqlog.spark.htmlreport import render_sweep
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


# ---------------------------------------------------------------- issue 36: every axis shown

def _row(config, size, device, seed=0, commits=10):
    return {"config_name": config, "sweep": {"workload.message_size": size}, "device": device, "host": "v93-xeon",
            "seed": seed, "commits": commits, "messages_put": commits, "logical_bytes": size * commits}


def test_every_swept_axis_is_a_column_and_numbers_sort_as_numbers():
    """A sweep over two devices: the device is a column (each cell appears once, not twice with
    different numbers), and 16 < 256 < 1024, not 1024 < 16 < 256 as text sorts them."""
    from mqlog.spark.htmlreport import sweep_axes, sweep_cells

    rows = [_row("zos", size, device) for size in (1024, 16, 256) for device in ("ssd", "dasd")]
    assert sweep_axes(rows) == ["configuration", "workload.message_size", "device"]
    head, body = sweep_cells(rows)
    assert head[:3] == ["configuration", "workload.message_size", "device"]
    assert [(r[1], r[2]) for r in body] == [("16", "dasd"), ("16", "ssd"), ("256", "dasd"), ("256", "ssd"),
                                            ("1024", "dasd"), ("1024", "ssd")]
    assert "seed" not in head  # one seed: not an axis this sweep varied


def test_the_plot_draws_one_line_per_value_of_every_other_swept_axis_and_says_what_it_averages():
    rows = [_row("zos", size, device, seed) for size in (16, 256) for device in ("ssd", "dasd") for seed in (0, 1)]
    page = render_sweep(rows, title="t", plot={"x": "workload.message_size", "y": "commits"})
    assert "one line per configuration and device, mean of seeds 0, 1</figcaption>" in page
    assert "<th>device</th>" in page and "<th>seed</th>" in page


def test_mqlog_sweep_prints_the_cells_table_and_every_swept_value_in_its_progress(tmp_path):
    import subprocess
    import sys

    sweep = tmp_path / "s.toml"
    sweep.write_text('workload = "putget-pairs"\ndevices = ["ssd", "san"]\n[params]\npairs = 1\n'
                     'messages_per_pair = 5\n[grid]\nmessage_size = [1024, 16]\n[[config]]\nname = "zos"\n'
                     'platform = "zos"\n[plot]\nx = "workload.message_size"\ny = "logical_bytes"\n')
    out = subprocess.run([sys.executable, "-m", "mqlog", "sweep", str(sweep), "--out", str(tmp_path / "out"),
                          "--master", "local[2]"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    progress = [line for line in out.stderr.splitlines() if line.startswith("  [")]
    assert len(progress) == 4 and all(" device=" in p and " seed=0" in p for p in progress), out.stderr
    assert any("workload.message_size=16 device=san" in p for p in progress)
    table = out.stdout.splitlines()
    assert table[0].split()[:3] == ["configuration", "workload.message_size", "device"]
    assert [line.split()[1:3] for line in table[1:5]] == [["16", "san"], ["16", "ssd"], ["1024", "san"], ["1024", "ssd"]]
    page = (tmp_path / "out" / "report.html").read_text()
    assert "<th>device</th>" in page and "one line per configuration and device" in page


def test_a_sweep_says_which_cells_measured_nothing_on_the_console_and_in_its_reports(spark, tmp_path):
    """60 queue pairs defined on san outlast a 30 ms duration: that cell put nothing, and the
    console, report.html and a report written again by ``mqlog report`` name it and say why;
    the 0.3 s cell measured and is not named."""
    from click.testing import CliRunner

    from mqlog.cli import cli

    sweep = tmp_path / "s.toml"
    sweep.write_text('workload = "requester-responder"\ndevices = ["san"]\nhosts = ["v91-xeon"]\n[params]\n'
                     'requesters = 60\nqueue_pairs = 60\n[grid]\nduration = [0.03, 0.3]\n[[config]]\n'
                     'name = "dist"\nplatform = "distributed"\n')
    out = CliRunner().invoke(cli, ["sweep", str(sweep), "--out", str(tmp_path / "o"), "--master", "local[2]"])
    assert out.exit_code == 0, out.output
    line = next(x for x in out.stdout.splitlines() if x.startswith("NOTHING MEASURED in "))
    assert line.startswith("NOTHING MEASURED in 1 of 2 cells (dist workload.duration=0.03 device=san seed=0)")
    assert "workload.duration (0.03 s)" in line and "0.3 " not in line
    page = (tmp_path / "o" / "report.html").read_text()
    assert "<strong>NOTHING MEASURED</strong> in 1 of 2 cells: dist workload.duration=0.03 device=san seed=0" in page
    again = CliRunner().invoke(cli, ["report", str(tmp_path / "o"), "-o", str(tmp_path / "again.html")])
    assert again.exit_code == 0, again.output
    assert "NOTHING MEASURED</strong> in 1 of 2 cells" in (tmp_path / "again.html").read_text()
