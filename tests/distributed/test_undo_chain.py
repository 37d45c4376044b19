"""Undo walks a unit of work's backward chain to its Begin record or refuses.

Before the fix the walk stopped at a missing record, a record of another unit of work or
after 10 million steps, wrote compensation records for the operations it had seen, and
reported the unit backed out: the operations behind the break stayed done, silently. Each
test breaks the chain of an in-flight unit one way (the log itself is intact: the break is
made where restart reads a record, so only the walk's decision is under test) and checks
that restart refuses with the address, and that the intact chain backs out every operation.
"""

from __future__ import annotations

import attrs
import pytest

from mqlog.core.errors import LogCorruptionError
from mqlog.core.disk.faults import FaultInjectingStorage
from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.recovery.state import Recovery
from mqlog.core.disk.storage import MemoryStorage

from .qmkit import make_qm, run

PUTS = 5


@pytest.fixture
def crashed():
    """A log whose last unit of work put PUTS messages and was in flight at the crash
    (its records forced by another unit's commit); returns the durable files and the
    addresses of that unit's Put records, oldest first."""
    storage = FaultInjectingStorage(MemoryStorage())
    env, _, qm = make_qm(storage)
    puts = []

    def go():
        yield from qm.start()
        yield from qm.define_queue("Q")
        inflight, other = qm.connect("A"), qm.connect("B")
        for i in range(PUTS):
            yield from inflight.put("Q", b"in flight %d" % i)
        yield from other.put("Q", b"committed")
        yield from other.commit()  # forces the in-flight unit's records too
        uow = next(u for u in qm.uows.values() if u.ops)
        puts.extend(op.address for op in uow.ops)

    run(env, go())
    storage.crash()
    return storage.durable, puts


def _restart(storage):
    env, _, qm = make_qm(storage)
    report = run(env, qm.start())
    return report, qm


def test_the_intact_chain_backs_out_every_operation(crashed):
    storage, puts = crashed
    report, qm = _restart(storage)
    assert report.uows_backed_out == 1 and report.clrs_written == PUTS
    assert [m for m in qm.queues["Q"].messages.values() if m.uow] == []
    assert len(qm.queues["Q"].messages) == 1  # only the committed one


def _break_chain(monkeypatch, at: int, replace):
    """Make restart's reads of the record at ``at`` return ``replace(record)``."""
    original = Recovery.read_at

    def read_at(self, address):
        record = yield from original(self, address)
        return replace(record) if address == at else record

    monkeypatch.setattr(Recovery, "read_at", read_at)


@pytest.mark.parametrize("how, words", [
    ("missing", "no log record is there"),
    ("foreign", "belongs to unit of work"),
    ("headless", "ends before its Begin record"),
])
def test_a_broken_chain_is_refused_not_backed_out_in_part(crashed, monkeypatch, how, words):
    storage, puts = crashed
    middle = puts[PUTS // 2]
    if how == "missing":
        _break_chain(monkeypatch, middle, lambda r: None)
    elif how == "foreign":
        _break_chain(monkeypatch, middle, lambda r: attrs.evolve(r, uow=r.uow + 1))
    else:  # the chain stops at a Put that names no previous record: no Begin is reached
        _break_chain(monkeypatch, middle, lambda r: attrs.evolve(r, prev=NO_ADDRESS))
    with pytest.raises(LogCorruptionError, match=words) as caught:
        _restart(storage)
    assert caught.value.address is not None
