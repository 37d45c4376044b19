"""The reader tests' logs: a small workload driven through the real writer in SimPy (with or
without padding, optionally under a fault plan), and the damage the table in
``tests/core/test_reader.py`` does to chosen pages of it."""

from __future__ import annotations

import random
import struct
from functools import lru_cache

import attrs
import simpy
from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.errors import SimulatedCrash
from mqlog.core.disk.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.format.pages import PAGE_SIZE, advance, build_page
from mqlog.core.log.reader import scan
from mqlog.core.format.records import NO_ADDRESS, Begin, Commit, Get, Put
from mqlog.core.log.space import ReferenceLogSpace
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.log.writer import LogWriter

FILE = "reference.log"
HEADER = 32
PAGE_HDR = struct.Struct("<4sBBHQQHHI")  # magic, version, flags, index, address, write_no, used, first, crc


# --- making logs ------------------------------------------------------------------------------

@attrs.frozen
class Run:
    records: tuple  # (address, record), in address order: everything the writer was given
    acked: int  # every record below this address was covered by a force that completed
    crashed: bool
    physical_writes: int
    storage: MemoryStorage  # the durable image
    stats: object  # the writer's LogStatistics

    def end_of(self, i: int) -> int:
        addr, rec = self.records[i]
        return advance(addr, len(rec.to_bytes()))

    def ending_by(self, address: int) -> int:
        """How many records end at or before ``address`` (a payload position)."""
        return sum(1 for i in range(len(self.records)) if self.end_of(i) <= address)

    def crosses_into(self, page: int) -> bool:
        """Whether a record starts before ``page`` and continues into it."""
        return any(a < page and self.end_of(i) > page + HEADER for i, (a, _) in enumerate(self.records))

    def bytes(self) -> bytes:
        return self.storage.read(FILE, 0, self.storage.size(FILE))

    def pages(self) -> list[tuple]:
        data = self.bytes()
        return [PAGE_HDR.unpack_from(data, off) for off in range(0, len(data), PAGE_SIZE)]


def make_log(plan: FaultPlan = FaultPlan(), *, pad: bool = False, apps: int = 4, uows: int = 4,
             seed: int = 7) -> Run:
    env = simpy.Environment()
    storage = FaultInjectingStorage(MemoryStorage(), plan)
    writer = LogWriter(env, ReferenceLogSpace(storage), Device(env, get_profile("ram")),
                       pad_policy=(lambda used: True) if pad else None)
    rng = random.Random(seed)
    written: list = []
    acked = [0]

    def put(record):
        addr = yield from writer.put(record)
        written.append((addr, record))
        return addr

    def force():
        target = writer.next_address
        yield writer.force()
        acked[0] = max(acked[0], target)

    def app(n: int):
        for u in range(uows):
            uow = n * 1000 + u + 1
            yield env.timeout(rng.uniform(0, 25))
            prev = yield from put(Begin(int(env.now), f"app{n}", uow=uow))
            for m in range(rng.randint(1, 3)):
                size = rng.randint(5 * 1024, 9 * 1024)
                prev = yield from put(Put(f"Q.{n}", bytes([n, u, m]) * 8, bytes([65 + m]) * size,
                                          uow=uow, prev=prev))
                yield env.timeout(rng.uniform(0, 6))
                prev = yield from put(Get(f"Q.{n}", bytes([n, u, m]) * 8, m, size, uow=uow, prev=prev))
            yield from put(Commit(int(env.now), 2, uow=uow, prev=prev))
            yield from force()
            # an out-of-syncpoint persistent put: forced on its own
            yield env.timeout(rng.uniform(0, 10))
            yield from put(Put("OUT", bytes([n, u]) * 12, b"o" * rng.randint(100, 3000)))
            yield from force()

    procs = [env.process(app(n)) for n in range(apps)]

    def last():  # when everyone is done: one more small forced record
        yield simpy.AllOf(env, procs)
        yield from put(Commit(int(env.now), 0, uow=999_999, prev=NO_ADDRESS))
        yield from force()

    env.process(last())
    crashed = False
    try:
        env.run()
    except SimulatedCrash:
        crashed = True
    written.sort(key=lambda ar: ar[0])
    return Run(tuple(written), acked[0], crashed, storage.physical_writes, storage.durable, writer.stats)


@lru_cache(maxsize=None)
def clean(pad: bool) -> Run:
    return make_log(pad=pad)


def read(storage):
    return scan(ReferenceLogSpace(storage), 0)


def copy_of(run: Run) -> MemoryStorage:
    s = MemoryStorage()
    s.write(FILE, 0, run.bytes())
    return s


def page_written_by_many_later(run: Run, damaged: int = 1) -> int:
    """A page in the middle such that the pages after the ``damaged`` pages from it were
    written by more than one physical write (from the middle back, if need be)."""
    pages = run.pages()
    middle = len(pages) // 2
    for i in [*range(middle, len(pages) - damaged), *range(middle - 1, 0, -1)]:
        if len({p[5] for p in pages[i + damaged:]}) >= 2:
            return i * PAGE_SIZE
    raise AssertionError("workload has no such page")


def page_with_record_start(run: Run) -> int:
    pages = run.pages()
    for i in range(len(pages) // 2, len(pages)):
        if pages[i][7] != 0xFFFF and pages[i][7] + 40 < pages[i][6]:
            return i * PAGE_SIZE
    raise AssertionError("workload has no such page")


def page_crossed_into(run: Run) -> int:
    """The last page that a record continues into from the page before."""
    n = len(run.pages())
    page = next(p * PAGE_SIZE for p in range(n - 1, 0, -1) if run.crosses_into(p * PAGE_SIZE))
    assert page >= (n // 2) * PAGE_SIZE
    return page


def page_not_crossed_into(run: Run) -> int:
    n = len(run.pages())
    return next(p * PAGE_SIZE for p in range(n - 1, 0, -1) if not run.crosses_into(p * PAGE_SIZE))


def mid_page_not_crossed_into(run: Run) -> int:
    n = len(run.pages())
    return next(p * PAGE_SIZE for p in range(n // 2, n) if not run.crosses_into(p * PAGE_SIZE))


def last_page(run: Run) -> int:
    return (len(run.pages()) - 1) * PAGE_SIZE


def flip(storage, offset: int, bit: int = 3):
    b = storage.read(FILE, offset, 1)[0]
    storage.write(FILE, offset, bytes([b ^ (1 << bit)]))


def truncate_mid(page):
    def damage(run, s):
        s.truncate(FILE, page(run) + 1500)
    return damage


def truncate_at(page):
    def damage(run, s):
        s.truncate(FILE, page(run))
    return damage


def zero(page):
    def damage(run, s):
        s.write(FILE, page(run), bytes(PAGE_SIZE))
    return damage


def zero_from(page):
    """Zero the page and everything after it (a preformatted log whose tail never landed)."""
    def damage(run, s):
        p = page(run)
        s.write(FILE, p, bytes(s.size(FILE) - p))
    return damage


def flip_in(page, at=HEADER + 100):
    def damage(run, s):
        flip(s, page(run) + at)
    return damage


def bad_record_good_page(run, s):
    p = page_with_record_start(run)
    raw = s.read(FILE, p, PAGE_SIZE)
    _, _, flags, index, address, write_no, used, first, _ = PAGE_HDR.unpack_from(raw)
    payload = bytearray(raw[HEADER:HEADER + used])
    payload[first + 38] ^= 0x10  # inside the record's body
    s.write(FILE, p, build_page(address, write_no, bytes(payload), first, flags, index))


def bad_length_good_page(run, s):
    p = page_with_record_start(run)
    raw = s.read(FILE, p, PAGE_SIZE)
    _, _, flags, index, address, write_no, used, first, _ = PAGE_HDR.unpack_from(raw)
    payload = bytearray(raw[HEADER:HEADER + used])
    struct.pack_into("<I", payload, first + 4, 2**31)  # the record's length field
    s.write(FILE, p, build_page(address, write_no, bytes(payload), first, flags, index))


def stale(page):
    def damage(run, s):
        s.write(FILE, page(run), s.read(FILE, 0, PAGE_SIZE))  # page 0's bytes at a later address
    return damage


def upto(page, normal="torn"):
    """Expect the records that end before ``page``, and ``normal`` as the reason, or
    "incomplete" if a record was cut off there."""
    def expected(run):
        p = page(run)
        return run.ending_by(p + HEADER), "incomplete" if run.crosses_into(p) else normal, p
    return expected
