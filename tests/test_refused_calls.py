"""Nothing refused may look like success (issue 22): refused MQI calls are shown by reason code
name and number in `mqlog run`'s summary, kept so in the metrics and in a comparison's table,
are not counted as done, and the queue manager's warnings and errors are echoed on stderr; a
crash point the run never reached is said so, not passed off as a clean run."""

from __future__ import annotations

import json

import pytest
from clikit import mqlog

#: one 100 MiB persistent message on the default (small) distributed log: the put cannot fit
TOO_BIG = ["--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.message_size=104857600",
           "--set", "workload.messages_per_pair=1"]
#: one unit of work of 10,001 puts: the last is past the default MAXUMSGS (10,000)
PAST_MAXUMSGS = ["--workload", "log-fill", "--set", "workload.queues=1", "--set", "workload.transactions=1",
                 "--set", "workload.messages=10001", "--set", "workload.message_size=64",
                 "--set", "workload.commit=never", "--crash-at", "end"]


def test_a_put_the_full_log_refused_is_no_put_and_its_empty_unit_no_commit():
    out = mqlog("run", *TOO_BIG, "--json")
    assert out.returncode == 0, out.stderr
    m = json.loads(out.stdout)  # stdout stays one document: the warnings go to stderr
    assert m["failed_calls"] == {"MQRC_RESOURCE_PROBLEM": {"reason": 2102, "calls": 1}}
    assert m["messages_put"] == 0 and m["commits"] == 0
    assert "AMQ7463: The log for queue manager QM1 is full." in out.stderr.splitlines()


def test_the_run_summary_names_the_refused_calls_and_echoes_the_log_full_message():
    out = mqlog("run", *TOO_BIG)
    assert out.returncode == 0, out.stderr
    lines = {line.split("  ")[1].strip(): line.rsplit("  ", 1)[1].strip()
             for line in out.stdout.splitlines() if line.startswith("  ")}
    assert lines["refused MQI calls"] == "MQRC_RESOURCE_PROBLEM (2102) 1"
    assert lines["messages put / got"] == "0 / 0" and lines["commits / backouts"] == "0 / 0"
    assert "AMQ7463" in out.stderr
    assert not any(line.startswith("AMQ") and line[7:8] == "I" for line in out.stderr.splitlines())


def test_a_unit_stopped_at_maxumsgs_shows_syncpoint_limit_reached_in_the_summary():
    for platform in ("distributed", "zos"):
        out = mqlog("run", "--platform", platform, *PAST_MAXUMSGS)
        assert out.returncode == 0, out.stderr
        assert "refused MQI calls" in out.stdout
        row = next(line for line in out.stdout.splitlines() if "refused MQI calls" in line)
        assert row.split("refused MQI calls")[1].strip() == "MQRC_SYNCPOINT_LIMIT_REACHED (2024) 1", platform


def test_a_clean_run_has_no_refused_row_and_nothing_on_stderr():
    out = mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=2",
                "--set", "workload.messages_per_pair=20")
    assert out.returncode == 0, out.stderr
    assert "refused" not in out.stdout and out.stderr.strip() == ""


def test_a_linear_logs_informational_extent_messages_stay_off_stderr():
    # AMQ7467I/AMQ7468I (the oldest extents restart and media recovery need) are MQ's
    # informational messages: a linear log writes them at every checkpoint, and a clean run
    # must not look as if it warned
    out = mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--set", "log.LogType=LINEAR",
                "--set", "log.LogFilePages=64", "--set", "workload.messages_per_pair=400")
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip() == ""


def test_a_comparisons_table_gets_a_refused_row_only_when_a_configuration_had_one():
    from mqlog.spark.compare import flatten, table_cells

    out = mqlog("run", *TOO_BIG, "--json")
    refused = json.loads(out.stdout)
    clean = json.loads(mqlog("run", "--platform", "distributed", "--workload", "putget-pairs",
                             "--set", "workload.messages_per_pair=5", "--json").stdout)
    refused["config_name"], clean["config_name"] = "small-log", "clean"
    # as compare keeps them in Parquet (nested values as JSON text) and as they come from a run
    for rows in ([flatten(refused), flatten(clean)], [refused, clean]):
        lines = dict(table_cells(rows))
        assert lines["refused MQI calls"] == ["MQRC_RESOURCE_PROBLEM (2102) 1", "none"]
    assert "refused MQI calls" not in dict(table_cells([flatten(clean)]))


def test_a_crash_point_past_the_end_of_the_run_is_said_not_reached():
    small = ["--workload", "putget-pairs", "--set", "workload.messages_per_pair=5"]
    for platform, crash in (("distributed", ["--crash-after-writes", "100000"]), ("zos", ["--crash-at", "50"])):
        out = mqlog("run", "--platform", platform, *small, *crash, "--json")
        assert out.returncode == 0, out.stderr
        m = json.loads(out.stdout)
        assert m["crashed"] is False
        assert "was never reached: the run ended with a controlled shutdown" in m["crash_not_reached"]
        assert "was never reached" in out.stderr
        text = mqlog("run", "--platform", platform, *small, *crash)
        assert "was never reached" in text.stdout.splitlines()[0]  # the summary's state, not "ended with a ..."
    # a crash that happens is no such note
    m = json.loads(mqlog("run", "--platform", "distributed", *small, "--crash-after-writes", "10", "--json").stdout)
    assert m["crashed"] is True and m["crash_not_reached"] is None


def test_a_log_that_simply_ends_at_restart_reads_as_a_clean_end_not_damage(tmp_path, capsys):
    # A crash that leaves the distributed log's last record cut short by space never written
    # (its write was on its way) is the log's normal end after a crash. Which crash point does
    # that moves with the writer (issue 38 pads a grouped write's partial tail, so the old one,
    # 37 writes in, now ends on a record boundary): the crash points are tried in turn, in-process,
    # until one does (9 on this workload); none of those before it may read as damage either.
    from mqlog.cli import main

    for writes in range(1, 41):
        out = tmp_path / f"run{writes}"
        assert main(["run", "--platform", "distributed", "--workload", "putget-pairs",
                     "--set", "workload.messages_per_pair=50", "--crash-after-writes", str(writes),
                     "--out", str(out)]) == 0
        capsys.readouterr()
        assert main(["restart", str(out), "--verify"]) == 0
        said = capsys.readouterr().out.splitlines()
        assert any(x.startswith("verify:") and x.endswith("OK") for x in said), (writes, said)
        line = next((x for x in said if x.startswith("AMQ7230I")), "")
        assert "damaged or torn" not in line, (writes, line)
        if "The log ends" in line:
            break
    else:
        pytest.fail("no crash point in the first 40 writes cut the log's last record short")
    assert "The log ends: end of written log at LSN <0:0:0:" in line and "damaged or torn" not in line
    assert line in (out / "AMQERR01.LOG").read_text().splitlines()


def test_a_record_cut_short_by_a_torn_page_is_still_named_damage():
    from mqlog.core.messages import REFERENCE_CONSOLE
    from mqlog.distributed.messages import console

    class End:
        def __init__(self, problem):
            self.reason, self.problem, self.address = "incomplete", problem, 0x2000
            self.source, self.offset = "S0000000.LOG", 8192

    for problem, damaged in (("checksum mismatch (torn or damaged)", True), ("unwritten (no page header)", False)):
        for text in (console("QM1")("replay-complete", {"records": 5, "end": End(problem)}),
                     REFERENCE_CONSOLE("replay-complete", {"records": 5, "end": End(problem)})):
            assert (problem in text) is damaged, text
            assert ("end of written log at" in text) is not damaged, text


def test_csq1logp_summary_shows_finished_urs_as_committed_and_only_incomplete_ones_with_a_restart_status(tmp_path):
    # log-fill with commit=never leaves its units open at --crash-at end: INFLIGHT; the
    # putget-pairs run before it commits every unit: COMMITTED, never IN COMMIT (which on z/OS
    # is a UR whose phase 2 did not finish)
    done, open_ = tmp_path / "done", tmp_path / "open"
    assert mqlog("run", "--platform", "zos", "--workload", "putget-pairs", "--set", "workload.messages_per_pair=10",
                 "--out", done).returncode == 0
    assert mqlog("run", "--platform", "zos", "--workload", "log-fill", "--set", "workload.queues=1",
                 "--set", "workload.transactions=3", "--set", "workload.messages=300",
                 "--set", "workload.message_size=20000", "--set", "workload.commit=never",
                 "--crash-at", "end", "--out", open_).returncode == 0
    text = mqlog("print", done, "--summary", "only", "--status", "all")  # the default lists incomplete ones only
    assert text.returncode == 0, text.stderr
    urs = [line for line in text.stdout.splitlines() if line.startswith("UR URID(")]
    assert urs and all("STATUS(COMMITTED)" in line for line in urs)
    assert "STATUS(IN COMMIT)" not in text.stdout
    assert "INCOMPLETE UR COUNTS - IN COMMIT=0, INDOUBT=0, INFLIGHT=0, IN BACKOUT=0" in text.stdout
    assert f"COMPLETED UR COUNTS - COMMITTED={len(urs)}, BACKED OUT=0" in text.stdout
    report = json.loads(mqlog("print", open_, "--summary", "only", "--json").stdout)
    # the three open units and log-fill's holder, whose put is never committed either
    assert report["counts"]["INFLIGHT"] == 4 and report["counts"]["IN COMMIT"] == 0
    assert {r["status"] for r in report["summary"]} == {"INFLIGHT"}


def test_a_run_whose_process_was_killed_can_be_restarted_and_is_not_claimed_verified(tmp_path):
    from clikit import kill_mqlog_when, one_line_error

    out = tmp_path / "run"
    # the queue's file exists once the queue manager's first checkpoint and the queue's
    # definition are on disk: from then on there is a queue manager to recover
    kill_mqlog_when(["run", "--platform", "distributed", "--workload", "putget-pairs", "--set",
                     "workload.messages_per_pair=10000000", "--out", out],
                    lambda: (out / "qm" / "PAIR.00000.mqq").exists())
    run = json.loads((out / "run.json").read_text())
    assert run["finished"] is False and run["platform"] == "distributed"
    assert not (out / "journal.json").exists()
    one_line_error(mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--out", out),
                   "ended before it finished", f"mqlog restart {out}")
    verify = mqlog("restart", out, "--verify")
    assert verify.returncode == 1, (verify.stdout, verify.stderr)  # a check asked for and not made is no pass
    assert "Traceback" not in verify.stderr
    assert any(line.startswith("AMQ8003I") for line in verify.stdout.splitlines())  # the queue manager started
    assert "verify: NOT VERIFIED: a run's process ended before it finished" in verify.stdout
    assert "OK" not in verify.stdout.split("verify:")[1]
    as_json = json.loads(mqlog("restart", out, "--verify", "--json").stdout)
    assert "journal.json" in as_json["not_verified"] and "committed_missing" not in as_json
    assert mqlog("restart", out).returncode == 0
    # recovered now (run.json says so), but still no run's to reuse, and still not verifiable
    one_line_error(mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--out", out),
                   "already holds a run")
    assert "NOT VERIFIED" in mqlog("restart", out, "--verify").stdout


def test_a_warning_written_many_times_is_echoed_once_with_its_count_and_informational_ones_not(capsys):
    # (z/OS writes CSQJ111A at every call that waits for a full log: thousands in a long run)
    from mqlog.cli.running import _echo_warnings

    full = "CSQJ111A CSQ1 OUT OF SPACE IN ACTIVE LOG DATA SETS"
    _echo_warnings(["CSQJ001I CSQ1 CURRENT COPY 1 ACTIVE LOG DATA SET IS DSNAME=A", full, full,
                    "AMQ7463: The log for queue manager QM1 is full.\nAMQ5037I: started", full,
                    "Restart complete in 0.1 virtual seconds"])
    assert capsys.readouterr().err.splitlines() == [f"{full}  [3 times]",
                                                    "AMQ7463: The log for queue manager QM1 is full."]
