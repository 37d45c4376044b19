"""`mqlog run / restart` and the platforms' own commands through the real entry point: distributed
extents, the 80% rule, qmstatus, dump and the media commands; z/OS's RBA limit and utilities;
the run directory's lock and the restart modes."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from clikit import mqlog, one_line_error, sets


def test_distributed_crash_restart_verify_with_real_extents_and_amq_messages(tmp_path):
    out = mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=3",
                "--set", "workload.messages_per_pair=300", "--set", "log.LogFilePages=64",
                "--set", "log.LogWriteIntegrity=SingleWrite", "--crash-after-writes", "400", "--out", tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["crashed"]
    names = sorted(p.name for p in (tmp_path / "qm").iterdir())
    assert "amqhlctl.lfh" in names and "S0000000.LOG" in names
    assert (tmp_path / "qm" / "S0000000.LOG").stat().st_size == 64 * 4096
    restarted = mqlog("restart", tmp_path, "--verify", "--json")
    assert restarted.returncode == 0, restarted.stderr
    report = json.loads(restarted.stdout)
    assert report["committed_missing"] == report["uncommitted_present"] == 0
    assert "AMQ7229I" in (tmp_path / "AMQERR01.LOG").read_text()


def test_distributed_long_uow_is_rolled_back_at_the_80_percent_mark(tmp_path):
    """IBM MQ's documented AMQ7469 behaviour: a long-lived unit of work in a busy log is rolled back once the
    head-to-tail limit is hit; its application is told MQRC_BACKED_OUT (2003); AMQ7469."""
    out = mqlog("run", "--platform", "distributed", "--workload", "long-uow", "--set", "workload.duration=0.3",
                "--set", "workload.background=4", "--set", "log.LogFilePages=64", "--out", tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    m = json.loads(out.stdout)
    assert m["uows_rolled_back"] >= 1 and m["applications_backed_out"] >= 1
    assert m["active_log_used_bytes_max"] < m["active_log_capacity_bytes"]  # it never filled
    assert "AMQ7469" in (tmp_path / "AMQERR01.LOG").read_text()
    restarted = json.loads(mqlog("restart", tmp_path, "--verify", "--json").stdout)
    assert restarted["committed_missing"] == restarted["uncommitted_present"] == 0


@pytest.mark.parametrize("logtype", ["CIRCULAR", "LINEAR"])
def test_qmstatus_and_dump_describe_the_distributed_log_on_disk(tmp_path, logtype):
    out = mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=3",
                "--set", "workload.messages_per_pair=600", "--set", "log.LogFilePages=64",
                "--set", f"log.LogType={logtype}", "--set", "log.LogPrimaryFiles=4", "--out", tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    metrics = json.loads(out.stdout)
    status = json.loads(mqlog("qmstatus", tmp_path, "--json").stdout)
    assert (status["LOGPRIM"], status["LOGSEC"], status["LOGEXTSZ"], status["LOGTYPE"]) == (4, 2, 64, logtype)
    on_disk = {p.name for p in (tmp_path / "qm").iterdir()}
    assert status["CURRLOG"] in on_disk and status["RECLOG"] in on_disk
    assert status["RECLOG"] <= status["CURRLOG"] or logtype == "CIRCULAR"
    assert 0 < status["RECSZ"] <= 4 * 64 * 4096 / 1e6 * 1.25
    assert (status["MEDIALOG"] != "") == (logtype == "LINEAR")
    dump = json.loads(mqlog("dump", tmp_path, "--json").stdout)
    assert (dump["logactive"], dump["loginactive"]) == (4, 2)
    assert set(dump["filenum"]) <= on_disk and dump["FileCount"] == len(dump["filenum"])
    for key in ("staLogicalBytes", "staPhysicalBytes", "staLogicalWrites", "staPhysicalWrites"):
        assert dump[key] == metrics[key.replace("sta", "").replace("Logical", "logical_").replace(
            "Physical", "physical_").lower()]
    assert dump["WriteSizeMax"] == metrics["write_size_max_bytes"] and dump["logBufSz"] == 512
    assert all(name.endswith(".LOG") for name in dump["WorstWriteByFile"])
    text = mqlog("qmstatus", tmp_path)
    assert f"LOGTYPE({logtype})" in text.stdout
    # the resource monitor's DISK/Log figures, in the run's metrics
    assert metrics["platform_log_bytes_max"] == 6 * 64 * 4096
    assert metrics["platform_log_physical_bytes_written"] == metrics["physical_bytes"]
    assert metrics["platform_log_slowest_write_since_restart_us"] == metrics["write_time_max_us"]
    assert 0 < metrics["platform_log_bytes_in_use"] <= metrics["platform_log_bytes_max"]


def test_qmstatus_on_a_reference_run_is_a_one_line_error(tmp_path):
    assert mqlog("run", "--platform", "reference", "--workload", "putget-pairs", *sets("putget-pairs"),
                 "--out", tmp_path).returncode == 0
    one_line_error(mqlog("qmstatus", tmp_path), "distributed")


def test_distributed_prepared_long_uow_is_rolled_forward_not_backed_out(tmp_path):
    """The other half of AMQ7469: a prepared unit of work is re-logged at the head (AMQ7469)
    and stays in doubt; restart finds it still in doubt."""
    out = mqlog("run", "--platform", "distributed", "--workload", "long-uow", "--set", "workload.duration=0.3",
                "--set", "workload.background=4", "--set", "workload.prepared=true",
                "--set", "log.LogFilePages=64", "--out", tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    m = json.loads(out.stdout)
    assert m["uows_rolled_forward"] >= 1 and m["uows_rolled_back"] == 0
    assert "rolled forward" in (tmp_path / "AMQERR01.LOG").read_text()
    restarted = json.loads(mqlog("restart", tmp_path, "--verify", "--json").stdout)
    assert restarted["uows_indoubt"] == 1
    assert restarted["committed_missing"] == restarted["uncommitted_present"] == 0


def test_media_image_archive_and_recovery_of_a_damaged_queue_from_the_command_line(tmp_path):
    out = mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=2",
                "--set", "workload.messages_per_pair=300", "--set", "log.LogFilePages=64",
                "--set", "log.LogType=LINEAR", "--set", "log.LogManagement=Archive", "--out", tmp_path)
    assert out.returncode == 0, out.stderr
    before = json.loads(mqlog("qmstatus", tmp_path, "--json").stdout)
    # the queues were empty at shutdown, and MQ images empty queues at every shutdown
    assert before["MEDIALOG"] == before["RECLOG"] != "S0000000.LOG"
    imaged = mqlog("rcdmqimg", tmp_path, "PAIR.00000", "PAIR.00001", "--json")
    assert imaged.returncode == 0, imaged.stderr
    after = json.loads(imaged.stdout)
    assert set(after["imaged"]) == {"PAIR.00000", "PAIR.00001"} and after["MEDIALOG"] >= before["MEDIALOG"]
    assert "AMQ7468" in (tmp_path / "AMQERR01.LOG").read_text()
    archived = json.loads(mqlog("set-log-archived", tmp_path, "S0000000.LOG", "--json").stdout)
    assert archived["archived"] == ["S0000000.LOG"]
    assert json.loads(mqlog("qmstatus", tmp_path, "--json").stdout)["REUSESZ"] > 0
    # the queue's file is destroyed; restart re-creates it from the image and the log
    (tmp_path / "qm" / "PAIR.00000.mqq").write_bytes(b"\xff" * 2048)
    restarted = mqlog("restart", tmp_path, "--verify", "--json")
    assert restarted.returncode == 0, restarted.stderr
    report = json.loads(restarted.stdout)
    assert report["queues_recreated"] == 1 and report["committed_missing"] == 0
    assert "AMQ7472" in (tmp_path / "AMQERR01.LOG").read_text()
    redone = json.loads(mqlog("rcrmqobj", tmp_path, "PAIR.00001", "--json").stdout)
    assert redone["damaged"] == [] and "PAIR.00001" in redone["recreated"]
    one_line_error(mqlog("rcdmqimg", tmp_path, "NO.SUCH.QUEUE"), "2085", "NO.SUCH.QUEUE")
    one_line_error(mqlog("set-log-archived", tmp_path, "S0000099.LOG"), "not recognized")


@pytest.mark.parametrize("args, words", [
    (["rcdmqimg", "{d}", "PAIR.00000"], ["LINEAR"]),
    (["rcrmqobj", "{d}", "PAIR.00000"], ["LINEAR"]),
    (["set-log-archived", "{d}", "S0000000.LOG"], ["LogManagement=Archive"]),
])
def test_media_commands_on_a_circular_log_give_a_one_line_error(tmp_path, args, words):
    out = mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=2",
                "--set", "workload.messages_per_pair=20", "--out", tmp_path)
    assert out.returncode == 0, out.stderr
    one_line_error(mqlog(*[a.format(d=tmp_path) for a in args]), *words)


def test_zos_rba_limit_ends_the_run_abnormally_and_conversion_lets_it_restart(tmp_path):
    """IBM MQ for z/OS, "Larger log Relative Byte Address": at the 6-byte termination RBA the queue manager ends (00D10257); the files
    are left; after converting the BSDS to 8-byte RBAs it restarts and verifies."""
    out = mqlog("run", "--platform", "zos", "--workload", "putget-pairs", "--set", "workload.pairs=1",
                "--set", "workload.messages_per_pair=200", "--set", "log.RBA8=NO",
                "--set", "log.STARTRBA=0xFFF7FFFF0000", "--set", "log.ACTIVE_LOG_CIS=16", "--out", tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    metrics = json.loads(out.stdout)
    assert "00D10257" in metrics["abnormal_end"] and metrics["crashed"]
    log = (tmp_path / "CSQMSTR.JESMSGLG").read_text()
    assert "CSQJ032E" in log and "00D10257" in log
    converted = mqlog("convert-rba", tmp_path)
    assert converted.returncode == 0 and "8-byte" in converted.stdout
    assert json.loads((tmp_path / "run.json").read_text())["log"]["RBA8"] == "YES"
    restarted = json.loads(mqlog("restart", tmp_path, "--verify", "--json").stdout)
    assert restarted["committed_missing"] == restarted["uncommitted_present"] == 0
    again = mqlog("convert-rba", tmp_path)
    assert again.returncode == 0 and "nothing to do" in again.stdout


def test_zos_utilities_from_the_command_line(tmp_path):
    out = mqlog("run", "--platform", "zos", "--workload", "long-uow", "--set", "workload.duration=0.1",
                "--set", "log.ACTIVE_LOG_CIS=16", "--set", "log.COMPLOG=RLE",
                "--set", "workload.payload=padded-records", "--out", tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    metrics = json.loads(out.stdout)
    assert metrics["shunts"] >= 1 and metrics["platform_QJSTCMPCOMP"] < metrics["platform_QJSTCMPUNCMP"]
    bsds = json.loads(mqlog("bsds", tmp_path, "--json").stdout)
    stats = json.loads(mqlog("stats", tmp_path, "--json").stdout)
    assert stats["QJSTLLCP"] == metrics["checkpoints"] and bsds
    summary = mqlog("print", tmp_path, "--summary", "only")
    assert summary.returncode == 0 and "BACKED OUT" in summary.stdout
    one_line_error(mqlog("print", tmp_path, "--rba-start", "zz"), "zz")
    one_line_error(mqlog("bsds", tmp_path / "qm"), "run.json")


def test_a_run_directory_in_use_is_refused_not_shared(tmp_path):
    """Two commands writing one run directory at once would interleave their writes into one
    log: while one holds DIR, a second run (or restart) into it refuses, and nothing of DIR
    changes; once the first is done, the directory is usable again."""
    from mqlog.rundir import LOCK_FILE, locked

    out = tmp_path / "run"
    with locked(out):
        second = mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", *sets("putget-pairs"),
                       "--out", out)
        assert second.returncode == 2 and "in use by another mqlog command" in second.stderr
        assert f"process {os.getpid()}" in second.stderr and "Traceback" not in second.stderr
        assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE]  # nothing written
    first = mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", *sets("putget-pairs"),
                  "--crash-after-writes", "30", "--out", out)
    assert first.returncode == 0, first.stderr
    with locked(out):
        busy = mqlog("restart", out, "--verify")
        assert busy.returncode == 2 and "in use" in busy.stderr
    assert mqlog("restart", out, "--verify").returncode == 0


def test_restart_mode_chooses_mq_911_or_the_restart_before_it(tmp_path):
    """Restart from MQ 9.1.1 or before it: the user chooses; the legacy restart loads the
    queues recovery needs one by one, pays a file-system call for each replayed record that
    changes a queue and reads the log a page and a file-system call at a time, so on slow
    storage it takes longer, and recovers the same."""
    out = mqlog("run", "--platform", "distributed", "--workload", "requester-responder",
                "--set", "workload.duration=0.2", "--device", "nfs3", "--crash-at", "0.15", "--out", tmp_path / "a")
    assert out.returncode == 0, out.stderr
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    modern = mqlog("restart", tmp_path / "a", "--verify", "--json")
    legacy = mqlog("restart", tmp_path / "b", "--verify", "--json", "--restart-mode", "legacy")
    assert modern.returncode == 0 and legacy.returncode == 0, modern.stderr + legacy.stderr
    modern, legacy = json.loads(modern.stdout), json.loads(legacy.stdout)
    assert legacy["records_replayed"] == modern["records_replayed"] > 0
    assert legacy["queues_loaded"] == modern["queues_loaded"]
    assert legacy["queues_loaded"] + legacy["queues_deferred"] > 1
    # requests and replies got soon after they were put: 9.1.1 holds them in the queue buffers
    # and makes no queue-file call at all, legacy one per record that changes a queue
    assert legacy["restart_phases"]["replay_queue_files_s"] > 0 == modern["restart_phases"]["replay_queue_files_s"]
    assert legacy["restart_phases"]["replay_s"] > 2 * modern["restart_phases"]["replay_s"]
    one_line_error(mqlog("restart", tmp_path / "a", "--restart-mode", "9.2"), "--restart-mode")


def test_the_command_line_offers_exactly_the_restart_modes_the_core_has():
    """The CLI spells the choices out (importing the core at start-up would slow every
    command): they must stay the core's."""
    from mqlog import cli
    from mqlog.core.qm.config import RESTART_MODES

    for command in (cli.restart_cmd, cli.compare_cmd, cli.torture_cmd):
        (option,) = [p for p in command.params if p.name == "restart_mode"]
        assert tuple(option.type.choices) == RESTART_MODES
