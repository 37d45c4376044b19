"""The queue file's paged directory (docs/FORMAT.md §7.3, §7.6): a flush writes the directory
blocks that changed and the index, not the whole directory; a directory block is tied to
its index entry; removals out of order do not leave near-empty blocks behind."""

from __future__ import annotations

import random

import pytest

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.errors import QueueFileError
from mqlog.core.objects.queuefile import BLOCK_SIZE, MessageState, QueueFile

C, PU = MessageState.COMMITTED, MessageState.PUT_UNCOMMITTED


def mid(n: int) -> bytes:
    return n.to_bytes(24, "big")


def _filled(depth: int) -> tuple[MemoryStorage, QueueFile]:
    storage = MemoryStorage()
    qf = QueueFile.create(storage, "Q1")
    for i in range(depth):
        qf.put(mid(i), b"m%d" % i, C, 0, i)
    qf.flush()
    return storage, qf


def test_a_flush_writes_the_directory_blocks_that_changed_not_the_whole_directory():
    def one_change(depth: int) -> int:
        _, qf = _filled(depth)
        qf.set_state(mid(depth // 2), PU, 7)
        return qf.flush().write_bytes

    small, large = one_change(1_000), one_change(10_000)
    # A whole directory would be 64 bytes a message; the index is 16 bytes a block of 7.
    assert large - small < (10_000 - 1_000) * 4
    assert large < 10_000 * 64 / 10


def test_a_flush_writes_each_changed_block_once_however_many_of_its_entries_changed():
    _, qf = _filled(700)
    for i in range(7, 14):  # every entry of the second block
        qf.set_state(mid(i), PU, 3)
    one_block = qf.flush().write_bytes
    _, qf = _filled(700)
    qf.set_state(mid(7), PU, 3)
    assert qf.flush().write_bytes == one_block


def test_the_directory_stays_in_few_runs_and_each_flush_writes_few_blocks():
    """Flushes that each change one message anywhere in a deep queue: the blocks they write
    are merged with the newest runs (a log-structured merge), so the directory stays in
    O(log blocks) runs – what ``open`` reads, a request each – and a flush writes O(log)
    blocks on average, not the directory."""
    storage, qf = _filled(7_000)  # 1,000 directory blocks
    rng = random.Random(5)
    qf.set_state(mid(rng.randrange(7_000)), PU, 1)
    single = qf.flush().write_bytes  # one block, the metadata run and the header
    written = []
    for step in range(300):
        qf.set_state(mid(rng.randrange(7_000)), PU, step + 2)
        written.append(qf.flush().write_bytes)
        qf.check()
    assert sum(written) / len(written) <= single + 12 * BLOCK_SIZE
    again, cost = QueueFile.open(storage, "Q1")
    again.check()
    assert len(cost.reads) - 2 <= 12  # headers and metadata run, then one read a run
    assert again.messages == qf.messages


def test_a_directory_block_left_from_another_version_is_refused_though_its_crc_is_good():
    storage, qf = _filled(10)
    before = storage.read("Q1.mqq", 0, storage.size("Q1.mqq"))
    old_block = qf.messages.durable_blocks()[0]
    qf.set_state(mid(0), PU, 5)
    qf.flush()
    new_block = qf.messages.durable_blocks()[0]
    assert new_block != old_block  # copy-on-write: never over the block the durable version used
    stale = before[old_block * BLOCK_SIZE:(old_block + 1) * BLOCK_SIZE]
    storage.write("Q1.mqq", new_block * BLOCK_SIZE, stale)
    with pytest.raises(QueueFileError, match=f"block {new_block} is not the directory block the index names") as info:
        QueueFile.open(storage, "Q1")
    assert info.value.source == "Q1.mqq" and info.value.offset == new_block * BLOCK_SIZE


def test_removals_out_of_order_do_not_leave_a_trail_of_near_empty_blocks():
    storage, qf = _filled(700)
    assert qf.messages.pages == 100
    for i in range(0, 700, 2):
        qf.remove(mid(i))
    qf.flush()
    qf.check()
    assert qf.messages.pages <= 60  # 350 entries: 50 full blocks; 100 without merging
    again, _ = QueueFile.open(storage, "Q1")
    again.check()
    assert list(again.messages) == [mid(i) for i in range(1, 700, 2)]  # queue order kept


def test_a_fifo_queue_keeps_its_file_bounded():
    """Messages got from the front and put at the back, flush after flush: freed directory
    and message blocks are reused, so the file does not grow with the traffic."""
    storage, qf = _filled(200)
    sizes = []
    for round_ in range(60):
        for i in range(20):
            qf.remove(mid(round_ * 20 + i))
            qf.put(mid(200 + round_ * 20 + i), b"m", C, 0, 0)
        qf.flush()
        sizes.append(storage.size("Q1.mqq"))
    qf.check()
    assert max(sizes[30:]) <= max(sizes[:30])
    assert QueueFile.open(storage, "Q1")[0].messages.keys() == qf.messages.keys()
