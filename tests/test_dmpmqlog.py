"""``mqlog dmpmqlog`` (issue 22): every record of a distributed queue manager's log over all its
extents in log order, from the restart point, the base LSN, a given LSN or extent, to the end of
the log or a given LSN; damage is an error naming the file and the LSN, never the end. Through
the real command line, on real runs."""

from __future__ import annotations

import json
import shutil

import pytest

from clikit import mqlog, one_line_error


def ok(out):
    assert out.returncode == 0, (out.returncode, out.stdout[-2000:], out.stderr[-2000:])
    return out


def lsn(text: str) -> int:
    value = 0
    for part in text.strip("<>").split(":"):
        value = value << 16 | int(part)
    return value


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A linear log of eleven extents kept whole (LogManagement=Manual), a circular log that
    went round its ring, and a z/OS run."""
    root = tmp_path_factory.mktemp("dmpmqlog")
    ok(mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=2",
             "--set", "workload.messages_per_pair=300", "--set", "log.LogFilePages=64",
             "--set", "log.LogType=LINEAR", "--out", root / "linear"))
    ok(mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=3",
             "--set", "workload.messages_per_pair=600", "--set", "log.LogFilePages=64",
             "--set", "log.LogPrimaryFiles=4", "--out", root / "circular"))
    ok(mqlog("run", "--platform", "zos", "--workload", "putget-pairs", "--set", "workload.pairs=1",
             "--set", "workload.messages_per_pair=5", "--out", root / "zos"))
    return root


def dump(*args):
    return json.loads(ok(mqlog("dmpmqlog", *args, "--json")).stdout)


def test_from_the_first_extent_every_record_the_run_logged_in_log_order(runs):
    metrics = json.loads((runs / "linear" / "metrics.json").read_text())
    d = dump(runs / "linear", "--extent", "0")
    records = d["records"]
    assert len(records) == d["summary"]["records"] == metrics["log_records"]
    assert sum(r["type"] == "Put" for r in records) == metrics["messages_put"]
    lsns = [lsn(r["lsn"]) for r in records]
    assert lsns == sorted(lsns) and len(set(lsns)) == len(lsns)
    # each record is in the extent the LSN falls in: 64 pages of 4 KiB each, numbered from 0
    assert all(r["extent"] == f"S{lsn(r['lsn']) // (64 * 4096):07d}.LOG" for r in records)
    extents = d["summary"]["extents"]
    assert extents == [f"S{n:07d}.LOG" for n in range(len(extents))] and len(extents) > 5
    assert d["summary"]["end"] == "end" and lsn(d["summary"]["nextlsn"]) > lsns[-1]
    assert all(r["queue"] for r in records if r["type"] in ("Put", "Get"))


def test_the_default_start_is_the_restart_point_and_base_the_start_of_its_extent(runs):
    status = json.loads(ok(mqlog("qmstatus", runs / "linear", "--json")).stdout)
    default = dump(runs / "linear")
    header = default["header"]
    assert header["HeadExtentID"] == status["RECLOG"] and header["hflag1"] == "LOG RETAIN"
    assert default["records"][0]["lsn"] == header["headlsn"]
    assert default["records"][0]["extent"] == status["RECLOG"]
    base = dump(runs / "linear", "--base")
    assert lsn(header["baselsn"]) <= lsn(base["records"][0]["lsn"]) < lsn(header["headlsn"])
    assert base["records"][0]["extent"] == status["RECLOG"]
    assert base["records"][-len(default["records"]):] == default["records"]
    whole = dump(runs / "linear", "--extent", "0")
    assert whole["records"][-len(base["records"]):] == base["records"]
    assert default["summary"]["nextlsn"] == whole["summary"]["nextlsn"] == header["nextlsn"]


def test_from_and_to_a_given_lsn(runs):
    whole = dump(runs / "linear", "--extent", "0")["records"]
    start, stop = whole[1000], whole[1500]
    part = dump(runs / "linear", "--from-lsn", start["lsn"], "--to-lsn", stop["lsn"].strip("<>"))
    assert part["records"] == whole[1000:1501]
    assert part["summary"]["stopped"] == "to-lsn" and part["summary"]["nextlsn"] == whole[1501]["lsn"]
    text = ok(mqlog("dmpmqlog", runs / "linear", "-s", start["lsn"], "-e", stop["lsn"])).stdout
    assert text.splitlines()[-1].startswith("501 log records in ")
    middle = lsn(start["lsn"]) + 1  # inside a record: no record starts there
    one_line_error(mqlog("dmpmqlog", runs / "linear", "--from-lsn", f"0:0:{middle >> 16}:{middle & 0xFFFF}"),
                   "no log record starts there", whole[1001]["lsn"])
    one_line_error(mqlog("dmpmqlog", runs / "linear", "--from-lsn", "0:0:4"), "--from-lsn", "not an LSN")
    one_line_error(mqlog("dmpmqlog", runs / "linear", "--extent", "99"), "S0000099.LOG")


def test_the_text_form_names_a_clean_end_as_one(runs):
    text = ok(mqlog("dmpmqlog", runs / "linear", "-b")).stdout.splitlines()
    assert text[0] == "Log File Header" and any(line.split() == ["hflag1", "LOG", "RETAIN"] for line in text)
    assert "the log ends cleanly at" in text[-1] and "1 extent (" in text[-1]


def test_a_circular_log_is_dumped_along_its_ring_and_refuses_an_extent(runs):
    status = json.loads(ok(mqlog("qmstatus", runs / "circular", "--json")).stdout)
    d = dump(runs / "circular", "--base")
    assert d["header"]["hflag1"] == "CIRCULAR" and d["records"][0]["extent"] == status["RECLOG"]
    lsns = [lsn(r["lsn"]) for r in d["records"]]
    assert lsns == sorted(lsns) and lsns[0] >= 4 * 64 * 4096  # the ring went round: LSNs past the first lap
    assert d["summary"]["end"] == "end"
    one_line_error(mqlog("dmpmqlog", runs / "circular", "--extent", "1"), "linear logging")


def test_a_missing_extent_is_damage_with_its_name_and_lsn_not_the_end(runs, tmp_path):
    copy = shutil.copytree(runs / "linear", tmp_path / "linear")
    (copy / "qm" / "S0000005.LOG").unlink()
    out = mqlog("dmpmqlog", copy, "--extent", "0")
    one_line_error(out, "S0000005.LOG", "missing", "<0:0:20:0>")
    assert "ends cleanly" not in out.stdout and "S0000004.LOG" in out.stdout  # what came before it is shown


def test_a_corrupt_page_with_good_pages_after_it_is_damage_with_file_and_offset(runs, tmp_path):
    copy = shutil.copytree(runs / "linear", tmp_path / "linear")
    with open(copy / "qm" / "S0000005.LOG", "r+b") as extent:
        extent.seek(10 * 4096 + 100)
        extent.write(b"\xde\xad" * 20)
    out = mqlog("dmpmqlog", copy, "--extent", "0")
    one_line_error(out, "S0000005.LOG", "offset 40960", "<0:0:20:40960>")
    assert "ends cleanly" not in out.stdout


def test_a_zos_run_is_pointed_to_mqlog_print(runs):
    one_line_error(mqlog("dmpmqlog", runs / "zos"), "z/OS", "mqlog print")
