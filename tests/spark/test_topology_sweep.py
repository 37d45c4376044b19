"""``mqlog sweep`` over topologies (issue 42): a cell per grid point runs the whole topology in
one task, a row per queue manager, the report a panel per queue manager side by side."""

from __future__ import annotations

import json
import tomllib

import pytest

from mqlog.core.errors import MqlogError
from mqlog.spark.sweep import BUILTIN_SWEEPS, cells, describe_sweep, load_sweep, read_results, run_sweep

SMALL = """
topology = "zos-linux-feed"
[set]
workload.messages_per_putter = 10
workload.putters = 2
[grid]
channel.BATCHSZ = [1, 10]
[plot]
x = "channel.BATCHSZ"
"""


def test_the_grid_crosses_channel_link_and_seeds_and_every_value_is_in_the_key():
    doc = tomllib.loads('topology = "zos-linux"\nseeds = [0, 1]\n[grid]\nchannel.BATCHSZ = [1, 50]\n'
                        '"link.latency_us" = [250, 5000]\n')
    tasks = cells(doc)
    assert len(tasks) == 8 and len({t["key"] for t in tasks}) == 8
    assert [t["key"] for t in cells(doc)] == [t["key"] for t in tasks]  # re-runs find their cells
    assert {(t["sweep"]["channel.BATCHSZ"], t["sweep"]["link.latency_us"], t["seed"]) for t in tasks} == \
        {(b, lat, s) for b in (1, 50) for lat in (250, 5000) for s in (0, 1)}
    # the value reached the topology the task runs, on every channel of it
    one = next(t for t in tasks if t["sweep"]["channel.BATCHSZ"] == 1)
    assert [c["BATCHSZ"] for c in one["document"]["channel"]] == [1, 1]
    summary = describe_sweep(doc, tasks)
    assert [(a["name"], a["values"]) for a in summary["axes"]] == [
        ("channel.BATCHSZ", [1, 50]), ("link.latency_us", [250, 5000]), ("seed", [0, 1])]
    assert summary["swept_text"] == "channel.BATCHSZ 1, 50 × link.latency_us 250, 5000 × seed 0, 1 (8 runs)"
    assert summary["configurations_text"] == "`ZQM1` (zos, dasd); `LQM1` (distributed, ssd)"


def test_the_builtin_topology_sweep_asks_batchsz_and_batchint_on_both_ends():
    _, doc = load_sweep("batchsz-vs-channel-log")
    assert "batchsz-vs-channel-log" in BUILTIN_SWEEPS
    assert {tuple(sorted(t["sweep"].items())) for t in cells(doc)} == {
        (("channel.BATCHINT", i), ("channel.BATCHSZ", b)) for b in (1, 10, 50) for i in (0, 20)}


@pytest.mark.parametrize("text, words", [
    ('topology = "zos-linux"\n[grid]\nchannel.BATCHSIZE = [1]\n', "grid.channel.BATCHSIZE: unknown channel key"),
    ('topology = "zos-linux"\n[grid]\nchannel.BATCHSZ = [1, 0]\n', "grid.channel.BATCHSZ=0"),
    ('topology = "zos-linux"\n[grid]\nqueue.MAXDEPTH = [1]\n', "grid.queue.MAXDEPTH: give workload.X"),
    ('topology = "zos-linux"\n[grid]\nchannel.BATCHSZ = 5\n', "grid.channel.BATCHSZ must be a non-empty list"),
    ('topology = "no-such"\n', "field 'topology'"),
    ('topology = "zos-linux"\n[grid]\nchannel.BATCHSZ = [1]\n[plot]\nx = "channel.BATCHINT"\n', "plot.x"),
    ('topology = "zos-linux"\nworkload = "long-uow"\n', "unknown field 'workload'"),
])
def test_a_bad_topology_sweep_is_refused_before_spark_naming_the_field(text, words):
    with pytest.raises(MqlogError) as caught:
        cells(tomllib.loads(text), origin="s.toml")
    assert words in str(caught.value) and str(caught.value).startswith("s.toml: ")


def test_a_topology_sweep_writes_a_row_per_queue_manager_and_batch_size_cuts_writes_on_both_ends(spark, tmp_path):
    from mqlog.cli.jobs import _sweep_page

    doc = tomllib.loads(SMALL)
    tasks = cells(doc)
    assert run_sweep(spark, tasks[:1], tmp_path) == (1, 0)
    assert run_sweep(spark, tasks, tmp_path) == (1, 1)  # the done cell is skipped
    rows = read_results(spark, tmp_path)
    by = {(r["qmgr"], r["sweep"]["channel.BATCHSZ"]): r for r in rows}
    assert sorted(by) == [("LQM1", 1), ("LQM1", 10), ("ZQM1", 1), ("ZQM1", 10)]
    assert {r["qmgr"]: r["platform"] for r in rows} == {"ZQM1": "zos", "LQM1": "distributed"}
    assert all(r["channel_batchsz"] == r["sweep"]["channel.BATCHSZ"] and r["channel_batchint_ms"] == 0 for r in rows)
    # BATCHSZ 1: a batch (and its sync put, its commit forces) a message; 10: fewer on both ends
    assert by[("ZQM1", 1)]["sent_batches"] == by[("LQM1", 1)]["received_batches"] == 20
    assert by[("ZQM1", 10)]["sent_batches"] < 20 and by[("ZQM1", 10)]["messages_per_batch"] > 1
    for qmgr in ("ZQM1", "LQM1"):
        assert by[(qmgr, 10)]["writes_per_message"] < by[(qmgr, 1)]["writes_per_message"]
        assert by[(qmgr, 10)]["forces"] < by[(qmgr, 1)]["forces"]
    page = _sweep_page(rows, "small", doc)
    assert "a panel per queue manager" in page and page.count("data:image/png;base64,") == 1
    assert "<th>writes/msg</th>" in page and "<th>batches sent</th>" in page


def test_mqlog_sweep_lists_a_topology_sweep_and_refuses_a_bad_one_before_spark(tmp_path, capsys):
    from mqlog.cli import main

    assert main(["sweep", "batchsz-vs-channel-log", "--list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert len(listed["cells"]) == 6 and listed["summary"]["qmgrs"] == ["ZQM1", "LQM1"]
    bad = tmp_path / "bad.toml"
    bad.write_text('topology = "zos-linux-feed"\n[grid]\nchannel.BATCHSZ = [10, 10000]\n')
    # refused before any Spark starts (no --out directory is made): one line naming the field
    assert main(["sweep", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "grid.channel.BATCHSZ=10000" in err and "BATCHSZ" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()
