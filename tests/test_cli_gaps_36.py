"""Issue 36's smaller bullets, through the real command line: a target rate the run could not
reach is said in its summary; ``print --summary`` lists the incomplete units by default, as
CSQ1LOGP's summary does; ``history`` shows a killed run's workload and each restart's time;
one address notation, labelled, across restart, dmpmqlog, print and scan."""

from __future__ import annotations

import json
import re

from clikit import mqlog, one_line_error

RATE = ("run", "--platform", "distributed", "--workload", "requester-responder", "--set", "workload.duration=0.2")


def test_a_target_rate_the_run_could_not_reach_is_said_in_the_summary():
    slow = mqlog(*RATE, "--set", "workload.rate=5000", "--device", "nfs3")
    assert slow.returncode == 0, slow.stderr
    line = next(x for x in slow.stdout.splitlines() if x.strip().startswith("target rate"))
    assert "5,000 round trips/s, achieved" in line and "NOT REACHED" in line
    reached = json.loads(mqlog(*RATE, "--set", "workload.rate=500", "--json").stdout)["target_rate"]
    assert reached["target_per_s"] == 500 and reached["reached"]
    missed = json.loads(mqlog(*RATE, "--set", "workload.rate=5000", "--device", "nfs3", "--json").stdout)
    assert not missed["target_rate"]["reached"] and missed["target_rate"]["achieved_per_s"] < 1000
    assert json.loads(mqlog(*RATE, "--json").stdout)["target_rate"] is None  # unpaced: no target
    assert "target rate" not in mqlog(*RATE).stdout


def test_print_summary_lists_the_incomplete_units_by_default(tmp_path):
    d = tmp_path / "z"
    assert mqlog("run", "--platform", "zos", "--workload", "long-uow", "--set", "workload.duration=0.1",
                 "--crash-at", "0.05", "--out", d).returncode == 0
    text = mqlog("print", d, "--summary", "only").stdout
    units = [line for line in text.splitlines() if line.startswith("UR URID(")]
    assert units and all("STATUS(INFLIGHT)" in u for u in units), units
    assert "SUMMARY(ONLY) STATUS(INCOMPLETE)" in text
    everything = json.loads(mqlog("print", d, "--summary", "only", "--status", "all", "--json").stdout)
    assert {r["status"] for r in everything["summary"]} == {"INFLIGHT", "COMMITTED"}
    committed = json.loads(mqlog("print", d, "--summary", "only", "--status", "committed", "--json").stdout)
    assert {r["status"] for r in committed["summary"]} == {"COMMITTED"}
    assert committed["counts"] == everything["counts"]  # the counts are of every unit
    one_line_error(mqlog("print", d, "--summary", "only", "--status", "finished"), "--status", "'finished'")


def test_history_shows_a_killed_runs_workload_and_each_restarts_time(tmp_path):
    from test_cli_interrupt import _signalled
    import signal

    d = tmp_path / "run"
    assert _signalled(d, signal.SIGINT)[0] == 130
    restart = json.loads(mqlog("restart", d, "--json").stdout)
    text = mqlog("history", d).stdout.splitlines()
    run_row = next(line.split() for line in text if line.split()[:2] == ["1", "run"])
    assert run_row[2:5] == ["requester-responder", "0", "-"] and "killed" in run_row
    restart_row = next(line.split() for line in text if line.split()[:2] == ["2", "restart"])
    assert restart_row[4] == f"{restart['restart_virtual_s']:.6f}" and "restarted" in restart_row
    assert any(line.strip().startswith(f"restart {restart['restart_virtual_s']:.6f} virtual s: "
                                       f"{restart['records_replayed']:,} records replayed") for line in text)
    entries = json.loads(mqlog("history", d, "--json").stdout)["history"]
    assert entries[1]["restart_s"] == restart["restart_virtual_s"]


def test_restart_json_gives_the_end_of_the_log_in_the_notation_its_messages_use(tmp_path):
    """One address notation, labelled: ``address`` is the byte address, ``address_text`` the
    LSN the console message (AMQ7230I) and dmpmqlog print."""
    fill = ("--workload", "log-fill", "--set", "workload.messages=2000", "--set", "workload.transactions=40",
            "--crash-after-writes", "60")
    for name in ("a", "b"):
        assert mqlog("run", "--platform", "distributed", *fill, "--out", tmp_path / name).returncode == 0
    end = json.loads(mqlog("restart", tmp_path / "a", "--json").stdout)["end_of_log"]
    assert end["address_text"].startswith("<") and isinstance(end["address"], int)
    text = mqlog("restart", tmp_path / "b").stdout
    assert f"at LSN {end['address_text']}" in text


def test_a_metric_has_one_number_format_in_every_column():
    from mqlog.spark.compare import table_cells

    rows = [{"config_name": "a", "platform": "distributed", "virtual_s": 0.013, "write_time_short_us": 52.7},
            {"config_name": "b", "platform": "distributed", "virtual_s": 1234.5, "write_time_short_us": 1127.25}]
    lines = dict(table_cells(rows))
    assert lines["virtual seconds"] == ["0.013", "1,234.500"]
    assert lines["write time short (us)"] == ["52.700", "1,127.250"]


def test_compare_and_sweep_show_progress_inside_each_configuration(tmp_path, monkeypatch, capsys):
    """A task writes the virtual seconds it has done (mqlog.spark.compare.progress_writer); the
    driver prints the configurations still running, with how far each has got."""
    import time

    from mqlog.cli import jobs
    from mqlog.spark.compare import progress_writer

    monkeypatch.setattr(jobs, "INSIDE_EVERY_S", 0.05)
    with jobs.progress_inside(tmp_path, {"dist-linear": "dist-linear", "zos-dual": "zos-dual"}, 1.0) as (inside,
                                                                                                       done, _):
        progress_writer({"name": "dist-linear", "progress_dir": inside})(0.25, 10)
        progress_writer({"name": "zos-dual", "progress_dir": inside})(0.5, 10)
        done.add("zos-dual")
        deadline = time.monotonic() + 60  # a safeguard against a hang, not a timing assertion
        err = ""
        while "running:" not in err:
            err += capsys.readouterr().err
            assert time.monotonic() < deadline
            time.sleep(0.05)
    assert "  running: dist-linear 0.25/1 virtual s" in err and "zos-dual" not in err
    assert not (tmp_path / ".progress").exists()  # nothing left behind in OUT


def test_progress_inside_reaches_the_driver_from_an_executor_that_cannot_see_out(tmp_path, monkeypatch, capsys):
    """A standalone cluster with no shared file system: the executor cannot see OUT/.progress,
    so the task sends its virtual seconds to the driver's host and the port the driver opened,
    and the driver prints them as it does a file's; a report naming no task of the job (a
    path, say) is dropped, and the port is closed after."""
    import socket
    import time

    from mqlog.cli import jobs
    from mqlog.spark.compare import progress_writer

    monkeypatch.setattr(jobs, "INSIDE_EVERY_S", 0.05)
    elsewhere = str(tmp_path / "not-on-this-executor")
    with jobs.progress_inside(tmp_path / "out", {"k1": "dist-linear LogPrimaryFiles=4"}, 2.0,
                              "127.0.0.1") as (inside, done, address):
        assert address.startswith("127.0.0.1:")
        host, port = address.split(":")
        stray = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        stray.sendto(b"../../escaped 1.0", (host, int(port)))
        report = progress_writer({"name": "dist-linear", "key": "k1", "progress_dir": elsewhere,
                                  "progress_addr": address})
        deadline = time.monotonic() + 60  # a safeguard against a hang, not a timing assertion
        err = ""
        while "running:" not in err:
            report(0.75, 10)
            err += capsys.readouterr().err
            assert time.monotonic() < deadline
            time.sleep(0.6)   # a task reports at most twice a wall second
    assert "  running: dist-linear LogPrimaryFiles=4 0.75/2 virtual s" in err
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "out" / ".progress").exists()
    assert not (tmp_path / "not-on-this-executor").exists()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as again:   # the port is the driver's no more
        again.bind(("", int(port)))


def test_a_task_with_neither_a_visible_directory_nor_an_address_reports_nothing(tmp_path):
    from mqlog.spark.compare import progress_writer

    assert progress_writer({"name": "a", "progress_dir": str(tmp_path / "missing")}) is None
    assert progress_writer({"name": "a", "progress_addr": "no-port-here"}) is None


def _lsn_value(text: str) -> int:
    """An LSN <a:b:c:d> as the byte address it names: four 16-bit parts, most significant first."""
    a, b, c, d = (int(p) for p in text.strip("<>").split(":"))
    return ((a * 65536 + b) * 65536 + c) * 65536 + d


def test_scan_writes_addresses_as_dmpmqlog_print_and_restart_do(tmp_path):
    """``scan`` of a distributed extent gives LSNs, as dmpmqlog and AMQ7230I do (it gave bare
    hex); of a z/OS data set RBAs, as CSQ1LOGP does; in --json ``address`` is the byte address
    and ``address_text`` the platform's notation, as in ``restart --json``'s end of the log."""
    fill = ("--workload", "log-fill", "--set", "workload.messages=2000", "--set", "workload.transactions=40",
            "--crash-after-writes", "60")
    assert mqlog("run", "--platform", "distributed", *fill, "--out", tmp_path / "d").returncode == 0
    dumped = json.loads(mqlog("dmpmqlog", tmp_path / "d", "--json").stdout)["records"]
    extent = dumped[0]["extent"]
    scanned = json.loads(mqlog("scan", tmp_path / "d" / "qm" / extent, "--records", "--json").stdout)
    by_lsn = {r["address_text"]: r for r in scanned["record_list"]}
    end = scanned["end"]
    # the extent alone (its last page may be newer in the spare page file, which dmpmqlog reads)
    in_extent = [r for r in dumped if r["extent"] == extent and _lsn_value(r["lsn"]) < end["address"]]
    assert len(in_extent) > 10
    for r in in_extent:   # every record dmpmqlog shows in the extent, at the LSN scan gives it
        assert by_lsn[r["lsn"]]["type"] == r["type"] and by_lsn[r["lsn"]]["address"] == _lsn_value(r["lsn"])
    assert isinstance(end["address"], int) and _lsn_value(end["address_text"]) == end["address"]
    assert scanned["base_address"] == _lsn_value(scanned["base_address_text"]) == 0
    text = mqlog("scan", tmp_path / "d" / "qm" / extent).stdout
    assert f"log ends at LSN {end['address_text']} ({end['address']:016X}): " in text
    restarted = json.loads(mqlog("restart", tmp_path / "d", "--json").stdout)["end_of_log"]
    assert _lsn_value(restarted["address_text"]) == restarted["address"]   # the same two keys, the same meaning

    assert mqlog("run", "--platform", "zos", *fill, "--out", tmp_path / "z").returncode == 0
    printed = json.loads(mqlog("print", tmp_path / "z", "--json").stdout)["records"]
    scanned = json.loads(mqlog("scan", tmp_path / "z" / "qm" / "LOGCOPY1.DS01", "--records", "--json").stdout)
    by_rba = {r["address_text"]: r for r in scanned["record_list"]}
    assert len(printed) > 10
    assert not {"rba", "rba_hex"} & printed[0].keys()   # print labels its pair as every other command does
    for r in printed:   # CSQ1LOGP's RBA is scan's, as hex and as a number
        if r["address_text"] in by_rba:
            assert by_rba[r["address_text"]]["address"] == r["address"] == int(r["address_text"], 16)
    assert sum(r["address_text"] in by_rba for r in printed) > 10
    text = mqlog("scan", tmp_path / "z" / "qm" / "LOGCOPY1.DS01").stdout
    assert f"log ends at RBA {scanned['end']['address_text']}: " in text


def test_a_duration_the_set_up_outlasts_says_nothing_was_measured():
    # 60 queue pairs defined on san under TripleWrite (each definition a forced write and its
    # spare copy) take longer than 30 ms: no message is put, and the summary says why
    short = ("run", "--platform", "distributed", "--workload", "requester-responder", "--set", "workload.requesters=60",
             "--set", "workload.queue_pairs=60", "--device", "san", "--host", "v91-xeon")
    quick = mqlog(*short, "--set", "workload.duration=0.03")
    assert quick.returncode == 0, quick.stderr
    assert re.search(r"messages put / got\s+0 / 0\n", quick.stdout)
    assert "NOTHING MEASURED" in quick.stdout and "workload.duration (0.03 s)" in quick.stdout
    longer = mqlog(*short, "--set", "workload.duration=0.2")
    assert "NOTHING MEASURED" not in longer.stdout and json.loads(mqlog(*short, "--set", "workload.duration=0.2",
                                                                         "--json").stdout)["messages_put"] > 0
