"""Every log setting a restart accepts takes effect, through the command line (issue 22): after
``mqlog restart DIR --set log.X=V`` (or ``run --in DIR --set log.X=V``, or ``--device`` /
``--host``) the queue manager behaves as the new value implies – archives written, log files
reused, pages written, time taken – which each test shows against a copy of the same
directory carried on without the change. (LogPrimaryFiles and OUTBUFF are in
test_restart_settings.py.) Every restart is verified against the application journal."""

from __future__ import annotations

import json
import shutil

import pytest

from clikit import mqlog
from test_restart_settings import ok, run_json, verified

#: a z/OS queue manager with tiny active data sets (64 KiB): a few hundred messages offload
#: dozens of them
ZOS_SMALL = ["--platform", "zos", "--workload", "putget", "--set", "workload.apps=2",
             "--set", "workload.messages=200", "--set", "log.ACTIVE_LOG_CIS=16"]


def carried_on(directory, *more):
    """``run --in DIR [more] --json``: the carried-on run's metrics (its restart verified)."""
    return json.loads(ok(mqlog("run", "--in", directory, *more, "--json")).stdout)


def bsds(directory):
    return json.loads(ok(mqlog("bsds", directory, "--json")).stdout)


def archive_names(report, copy):
    return {row["seq"]: row["dsname"] for row in report["archives"].get(str(copy), [])}


@pytest.fixture(scope="module")
def zos_run(tmp_path_factory):
    """A z/OS run that offloaded many archives, copied afresh for each test."""
    d = tmp_path_factory.mktemp("zos") / "base"
    ok(mqlog("run", *ZOS_SMALL, "--out", d))
    return d


@pytest.fixture
def zos_dir(zos_run, tmp_path):
    return shutil.copytree(zos_run, tmp_path / "qm")


def test_single_archive_copies_after_a_restart_with_twoarch_no(zos_dir):
    before = bsds(zos_dir)
    last = max(archive_names(before, 1))
    assert archive_names(before, 2)  # dual archiving until now
    assert verified(zos_dir, "--set", "log.twoarch=NO")["changed"] == {"TWOARCH": ["YES", "NO"]}
    carried_on(zos_dir)
    after = bsds(zos_dir)
    copy1, copy2 = archive_names(after, 1), archive_names(after, 2)
    new = [seq for seq in copy1 if seq > last]
    assert new, "the carried-on run offloaded"
    # the offloads since the restart wrote one copy; those before it keep their two
    assert max(copy2) == last and set(copy2) == set(archive_names(before, 2))
    qm = zos_dir / "qm"
    assert all((qm / copy1[seq]).is_file() for seq in new)
    assert not any((qm / copy1[seq].replace("CSQARC1", "CSQARC2")).exists() for seq in new)
    verified(zos_dir)


def test_new_archive_names_after_a_restart_with_another_arcpfx1(zos_dir):
    last = max(archive_names(bsds(zos_dir), 1))
    verified(zos_dir, "--set", "log.ARCPFX1=mq.qm1.arc1")
    carried_on(zos_dir)
    copy1 = archive_names(bsds(zos_dir), 1)
    assert max(copy1) > last
    qm = zos_dir / "qm"
    for seq, name in copy1.items():
        # archives offloaded from now on are named with the new prefix, the earlier ones keep theirs
        assert name.startswith("MQ.QM1.ARC1.A" if seq > last else "CSQARC1.A"), (seq, name)
        assert (qm / name).is_file()
    # the carried-on run's restart reads its log (from the old archives and the new) and verifies
    verified(zos_dir)


def test_archive_prefixes_given_at_creation_name_the_archives(tmp_path):
    d = tmp_path / "qm"
    ok(mqlog("run", *ZOS_SMALL, "--set", "log.ARCPFX1=MQ.ARC1", "--set", "log.ARCPFX2=MQ.ARC2", "--out", d))
    report = bsds(d)
    for copy in (1, 2):
        names = archive_names(report, copy)
        assert names and all(n.startswith(f"MQ.ARC{copy}.A") for n in names.values())
        assert all((d / "qm" / n).is_file() for n in names.values())
    assert not list((d / "qm").glob("CSQARC*"))


def test_fewer_archives_recorded_after_a_restart_with_a_smaller_maxarch(zos_dir):
    before = bsds(zos_dir)
    assert before["archives_recorded"] > 10
    verified(zos_dir, "--set", "log.MAXARCH=10")
    carried_on(zos_dir)
    after = bsds(zos_dir)
    # MAXARCH applies at the next offload: the oldest entries dropped out of the BSDS
    assert after["max_arch"] == 10 and after["archives_recorded"] == 10
    assert min(archive_names(after, 1)) > max(archive_names(before, 1)) - 10
    verified(zos_dir)


def test_nothing_archived_after_a_restart_with_offload_no(zos_dir):
    before = bsds(zos_dir)
    verified(zos_dir, "--set", "log.OFFLOAD=NO")
    out = carried_on(zos_dir)
    after = bsds(zos_dir)
    assert out["log_switches"] > 0 and out["archive_offloads"] == 0
    # the log wrapped over its active data sets without archiving them
    assert after["high_rba_written"] > before["high_rba_written"] + 3 * after["data_set_bytes"]
    assert archive_names(after, 1) == archive_names(before, 1) and not after["offload"]
    assert all(row["archive_seq"] is None for row in after["active"]["1"])


# -- distributed ------------------------------------------------------------------------------

DIST_SMALL = ["--platform", "distributed", "--set", "log.LogFilePages=64"]
LONG_UOW = ["--workload", "long-uow", "--set", "workload.background=2", "--set", "workload.duration=0.05"]


def test_more_secondary_files_at_restart_keep_a_long_unit_of_work(tmp_path):
    d = tmp_path / "qm"
    ok(mqlog("run", *DIST_SMALL, *LONG_UOW, "--set", "log.LogPrimaryFiles=2", "--set", "log.LogSecondaryFiles=1",
             "--out", d))
    same = shutil.copytree(d, tmp_path / "same")
    kept = carried_on(same)
    # How many secondaries hold the carried-on run's 0.05 s of log moves with the writer: on
    # issue 38's branch eight fill too (10 switches, the long unit rolled back) and twelve do
    # not; the fewest of a few that do not fill is used, and one must be found.
    for secondaries in (8, 12, 16, 24):
        grown_dir = shutil.copytree(d, tmp_path / f"grown{secondaries}")
        grown = carried_on(grown_dir, "--set", f"log.logsecondaryfiles={secondaries}")
        if grown["log_full_events"] == 0:
            break
    else:
        pytest.fail("the log filled with up to 24 secondary files")
    assert grown["restart"]["changed"] == {"LogSecondaryFiles": [1, secondaries]}
    # with one secondary the log fills and the long unit of work is rolled back (AMQ7469);
    # with enough the log grows into secondaries instead, and the long unit of work is kept
    assert kept["uows_rolled_back"] == 1 and kept["log_full_events"] >= 1
    assert grown["uows_rolled_back"] == 0
    assert len(list((grown_dir / "qm").glob("S*.LOG"))) > len(list((same / "qm").glob("S*.LOG")))
    assert json.loads(ok(mqlog("qmstatus", grown_dir, "--json")).stdout)["LOGSEC"] == secondaries
    verified(grown_dir)


@pytest.fixture(scope="module")
def linear_run(tmp_path_factory):
    """A linear log (LogManagement Manual) of small files, many of them filled."""
    d = tmp_path_factory.mktemp("linear") / "base"
    ok(mqlog("run", *DIST_SMALL, "--workload", "putget", "--set", "workload.apps=2", "--set", "workload.messages=200",
             "--set", "log.LogType=LINEAR", "--out", d))
    return d


def _status(directory):
    return json.loads(ok(mqlog("qmstatus", directory, "--json")).stdout)


@pytest.mark.parametrize("management", ["Manual", "Automatic", "Archive"])
def test_log_management_changed_at_restart_decides_what_happens_to_inactive_files(management, linear_run, tmp_path):
    # The carried-on run may reuse the base run's extents before the one restart needs from (all
    # of them, once management is no longer Manual); to leave some reusable it must switch
    # extents no more times than there are of them (one switch goes to the extent formatted
    # ahead). Its length moves with the writer: since issue 38 the base workload again takes 8
    # switches against 7 such extents (main: 7), so the carried-on run's messages go 200, 150,
    # 100 until it fits, which must happen.
    base = _status(linear_run)
    assert base["RECLOG"] == base["MEDIALOG"] == base["CURRLOG"]
    extents_before = int(base["RECLOG"][1:8])
    for messages in (200, 150, 100):
        d = shutil.copytree(linear_run, tmp_path / f"qm{messages}")
        out = carried_on(d, "--set", f"log.LogManagement={management.lower()}",
                         "--set", f"workload.messages={messages}")
        if out["log_switches"] <= extents_before:
            break
    else:
        pytest.fail(f"the carried-on run switched extents more than {extents_before} times at 100 messages")
    assert out["restart"]["changed"] == ({} if management == "Manual" else {"LogManagement": ["Manual", management]})
    status, files = _status(d), len(list((d / "qm").glob("S*.LOG")))
    if management == "Manual":  # left to the administrator: new files, none reusable or to archive
        assert status["REUSESZ"] == status["ARCHSZ"] == 0 and status["ARCHLOG"] == ""
        assert files > len(list((linear_run / "qm").glob("S*.LOG")))
    elif management == "Automatic":  # reused: no more files than before, some reusable
        assert status["REUSESZ"] > 0 and status["ARCHSZ"] == 0
        assert files == len(list((linear_run / "qm").glob("S*.LOG")))
    else:  # reused once archived: the inactive files wait for SET LOG ARCHIVED
        assert status["ARCHSZ"] > 0 and status["ARCHLOG"] == "S0000000.LOG" and status["REUSESZ"] == 0
    verified(d)


def test_single_write_at_restart_stops_writing_partial_pages_elsewhere_first(tmp_path):
    """A queue manager that ran with TripleWrite restarts with SingleWrite: its restart must
    still find the last partial page where TripleWrite left its newest copy (the spare file),
    and from then on partial pages are rewritten in place only."""
    # One application: each write carries one force and continues the partial page the last one
    # left, so TripleWrite has a rewrite to protect in every cycle. (With two, since issue 38
    # most writes carry both applications' forces and pad their partial page instead: 4
    # rewrites in 64 writes, TripleWrite 3 writes more than SingleWrite.)
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", "distributed", "--workload", "putget", "--set", "workload.apps=1",
             "--set", "workload.messages=30", "--out", d))
    same = shutil.copytree(d, tmp_path / "same")
    triple = carried_on(same)
    single = carried_on(d, "--set", "log.LogWriteIntegrity=SingleWrite")
    assert single["restart"]["changed"] == {"LogWriteIntegrity": ["TripleWrite", "SingleWrite"]}
    assert single["restart"]["committed_missing"] == 0
    assert triple["partial_page_writes"] > 0 and single["partial_page_writes"] > 0
    assert triple["partial_page_rewrites"] > triple["partial_page_writes"] // 2
    # the same work; TripleWrite adds a write to the spare file of each partial page it rewrites
    assert single["forces"] == triple["forces"] and single["log_records"] == triple["log_records"]
    assert single["physical_writes"] < triple["physical_writes"] - single["partial_page_writes"] // 2
    verified(d)
    verified(same)


def test_a_slower_device_at_restart_makes_the_next_run_write_slower(tmp_path):
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", "distributed", "--workload", "putget", "--set", "workload.apps=2",
             "--set", "workload.messages=30", "--out", d))
    same = shutil.copytree(d, tmp_path / "same")
    verified(d, "--device", "nfs3")
    slow, fast = carried_on(d), carried_on(same)
    assert slow["device"] == "nfs3" and fast["device"] == "ssd"
    # nfs3's 2.4 ms a write against the SSD's 50 µs
    assert slow["write_time_short_us"] > 2000 > 100 > fast["write_time_short_us"]
    assert slow["virtual_s"] > fast["virtual_s"]


def test_another_host_at_restart_changes_the_restart_and_the_next_run(tmp_path):
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", "distributed", *LONG_UOW, "--crash-at", "0.03", "--out", d))
    same = shutil.copytree(d, tmp_path / "same")
    old = verified(d, "--host", "v91-xeon")
    new = verified(same)
    assert old["changed"] == {"host": ["v93-xeon", "v91-xeon"]} and new["changed"] == {}
    # the older host's CPU replays each record in 10 µs, not 5
    assert old["restart_phases"]["replay_cpu_s"] > new["restart_phases"]["replay_cpu_s"]
    slow, fast = carried_on(d), carried_on(same)
    assert slow["host"] == "v91-xeon" and slow["host_cores"] == 24 and fast["host_cores"] == 32
    assert slow["cpu_busy_us"] > fast["cpu_busy_us"]
    assert run_json(d)["host"] == "v91-xeon"


# -- the rest of what a restart accepts ------------------------------------------------------

@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    """Run directories to carry on from, made once: z/OS with tiny data sets (many offloads),
    z/OS with the default ones (few switches), distributed."""
    root = tmp_path_factory.mktemp("bases")
    putget = ["--workload", "putget", "--set", "workload.apps=2", "--set", "workload.messages=200"]
    for name, args in (("zos-small", ZOS_SMALL), ("zos", ["--platform", "zos", *putget]),
                       ("distributed", ["--platform", "distributed", *putget])):
        ok(mqlog("run", *args, "--out", root / name))
    return root


@pytest.mark.parametrize("base, changed, unchanged, metric, more", [
    # COMPLOG(RLE) from the restart on: persistent message data is compressed
    ("zos-small", ["log.COMPLOG=RLE"], [], "compression_in_bytes", True),
    # COMPLOG(ANY) may try zstd too once ZSTD_IN_ANY says so (the model's own setting)
    ("zos-small", ["log.COMPLOG=ANY", "log.ZSTD_IN_ANY=YES"], ["log.COMPLOG=ANY"], "platform_mqlog_zstd_cmpreq", True),
    # a write starts with fewer full CIs in the buffer: more writes. One application putting
    # 8,000-byte messages appends two full CIs with each MQPUT before its MQCMIT forces: at
    # WRTHRSH=1 they start a write of their own, at 20 they wait for the commit's (some 1,700
    # device writes against 1,400). (The base's two applications of 2 KB messages fill a CI
    # between forces seldom, and group commit decides the rest: the two counts were within
    # 2%, and WRTHRSH=1 fell below once the CPU's timings varied.)
    ("zos-small", ["log.WRTHRSH=1", "workload.apps=1", "workload.message_size=8000"],
     ["workload.apps=1", "workload.message_size=8000"], "device_writes", True),
    # a smaller input buffer: the offloads read their data sets in more, smaller requests
    ("zos-small", ["log.INBUFF=28"], [], "offload_reads", True),
    # fewer log records between checkpoints: more checkpoints
    ("zos", ["log.LOGLOAD=200"], [], "checkpoints", True),
    # a smaller log buffer
    ("distributed", ["log.LogBufferPages=18"], [], "log_buffer_bytes", False),
    # fewer log records between checkpoints: more checkpoints
    ("distributed", ["log.CheckPointLogRecdMax=1000"], [], "checkpoints", True),
    # counting MQPUT/MQGET operations, not records, towards CheckPointLogRecdMax: fewer checkpoints
    ("distributed", ["log.CheckPointLogRecdMax=1000", "log.checkpoint_basis=operations"],
     ["log.CheckPointLogRecdMax=1000"], "checkpoints", False),
])
def test_a_setting_changed_at_restart_changes_what_the_next_run_does(base, changed, unchanged, metric, more, bases,
                                                                     tmp_path):
    d = shutil.copytree(bases / base, tmp_path / "changed")
    other = shutil.copytree(bases / base, tmp_path / "other")
    new = carried_on(d, *(a for s in changed for a in ("--set", s)))
    old = carried_on(other, *(a for s in unchanged for a in ("--set", s)))
    assert set(new["restart"]["changed"]) - set(old["restart"]["changed"])
    assert (new[metric] > old[metric]) if more else (new[metric] < old[metric]), (metric, old[metric], new[metric])
    verified(d)


def test_new_archive_names_after_a_restart_with_another_arcpfx2(zos_dir):
    last = max(archive_names(bsds(zos_dir), 2))
    carried_on(zos_dir, "--set", "log.ARCPFX2=MQ.QM1.ARC2")
    copy2 = archive_names(bsds(zos_dir), 2)
    assert max(copy2) > last
    assert all(name.startswith("MQ.QM1.ARC2.A" if seq > last else "CSQARC2.A") for seq, name in copy2.items())
    verified(zos_dir)


def test_one_offload_at_a_time_after_a_restart_with_maxcnoff_1(tmp_path):
    """Reads at 5 MB/s make each offload far longer than filling a data set takes: with
    MAXCNOFF=31 the offloads run side by side and keep up; with MAXCNOFF=1 they queue, every
    active data set fills, and logging waits for them."""
    device = tmp_path / "slow.toml"
    device.write_text('[slowreads]\nbase = "ssd"\nread_bandwidth_mb_s = 5\n')
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", "zos", "--workload", "putget", "--set", "workload.apps=4",
             "--set", "workload.messages=200", "--set", "workload.message_size=3000", "--set", "log.ACTIVE_LOG_CIS=32",
             "--set", "log.ACTIVE_LOGS=24", "--device", device, "--out", d))
    same = shutil.copytree(d, tmp_path / "same")
    queued = mqlog("run", "--in", d, "--set", "log.MAXCNOFF=1", "--json")
    parallel = mqlog("run", "--in", same, "--json")
    one, many = json.loads(ok(queued).stdout), json.loads(ok(parallel).stdout)
    assert one["restart"]["changed"] == {"MAXCNOFF": [31, 1]}
    assert one["archive_offloads"] == many["archive_offloads"] > 24  # the ring turned in both
    assert one["virtual_s"] > 3 * many["virtual_s"]
    assert "CSQJ110E" in queued.stderr and "CSQJ110E" not in parallel.stderr  # the last data set filling
    verified(d)
