"""``mqlog scan`` recognises what it was given (issue 22): a distributed extent or a z/OS active or
archive data set is read from the log address its own first page names, not taken for a stale
log at address 0; a BSDS, a queue file, the control file or a text file is "not a log file",
saying what it is; a page of an earlier use in the middle of a data set is still called stale.
Through the real command line, on real runs of each platform."""

from __future__ import annotations

import json

import pytest

from clikit import mqlog, one_line_error


def ok(out):
    assert out.returncode == 0, (out.returncode, out.stdout[-2000:], out.stderr[-2000:])
    return out


def scan(path):
    return json.loads(ok(mqlog("scan", path, "--json")).stdout)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A linear distributed log of eleven extents (and one formatted ahead), and a z/OS log of
    three small data sets per copy that went round its ring many times, archiving each."""
    root = tmp_path_factory.mktemp("scan")
    ok(mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=2",
             "--set", "workload.messages_per_pair=300", "--set", "log.LogFilePages=64",
             "--set", "log.LogType=LINEAR", "--out", root / "linear"))
    ok(mqlog("run", "--platform", "zos", "--workload", "putget-pairs", "--set", "workload.pairs=2",
             "--set", "workload.messages_per_pair=100", "--set", "log.ACTIVE_LOG_CIS=16", "--out", root / "zos"))
    return root


def test_every_extent_of_a_linear_log_is_read_from_its_own_lsn(runs):
    qm = runs / "linear" / "qm"
    extents = sorted(qm.glob("S*.LOG"))
    scans = {p.name: scan(p) for p in extents}
    used = [name for name, d in scans.items() if d["records"]]
    assert len(used) > 5
    for number, name in enumerate(used):
        d = scans[name]
        assert d["kind"] == "a distributed log extent"
        assert d["base_address"] == number * 64 * 4096  # S0000003.LOG holds LSN 3 × 64 pages on
        assert d["base_address_text"] == f"<0:0:{number * 4}:0>"   # 64 pages of 4096 bytes: 4 × 65536
        assert "stale" not in json.dumps(d["end"])
        assert d["end"]["reason"] in ("end", "incomplete")
    # each record is in exactly one extent's scan, but for the ones that run on into the next
    # extent (neither scan can show a record it holds only part of). Since issue 38 a write
    # carrying several forces pads its partial last page, so an extent can also end with its
    # last record whole on its last page and the rest padding: the file full, the next record
    # at the next extent's start. Every extent but the last ends one way or the other, and
    # this run has both.
    metrics = json.loads((runs / "linear" / "metrics.json").read_text())
    runs_on = [n for n in used[:-1] if scans[n]["end"]["reason"] == "incomplete"]
    full = [n for n in used[:-1] if scans[n]["end"]["reason"] == "end"]
    assert runs_on and full and sorted(runs_on + full) == used[:-1], (runs_on, full)
    assert all("its last record continues in the next extent" == scans[n]["end"]["note"] for n in runs_on)
    assert all("the file is full; the log goes on in the next extent" == scans[n]["end"]["note"] for n in full)
    # the padding is less than a page: the extent's last record ends on its last page
    assert all((used.index(n) + 1) * 64 * 4096 - 4096 < scans[n]["end"]["address"] < (used.index(n) + 1) * 64 * 4096
               for n in full)
    assert "note" not in scans[used[-1]]["end"] and scans[used[-1]]["end"]["reason"] == "end"
    assert sum(d["records"] for d in scans.values()) + len(runs_on) == metrics["log_records"]
    ahead = [name for name, d in scans.items() if not d["records"]]
    assert ahead == [extents[-1].name]  # formatted ahead of need, never written: no records, no error
    text = ok(mqlog("scan", qm / used[3])).stdout
    assert text.splitlines()[0] == f"{used[3]}: a distributed log extent, holding log from LSN <0:0:12:0> (00000000000C0000)"


def test_z_os_active_and_archive_data_sets_are_read_from_their_own_rba(runs):
    qm = runs / "zos" / "qm"
    metrics = json.loads((runs / "zos" / "metrics.json").read_text())
    archives = {p.name: scan(p) for p in sorted(qm.glob("CSQARC1.A*"))}
    actives = {p.name: scan(p) for p in sorted(qm.glob("LOGCOPY1.DS*"))}
    assert len(archives) > len(actives) == 3  # the ring went round
    assert all(d["kind"] == "a z/OS archive log data set" for d in archives.values())
    assert all(d["kind"] == "a z/OS active log data set" for d in actives.values())
    bases = [d["base_address"] for d in archives.values()]
    assert bases == [n * 16 * 4096 for n in range(len(bases))]  # the log, data set by data set
    # the active data sets hold the newest log: the last archives' ranges and the current one
    assert all(d["base_address"] >= bases[-2] for d in actives.values())
    # the current data set is part written: after its last record come pages of its previous
    # use, a really stale page in the middle of the file, reported as stale
    current = [d for d in actives.values() if d["base_address"] > bases[-1]]
    assert len(current) == 1 and current[0]["end"]["reason"] == "end"
    assert current[0]["end"]["problem"].startswith("stale") and 0 < current[0]["end"]["offset_bytes"] < 16 * 4096
    runs_on = sum(d["end"]["reason"] == "incomplete" for d in archives.values())
    assert sum(d["records"] for d in archives.values()) + runs_on + current[0]["records"] == metrics["log_records"]
    name = next(n for n, d in actives.items() if d is current[0])
    text = ok(mqlog("scan", qm / name)).stdout.splitlines()
    assert text[0].startswith(f"{name}: a z/OS active log data set, holding log from RBA ")
    assert "stale" in text[-1] and "earlier use" in text[-1]


@pytest.mark.parametrize("run, name, words", [
    ("zos", "BSDS01", ["not a log file", "BSDS", "mqlog bsds"]),
    ("zos", "CSQARC1.B0000001", ["not a log file", "BSDS"]),
    ("zos", "PAIR.00000.mqq", ["not a log file", "queue file"]),
    ("linear", "PAIR.00000.mqq", ["not a log file", "queue file"]),
    ("linear", "amqhlctl.lfh", ["not a log file", "control file", "mqlog qmstatus"]),
    ("linear", "amqhlspr.lfh", ["not a log file", "spare"]),
    ("linear", "../AMQERR01.LOG", ["not a log file", "text file"]),
])
def test_a_file_that_is_not_a_log_is_named_for_what_it_is(runs, run, name, words):
    one_line_error(mqlog("scan", runs / run / "qm" / name), name.split("/")[-1], *words)
