"""``mqlog compare``: one workload against a matrix of configurations as Spark tasks."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys

import pytest

from mqlog.core.errors import MqlogError
from mqlog.spark.compare import (DEFAULT_MATRIX, FingerprintMismatch, check_fingerprints, check_matrix, compare,
                                 load_matrix, results_frame)
from mqlog.spark.report import render

SMALL = {"pairs": 2, "messages_per_pair": 40, "message_size": 2000}
CELLS = [
    {"name": "dist", "platform": "distributed", "log": {"LogFilePages": "64"}},
    {"name": "zos-dual-rle", "platform": "zos", "log": {"COMPLOG": "RLE", "ACTIVE_LOG_CIS": "16"}},
    {"name": "zos-single", "platform": "zos", "log": {"TWOACTV": "NO", "TWOARCH": "NO", "ACTIVE_LOG_CIS": "16"}},
]


@pytest.fixture(scope="module")
def rows(spark):
    params = dict(SMALL, payload="padded-records")
    return compare(spark, workload="putget-pairs", params=params, seed=7, device="ssd", cells=check_matrix(CELLS))


def test_one_row_per_configuration_in_matrix_order_with_one_fingerprint(rows):
    assert [r["config_name"] for r in rows] == ["dist", "zos-dual-rle", "zos-single"]
    assert len({r["fingerprint"] for r in rows}) == 1
    # the same workload: putget-pairs is count-bound, so every configuration moved the same messages
    assert len({(r["messages_put"], r["messages_got"], r["commits"]) for r in rows}) == 1


def test_the_platforms_differences_show_in_the_rows(rows):
    dist, dual, single = rows
    assert dual["platform"] == single["platform"] == "zos" and dist["platform"] == "distributed"
    # dual logging writes every page twice; RLE shrinks padded records
    assert dual["physical_bytes"] > 1.5 * single["physical_bytes"] * (dual["logical_bytes"] / single["logical_bytes"])
    assert dual["compression_out_bytes"] < 0.8 * dual["compression_in_bytes"]
    assert single["compression_in_bytes"] == 0


def test_results_round_trip_through_parquet(spark, rows, tmp_path):
    frame = results_frame(spark, rows)
    frame.write.parquet(str(tmp_path / "results.parquet"))
    back = spark.read.parquet(str(tmp_path / "results.parquet"))
    assert back.count() == 3
    got = {r["config_name"]: r for r in back.collect()}
    assert got["zos-single"]["physical_writes"] == rows[2]["physical_writes"]
    assert json.loads(got["dist"]["config"])["LogFilePages"] == 64
    assert dict(back.dtypes)["logical_bytes"] == "bigint"


def test_the_report_is_one_page_with_the_table_and_the_plots(rows):
    page = render(rows, title="test")
    assert "<table id=\"comparison\">" in page and page.count("<th>") >= 3
    images = re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page)
    assert len(images) >= 5 and "Log in use over time" in page
    series = rows[0]["log_in_use_series"]
    assert series and series == sorted(series) and series[-1][0] <= rows[0]["virtual_seconds"]
    assert all(base64.b64decode(i)[:8] == b"\x89PNG\r\n\x1a\n" for i in images)
    assert "http" not in page.split("<body>")[1]  # self-contained: nothing fetched


def test_a_fingerprint_mismatch_fails_loudly():
    rows = [{"config_name": "a", "fingerprint": "1" * 64}, {"config_name": "b", "fingerprint": "2" * 64}]
    with pytest.raises(FingerprintMismatch, match="a=111111111111, b=222222222222"):
        check_fingerprints(rows)


def test_the_matrix_is_data(tmp_path):
    assert [c["name"] for c in load_matrix("default")] == [c["name"] for c in DEFAULT_MATRIX]
    path = tmp_path / "m.toml"
    path.write_text('[[config]]\nname = "a"\nplatform = "zos"\n[config.log]\nCOMPLOG = "RLE"\n')
    assert load_matrix(path) == [{"name": "a", "platform": "zos", "log": {"COMPLOG": "RLE"}}]
    path.write_text('[[config]]\nname = "a"\nplatform = "zos"\ncolour = "red"\n')
    with pytest.raises(MqlogError, match="colour"):
        load_matrix(path)
    path.write_text('[[config]]\nplatform = "zos"\n')
    with pytest.raises(MqlogError, match="'name'"):
        load_matrix(path)
    with pytest.raises(MqlogError, match="configuration 'bad'.*WRTHRSH"):
        check_matrix([{"name": "bad", "platform": "zos", "log": {"WRTHRSH": "999"}}])


def test_mqlog_compare_from_the_command_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "mqlog", "compare", "--workload", "putget-pairs",
                          "--set", "workload.pairs=1", "--set", "workload.messages_per_pair=20",
                          "--out", str(tmp_path), "--master", "local[2]"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "identical in every configuration" in out.stdout
    for name in (c["name"] for c in DEFAULT_MATRIX):
        assert name in out.stdout
    assert (tmp_path / "report.html").is_file() and (tmp_path / "results.parquet").is_dir()
    assert "[6/6]" in out.stderr  # progress, one line a configuration


def test_the_same_crash_for_every_configuration_and_verified_restarts(spark):
    rows = compare(spark, workload="requester-responder",
                   params={"duration": 0.05, "requesters": 2, "responders": 2, "queue_pairs": 2},
                   seed=3, device="ssd", cells=check_matrix(CELLS[:2]), crash_at_s=0.02)
    assert len({r["fingerprint"] for r in rows}) == 1
    for row in rows:
        assert row["crashed"] and row["restart_verified"] is True
        assert row["restart_records_replayed"] > 0 and row["restart_phases"]
    page = render(rows, title="crash")
    assert "Restart phases" in page and "restart: verified" in page


def test_mqlog_report_rewrites_the_page_from_the_parquet(spark, rows, tmp_path):
    results_frame(spark, rows).write.parquet(str(tmp_path / "results.parquet"))
    out = subprocess.run([sys.executable, "-m", "mqlog", "report", str(tmp_path), "-o", str(tmp_path / "r.html")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "r.html").read_text()
    assert "<table id=\"comparison\">" in page and all(r["config_name"] in page for r in rows)
    empty = subprocess.run([sys.executable, "-m", "mqlog", "report", str(tmp_path / "nothing")],
                           capture_output=True, text=True, timeout=60)
    assert empty.returncode == 2 and "Traceback" not in empty.stderr
