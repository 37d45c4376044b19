"""docs/FORMAT.md kept honest: an independent decoder, written from the document alone,
reads back what the real writer wrote.

The decoder (``tests/formatdecoder.py``) uses only ``struct`` and ``zlib`` and the numbers in
FORMAT.md; it must not import ``mqlog.core.format.records``, ``pages`` or ``reader``. This file
drives the real :class:`LogWriter` (group commit, partial-page rewrites, padding, records
spanning pages, a restart that resumes the log) with every record type. It then checks that
the decoder finds exactly what was appended, and that every page obeys the document. If the
code or the document changes without the other, this fails.
"""

from __future__ import annotations

import random
import re
import struct
import zlib

import pytest

from formatdecoder import (FORMAT_MD, FormatViolation, PAGE_SIZE, PAGE_HEADER, NONE_STARTS, AFTER_PAD,
                           MAX_RECORD, page_crc, blank_name, zeros, decode_record, decode_log)

import attrs
import simpy
from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.errors import RecordTooLargeError
from mqlog.core.format.pages import LogBuffer  # only to resume after a restart
from mqlog.core.format.records import (
    Backout,
    Begin,
    CheckpointBegin,
    CheckpointEnd,
    Clr,
    Commit,
    Get,
    ObjectChange,
    OpaqueRecord,
    Prepare,
    Put,
    PutSegment,
    QueueEntry,
    UndoneOp,
    UowEntry,
    split_message,
)
from mqlog.core.log.space import ReferenceLogSpace
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.log.writer import LogWriter


@attrs.frozen
class StampingAddressing:
    """A test platform: a log that starts at a page-aligned address above 0 and stamps records."""

    start: int
    stamps: bool = True
    name: str = "test address"
    limit: int = 1 << 64

    def format(self, address: int) -> str:
        return f"{address:X}"

    def parse(self, text: str) -> int:
        return int(text, 16)

    def stamp(self, now_us: float) -> int:
        return 1_000_000 + int(now_us * 16)


def expected(record) -> dict:
    """What FORMAT.md says the decoder must find for ``record``: read off the objects, not bytes."""
    r = record
    common = dict(uow=r.uow, prev=r.prev, stamp=r.stamp, flags=0)
    if isinstance(r, OpaqueRecord):
        return dict(common, type=r.type, rm=r.rm, flags=r.flags, body=r.body)
    common.update(type=int(r.TYPE), rm=int(r.RM))
    if isinstance(r, Begin):
        return dict(common, time_us=r.time_us, application=r.application)
    if isinstance(r, Put):
        return dict(common, flags=int(r.codec), queue=r.queue, msg_id=r.msg_id, block=r.block,
                    message_length=r.message_length, segments=r.segments, descriptor=r.descriptor, data=r.data)
    if isinstance(r, PutSegment):
        return dict(common, flags=int(r.codec), queue=r.queue, msg_id=r.msg_id, index=r.index,
                    offset=r.offset, data=r.data)
    if isinstance(r, Get):
        return dict(common, queue=r.queue, msg_id=r.msg_id, block=r.block, message_length=r.message_length)
    if isinstance(r, Prepare):
        return dict(common, time_us=r.time_us, xid=r.xid)
    if isinstance(r, Commit):
        return dict(common, time_us=r.time_us, operations=r.operations)
    if isinstance(r, Backout):
        return dict(common, time_us=r.time_us, undone=[(o.address, o.sequence) for o in r.undone])
    if isinstance(r, Clr):
        return dict(common, undoes=r.undoes, undo_next=r.undo_next, action=int(r.action), queue=r.queue,
                    msg_id=r.msg_id, block=r.block, message_length=r.message_length)
    if isinstance(r, CheckpointBegin):
        return dict(common, number=r.number, time_us=r.time_us)
    if isinstance(r, CheckpointEnd):
        return dict(common, begin=r.begin, number=r.number, time_us=r.time_us,
                    uows=[(e.uow, int(e.state), e.first, e.last, e.begin_time_us, e.operations, e.xid)
                          for e in r.uows],
                    queues=[(q.name, q.depth, q.media) for q in r.queues])
    if isinstance(r, ObjectChange):
        return dict(common, action=int(r.action), object_type=int(r.object_type), name=r.name,
                    attributes=r.attributes)
    raise TypeError(type(r))


def run_workload(*, start=0, addressing=None, pad_policy=None, seed=7):
    """Concurrent applications writing every record type through the real writer, then a
    restart: a new writer resumes the log where the decoder says it ends (§2.4) and more
    applications carry on.

    Returns (log file bytes, [(address, record as logged)], the last writer,
    (end address at the restart, last write number found then)).
    """
    env = simpy.Environment()
    storage = MemoryStorage()
    space = ReferenceLogSpace(storage, start=start)
    writer = LogWriter(env, space, Device(env, get_profile("ssd")), buffer_pages=16,
                       write_threshold_pages=4, addressing=addressing, pad_policy=pad_policy)
    rng = random.Random(seed)
    logged: list[tuple[int, object]] = []

    def put(record):
        """Append through the writer; remember the record with the stamp the writer gives it."""
        if addressing is not None and addressing.stamps:
            record = attrs.evolve(record, stamp=addressing.stamp(env.now))
        address = yield from writer.put(record)
        logged.append((address, record))
        return address

    def messaging(app: int, units: int):
        for k in range(units):
            yield env.timeout(rng.expovariate(1 / 40.0))
            uow = app * 100 + k + 1
            prev = yield from put(Begin(int(env.now), f"app{app}.exe", uow=uow))
            undone = []
            for m in range(rng.randint(1, 4)):
                size = rng.choice((0, 17, 700, 3000, 5000, 9000, 40_000))
                data = bytes(rng.getrandbits(8) for _ in range(64)) * (size // 64) + b"z" * (size % 64)
                msg_id = f"A{app:02d}U{k:03d}M{m:02d}".encode().ljust(24, b"\0")
                pieces = split_message(data)
                codec = rng.choice((0, 0, 1, 2))
                desc = bytes([app, k, m]) * 121 + b"\x7f"
                prev = yield from put(Put(f"APP{app}.Q", msg_id, pieces[0], len(data), block=1000 * app + m,
                                          segments=len(pieces), codec=codec, descriptor=desc, uow=uow, prev=prev))
                undone.append(UndoneOp(prev, len(undone) + 1))
                for i, piece in enumerate(pieces[1:], 1):
                    prev = yield from put(PutSegment(f"APP{app}.Q", msg_id, i, i * 15_700, piece, codec=codec,
                                                     uow=uow, prev=prev))
                if rng.random() < 0.5:
                    prev = yield from put(Get(f"APP{app}.Q", msg_id, block=1000 * app + m,
                                              message_length=len(data), uow=uow, prev=prev))
                    undone.append(UndoneOp(prev, len(undone) + 1))
            outcome = rng.choice(("commit", "backout", "2pc"))
            if outcome == "2pc":
                prev = yield from put(Prepare(int(env.now), b"XID-%d-%d" % (app, k), uow=uow, prev=prev))
            if outcome == "backout":
                yield from put(Backout(int(env.now), undone, uow=uow, prev=prev))
            else:
                yield from put(Commit(int(env.now), len(undone), uow=uow, prev=prev))
            yield writer.force()

    def admin():
        yield env.timeout(100)
        yield from put(ObjectChange(1, 1, "APP0.Q", "MAXDEPTH(5000) DEFPSIST(YES)"))
        yield from put(ObjectChange(2, 2, "TO.QM2", "DESCR('" + "x" * 1200 + "')"))  # past 1024
        yield from put(ObjectChange(3, 3, "QM1"))
        yield from put(ObjectChange(3, 1, "OLD.Q", "é" * 150))  # UTF-8, past 300
        yield writer.force()
        yield env.timeout(300)
        begin = yield from put(CheckpointBegin(1, int(env.now)))
        uows = [UowEntry(9001, 1, 0x1020, 0x2040, 5, 3),
                UowEntry(9002, 2, 0x3020, 0x3020, 6, 1, b"gtrid-bqual" * 12),
                UowEntry(9003, 4)]
        queues = [QueueEntry(f"APP{i}.Q", 10 * i, 3 * i) for i in range(5)]
        yield from put(CheckpointEnd(begin, 1, int(env.now), uows, queues))
        yield from put(Clr(0x1020, 0x2040, 1, "APP0.Q", b"c" * 24, 77, 4096, uow=9001, prev=0x2040))
        yield from put(Clr(0x2040, 0xFFFF_FFFF_FFFF_FFFF, 2, uow=9001))
        yield from put(Clr(0x3020, 0xFFFF_FFFF_FFFF_FFFF, 3, uow=9003))
        for code, size in ((0x40, 6000), (0x41, 10), (0x60, 0), (0x61, 400), (0x62, 90)):
            yield from put(OpaqueRecord(code, 3, bytes(range(256)) * (size // 256) + b"p" * (size % 256),
                                        uow=code))
        yield writer.force()

    for app in range(5):
        env.process(messaging(app, 6))
    env.process(admin())
    env.run()
    assert writer.durable == writer.next_address, "every application forced at the end"

    # Restart (§2.4): the decoder finds the end and the last write number; a new writer
    # resumes there (rewriting the partial last page, or padding it) and continues the
    # write numbers.
    # ``put`` and ``messaging`` see the new env and writer (closures over these names).
    pages, _, end = decode_log(storage.read(space.file, 0, storage.size(space.file)), start)
    last = pages[-1]
    tail = last["payload"] if end < last["address"] + PAGE_SIZE else b""
    resumed = (end, max(pg["write_no"] for pg in pages))
    env = simpy.Environment()
    writer = LogWriter(env, space, Device(env, get_profile("ssd")), buffer_pages=16, write_threshold_pages=4,
                       addressing=addressing, pad_policy=pad_policy, stats=writer.stats,
                       buffer=LogBuffer.resume(end, tail, first_record=last["first"]),
                       last_write_no=resumed[1])
    for app in (5, 6):
        env.process(messaging(app, 3))
    env.run()
    assert writer.durable == writer.next_address
    return storage.read(space.file, 0, storage.size(space.file)), logged, writer, resumed


SCENARIOS = {
    # pages rewritten in place as they fill; the log starts at address 0
    "rewrite": dict(),
    # a platform that pads any page more than half full, starts its log at 0x30000 and stamps records
    "pad": dict(start=0x30000, addressing=StampingAddressing(0x30000), pad_policy=lambda used: used > 2000),
}


@pytest.fixture(scope="module", params=sorted(SCENARIOS))
def workload(request):
    return request.param, run_workload(**SCENARIOS[request.param])


def test_decoder_finds_exactly_what_was_appended(workload):
    name, (file, logged, writer, _) = workload
    pages, records, end = decode_log(file, SCENARIOS[name].get("start", 0))
    assert [a for a, _, _ in records] == [a for a, _ in logged]
    for (address, length, found), (_, record) in zip(records, logged):
        assert found == expected(record), f"record at {address:#x}"
        assert length == len(record.to_bytes())
    assert end == writer.next_address
    # every record type of §3.2 was exercised
    assert {r["type"] for _, _, r in records} == {*range(0x01, 0x0C), 0x40, 0x41, 0x60, 0x61, 0x62}


def test_every_page_checksum_verifies_per_the_document(workload):
    name, (file, _, _, _) = workload
    start = SCENARIOS[name].get("start", 0)
    n = len(file) // PAGE_SIZE
    assert n > 20
    for i in range(n):
        page = file[i * PAGE_SIZE:(i + 1) * PAGE_SIZE]
        assert PAGE_HEADER.unpack_from(page)[8] == page_crc(page)
        assert PAGE_HEADER.unpack_from(page)[4] == start + i * PAGE_SIZE


def test_the_workload_exercises_the_framing_rules(workload):
    """The decoder's checks only mean something if the log contains the cases FORMAT.md §2.3 and §2.4 describe."""
    name, (file, logged, writer, resumed) = workload
    pages, records, _ = decode_log(file, SCENARIOS[name].get("start", 0))
    spanning = [r["type"] for a, n, r in records if (a + n - 1) // PAGE_SIZE - a // PAGE_SIZE >= 2]
    assert 0x02 in spanning and 0x03 in spanning, "put records spanning three pages or more"
    assert any(pg["first"] == NONE_STARTS for pg in pages), "a page holding only continuation"
    assert any(pg["first"] not in (0, NONE_STARTS) for pg in pages), "a page that starts mid-record"
    assert any(a % PAGE_SIZE + 36 > PAGE_SIZE for a, _, _ in records), "a record header split across pages"
    assert writer.stats.partial_page_rewrites > 0
    if name == "pad":
        assert writer.stats.padded_pages > 0
        assert any(pg["flags"] & AFTER_PAD for pg in pages)
        assert all(r["stamp"] for _, _, r in records)
    else:
        assert not any(pg["flags"] & AFTER_PAD for pg in pages)
    assert len({pg["write_no"] for pg in pages}) > 5
    # §2.4: writes of several pages, and a write that starts by rewriting a partial page
    # (index 0, yet the page opens with the end of a record from the page before: the
    # write that wrote that record wrote this page first)
    assert any(pg["index"] >= 3 for pg in pages)
    assert any(pg["index"] == 0 and pg["first"] != 0 for pg in pages[1:])
    # the restart: the writer after it continued the write numbers (decode_log checks they never go down)
    end, last_no = resumed
    assert any(pg["write_no"] > last_no for pg in pages)
    if name == "rewrite":
        assert end % PAGE_SIZE > 32, "the log was resumed mid-page"
        resumed_page = pages[(end - end % PAGE_SIZE) // PAGE_SIZE]
        assert resumed_page["index"] == 0 and resumed_page["write_no"] > last_no, "rewritten after the restart"


@pytest.mark.parametrize("where", [5, 28, 40, 2000, PAGE_SIZE - 1])
def test_the_decoder_is_not_vacuous(workload, where):
    """A single flipped bit anywhere in a page fails that page's CRC."""
    name, (file, _, _, _) = workload
    damaged = bytearray(file)
    damaged[PAGE_SIZE + where] ^= 0x10
    with pytest.raises(FormatViolation):
        decode_log(bytes(damaged), SCENARIOS[name].get("start", 0))


def _with_header(file: bytes, i: int, **change) -> bytes:
    """``file`` with page ``i``'s header fields changed and its CRC made good again (§2.2)."""
    names = ("magic", "version", "flags", "index", "address", "write_no", "used", "first", "crc")
    off = i * PAGE_SIZE
    fields = dict(zip(names, PAGE_HEADER.unpack_from(file, off)))
    fields.update(change, crc=0)
    page = bytearray(file[off:off + PAGE_SIZE])
    PAGE_HEADER.pack_into(page, 0, *fields.values())
    page[28:32] = page_crc(page).to_bytes(4, "little")
    return file[:off] + bytes(page) + file[off + PAGE_SIZE:]


@pytest.mark.parametrize("change", ["index off by one", "index past the address", "write number went down"])
def test_the_decoder_checks_indexes_and_write_numbers(workload, change):
    """§2.4 on a page whose CRC is good: the decoder is not vacuous about indexes and write numbers."""
    name, (file, _, _, _) = workload
    start = SCENARIOS[name].get("start", 0)
    pages, _, _ = decode_log(file, start)
    if change == "index off by one":  # a page that continues its write
        i = [i for i, pg in enumerate(pages) if pg["index"] >= 2][-1]
        damaged = _with_header(file, i, index=pages[i]["index"] + 1)
    elif change == "index past the address":  # §4.1: the write would start below address 0
        damaged = _with_header(file, 0, index=start // PAGE_SIZE + 1)
    else:  # a page that starts a write, numbered below the write before it
        i = [i for i, pg in enumerate(pages) if i and pg["index"] == 0][-1]
        damaged = _with_header(file, i, write_no=pages[i - 1]["write_no"] - 1)
    with pytest.raises(FormatViolation):
        decode_log(damaged, start)


def test_record_limits_as_documented():
    """§3.1: 16 MiB is the largest record; §3.2: OpaqueRecord takes platform codes only."""
    body = bytes(MAX_RECORD - 36)
    largest = OpaqueRecord(0x40, 0, body).to_bytes()
    assert len(largest) == MAX_RECORD and decode_record(largest)["type"] == 0x40
    with pytest.raises(RecordTooLargeError):
        OpaqueRecord(0x40, 0, body + b"x").to_bytes()
    for code in (0x00, 0x0B, 0x3F, 0x80, 0xFF):
        with pytest.raises(ValueError):
            OpaqueRecord(code, 0, b"")


# --- §5, the worked example -----------------------------------------------------------------

_EXAMPLE_LINE = re.compile(r"^([0-9a-f]{4})  ((?:[0-9a-f]{2} )*[0-9a-f]{2})")


def _example_bytes() -> list[tuple[int, bytes]]:
    text = FORMAT_MD.read_text(encoding="utf-8")
    section = text[text.index("## 5. Worked example"):]
    block = section[section.index("```text"):]
    block = block[:block.index("```", 3)]
    rows = []
    for line in block.splitlines():
        m = _EXAMPLE_LINE.match(line)
        if m:
            rows.append((int(m.group(1), 16), bytes.fromhex(m.group(2))))
    return rows


def test_worked_example_matches_the_writer():
    env = simpy.Environment()
    storage = MemoryStorage()
    space = ReferenceLogSpace(storage)
    writer = LogWriter(env, space, Device(env, get_profile("ssd")))

    def app():
        get = yield from writer.put(Get("APP.QUEUE", b"MSGID-0000000000000001\0\0", block=7,
                                        message_length=100, uow=5))
        yield from writer.put(Commit(1_000_000, 1, uow=5, prev=get))
        yield writer.force()

    env.process(app())
    env.run()
    file = storage.read(space.file, 0, storage.size(space.file))
    assert len(file) == PAGE_SIZE
    rows = _example_bytes()
    assert len(rows) >= 30
    for offset, shown in rows:
        assert file[offset:offset + len(shown)] == shown, f"FORMAT.md §5 line {offset:04x}"
    # and the example decodes as the document says
    _, records, end = decode_log(file, 0)
    assert [(a, n, r["type"]) for a, n, r in records] == [(0x20, 260, 0x04), (0x124, 120, 0x06)]
    assert records[1][2]["prev"] == 0x20 and end == 0x19C


def test_reference_control_file_matches_the_document():
    """FORMAT.md §6.1, decoded by hand."""
    from mqlog.core.platform import LogControl
    from mqlog.core.reference import ReferenceSpace
    from mqlog.core.disk.storage import MemoryStorage

    storage = MemoryStorage()
    ReferenceSpace(storage).save_control(LogControl(checkpoint=0x1234, tail=0x1000, checkpoint_number=7))
    raw = storage.read("reference.ctl", 0, 100)
    assert len(raw) == 34
    magic, version, checkpoint, tail, number, crc = struct.unpack("<4sHQQQI", raw)
    assert (magic, version, checkpoint, tail, number) == (b"MQLC", 1, 0x1234, 0x1000, 7)
    assert crc == zlib.crc32(raw[:30])


def decode_media_image(rec: bytes) -> dict:
    """FORMAT.md §6.3's MediaImage record, by hand from the table."""
    u = struct.unpack_from
    rtype, rm = rec[0], rec[1]
    if (rtype, rm) != (0x40, 5):
        raise FormatViolation(f"not a media image: type {rtype:#04x} rm {rm}")
    (n,) = u("<I", rec, 100)
    name = blank_name(rec[36:84])
    image_id, segment, segments = u("<QII", rec, 84)
    fixed = 800 if segment == 0 else 300
    zeros(rec[104:fixed], "media image fixed part")
    if len(rec) != fixed + n:
        raise FormatViolation(f"media image of {len(rec)} bytes with {n} bytes of data")
    return dict(queue=name, image_id=image_id, segment=segment, segments=segments, data=rec[fixed:])


def decode_image_bytes(raw: bytes) -> tuple[str, list]:
    """FORMAT.md §6.3's image, by hand."""
    u = struct.unpack_from
    magic, version, zero, a, m = u("<4sHHII", raw, 0)
    if (magic, version, zero) != (b"MQMI", 1, 0):
        raise FormatViolation("image header")
    attrs_text = raw[16:16 + a].decode("utf-8")
    at, out = 16 + a, []
    for _ in range(m):
        msg_id, state = raw[at:at + 24], raw[at + 24]
        zeros(raw[at + 25:at + 28], "image message header")
        uow, order, length, crc = u("<QQII", raw, at + 28)
        data = raw[at + 52:at + 52 + length]
        if zlib.crc32(data) != crc:
            raise FormatViolation("image message CRC")
        out.append((msg_id, state, uow, order, data))
        at += 52 + length
    if at != len(raw):
        raise FormatViolation("bytes after the last image message")
    return attrs_text, out


def test_media_images_in_a_real_log_match_the_document():
    """Take an image of a queue holding committed and uncommitted messages (one large enough
    to need two segments), then decode the log's 0x40 records and the image by hand."""
    import simpy
    from mqlog.core.disk.devices import Device, get_profile
    from mqlog.core.qm.manager import QmConfig, QueueManager
    from mqlog.core.log.reader import LogReader
    from mqlog.core.disk.storage import MemoryStorage
    from mqlog.distributed.media import rcdmqimg
    from mqlog.distributed.platform import distributed_platform

    storage = MemoryStorage()
    env = simpy.Environment()
    platform = distributed_platform(storage, file_pages=256, linear=True)
    qm = QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig())
    payloads = [b"small", bytes(range(256)) * 1200, b"uncommitted"]

    def go():
        yield from qm.start()
        yield from qm.define_queue("IMG.Q")
        a, b = qm.connect("A"), qm.connect("B")
        yield from a.put("IMG.Q", payloads[0])
        yield from a.put("IMG.Q", payloads[1])
        yield from a.commit()
        yield from b.put("IMG.Q", payloads[2])
        yield from rcdmqimg(qm, "IMG.Q")

    env.run(until=env.process(go()))
    control = platform.space.load_control()
    raw_records = []
    for address, record in LogReader(platform.space, 0):
        if record.to_bytes()[0] == 0x40:
            raw_records.append(decode_media_image(record.to_bytes()))
    assert [r["segment"] for r in raw_records] == [0, 1] and raw_records[0]["segments"] == 2
    assert {r["image_id"] for r in raw_records} == {control.media}
    text, messages = decode_image_bytes(b"".join(r["data"] for r in raw_records))
    assert text.startswith("MAXDEPTH(")
    assert [(m[1], m[4]) for m in messages] == [(1, payloads[0]), (1, payloads[1]), (2, payloads[2])]
    assert messages[0][2] == messages[1][2] == 0 and messages[2][2] != 0  # only the last is owned by a unit of work
