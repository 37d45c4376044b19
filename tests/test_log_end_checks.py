"""Issue 37: the end of the log is checked against what the control data knows.

Each row of the issue's table, made as a user makes it with the CLI: a run crashed at the
end of its workload (small log files, so the log has switched files many times), the damage
done to its files with ordinary file operations, then ``mqlog restart --verify``. Before the
fix every one of them restarted ("AMQ8003I started", "CSQR002I RESTART COMPLETED") with
committed work missing, or uncommitted work present, because the end of the log was decided
from page contents alone. Now each is refused with one line naming the file and the log
address, and nothing is written (a second restart refuses the same way, the files unchanged).

The distributed rows are made on LogWriteIntegrity=SingleWrite too (the ``*-single`` runs), where
they apply. SingleWrite keeps no spare file, so nothing written after the control file's last
update (its high-water mark: here the write that switched to the current extent, at
<0:0:83:61440>) is known but from the pages themselves: row 2 (the current extent zeroed) does
not apply there – the whole current extent lies past the mark, and with nothing good after it
the log ends where a power failure at that point ends it, the case docs/reliability.md names as
undetectable (and why MQ could not detect it either); so does the current extent restored from
an earlier lap of itself. The extent before it copied over it is refused there too: its first
page holds an address the control file gives another extent, which no earlier lap of the
current one held (before that check, restart accepted it). Before the fix (0ec8219) SingleWrite's row 3 and its log older than the queue files
restarted ("AMQ8003I") with uncommitted messages visible; its rows 1, 4, 5 and 6 were refused
only where the damage cut the checkpoint short, in words naming neither AMQ6762E nor the
extent's range.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from logdamage import fresh, mqlog, refused, zero
from mqlog.core.format.pages import PAGE_SIZE


BASE = ["--workload", "putget-pairs"]
#: Each platform's run, chosen so that its log ends where the tests below assume (checked by
#: test_the_runs_are_shaped_as_the_tests_assume). Issue 38's writer pads a write carrying
#: several callers' forces to the end of its last page and writes 120-byte commit records,
#: so 3 pairs of 400 messages no longer ended there: on distributed the padding filled the log
#: faster than its checkpoints freed it (the circular ring grew a fourth, secondary, extent,
#: and the log ran on to S0000001 from <0:0:96:0>), and with fewer messages, or a think time,
#: TripleWrite's spare page was no longer of the current extent (row 2 needs it there: the
#: last partial page rewritten was in <0:0:82:…>); z/OS, writing less, ended in DS01 from RBA
#: 3C0000. One pair's writes carry one or two forces and rewrite their partial page as before:
#: 1,400 messages end in S0000000 at <0:0:87:29160>, its last partial page in the spare file.
WORKLOAD = {"distributed": ["--set", "workload.pairs=1"],
            "zos": ["--set", "workload.pairs=3", "--set", "workload.messages_per_pair=550"]}


def _run(root: Path, name: str, platform: str, *settings, until=("--crash-at", "end")) -> Path:
    out = root / name
    done = mqlog("run", "--platform", platform, *BASE, *WORKLOAD[platform], *settings, *until, "--out", out)
    assert done.returncode == 0, done.stderr
    return out


DIST = ("--set", "log.LogFilePages=64")
TRIPLE = ("--set", "workload.messages_per_pair=1400")
ZOS = ("--set", "log.ACTIVE_LOG_CIS=64")
#: (SingleWrite's run writes less log: 1,640 messages end where TripleWrite's 1,400 do, in
#: S0000000 at <0:0:87:39130>)
SINGLE = ("--set", "log.LogWriteIntegrity=SingleWrite", "--set", "workload.messages_per_pair=1640")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    made = {
        "circular": _run(root, "circular", "distributed", *DIST, *TRIPLE),
        "linear": _run(root, "linear", "distributed", *DIST, *TRIPLE, "--set", "log.LogType=LINEAR"),
        "zos-dual": _run(root, "zos-dual", "zos", *ZOS),
        "zos-single": _run(root, "zos-single", "zos", *ZOS, "--set", "log.TWOACTV=NO", "--set", "log.TWOARCH=NO"),
        # the same runs 2,100 writes in: what a backup taken then holds (runs are deterministic):
        # S0000000 (linear S0000012) current from <0:0:48:0>, the checkpoint in it
        "circular-2100": _run(root, "circular-2100", "distributed", *DIST, *TRIPLE,
                              until=("--crash-after-writes", "2100")),
        "linear-2100": _run(root, "linear-2100", "distributed", *DIST, *TRIPLE, "--set", "log.LogType=LINEAR",
                            until=("--crash-after-writes", "2100")),
        # SingleWrite: the same runs, and one 1,700 writes in: S0000002 current from <0:0:44:0>
        "circular-single": _run(root, "circular-single", "distributed", *DIST, *SINGLE),
        "linear-single": _run(root, "linear-single", "distributed", *DIST, *SINGLE, "--set", "log.LogType=LINEAR"),
        "circular-single-1700": _run(root, "circular-single-1700", "distributed", *DIST, *SINGLE,
                                     until=("--crash-after-writes", "1700")),
        # z/OS TWOACTV=NO crashed just after a switch, before the BSDS's next update
        "zos-single-switched": _switched(root),
    }
    return made


def _bsds(run: Path) -> dict:
    return json.loads((run / "qm" / "BSDS01").read_bytes()[8:])


def _switched_from(bsds: dict) -> tuple[list, list] | None:
    """The BSDS's current data set and the one before it, if the log has just switched from
    one to the other: the BSDS names the current one (from its start on), but its high-water
    mark still lies in the one before it (the write that switched had not landed when the
    BSDS was updated)."""
    current = bsds["active"][bsds["current"]]
    before = [d for d in bsds["active"] if d[1] == current[1] - 64 * PAGE_SIZE]
    if before and before[0][1] <= bsds["written_to"] < current[1]:
        return before[0], current
    return None


def _switched(root: Path) -> Path:
    """z/OS TWOACTV=NO crashed just after a switch, before the BSDS's next update. Where a
    switch falls moves with the model's timings (960 writes was such a point before the CPU's
    jitter; now the log is in the middle of DS01 there), so the crash point is searched for,
    10 writes at a time from 960, and must be found (the state lasts some 30 writes of
    every 80)."""
    for writes in range(960, 1201, 10):
        out = _run(root, f"zos-single-{writes}", "zos", *ZOS, "--set", "log.TWOACTV=NO", "--set",
                   "log.TWOARCH=NO", until=("--crash-after-writes", str(writes)))
        if _switched_from(_bsds(out)):
            return out
        shutil.rmtree(out)
    pytest.fail("no crash point from 960 to 1200 writes left the BSDS naming a data set current "
                "above its high-water mark")


def test_the_undamaged_runs_restart_and_verify(runs, tmp_path):
    for name in ("circular", "linear", "zos-dual", "zos-single", "circular-single", "linear-single"):
        out = mqlog("restart", fresh(runs[name], tmp_path, name), "--verify")
        assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr


# The shape of the runs these tests damage (checked, so that a change to the model that
# moves it makes the tests fail rather than pass vacuously): the distributed logs' current
# extent (circular S0000000, linear S0000021) starts at <0:0:84:0>, the checkpoint restart
# reads from lies in the extent before it (circular S0000002, linear S0000020, from
# <0:0:80:0>); the z/OS logs' current data set is DS01, from RBA 540000. The SingleWrite runs
# have the same extents; their high-water mark lies in the extent before the current one.

def test_the_runs_are_shaped_as_the_tests_assume(runs):
    for name, current, before in (("circular", 0, 2), ("linear", 21, 20), ("circular-single", 0, 2),
                                  ("linear-single", 21, 20)):
        control = json.loads((runs[name] / "qm" / "amqhlctl.lfh").read_bytes()[8:])
        starts = {n: start for n, _, start, *_ in control["extents"]}
        assert control["current"] == current and starts[current] == 84 << 16
        assert starts[before] == 80 << 16 <= control["checkpoint"] < 84 << 16
        if name.endswith("-single"):
            assert control["checkpoint"] < control["written_to"] == (83 << 16) + 61440
            assert not (runs[name] / "qm" / "amqhlspr.lfh").exists()
    for name in ("zos-dual", "zos-single"):
        bsds = json.loads((runs[name] / "qm" / "BSDS01").read_bytes()[8:])
        assert bsds["current"] == 0 and bsds["active"][0][1] == 0x540000


# -- row 1: a middle extent replaced by a zero-filled file of full size ------------------------

@pytest.mark.parametrize("name, extent", [("linear", "S0000020.LOG"), ("circular", "S0000002.LOG"),
                                          ("linear-single", "S0000020.LOG"), ("circular-single", "S0000002.LOG")])
def test_row1_an_extent_in_use_replaced_by_a_freshly_formatted_file_is_refused(runs, tmp_path, name, extent):
    run = fresh(runs[name], tmp_path)
    zero(run / "qm" / extent, 0)
    refused(run, f"{extent}, offset 0, log address <0:0:80:0>", f"AMQ6762E: IBM MQ log extent {extent} corrupt",
            "never written")


def test_row1_an_extent_restart_no_longer_needs_may_be_zeroed(runs, tmp_path):
    """An inactive extent of a linear log (all of it before the checkpoint) is the
    operator's to archive or delete: zeroing it costs restart nothing."""
    run = fresh(runs["linear"], tmp_path)
    zero(run / "qm" / "S0000010.LOG", 0)
    out = mqlog("restart", run, "--verify")
    assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr


# -- row 2: the current extent zeroed from page 4, or whole -------------------------------------

@pytest.mark.parametrize("name, extent", [("linear", "S0000021.LOG"), ("circular", "S0000000.LOG")])
@pytest.mark.parametrize("from_page", [0, 4])
def test_row2_the_current_extent_zeroed_is_refused(runs, tmp_path, name, extent, from_page):
    """TripleWrite's spare file holds the newest copy of the last partial page rewritten:
    log written after the zeroed pages, which restart finds reading on to the end of the
    current extent. (Before the fix the circular log restarted with 3 uncommitted messages
    visible, zeroed whole, and 1 from page 4; the linear one lost committed work.)"""
    run = fresh(runs[name], tmp_path)
    zero(run / "qm" / extent, from_page)
    refused(run, f"{extent}, offset {from_page * PAGE_SIZE}, log address <0:0:84:{from_page * PAGE_SIZE}>",
            "page unwritten", "good page", "them from")


# -- row 3: a hole of 17 pages (and more) with later writes after it ----------------------------

@pytest.mark.parametrize("pages", [17, 40])
@pytest.mark.parametrize("name, extent", [("linear", "S0000021.LOG"), ("circular", "S0000000.LOG"),
                                          ("linear-single", "S0000021.LOG"), ("circular-single", "S0000000.LOG")])
def test_row3_a_hole_longer_than_16_pages_is_refused(runs, tmp_path, name, extent, pages):
    run = fresh(runs[name], tmp_path)
    zero(run / "qm" / extent, 2, pages)
    refused(run, f"{extent}, offset {2 * PAGE_SIZE}, log address <0:0:84:{2 * PAGE_SIZE}>",
            f"the first of {pages} bad pages in a row", "good pages follow them")


# -- row 4: two extents swapped, or one copied over another ------------------------------------

@pytest.mark.parametrize("name, first, second", [("linear", "S0000019.LOG", "S0000020.LOG"),
                                                  ("circular-single", "S0000001.LOG", "S0000002.LOG")])
def test_row4_two_extents_swapped_are_refused(runs, tmp_path, name, first, second):
    run = fresh(runs[name], tmp_path)
    qm = run / "qm"
    (qm / first).rename(qm / "swap")
    (qm / second).rename(qm / first)
    (qm / "swap").rename(qm / second)
    refused(run, f"{first}, offset 0, log address <0:0:76:0>", "AMQ6762E", "its first page holds LSN <0:0:80:0>")


@pytest.mark.parametrize("name, source, target", [("circular", "S0000001.LOG", "S0000002.LOG"),
                                                  ("linear-single", "S0000019.LOG", "S0000020.LOG")])
def test_row4_an_extent_copied_over_another_is_refused(runs, tmp_path, name, source, target):
    run = fresh(runs[name], tmp_path)
    shutil.copyfile(run / "qm" / source, run / "qm" / target)
    refused(run, f"{target}, offset 0, log address <0:0:80:0>", "AMQ6762E", "its first page holds LSN <0:0:76:0>")


@pytest.mark.parametrize("name, previous, current", [("circular", "S0000002.LOG", "S0000000.LOG"),
                                                     ("linear", "S0000020.LOG", "S0000021.LOG"),
                                                     ("circular-single", "S0000002.LOG", "S0000000.LOG"),
                                                     ("linear-single", "S0000020.LOG", "S0000021.LOG")])
def test_row4_the_previous_extent_copied_over_the_current_one_is_refused(runs, tmp_path, name, previous, current):
    """The current extent lies past the high-water mark (given its range by the write in
    flight when the control file was saved), so its first page may be unwritten, torn or an
    earlier lap's. But the copy's holds <0:0:80:0>, in the range the control file gives the
    extent before it, which no earlier lap of the current one held. Before the fix: AMQ8003I,
    with 3 uncommitted messages visible (2 on SingleWrite); TripleWrite's was then refused
    only because its spare file holds a page of a later write, which restart found reading
    on past the copied pages ("page stale … 1 good page follows them"), and SingleWrite,
    which has no spare file, restarted (issue 37's last gap)."""
    out = mqlog("restart", fresh(runs[name], tmp_path, "undamaged"), "--verify")
    assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr
    run = fresh(runs[name], tmp_path)
    shutil.copyfile(run / "qm" / previous, run / "qm" / current)
    refused(run, f"{current}, offset 0, log address <0:0:84:0>", f"AMQ6762E: IBM MQ log extent {current} corrupt",
            "its first page holds LSN <0:0:80:0>")


def test_row4_the_data_set_before_the_current_one_copied_over_it_is_refused_zos(runs, tmp_path):
    """z/OS's form of the case above: the BSDS names a data set current (DS02, say, from RBA
    340000), but its high-water mark lies in the one before it (DS01, from 300000), so the
    current one was given its range by the write in flight and its first CI may be an
    earlier lap's. The one before it copied over it holds an RBA of the range the BSDS gives
    that one. (Before the fix: CSQR002I RESTART COMPLETED, and 1 uncommitted message
    visible; the copy made at the end of the run, after the offload of the data set before
    updated the BSDS, was refused already.)"""
    run = runs["zos-single-switched"]
    bsds = _bsds(run)
    switched = _switched_from(bsds)
    assert switched, bsds  # (the scenario: a switch the BSDS has not yet seen land)
    (before, start_before), (current, start) = (d[:2] for d in switched)
    out = mqlog("restart", fresh(run, tmp_path, "undamaged"), "--verify")
    assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr
    damaged = fresh(run, tmp_path)
    target = f"LOGCOPY1.DS{current:02d}"
    shutil.copyfile(damaged / "qm" / f"LOGCOPY1.DS{before:02d}", damaged / "qm" / target)
    refused(damaged, f"{target}, offset 0, log address {start:016X}",
            f"CSQJ102E LOG RBA CONTENT OF LOG DATA SET DSNAME={target}, STARTRBA={start:016X}",
            f"its first CI holds RBA {start_before:016X}")


# -- row 5: an older copy of an extent restored, or the whole log older than the queue files ---

@pytest.mark.parametrize("name, backup, extent, holds, started", [
    ("circular", "circular-2100", "S0000001.LOG", "<0:0:40:0>", "<0:0:76:0>"),
    ("circular", "circular-2100", "S0000002.LOG", "<0:0:44:0>", "<0:0:80:0>"),
    ("circular-single", "circular-single-1700", "S0000002.LOG", "<0:0:44:0>", "<0:0:80:0>")])
def test_row5_an_older_copy_of_an_extent_restored_is_refused(runs, tmp_path, name, backup, extent, holds, started):
    run = fresh(runs[name], tmp_path)
    shutil.copyfile(runs[backup] / "qm" / extent, run / "qm" / extent)
    refused(run, f"{extent}, offset 0, log address {started}", "AMQ6762E", f"its first page holds LSN {holds}")


def test_row5_the_current_extent_restored_from_a_backup_is_refused(runs, tmp_path):
    """Before the fix: AMQ8003I, and 3 uncommitted messages visible. The copy's pages are
    stale up to its last partial pages rewritten since, whose new versions TripleWrite's
    spare file holds: good pages of later writes. (How many of each moves with the model's
    timings; that the stale run is named, and the good pages after it, does not.)"""
    run = fresh(runs["circular"], tmp_path)
    shutil.copyfile(runs["circular-2100"] / "qm" / "S0000000.LOG", run / "qm" / "S0000000.LOG")
    line = refused(run, "S0000000.LOG, offset 0, log address <0:0:84:0>", "page stale")
    found = re.search(r"the first of (\d+) bad pages in a row, but (\d+) good pages? follows? them from", line)
    assert found and int(found[1]) > 16 and int(found[2]) >= 1, line


def _address(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.strip("<>").split(":"))


@pytest.mark.parametrize("name, backup", [("circular", "circular-2100"), ("linear", "linear-2100"),
                                          ("circular-single", "circular-single-1700")])
def test_row5_a_log_older_than_the_queue_files_is_refused(runs, tmp_path, name, backup):
    """The log (and its control file) of a backup taken 2,100 writes in (SingleWrite: 1,700),
    with the queue files of the end of the run: entries name puts beyond the end of the log,
    and the refusal names the first such put's address, with the log's end before it.
    (Before the fix, on SingleWrite: AMQ8003I, and uncommitted messages visible.)"""
    run = fresh(runs[backup], tmp_path)
    for queue_file in (runs[name] / "qm").glob("*.mqq"):
        shutil.copyfile(queue_file, run / "qm" / queue_file.name)
    line = refused(run, "PAIR.00000.mqq, log address", "the log is older than the queue files")
    found = re.search(r"PAIR\.00000\.mqq, log address (<[\d:]+>): queue file PAIR\.00000\.mqq holds a message put "
                      r"at log address (<[\d:]+>), but the log ends at (<[\d:]+>)", line)
    assert found and found[1] == found[2] and _address(found[2]) > _address(found[3]), line


# -- row 6: an older control file restored -------------------------------------------------------

@pytest.mark.parametrize("name, backup, started", [("circular", "circular-2100", "<0:0:48:0>"),
                                                   ("circular-single", "circular-single-1700", "<0:0:36:0>")])
def test_row6_an_older_control_file_restored_is_refused_circular(runs, tmp_path, name, backup, started):
    run = fresh(runs[name], tmp_path)
    shutil.copyfile(runs[backup] / "qm" / "amqhlctl.lfh", run / "qm" / "amqhlctl.lfh")
    refused(run, f"S0000000.LOG, offset 0, log address {started}", "AMQ6762E", "its first page holds LSN <0:0:84:0>")


def test_row6_an_older_control_file_restored_is_refused_linear(runs, tmp_path):
    run = fresh(runs["linear"], tmp_path)
    shutil.copyfile(runs["linear-2100"] / "qm" / "amqhlctl.lfh", run / "qm" / "amqhlctl.lfh")
    refused(run, "S0000013.LOG, offset 0, log address <0:0:52:0>", "AMQ6762E",
            "has given it no log yet (an older control file restored")


# -- row 7: the BSDS replaced by an archive's BSDS copy (z/OS) -----------------------------------

def _older_bsds_needing_ds01(run: Path) -> tuple[Path, int]:
    """The newest archive's BSDS copy (``CSQARC1.Bnnnnnnn``) whose checkpoint lies in DS01
    as that copy has it, at a range DS01 has been reused for since: with the copy, restart
    needs DS01 from that range's start, which its first CI no longer holds. (Which archive
    that is moves with the model's timings: 19 before the CPU's jitter, when DS01 held
    480000-4BFFFF.)"""
    now = _bsds(run)["active"][0]
    assert now[:2] == [1, 0x540000]
    found = []
    for copy in sorted((run / "qm").glob("CSQARC1.B*")):
        old = json.loads(copy.read_bytes()[8:])
        number, start = old["active"][0][:2]
        if number == 1 and start < now[1] and start <= old["checkpoint"] < start + 64 * PAGE_SIZE:
            found.append((copy, start))
    assert found, "no archive's BSDS copy has its checkpoint in an earlier range of DS01"
    return found[-1]


@pytest.mark.parametrize("name", ["zos-dual", "zos-single"])
def test_row7_the_bsds_replaced_by_an_archives_copy_is_refused(runs, tmp_path, name):
    """The copy beside an archive made when DS01 held an earlier range (480000-4BFFFF, say);
    DS01 has since been reused for 540000 on: CSQJ102E, and restart writes nothing over the
    newer log. (The copy's checkpoint lies in DS01 as the copy has it: restart needs DS01
    from that range's start, the address it names.)"""
    run = fresh(runs[name], tmp_path)
    archive, start = _older_bsds_needing_ds01(run)
    for bsds in ("BSDS01", "BSDS02"):
        if (run / "qm" / bsds).exists():
            shutil.copyfile(archive, run / "qm" / bsds)
    refused(run, f"LOGCOPY1.DS01, offset 0, log address {start:016X}",
            "its first CI holds RBA 0000000000540000",
            f"CSQJ102E LOG RBA CONTENT OF LOG DATA SET DSNAME=LOGCOPY1.DS01, STARTRBA={start:016X}, "
            f"ENDRBA={start + 64 * PAGE_SIZE - 1:016X}, DOES NOT AGREE WITH BSDS INFORMATION")


def test_row7_a_data_set_swapped_is_refused(runs, tmp_path):
    run = fresh(runs["zos-dual"], tmp_path)
    qm = run / "qm"
    for copy in (1, 2):
        (qm / f"LOGCOPY{copy}.DS02").rename(qm / "swap")
        (qm / f"LOGCOPY{copy}.DS03").rename(qm / f"LOGCOPY{copy}.DS02")
        (qm / "swap").rename(qm / f"LOGCOPY{copy}.DS03")
    refused(run, "LOGCOPY1.DS02, offset 0", "CSQJ102E", "DSNAME=LOGCOPY1.DS02, STARTRBA=00000000004C0000",
            "its first CI holds RBA 0000000000500000")


# -- row 8: both copies zeroed below the BSDS's high-water mark (z/OS) ---------------------------

def _below_the_mark(run: Path) -> int:
    """The last CI of DS01 (the current data set, from RBA 540000) below the BSDS's high-water
    mark: asserted to be one after its first, so that zeroing from it is the row's damage."""
    bsds = json.loads((run / "qm" / "BSDS01").read_bytes()[8:])
    ci = (bsds["written_to"] - 0x540000) // PAGE_SIZE - 1
    assert 1 <= ci < 64, hex(bsds["written_to"])
    return ci


@pytest.mark.parametrize("name", ["zos-dual", "zos-single"])
def test_row8_a_data_set_zeroed_below_the_bsds_high_water_mark_is_refused(runs, tmp_path, name):
    """From the last CI below the mark (the BSDS is updated at each switch, checkpoint and
    offload: dual logging's mark is 555000, single logging's, its offloads quicker, 543000)."""
    run = fresh(runs[name], tmp_path)
    ci = _below_the_mark(run)
    for copy in (1, 2) if name == "zos-dual" else (1,):
        zero(run / "qm" / f"LOGCOPY{copy}.DS01", ci)
    refused(run, f"LOGCOPY1.DS01, offset {ci * PAGE_SIZE}, log address {0x540000 + ci * PAGE_SIZE:016X}",
            "page unwritten", "the log ends below its high-water mark")


# -- row 9: the tail of the active data set zeroed, or a 17-page hole (z/OS) ---------------------

@pytest.mark.parametrize("name", ["zos-dual", "zos-single"])
@pytest.mark.parametrize("pages", [17, 40])
def test_row9_a_hole_longer_than_16_cis_is_refused(runs, tmp_path, name, pages):
    run = fresh(runs[name], tmp_path)
    for copy in (1, 2) if name == "zos-dual" else (1,):
        zero(run / "qm" / f"LOGCOPY{copy}.DS01", 1, pages)
    refused(run, "LOGCOPY1.DS01, offset 4096, log address 0000000000541000",
            f"the first of {pages} bad pages in a row", "good pages follow them")


def test_row9_the_tail_zeroed_below_the_bsds_high_water_mark_is_refused(runs, tmp_path):
    """From the CI after the first: below single logging's mark (543000: see row 8)."""
    run = fresh(runs["zos-single"], tmp_path)
    assert _below_the_mark(run) >= 1
    zero(run / "qm" / "LOGCOPY1.DS01", 1)
    refused(run, "LOGCOPY1.DS01, offset 4096, log address 0000000000541000", "the log ends below its high-water mark")
