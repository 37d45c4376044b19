"""The z/OS log utilities (zos/utilities/): log print, BSDS map, QJST statistics, loading a run.

Each test runs a small z/OS queue manager in virtual time and checks the utilities against
what the test itself did: which units of work it committed, backed out, prepared or left in
flight, which messages it put where, how many checkpoints the queue manager took.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys

import attrs
import pytest
import simpy

from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.errors import MqlogError
from mqlog.core.disk.faults import FaultInjectingStorage
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.core.format.records import Begin, Clr, ClrAction, Commit, Prepare, Put
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.log.writer import LogWriter
from mqlog.zos.codec import CompLogCodec
from mqlog.zos.platform import zos_platform
from mqlog.zos.utilities import (bsds_dict, bsds_map, format_statistics, log_print, log_records, log_report,
                                 log_statistics, oldest_address, ur_summary)
from mqlog.zosrun import bsds_run, open_zos, print_run, stats_run

FILL = "FILL.Q"


def _platform(storage, *, shunting: bool = True):
    p = zos_platform(storage, data_sets=3, cis=16, logload=500, codec=CompLogCodec("RLE"))
    if not shunting and getattr(p, "shunting", None) is not None:
        p = attrs.evolve(p, shunting=None)
    return p


def _qm(storage, *, shunting: bool = True):
    env = simpy.Environment()
    p = _platform(storage, shunting=shunting)
    qm = QueueManager(env, p, storage, Device(env, get_profile("ssd")), QmConfig())
    return env, p, qm


def _clone(storage) -> MemoryStorage:
    """A copy of a storage's files, so that a restart does not change what other tests read."""
    copy = MemoryStorage()
    for name in storage.list():
        copy.write(name, 0, storage.read(name, 0, storage.size(name)))
    return copy


def _padded(i: int) -> bytes:
    """Structured data with long runs: what RLE is for."""
    return b"MSG-%04d|" % i + bytes(3000) + b"|END"


def _filler(rng: random.Random) -> bytes:
    return rng.randbytes(2000)  # random: RLE cannot shrink it


class Scenario:
    """One unit of work of each kind, after enough committed traffic to archive the log's start."""

    def __init__(self):
        self.fs = FaultInjectingStorage(MemoryStorage(), keep_write_log=False)
        self.env, self.platform, self.qm = _qm(self.fs)
        self.ids: dict[str, int] = {}
        self.sent: dict[str, tuple[str, bytes]] = {}  # msg id hex -> (queue, data)
        self.stats_before_crash = None
        self.env.run(until=self.env.process(self._work()))
        self.fs.crash()

    def _put(self, conn, queue, data):
        msg_id = yield from conn.put(queue, data)
        self.sent[msg_id.hex().upper()] = (queue, data)
        return msg_id

    def _work(self):
        qm = self.qm
        yield from qm.start()
        for name in (FILL, "APP.Q1", "APP.Q2"):
            yield from qm.define_queue(name, max_depth=100_000)
        rng = random.Random(7)
        filler = qm.connect("FILLER")
        for _ in range(80):
            yield from self._put(filler, FILL, _filler(rng))
            yield from filler.commit()
        a, b, c, d = (qm.connect(n) for n in ("COMMITTER", "BACKER", "PREPARER", "LOITERER"))
        yield from self._put(a, "APP.Q1", _padded(1))
        yield from self._put(a, "APP.Q2", _padded(2))
        self.ids["commit"] = a.uow.id
        yield from a.commit()
        yield from self._put(b, "APP.Q2", _padded(3))
        self.ids["backout"] = b.uow.id
        yield from b.backout()
        yield from self._put(d, "APP.Q2", _padded(4))
        yield from self._put(d, "APP.Q1", _padded(5))
        self.ids["inflight"] = d.uow.id
        yield from self._put(c, "APP.Q1", _padded(6))
        self.ids["indoubt"] = yield from c.prepare(b"XID-0001")  # forces the in-flight puts too
        self.writer_stats = qm.writer.stats.as_dict()
        self.stats_before_crash = log_statistics(self.platform.space, self.writer_stats,
                                                 self.platform.codec.stats(), attrs.asdict(qm.counters))
        self.checkpoints = qm.counters.checkpoints

    def reopened(self):
        """The platform over what the crash left, not started: the log as a utility sees it."""
        return _platform(FaultInjectingStorage(_clone(self.fs.durable), keep_write_log=False))

    def restarted(self):
        storage = FaultInjectingStorage(_clone(self.fs.durable), keep_write_log=False)
        env, p, qm = _qm(storage)
        env.run(until=env.process(qm.start()))
        return p, qm


@pytest.fixture(scope="module")
def scenario():
    return Scenario()


def _by_urid(rows):
    """The summary's rows by the unit's number (the tests know units by it)."""
    return {r["uow"]: r for r in rows}


def _urid(p, uow: int) -> int:
    """The unit's URID as the print gives it: the RBA of its Begin record."""
    return next(r["address"] for r in log_records(p.space, p.addressing) if r["type"] == "BEGIN" and r["uow"] == uow)


# ------------------------------------------------------------------------------ log print


def test_summary_classifies_each_unit_of_work_as_the_test_left_it(scenario):
    p = scenario.reopened()
    rows = _by_urid(ur_summary(p.space, p.addressing))
    ids = scenario.ids
    assert rows[ids["commit"]]["status"] == "COMMITTED"
    assert rows[ids["backout"]]["status"] == "BACKED OUT"
    assert rows[ids["indoubt"]]["status"] == "INDOUBT"
    assert rows[ids["inflight"]]["status"] == "INFLIGHT"
    # begin + 2 puts + commit; begin + put + backout; begin + 2 puts; begin + put + prepare
    assert rows[ids["commit"]]["records"] - rows[ids["commit"]]["shunts"] == 4
    assert rows[ids["backout"]]["records"] - rows[ids["backout"]]["shunts"] == 3
    assert rows[ids["inflight"]]["records"] - rows[ids["inflight"]]["shunts"] == 3
    assert rows[ids["indoubt"]]["records"] - rows[ids["indoubt"]]["shunts"] == 3
    assert rows[ids["inflight"]]["start"] < rows[ids["inflight"]]["end"]
    # 80 filler units of work, each committed
    others = [r for u, r in rows.items() if u not in ids.values()]
    assert len(others) == 80 and {r["status"] for r in others} == {"COMMITTED"}


def test_after_restart_the_inflight_unit_is_backed_out_with_clrs_and_the_prepared_one_stays_in_doubt(scenario):
    p, qm = scenario.restarted()
    rows = _by_urid(ur_summary(p.space, p.addressing))
    ids = scenario.ids
    assert rows[ids["inflight"]]["status"] == "BACKED OUT"
    assert rows[ids["inflight"]]["clrs"] == 2  # it had put two messages
    assert rows[ids["indoubt"]]["status"] == "INDOUBT"
    assert rows[ids["commit"]]["status"] == "COMMITTED"
    assert rows[ids["backout"]]["status"] == "BACKED OUT"
    types = [r["type"] for r in log_records(p.space, p.addressing, urid=_urid(p, ids["inflight"]))]
    assert types == ["BEGIN", "PUT", "PUT", "CLR", "CLR", "BACKOUT"]


def test_in_backout_is_clrs_without_a_backout_record():
    """Restart's undo cut short: compensation records on the log, the Backout not yet."""
    storage = MemoryStorage()
    env = simpy.Environment()
    p = _platform(storage)
    writer = LogWriter(env, p.space, Device(env, get_profile("ssd")), addressing=p.addressing,
                       buffer_pages=p.buffer_pages, write_threshold_pages=p.write_threshold_pages)
    msg = b"M" * 24
    begin = writer.append(Begin(0, "A", uow=7))
    put = writer.append(Put("Q", msg, b"x" * 100, uow=7, prev=begin))
    writer.append(Clr(put, begin, ClrAction.REMOVE_PUT, "Q", msg, uow=7, prev=put))
    b8 = writer.append(Begin(0, "B", uow=8))
    writer.append(Put("Q", msg, b"y" * 100, uow=8, prev=b8))
    b9 = writer.append(Begin(0, "C", uow=9))
    p9 = writer.append(Prepare(0, b"X", uow=9, prev=b9))
    writer.append(Commit(0, 0, uow=9, prev=p9))
    env.run(until=writer.force())
    rows = _by_urid(ur_summary(p.space, p.addressing))
    assert {u: r["status"] for u, r in rows.items()} == {7: "IN BACKOUT", 8: "INFLIGHT", 9: "COMMITTED"}
    text = log_print(p.space, p.addressing, summary="ONLY")
    assert "STATUS(IN BACKOUT)" in text and "IN BACKOUT=1" in text and "TYPE(" not in text


def test_urid_selection_returns_exactly_that_units_records(scenario):
    p = scenario.reopened()
    for name, expected in (("commit", ["BEGIN", "PUT", "PUT", "COMMIT"]), ("backout", ["BEGIN", "PUT", "BACKOUT"]),
                           ("indoubt", ["BEGIN", "PUT", "PREPARE"])):
        got = log_records(p.space, p.addressing, urid=_urid(p, scenario.ids[name]))
        assert [r["type"] for r in got] == expected
        assert {r["uow"] for r in got} == {scenario.ids[name]}
        assert {r["urid"] for r in got} == {got[0]["address"]}  # the URID is its Begin record's RBA
    assert log_records(p.space, p.addressing, urid=0xDEAD_BEEF_0000) == []


def test_rba_range_selection_returns_exactly_the_records_starting_in_it(scenario):
    p = scenario.reopened()
    everything = log_records(p.space, p.addressing)
    rbas = [r["address"] for r in everything]
    assert rbas == sorted(rbas) and len(set(rbas)) == len(rbas)
    assert rbas[0] == oldest_address(p.space) + 32  # the first record after the first CI header
    for lo, hi in ((0, 5), (10, 40), (len(rbas) - 30, len(rbas) - 1)):
        got = log_records(p.space, p.addressing, rba_start=rbas[lo], rba_end=rbas[hi])
        assert [r["address"] for r in got] == rbas[lo:hi + 1]
        # a start inside a record: the next record is the first; an end inside one includes it
        got = log_records(p.space, p.addressing, rba_start=rbas[lo] + 1, rba_end=rbas[hi] + 1)
        assert [r["address"] for r in got] == rbas[lo + 1:hi + 1]
    # a start in the middle of a data set, far from the log's start
    middle = rbas[len(rbas) // 2] + 3
    got = log_records(p.space, p.addressing, rba_start=middle)
    assert [r["address"] for r in got] == [a for a in rbas if a >= middle]
    with pytest.raises(MqlogError):
        log_records(p.space, p.addressing, rba_start=rbas[5], rba_end=rbas[4])


def test_queue_selection_stands_in_for_page_sets(scenario):
    p = scenario.reopened()
    got = log_records(p.space, p.addressing, queue="APP.Q2")
    assert all(r.get("queue", r.get("name")) == "APP.Q2" for r in got)
    put_ids = {r["msg_id"] for r in got if r["type"] == "PUT"}
    assert put_ids == {m for m, (q, _) in scenario.sent.items() if q == "APP.Q2"}
    assert [r["type"] for r in got if r["type"] == "OBJECT_CHANGE"] == ["OBJECT_CHANGE"]
    urids = {r["uow"] for r in ur_summary(p.space, p.addressing, queue="APP.Q1")}
    ids = scenario.ids
    assert urids == {ids["commit"], ids["inflight"], ids["indoubt"]}


def test_compressed_puts_are_shown_expanded(scenario):
    p = scenario.reopened()
    puts = [r for r in log_records(p.space, p.addressing) if r["type"] == "PUT"]
    assert len(puts) == len(scenario.sent)
    for r in puts:
        queue, data = scenario.sent[r["msg_id"]]
        assert r["queue"] == queue
        assert r["message_length_bytes"] == r["expanded_length_bytes"] == len(data)
        assert r["data_prefix"] == data[:16].hex().upper()
        if queue == FILL:
            assert r["codec"] == "NONE" and r["stored_length_bytes"] == len(data)
        else:
            assert r["codec"] == "RLE" and r["stored_length_bytes"] < len(data) // 10
    text = log_print(p.space, p.addressing, urid=_urid(p, scenario.ids["commit"]))
    r = next(r for r in puts if r["uow"] == scenario.ids["commit"])
    assert f"DATA(RLE {r['stored_length_bytes']} -> {len(_padded(1))} BYTES)" in text


def test_log_print_text(scenario):
    p = scenario.reopened()
    text = log_print(p.space, p.addressing, summary="YES")
    first = text.splitlines()[0]
    assert "our own layout" in first and "not public" in first
    assert "CHECKPOINT_END" in text and "UR URID(" in text and "CSQ1106I END OF SUMMARY" in text
    begin = _urid(p, scenario.ids["indoubt"])
    assert f"{p.addressing.format(begin)}  URID({p.addressing.format(begin)}) RM(RECOVERY) TYPE(BEGIN)" in text
    report = log_report(p.space, p.addressing, summary="ONLY")
    assert "records" not in report and report["counts"]["INDOUBT"] == 1 and report["counts"]["INFLIGHT"] == 1
    json.dumps(report)
    short = log_print(p.space, p.addressing, detail=False)
    assert len(short.splitlines()) < len(text.splitlines())
    with pytest.raises(MqlogError):
        log_print(p.space, p.addressing, summary="MAYBE")


# ------------------------------------------------------------------------------ BSDS map


def test_bsds_map_lists_every_data_set_and_archive_tiling_the_log(scenario):
    p = scenario.reopened()
    d = bsds_dict(p.space, p.addressing)
    assert d["archives_recorded"] >= 2
    for copy in ("1", "2"):
        archives = d["archives"][copy]
        assert [a["seq"] for a in archives] == sorted(a["seq"] for a in archives)
        assert archives[0]["start"] == d["log_start"] == 0
        for before, after in zip(archives, archives[1:]):
            assert after["start"] == before["end"] + 1
        active = sorted((a for a in d["active"][copy] if a["start"] is not None), key=lambda a: a["start"])
        assert len(d["active"][copy]) == 3
        for before, after in zip(active, active[1:]):
            assert after["start"] == before["end"] + 1
        # archives and active data sets meet or overlap (an archived data set not yet reused)
        assert active[0]["start"] <= archives[-1]["end"] + 1
        assert active[-1]["end"] >= d["high_rba_written"]
        assert [a["status"] for a in active][-1] == "CURRENT"
        assert all(a["present"] for a in archives + active)
    assert d["high_rba_offloaded"] == d["archives"]["1"][-1]["end"]
    text = bsds_map(p.space, p.addressing)
    assert "our own layout" in text.splitlines()[0]
    storage = p.space.storage
    for name in storage.list():
        if name.startswith(("LOGCOPY", "CSQARC1.A", "CSQARC2.A", "BSDS")):
            assert name in text
    for a in d["archives"]["1"]:
        assert f"{p.addressing.format(a['start'])} - {p.addressing.format(a['end'])}" in text
    queue = d["checkpoint_queue"]
    assert [c["number"] for c in queue] == sorted((c["number"] for c in queue), reverse=True)
    assert queue[0]["number"] == scenario.checkpoints
    json.dumps(d)


# ------------------------------------------------------------------------------ statistics


def test_statistics_checkpoints_and_compression_agree_with_what_happened(scenario):
    s = scenario.stats_before_crash
    p = scenario.reopened()
    records = log_records(p.space, p.addressing)
    assert s["QJSTLLCP"] == scenario.checkpoints == sum(r["type"] == "CHECKPOINT_END" for r in records)
    datas = [data for _, data in scenario.sent.values()]
    assert s["QJSTCMPREQ"] == len(datas)
    assert s["QJSTCMPUNCMP"] == sum(len(d) for d in datas)
    stored = sum(r["stored_length_bytes"] for r in records if r["type"] == "PUT")
    assert s["QJSTCMPCOMP"] == stored < s["QJSTCMPUNCMP"]
    assert s["QJSTCMPFAIL"] == 80  # the random filler
    assert s["QJSTALW"] == 2 * s["mqlog_archive_offloads"] > 0
    assert s["QJSTCIOF"] == 16 * s["mqlog_archive_offloads"]
    assert s["QJSTCP1N"] == s["QJSTCP2N"] == s["mqlog_log_switches"] > 0
    assert s["QJSTCIWR"] % 2 == 0 and s["QJSTCIWR"] >= 2 * s["QJSTBFFL"] > 0
    # the active log's own writes: archive copies are counted apart, not subtracted again
    w = scenario.writer_stats
    assert w["archive_writes"] > 0
    assert s["QJSTLOGW"] == w["physical_writes"] and s["QJSTCIWR"] == w["pages_written"]
    assert s["QJSTWRF"] >= 80 and s["QJSTWRNW"] >= len(records)
    assert set(s["QJSTIO"]) == {"1", "2"}
    assert s["QJSTIO"]["2"]["IOMAXIO_LOGID"].startswith("LOGCOPY2.")
    # one buffer write per writer cycle; a cycle that rewrites a CI writes it copy after copy
    assert s["QJSTBFWR"] == w["write_cycles"] and 2 * s["QJSTBFWR"] <= s["QJSTLOGW"]
    assert 0 < s["QJSTWRW"] <= s["QJSTWRF"]  # forces that waited: not those already on disk
    assert "QJSTALR" not in s  # the model has no figure
    # cycles the write threshold started; serial writes: copy 1's and copy 2's of each held-back rewrite
    assert s["QJSTTHRW"] == w["threshold_writes"] <= s["QJSTBFWR"]
    assert s["QJSTSERW"] == 2 * w["ordered_writes"] > 0
    assert s["QJSTIO"]["1"]["IOCOUNT"] == w["primary_writes"] and s["QJSTIO"]["1"]["IOTOTIO_US"] > 0
    text = format_statistics(s)
    assert "QJSTLLCP" in text and "mqlog_archive_offloads" in text


def test_backout_of_an_old_unit_reads_the_archive():
    """Tiny active log, one unit of work left in flight while the log moves on: its records
    are archived and their data set reused, so restart's backout reads the archive."""
    fs = FaultInjectingStorage(MemoryStorage(), keep_write_log=False)
    env, p, qm = _qm(fs, shunting=False)
    ids = {}

    def work():
        yield from qm.start()
        for name in (FILL, "OLD.Q"):
            yield from qm.define_queue(name, max_depth=100_000)
        old = qm.connect("OLD")
        yield from old.put("OLD.Q", _padded(9))
        ids["old"] = old.uow.id
        filler = qm.connect("FILLER")
        rng = random.Random(3)
        for _ in range(150):
            yield from filler.put(FILL, _filler(rng))
            yield from filler.commit()

    env.run(until=env.process(work()))
    first = next(r for r in log_records(p.space, p.addressing, urid=_urid(p, ids["old"])) if r["type"] == "PUT")
    active = bsds_dict(p.space)["active"]["1"]
    assert all(not a["start"] <= first["address"] <= a["end"] for a in active if a["start"] is not None), \
        "the old put should be only in the archive now"
    fs.crash()
    storage = FaultInjectingStorage(fs.durable, keep_write_log=False)
    env2, p2, qm2 = _qm(storage, shunting=False)
    env2.run(until=env2.process(qm2.start()))
    s = log_statistics(p2.space, qm2.writer.stats.as_dict(), p2.codec.stats(), attrs.asdict(qm2.counters))
    assert s["QJSTRARH"] > 0
    assert s["QJSTRACT"] > 0
    row = _by_urid(ur_summary(p2.space, p2.addressing, urid=_urid(p2, ids["old"])))[ids["old"]]
    assert row["status"] == "BACKED OUT" and row["clrs"] == 1


# ------------------------------------------------------------------------------ loading a run


def test_open_zos_on_a_run_directory(tmp_path):
    out = tmp_path / "run"
    subprocess.run([sys.executable, "-m", "mqlog", "run", "--platform", "zos", "--workload", "putget-pairs",
                    "--set", "workload.pairs=2", "--set", "workload.messages_per_pair=50",
                    "--set", "log.ACTIVE_LOG_CIS=16", "--out", str(out)], check=True, capture_output=True)
    space, addressing, codec, metrics = open_zos(out)
    try:
        assert metrics["platform"] == "zos"
        assert isinstance(codec, CompLogCodec)
        assert len(space.archives) == metrics["archive_offloads"] > 0
        summary = ur_summary(space, addressing)
        assert len(summary) == metrics["commits"] and {r["status"] for r in summary} == {"COMMITTED"}
        puts = [r for r in log_records(space, addressing) if r["type"] == "PUT"]
        assert len(puts) == metrics["messages_put"]
    finally:
        space.storage.close()
    stats = stats_run(out, as_json=True)
    assert stats["QJSTLLCP"] == metrics["checkpoints"]
    assert stats["QJSTWRF"] == metrics["forces"]
    assert "QJSTLLCP" in stats_run(out)
    assert bsds_run(out, as_json=True)["archives_recorded"] == metrics["archive_offloads"]
    assert "ARCHIVE LOG COPY 2" in bsds_run(out)
    report = print_run(out, summary="only", as_json=True)
    assert report["counts"]["COMMITTED"] == metrics["commits"] and report["counts"]["IN COMMIT"] == 0
    urid = report["summary"][0]["urid_hex"]
    text = print_run(out, urid=urid, rba_start="0")
    assert "3 RECORDS PRINTED" in text and text.count(f"URID({urid})") == 1 + 3  # criteria; begin, put or get, commit
    json.dumps(report)


def test_open_zos_refuses_what_is_not_a_zos_run(tmp_path):
    with pytest.raises(MqlogError, match="no run.json"):
        open_zos(tmp_path)
    (tmp_path / "run.json").write_text(json.dumps({"platform": "distributed", "log": {}, "device": "ssd"}))
    with pytest.raises(MqlogError, match="distributed queue manager") as err:
        open_zos(tmp_path)
    assert "\n" not in str(err.value)
    (tmp_path / "run.json").write_text(json.dumps({"platform": "zos", "log": {}, "device": "ssd"}))
    with pytest.raises(MqlogError, match="qm/"):
        open_zos(tmp_path)
    (tmp_path / "qm").mkdir()
    with pytest.raises(MqlogError, match="BSDS"):
        open_zos(tmp_path)
    (tmp_path / "run.json").write_text("{not json")
    with pytest.raises(MqlogError, match="not valid JSON"):
        open_zos(tmp_path)


def test_a_bsds_copy_with_a_good_checksum_but_no_bsds_inside_says_so(scenario):
    """A BSDS copy whose checksum is good but whose contents are not a BSDS is shown damaged
    with that reason (not 'magic or checksum', and not silently)."""
    import zlib

    p = scenario.reopened()
    body = json.dumps({"not": "a bsds"}).encode()
    p.space.storage.replace("BSDS02", b"MQLB" + zlib.crc32(body).to_bytes(4, "little") + body)
    d = bsds_dict(p.space, p.addressing)
    second = next(c for c in d["bsds"] if c["dsname"] == "BSDS02")
    assert not second["valid"] and "contents" in second["problem"]
    assert d["bsds_in_use"] == "BSDS01"
    assert "BSDS02  DAMAGED (contents" in bsds_map(p.space, p.addressing)


def test_the_log_space_and_the_bsds_map_agree_on_a_copy_whose_sequence_is_not_a_number(scenario):
    """A BSDS copy with a good checksum whose sequence is not a whole number is damaged for the
    log space as for the map (one decoder): the space loads the other copy and says so, rather
    than comparing the two sequences and failing with a TypeError."""
    import zlib

    p = scenario.reopened()
    good = json.loads(p.space.storage.read("BSDS01", 8, p.space.storage.size("BSDS01") - 8))
    body = json.dumps(dict(good, sequence=str(good["sequence"] + 1))).encode()
    p.space.storage.replace("BSDS02", b"MQLB" + zlib.crc32(body).to_bytes(4, "little") + body)
    assert p.space.load_control() is not None
    assert ("bsds-damaged", {"dsname": "BSDS02"}) in p.space.events
    assert p.space.sequence == good["sequence"]
    d = bsds_dict(p.space, p.addressing)
    assert d["bsds_in_use"] == "BSDS01"
    assert next(c for c in d["bsds"] if c["dsname"] == "BSDS02")["problem"] == "contents: no sequence number"
