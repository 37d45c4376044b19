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
                                 load_matrix, results_frame, run_cell)
from mqlog.spark.htmlreport import render

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
    assert len(images) >= 6 and "Log in use over time" in page and "Write size distribution" in page
    series = rows[0]["log_in_use_series"]
    assert series and series == sorted(series) and series[-1][0] <= rows[0]["virtual_s"]
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


def test_a_configuration_may_choose_its_restart_mode(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('[[config]]\nname = "old"\nplatform = "zos"\nrestart_mode = "legacy"\n')
    assert load_matrix(path) == [{"name": "old", "platform": "zos", "log": {}, "restart_mode": "legacy"}]
    path.write_text('[[config]]\nname = "old"\nplatform = "zos"\nrestart_mode = "9.0"\n')
    with pytest.raises(MqlogError, match=r"config\[0\]: field 'restart_mode' must be one of '9.1.1', 'legacy'"):
        load_matrix(path)
    path.write_text('[[config]]\nname = "old"\nplatform = "zos"\nrestart_mode = "legacy"\n')
    out = subprocess.run([sys.executable, "-m", "mqlog", "compare", "--workload", "putget-pairs", "--matrix", str(path),
                          "--out", str(tmp_path / "o")], capture_output=True, text=True, timeout=600)
    assert out.returncode == 2 and "needs --crash" in out.stderr and "Traceback" not in out.stderr


def test_each_configuration_restarts_in_its_own_mode():
    """The same crash, restarted the 9.1.1 way and the way before it: the same
    recovery, and on slow storage the legacy restart's file-system call per replayed record
    and page-at-a-time reads take longer. (run_cell is what each Spark task runs.)"""
    (cell,) = check_matrix([{"name": "d", "platform": "distributed", "log": {}}])
    task = dict(cell, workload="requester-responder", params={"duration": "0.1", "queue_pairs": "4"}, seed=1,
                device="nfs3", crash_at_s=0.08)
    modern, legacy = run_cell(dict(task, restart_mode="9.1.1")), run_cell(dict(task, restart_mode="legacy"))
    assert (modern["restart_mode"], legacy["restart_mode"]) == ("9.1.1", "legacy")
    assert modern["restart_verified"] is True and legacy["restart_verified"] is True
    assert modern["restart_records_replayed"] == legacy["restart_records_replayed"] > 0
    assert legacy["restart_phases"]["replay_queue_files_s"] > 2 * modern["restart_phases"]["replay_queue_files_s"]
    assert legacy["restart_replay_s"] == legacy["restart_phases"]["replay_s"] > modern["restart_replay_s"]
    assert legacy["restart_restart_virtual_s"] > modern["restart_restart_virtual_s"]


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
    # the page redrawn from results.parquet has the job's heading: device, host, parameters
    # (trial s33 defect 5: it had workload and seed only)
    again = subprocess.run([sys.executable, "-m", "mqlog", "report", str(tmp_path), "-o", str(tmp_path / "again.html")],
                           capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    first, redrawn = ((tmp_path / name).read_text() for name in ("report.html", "again.html"))
    heading = re.compile(r"<h1>.*?</h1>\n<p class=\"note\">.*?</p>")
    assert heading.search(redrawn).group() == heading.search(first).group()
    assert ", device ssd, host " in redrawn and "messages_per_pair=20, pairs=1" in redrawn


def test_the_same_crash_for_every_configuration_and_verified_restarts(spark):
    cells = check_matrix([CELLS[0], dict(CELLS[1], restart_mode="legacy")])
    rows = compare(spark, workload="requester-responder",
                   params={"duration": 0.05, "requesters": 2, "responders": 2, "queue_pairs": 2},
                   seed=3, device="ssd", cells=cells, crash_at_s=0.02)
    assert len({r["fingerprint"] for r in rows}) == 1
    for row in rows:
        assert row["crashed"] and row["restart_verified"] is True
        assert row["restart_records_replayed"] > 0 and row["restart_phases"]
    # each configuration restarted as its cell said, the others as compare's default
    assert [r["restart_mode"] for r in rows] == ["9.1.1", "legacy"]
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


@pytest.fixture(scope="module")
def kept(spark, tmp_path_factory):
    """A comparison that left each configuration's run directory, and what the logs hold."""
    from mqlog.spark.contents import log_contents

    runs = tmp_path_factory.mktemp("kept") / "runs"
    params = dict(SMALL, payload="padded-records")
    rows = compare(spark, workload="putget-pairs", params=params, seed=7, device="ssd", cells=check_matrix(CELLS),
                   runs_dir=runs)
    return rows, runs, log_contents(spark, {r["config_name"]: runs / r["config_name"] for r in rows})


def test_kept_runs_are_run_directories_the_tools_read(kept):
    rows, runs, _ = kept
    for row in rows:
        run = runs / row["config_name"]
        assert json.loads((run / "metrics.json").read_text())["physical_bytes"] == row["physical_bytes"]
        out = subprocess.run([sys.executable, "-m", "mqlog", "restart", str(run), "--verify"], capture_output=True, text=True,
                             timeout=300)
        # a clean shutdown's log: restart finds nothing to do and the journal verifies
        assert out.returncode == 0, out.stderr


def test_log_contents_agree_with_the_runs_metrics(kept):
    rows, _, contents = kept
    for row in rows:
        c = contents[row["config_name"]]
        # these logs are big enough to hold everything: every unit of work, every put
        assert c["uows"]["committed"]["uows"] == row["commits"]
        assert sum(v["puts"] for v in c["compression"].values()) == row["messages_put"]
        assert c["by_type"]["PUT"]["records"] == row["messages_put"]
        assert c["bytes"] == sum(v["bytes"] for v in c["by_type"].values()) <= row["logical_bytes"]
        assert c["bad_rows"] == []
    rle = contents["zos-dual-rle"]["compression"]
    assert rle["RLE"]["ratio"] < 0.8  # padded records compress
    assert set(contents["zos-single"]["compression"]) == {"NONE"}


def test_the_report_shows_what_the_logs_hold(kept):
    rows, _, contents = kept
    page = render(rows, title="kept", contents=contents)
    assert 'id="contents"' in page and "Log contents by record type" in page
    table = page.split('id="contents"')[1].split("</table>")[0]
    assert f"{rows[0]['commits']:,}" in table  # committed units of work, as read back
    assert "What each log holds" not in render(rows, title="no logs")


def test_a_failing_task_is_one_line_not_a_worker_traceback(spark, tmp_path):
    blocker = tmp_path / "runs"
    blocker.write_text("a file where the runs directory should be")
    with pytest.raises(MqlogError) as info:
        compare(spark, workload="putget-pairs", params=dict(SMALL), seed=7, device="ssd",
                cells=check_matrix(CELLS[:1]), runs_dir=blocker)
    text = str(info.value)
    assert "cannot write the run's files" in text and "Traceback" not in text and "\n" not in text


def test_the_report_renders_in_headless_chromium(kept, system_package, tmp_path):
    """The page as a browser shows it: Chromium loads it, decodes every image, and the tables
    are there (a check script appended to a copy reports what the browser built). ``.ci/run``
    installs Debian's chromium when neither name below is on PATH."""
    import shutil

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    system_package(browser, "Debian's chromium", "apt-get install chromium")
    rows, _, contents = kept
    page = render(rows, title="render", contents=contents)
    check = """<script>
window.addEventListener("load", () => {
  const imgs = [...document.images];
  const ok = imgs.filter(i => i.complete && i.naturalWidth > 100 && i.naturalHeight > 100).length;
  const tables = [...document.querySelectorAll("table")].map(t => t.id + ":" + t.rows.length).join(",");
  const out = document.createElement("pre");
  out.id = "render-check";
  out.textContent = `images=${imgs.length} decoded=${ok} tables=${tables}`;
  document.body.appendChild(out);
});
</script>"""
    path = tmp_path / "report.html"
    path.write_text(page.replace("</body>", check + "</body>"), encoding="utf-8")
    out = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update", "--disable-sync",
                          f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000", "--dump-dom",
                          path.as_uri()], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    found = re.search(r"images=(\d+) decoded=(\d+) tables=([^<]*)", out.stdout)
    assert found, out.stdout[-2000:]
    images, decoded, tables = int(found[1]), int(found[2]), dict(t.split(":") for t in found[3].split(","))
    assert images >= 7 and decoded == images  # every plot decoded as a real picture
    assert int(tables["comparison"]) > 10 and int(tables["contents"]) > 5


def test_task_errors_convert_only_a_final_mqlog_error():
    """A worker that failed with mqlog's error is one line; a bug raised while handling one
    (a chained traceback) stays a bug."""
    from mqlog.spark.session import task_errors

    class PythonException(Exception):
        pass

    PythonException.__module__ = "pyspark.errors.exceptions.captured"
    ours = ("An exception was thrown from the Python worker.\nTraceback (most recent call last):\n"
            '  File "w.py", line 1, in f\nmqlog.core.errors.LogFormatError: S0000000.LOG, offset 4096: bad page\n')
    with pytest.raises(MqlogError, match="^reading: S0000000.LOG, offset 4096: bad page$"):
        with task_errors("reading"):
            raise PythonException(ours)
    chained = ours + ("\nDuring handling of the above exception, another exception occurred:\n\n"
                      'Traceback (most recent call last):\n  File "w.py", line 2, in g\nKeyError: "oops"\n')
    with pytest.raises(PythonException):
        with task_errors("reading"):
            raise PythonException(chained)


def test_a_configuration_may_set_queue_manager_attributes(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('[[config]]\nname = "big"\nplatform = "zos"\n[config.qmgr]\nmaxumsgs = 500000\n')
    assert load_matrix(path) == [{"name": "big", "platform": "zos", "log": {}, "qmgr": {"MAXUMSGS": 500_000}}]
    path.write_text('[[config]]\nname = "big"\nplatform = "zos"\n[config.qmgr]\nMAXUMSGS = 0\n')
    with pytest.raises(MqlogError, match=r"config\[0\]: qmgr\.MAXUMSGS=0 is not valid: allowed 1 to 999999999"):
        load_matrix(path)
    path.write_text('[[config]]\nname = "big"\nplatform = "zos"\n[config.qmgr]\nMAXMSGL = 5\n')
    with pytest.raises(MqlogError, match=r"qmgr\.MAXMSGL.*MAXUMSGS, MAXDEPTH"):
        load_matrix(path)


def test_compare_crash_end_with_every_unit_in_flight_from_the_command_line(spark, tmp_path):
    """IBM's kill -9 of a settled queue manager on each platform: log-fill's units left open
    (commit=never) are in flight at the crash and every restart backs them out; the queue
    manager attributes come from --set qmgr.X for every configuration, a cell's own [config.qmgr] winning."""
    from click.testing import CliRunner

    from mqlog.cli import cli

    matrix = tmp_path / "m.toml"
    matrix.write_text('[[config]]\nname = "dist"\nplatform = "distributed"\n[config.qmgr]\nMAXUMSGS = 20000\n'
                      '[[config]]\nname = "zos"\nplatform = "zos"\n')
    out = CliRunner().invoke(cli, [
        "compare", "--workload", "log-fill", "--set", "workload.queues=2", "--set", "workload.transactions=3",
        "--set", "workload.messages=3000", "--set", "workload.message_size=64", "--set", "workload.commit=never",
        "--set", "qmgr.MAXDEPTH=42", "--matrix", str(matrix), "--crash", "end", "--out", str(tmp_path / "o"),
        "--master", "local[2]", "--jsonl"])
    assert out.exit_code == 0, out.output
    rows = {r["config_name"]: r for r in map(json.loads, out.stdout.splitlines())}
    assert rows["dist"]["config"]["qmgr"] == {"MAXUMSGS": 20_000, "MAXDEPTH": 42}
    assert rows["zos"]["config"]["qmgr"] == {"MAXUMSGS": 10_000, "MAXDEPTH": 42}
    for row in rows.values():
        assert row["crashed"] is True and row["virtual_s"] == row["workload_s"]
        assert row["restart_uows_backed_out"] == 3 + 2 and row["restart_verified"] is True
        assert row["restart_records_replayed"] > 0


def test_the_table_shows_restart_rows_only_when_a_configuration_restarted():
    from mqlog.spark.compare import table_cells

    plain = {"config_name": "a", "physical_writes": 2, "physical_bytes": 8192}
    labels = [label for label, _ in table_cells([plain, dict(plain, config_name="b")])]
    assert not [label for label in labels if label.startswith("restart")]  # no crash: no "- / -" rows
    crashed = dict(plain, restart_replay_s=0.5, restart_recovery_s=0.25, restart_queues_loaded=3,
                   restart_queues_deferred=7, restart_verified=True)
    cells = dict(table_cells([crashed, plain]))
    assert cells["restart: replay / recovery (s)"] == ["0.500 / 0.250", "- / -"]
    assert cells["restart: queues loaded / deferred"] == ["3 / 7", "- / -"]


# ---------------------------------------------------------------- issue 36

def test_each_configurations_settings_are_in_the_table_and_the_report(rows):
    """Every parameter any configuration set is a line, with each configuration's value (its
    platform's default where it set none): zos-single's TWOARCH=NO is there to see."""
    from mqlog.spark.compare import table_cells

    lines = dict(table_cells(rows))
    assert lines["log.TWOACTV"] == ["-", "YES", "NO"]
    assert lines["log.TWOARCH"] == ["-", "YES", "NO"]
    assert lines["log.COMPLOG"] == ["-", "RLE", "NONE"]
    assert lines["log.LogFilePages"] == ["64", "-", "-"]
    assert "TWOARCH" in render(rows, title="t")


def test_the_default_matrix_varies_one_setting_at_a_time():
    """Each configuration differs from an earlier one of its platform in exactly one effective
    setting, so that a column beside another answers one question."""
    from mqlog.platforms import choose

    seen: dict[str, list[dict]] = {}
    for config in DEFAULT_MATRIX:
        values = choose(config["platform"]).configure(config["log"])
        earlier = seen.setdefault(config["platform"], [])
        if earlier:
            assert min(sum(values[k] != e[k] for k in values) for e in earlier) == 1, config["name"]
        earlier.append(values)


def test_the_report_says_how_far_to_trust_its_figures(rows):
    page = render(rows, title="t")
    trust = page.split('<ul id="provenance">')[1].split("</ul>")[0]
    assert "calibrated (D1, D2)" in trust and "calibrated (Z1, Z4)" in trust and "calibrated (Z2)" in trust
    assert "write and read times on ssd</b>: assumption" in trust


def test_no_shunting_removes_it_and_a_restart_that_cannot_back_out_is_a_result():
    """``--no-shunting`` (guide page 3's "without shunting"): the same z/OS run without its
    shunting policy writes no round; without archiving, restart then finds the long unit of
    work's first records overwritten (5C6-00D1032A). That is the row's result, not a failed
    comparison; with shunting the same crash restarts and is verified. (run_cell is what each
    Spark task runs.)"""
    (cell,) = check_matrix([{"name": "z", "platform": "zos",
                             "log": {"ACTIVE_LOG_CIS": "64", "OFFLOAD": "NO", "TWOARCH": "NO", "LOGLOAD": "1000"}}])
    task = dict(cell, workload="long-uow", params={"duration": "0.3", "background": "2", "long_messages": "100"},
                seed=0, device="ssd", crash_at_s=0.25)
    with_, without = run_cell(task), run_cell(dict(task, shunting=False))
    assert with_["shunts"] > 0 and with_["restart_verified"] is True and with_["restart_failed"] is None
    assert with_["restart_archive_reads"] == 0 and "shunting_removed" not in with_
    assert without["shunts"] == 0 and without["shunting_removed"] is True
    assert without["restart_failed"] == "5C6-00D1032A" and without["restart_verified"] is False
    assert "cannot be backed out" in without["restart_error"]
    assert without["restart_bytes_read"] is None and without["restart_archive_reads"] is None


def test_a_compare_whose_duration_the_set_up_outlasts_says_nothing_was_measured(spark, tmp_path):
    """60 queue pairs defined one forced write at a time on san outlast a 30 ms duration in
    every configuration: no message is put anywhere, and the table is followed by why."""
    from click.testing import CliRunner

    from mqlog.cli import cli

    out = CliRunner().invoke(cli, [
        "compare", "--workload", "requester-responder", "--set", "workload.requesters=60",
        "--set", "workload.queue_pairs=60", "--set", "workload.duration=0.03", "--device", "san",
        "--host", "v91-xeon", "--out", str(tmp_path / "o"), "--master", "local[2]"])
    assert out.exit_code == 0, out.output
    line = next(x for x in out.stdout.splitlines() if x.startswith("NOTHING MEASURED in "))
    assert all(c["name"] in line for c in DEFAULT_MATRIX) and "workload.duration (0.03 s)" in line
    page = (tmp_path / "o" / "report.html").read_text()
    assert f"<strong>NOTHING MEASURED</strong> in {len(DEFAULT_MATRIX)} of {len(DEFAULT_MATRIX)} configurations" in page
