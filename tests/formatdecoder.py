"""An independent decoder of the log, written from docs/FORMAT.md alone: it uses only ``struct``,
``zlib`` and the numbers in the document, never ``mqlog.core.format`` or the reader, so that the
format tests (``tests/core/test_format_spec.py``) catch the code and the document drifting
apart."""

from __future__ import annotations

import bisect
import struct
import zlib
from pathlib import Path

FORMAT_MD = Path(__file__).resolve().parents[1] / "docs" / "FORMAT.md"


# ============================================================================================
# The decoder: docs/FORMAT.md, nothing else.
# ============================================================================================

class FormatViolation(AssertionError):
    """The bytes break a rule of FORMAT.md."""


# §2.2 the page
PAGE_SIZE = 4096
PAGE_HEADER = struct.Struct("<4sBBHQQHHI")  # magic, version, flags, index, address, write no, used, first, crc
PAYLOAD = PAGE_SIZE - 32
MAGIC = b"MQLP"
NONE_STARTS = 0xFFFF
PARTIAL, AFTER_PAD = 0x01, 0x02

# §3.1 the record header
RECORD_HEADER = struct.Struct("<BBHIQQQI")  # type, rm, flags, length, uow, prev, stamp, crc
MAX_RECORD = 16 << 20
NO_ADDRESS = 0xFFFF_FFFF_FFFF_FFFF


def page_crc(page: bytes) -> int:
    """§2.2: CRC-32 of all 4096 bytes, the CRC field taken as zero."""
    return zlib.crc32(page[0:28] + b"\0\0\0\0" + page[32:PAGE_SIZE])


def decode_page(page: bytes, expected_address: int) -> dict:
    """One good page (§2.2, §4.1), or FormatViolation."""
    if len(page) != PAGE_SIZE:
        raise FormatViolation(f"page at {expected_address:#x}: {len(page)} bytes")
    magic, version, flags, index, address, write_no, used, first, crc = PAGE_HEADER.unpack_from(page)
    if magic != MAGIC or version != 1:
        raise FormatViolation(f"page at {expected_address:#x}: magic {magic!r}, version {version}")
    if crc != page_crc(page):
        raise FormatViolation(f"page at {expected_address:#x}: CRC {crc:#010x} != {page_crc(page):#010x}")
    if address != expected_address:
        raise FormatViolation(f"page at {expected_address:#x} says it is {address:#x}")
    if used > PAYLOAD or (first != NONE_STARTS and first >= used):
        raise FormatViolation(f"page at {address:#x}: used {used}, first record {first}")
    if index * PAGE_SIZE > address:  # §4.1: the write would start below address 0
        raise FormatViolation(f"page at {address:#x}: index {index}")
    if flags & ~(PARTIAL | AFTER_PAD):
        raise FormatViolation(f"page at {address:#x}: reserved flag bits {flags:#06x}")
    if bool(flags & PARTIAL) != (used < PAYLOAD):
        raise FormatViolation(f"page at {address:#x}: PARTIAL flag disagrees with used={used}")
    if any(page[32 + used:]):
        raise FormatViolation(f"page at {address:#x}: unused payload bytes are not zero")
    return dict(flags=flags, index=index, address=address, write_no=write_no, used=used, first=first,
                payload=page[32:32 + used])


def blank_name(raw: bytes) -> str:
    """§1: ASCII, blank-padded."""
    return raw.rstrip(b" ").decode("ascii")


def zeros(raw: bytes, what: str) -> None:
    if any(raw):
        raise FormatViolation(f"{what} is not zero")


def _xid(n: int, raw: bytes) -> bytes:
    if n > 140:
        raise FormatViolation(f"XID length {n}")
    zeros(raw[n:], "XID tail")
    return raw[:n]


def decode_body(rtype: int, flags: int, rec: bytes) -> dict:
    """§3.4. Offsets are from the start of the record, as in the tables."""
    n = len(rec)
    u = struct.unpack_from
    if rtype == 0x01:  # Begin
        if n != 72:
            raise FormatViolation(f"Begin of {n} bytes")
        (t,) = u("<Q", rec, 36)
        return dict(time_us=t, application=blank_name(rec[44:72]))
    if rtype == 0x02:  # Put: 750 + n
        block, mlen, segs, reserved, stored = u("<QIHHI", rec, 108)
        if stored != n - 750 or reserved:
            raise FormatViolation(f"Put stores {stored} bytes in a {n}-byte record")
        zeros(rec[492:750], "Put control area")
        return dict(flags=flags, queue=blank_name(rec[36:84]), msg_id=rec[84:108], block=block,
                    message_length=mlen, segments=segs, descriptor=rec[128:492], data=rec[750:])
    if rtype == 0x03:  # PutSegment: 300 + n
        index, reserved, offset, stored = u("<HHII", rec, 108)
        if stored != n - 300 or reserved:
            raise FormatViolation(f"PutSegment stores {stored} bytes in a {n}-byte record")
        zeros(rec[120:300], "PutSegment control area")
        return dict(flags=flags, queue=blank_name(rec[36:84]), msg_id=rec[84:108], index=index,
                    offset=offset, data=rec[300:])
    if rtype == 0x04:  # Get: 260
        if n != 260:
            raise FormatViolation(f"Get of {n} bytes")
        block, mlen = u("<QI", rec, 108)
        zeros(rec[120:260], "Get control area")
        return dict(queue=blank_name(rec[36:84]), msg_id=rec[84:108], block=block, message_length=mlen)
    if rtype == 0x05:  # Prepare: 750
        if n != 750:
            raise FormatViolation(f"Prepare of {n} bytes")
        t, x = u("<QB", rec, 36)
        zeros(rec[185:750], "Prepare control area")
        return dict(time_us=t, xid=_xid(x, rec[45:185]))
    if rtype == 0x06:  # Commit: 120
        if n != 120:
            raise FormatViolation(f"Commit of {n} bytes")
        t, ops = u("<QI", rec, 36)
        zeros(rec[48:120], "Commit control area")
        return dict(time_us=t, operations=ops)
    if rtype == 0x07:  # Backout: 1000 + 12k
        t, k = u("<QI", rec, 36)
        if n != 1000 + 12 * k:
            raise FormatViolation(f"Backout of {k} operations in {n} bytes")
        zeros(rec[48:1000], "Backout control area")
        undone = [u("<QI", rec, 1000 + 12 * i) for i in range(k)]
        return dict(time_us=t, undone=undone)
    if rtype == 0x08:  # CLR: 140
        if n != 140:
            raise FormatViolation(f"CLR of {n} bytes")
        undoes, undo_next, action = u("<QQB", rec, 36)
        zeros(rec[53:56], "CLR reserved bytes")
        block, mlen = u("<QI", rec, 128)
        return dict(undoes=undoes, undo_next=undo_next, action=action, queue=blank_name(rec[56:104]),
                    msg_id=rec[104:128], block=block, message_length=mlen)
    if rtype == 0x09:  # CheckpointBegin: 52
        if n != 52:
            raise FormatViolation(f"CheckpointBegin of {n} bytes")
        number, t = u("<QQ", rec, 36)
        return dict(number=number, time_us=t)
    if rtype == 0x0A:  # CheckpointEnd: 698 + 200u + 64q
        begin, number, t, nu, nq = u("<QQQII", rec, 36)
        if n != 698 + 200 * nu + 64 * nq:
            raise FormatViolation(f"CheckpointEnd of {nu} UOWs, {nq} queues in {n} bytes")
        zeros(rec[68:698], "CheckpointEnd control area")
        uows = []
        for i in range(nu):
            e = rec[698 + 200 * i:698 + 200 * (i + 1)]
            uow, state, first, last, bt, ops, x = u("<QBQQQIB", e, 0)
            zeros(e[178:200], "UOW entry tail")
            uows.append((uow, state, first, last, bt, ops, _xid(x, e[38:178])))
        queues = []
        for i in range(nq):
            e = rec[698 + 200 * nu + 64 * i:][:64]
            queues.append((blank_name(e[0:48]),) + u("<QQ", e, 48))
        return dict(begin=begin, number=number, time_us=t, uows=uows, queues=queues)
    if rtype == 0x0B:  # ObjectChange: 1500 / 1024 / 300, more if the text does not fit
        action, otype = u("<BB", rec, 36)
        (tlen,) = u("<I", rec, 86)
        nominal = {1: 1500, 2: 1024, 3: 300}[action]
        if n != max(nominal, 90 + tlen):
            raise FormatViolation(f"ObjectChange action {action} with {tlen} bytes of text in {n} bytes")
        zeros(rec[90 + tlen:], "ObjectChange padding")
        return dict(action=action, object_type=otype, name=blank_name(rec[38:86]),
                    attributes=rec[90:90 + tlen].decode("utf-8"))
    if 0x40 <= rtype <= 0x7F:  # platform record: the body is the platform's
        return dict(flags=flags, body=rec[36:])
    raise FormatViolation(f"invalid record type {rtype:#04x}")


# §3.2: the resource manager each core type must carry
CORE_RM = {0x01: 1, 0x02: 2, 0x03: 2, 0x04: 2, 0x05: 1, 0x06: 1, 0x07: 1, 0x08: 2, 0x09: 4, 0x0A: 4, 0x0B: 3}
CODEC_TYPES = (0x02, 0x03)  # only these use header flag bits 0-3


def decode_record(rec: bytes) -> dict:
    """§3.1 header + §3.4 body."""
    rtype, rm, flags, length, uow, prev, stamp, crc = RECORD_HEADER.unpack_from(rec)
    if length != len(rec):
        raise FormatViolation(f"record length {length} != {len(rec)}")
    if zlib.crc32(rec[0:32] + rec[36:]) != crc:
        raise FormatViolation(f"record CRC mismatch, type {rtype:#04x}")
    if rtype in CORE_RM and rm != CORE_RM[rtype]:
        raise FormatViolation(f"record type {rtype:#04x} with resource manager {rm}")
    if rtype in CORE_RM and rtype not in CODEC_TYPES and flags:
        raise FormatViolation(f"record type {rtype:#04x} with flags {flags:#06x}")
    fields = dict(type=rtype, rm=rm, uow=uow, prev=prev, stamp=stamp, flags=flags)
    fields.update(decode_body(rtype, flags, rec))
    return fields


def decode_log(file: bytes, start: int) -> tuple[list[dict], list[tuple[int, int, dict]], int]:
    """Every page of a healthy log file (page p at offset p - start, §2.1) and every record.

    Returns (pages, [(address, length, fields)], end address). Checks §2.3 as it goes: the
    first-record offsets, no record continuing off a short page, AFTER_PAD exactly after a
    short page. And §2.4: each page continues the write of the page before it (same write
    number, index one higher) or starts a new one (index 0, a higher write number), so write
    numbers never decrease; the log's first page has index 0.
    """
    if len(file) % PAGE_SIZE:
        raise FormatViolation(f"log file of {len(file)} bytes is not whole pages")
    pages = [decode_page(file[off:off + PAGE_SIZE], start + off) for off in range(0, len(file), PAGE_SIZE)]

    # The payload stream (§2.3): each page's payload[0:used], in address order.
    stream = bytearray()
    page_starts = []  # stream offset where each page's payload begins
    short_ends = set()  # stream offsets that no record may straddle
    if pages and pages[0]["index"] != 0:
        raise FormatViolation(f"the log's first page has index {pages[0]['index']}")
    for i, pg in enumerate(pages):
        page_starts.append(len(stream))
        stream += pg["payload"]
        if pg["used"] < PAYLOAD and i + 1 < len(pages):
            short_ends.add(len(stream))
        if i:
            before = pages[i - 1]
            if bool(pg["flags"] & AFTER_PAD) != (before["used"] < PAYLOAD):
                raise FormatViolation(f"page {pg['address']:#x}: AFTER_PAD={bool(pg['flags'] & AFTER_PAD)} "
                                      f"after a page with used={before['used']}")
            continues = pg["write_no"] == before["write_no"] and pg["index"] == before["index"] + 1
            starts_write = pg["index"] == 0 and pg["write_no"] > before["write_no"]
            if not (continues or starts_write):
                raise FormatViolation(f"page {pg['address']:#x}: write {pg['write_no']} index {pg['index']} "
                                      f"after write {before['write_no']} index {before['index']}")

    def address_of(pos: int) -> int:
        i = bisect.bisect_right(page_starts, pos) - 1
        return pages[i]["address"] + 32 + (pos - page_starts[i])

    records = []
    starts = []
    pos = 0
    while pos < len(stream):
        if len(stream) - pos < 36:
            raise FormatViolation(f"{len(stream) - pos} stray bytes at the end of the log")
        (length,) = struct.unpack_from("<I", stream, pos + 4)
        if not 36 <= length <= MAX_RECORD:  # checked before anything is read (§3.1)
            raise FormatViolation(f"record length {length} out of bounds")
        end = pos + length
        if end > len(stream) or any(pos < s < end for s in short_ends):
            raise FormatViolation(f"record at {address_of(pos):#x} runs past a short page or the log")
        records.append((address_of(pos), length, decode_record(bytes(stream[pos:end]))))
        starts.append(pos)
        pos = end

    # first record offsets (§2.3)
    for i, pg in enumerate(pages):
        lo, hi = page_starts[i], page_starts[i] + pg["used"]
        j = bisect.bisect_left(starts, lo)
        want = starts[j] - lo if j < len(starts) and starts[j] < hi else NONE_STARTS
        if pg["first"] != want:
            raise FormatViolation(f"page {pg['address']:#x}: first record {pg['first']}, records start at {want}")

    # The end address, normalised (§2.1).
    last = pages[-1]
    end_address = last["address"] + 32 + last["used"]
    if last["used"] == PAYLOAD:
        end_address = last["address"] + PAGE_SIZE + 32
    return pages, records, end_address
