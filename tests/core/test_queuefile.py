"""Queue files: round trips, shadow-paged flushes under crashes and torn writes, space reuse,
truncation, I/O cost, determinism and file names (damage: test_queuefile_damage.py)."""

from __future__ import annotations

import random
import re
import zlib
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mqlog.core.errors import (
    ParameterError,
    QueueFileError,
    SimulatedCrash,
    StorageError,
)
from mqlog.core.disk.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.objects.queuefile import (BLOCK_SIZE, DATA_HEADER_SIZE, NOT_WRITTEN, TRUNCATE_MIN_EXCESS,
                                          IoCost, QueueFile, StoredMessage, blocks_for, file_name_for,
                                          list_queue_files, queue_name_for)
from mqlog.core.disk.storage import DirectoryStorage, MemoryStorage

from queuefiles import C, GU, PU, contents, image, mid, payload, snapshot


@pytest.fixture(params=["memory", "directory"])
def storage(request, tmp_path):
    s = MemoryStorage() if request.param == "memory" else DirectoryStorage(tmp_path / "qf")
    yield s
    s.close()


# -- round trips ---------------------------------------------------------------------------------

SIZES = [0, 1, 100, BLOCK_SIZE - DATA_HEADER_SIZE, BLOCK_SIZE - DATA_HEADER_SIZE + 1, 2000, 70_000]


def test_round_trip_messages_in_order_with_data(storage):
    qf = QueueFile.create(storage, "APP.IN", "DESCR('orders')")
    for i in range(60):
        qf.put(mid(i), payload(i, SIZES[i % len(SIZES)]), [C, PU, GU][i % 3], 0 if i % 3 == 0 else 10 + i, 4096 * i)
    assert qf.dirty()
    qf.flush()
    assert not qf.dirty()
    qf.check()
    again, cost = QueueFile.open(storage, "APP.IN")
    again.check()
    assert again.version == qf.version == 2
    assert again.attributes == "DESCR('orders')"
    assert list(again.messages) == [mid(i) for i in range(60)]  # put order survives
    assert again.messages == qf.messages
    for i in range(60):
        m = again.messages[mid(i)]
        assert m.blocks == blocks_for(len(payload(i, SIZES[i % len(SIZES)])))
        assert again.read_data(mid(i))[0] == payload(i, SIZES[i % len(SIZES)])
    # headers, the metadata run, and the directory's blocks (written together: one read)
    assert cost.writes == [] and len(cost.reads) == 3


def test_state_changes_removes_and_attributes_persist(storage):
    qf = QueueFile.create(storage, "Q1")
    for i in range(10):
        qf.put(mid(i), payload(i, 300), PU, 5, i)
    qf.flush()
    qf.set_state(mid(1), C, 0)
    qf.set_state(mid(2), GU, 9)
    qf.remove(mid(3))
    qf.alter("MAXDEPTH(10)")
    qf.put(mid(3), b"a new message under an old id", C, 0, 99)  # after its removal
    qf.flush()
    again, _ = QueueFile.open(storage, "Q1")
    again.check()
    assert again.attributes == "MAXDEPTH(10)"
    assert again.messages[mid(1)].state is C and again.messages[mid(1)].uow == 0
    assert again.messages[mid(2)].state is GU and again.messages[mid(2)].uow == 9
    assert again.messages[mid(3)].put_address == 99
    assert again.read_data(mid(3))[0] == b"a new message under an old id"
    assert again.read_data(mid(2))[0] == payload(2, 300)
    assert contents(again) == contents(qf)


def test_staged_data_comes_from_memory_flushed_data_from_one_read():
    storage = MemoryStorage()
    qf = QueueFile.create(storage, "Q1")
    qf.put(mid(1), b"x" * 1500, C, 0, 0)
    assert qf.messages[mid(1)].first_block == NOT_WRITTEN
    assert qf.read_data(mid(1)) == (b"x" * 1500, IoCost())
    qf.flush()
    data, cost = qf.read_data(mid(1))
    assert data == b"x" * 1500
    assert cost.reads == [blocks_for(1500) * BLOCK_SIZE] and cost.writes == []
    # A set_state does not bring the data back into memory, nor rewrite it.
    qf.set_state(mid(1), GU, 3)
    assert qf.read_data(mid(1))[1].reads == [blocks_for(1500) * BLOCK_SIZE]


def test_flush_without_changes_does_no_io():
    fs = FaultInjectingStorage(MemoryStorage())
    qf = QueueFile.create(fs, "Q1")
    qf.put(mid(1), b"m", C, 0, 0)
    qf.flush()
    writes = fs.physical_writes
    assert qf.flush() == IoCost()
    qf.set_state(mid(1), C, 0)  # the same state: nothing to do
    qf.alter("")
    assert not qf.dirty() and qf.flush() == IoCost()
    assert fs.physical_writes == writes


def test_create_refuses_an_existing_file_and_caller_errors_are_specific():
    storage = MemoryStorage()
    qf = QueueFile.create(storage, "Q1")
    with pytest.raises(StorageError, match="already exists"):
        QueueFile.create(storage, "Q1")
    qf.put(mid(1), b"", C, 0, 0)
    with pytest.raises(ValueError, match="already on queue Q1"):
        qf.put(mid(1), b"", C, 0, 0)
    with pytest.raises(KeyError, match="not on queue Q1"):
        qf.remove(mid(2))
    with pytest.raises(ParameterError, match="msg_id"):
        qf.put(b"short", b"", C, 0, 0)
    with pytest.raises(ParameterError, match="state"):
        qf.put(mid(3), b"", 7, 0, 0)
    with pytest.raises(ParameterError, match="uow"):
        qf.set_state(mid(1), GU, -1)


def test_delete_removes_the_file():
    storage = MemoryStorage()
    QueueFile.create(storage, "A")
    qf = QueueFile.create(storage, "B")
    assert list_queue_files(storage) == ["A", "B"]
    qf.delete()
    assert list_queue_files(storage) == ["A"]
    with pytest.raises(QueueFileError, match="deleted"):
        qf.flush()


# -- shadow paging: crashes and torn writes ----------------------------------------------------------

def _rounds():
    """Staged changes for successive flushes; later rounds reuse blocks earlier ones freed."""
    def r1(qf):
        for i in range(12):
            qf.put(mid(i), payload(i, SIZES[i % len(SIZES)]), C, 0, i)

    def r2(qf):
        for i in range(0, 12, 3):
            qf.remove(mid(i))
        qf.set_state(mid(1), GU, 7)
        qf.put(mid(100), payload(100, 900), PU, 8, 100)
        qf.alter("changed")

    def r3(qf):
        for i in (1, 2, 4, 5):
            qf.remove(mid(i))
        for i in range(200, 210):
            qf.put(mid(i), payload(i, 40 * i - 7900), C, 0, i)
        qf.set_state(mid(100), C, 0)

    return [r1, r2, r3]


@pytest.mark.parametrize("fault", ["crash", "tear-prefix", "tear-random"])
def test_a_crash_or_tear_at_any_write_of_a_flush_leaves_old_or_new(fault):
    base = MemoryStorage()
    QueueFile.create(base, "Q1")
    for round_ in _rounds():
        old = contents(QueueFile.open(base, "Q1")[0])
        # A clean run counts the flush's physical writes and gives the new version.
        clean = snapshot(base)
        fs = FaultInjectingStorage(clean)
        qf, _ = QueueFile.open(fs, "Q1")
        round_(qf)
        qf.flush()
        new = contents(QueueFile.open(clean, "Q1")[0])
        assert new != old
        seen = set()
        for k in range(1, fs.physical_writes + 1):
            durable = snapshot(base)
            if fault == "crash":
                plan = FaultPlan(crash_after_writes=k - 1)
            else:
                plan = FaultPlan(tear_write=k, tear_mode=fault.split("-")[1], seed=k)
            fs = FaultInjectingStorage(durable, plan)
            qf, _ = QueueFile.open(fs, "Q1")
            round_(qf)
            with pytest.raises(SimulatedCrash):
                qf.flush()
            reopened, _ = QueueFile.open(durable, "Q1")
            reopened.check()
            got = contents(reopened)
            assert got in (old, new), f"write {k}: a mix of versions"
            seen.add("new" if got == new else "old")
        assert seen == {"old"}  # the header write is the last: any fault before it lands keeps old
        base = clean


def test_a_crash_after_the_header_write_lands_keeps_new():
    storage = MemoryStorage()
    qf = QueueFile.create(storage, "Q1")
    qf.put(mid(1), b"m" * 3000, C, 0, 1)
    fs = FaultInjectingStorage(storage)
    qf.storage = fs
    qf.flush()
    assert QueueFile.open(storage, "Q1")[0].version == 2


def test_an_io_error_before_the_header_lets_the_flush_be_retried():
    fs = FaultInjectingStorage(MemoryStorage(), FaultPlan(write_error_at=2))
    qf = QueueFile.create(fs, "Q1")  # write 1: the replace
    qf.put(mid(1), b"m" * 3000, C, 0, 1)
    with pytest.raises(StorageError):
        qf.flush()  # write 2: the data
    assert qf.dirty() and qf.version == 1
    qf.flush()
    qf.check()
    assert QueueFile.open(fs.durable, "Q1")[0].read_data(mid(1))[0] == b"m" * 3000


def test_an_io_error_at_the_header_write_requires_a_reopen():
    fs = FaultInjectingStorage(MemoryStorage(), FaultPlan(write_error_at=3))
    qf = QueueFile.create(fs, "Q1")
    qf.put(mid(1), b"m", C, 0, 1)
    with pytest.raises(StorageError):
        qf.flush()  # write 3: the header
    with pytest.raises(QueueFileError, match="reopen"):
        qf.flush()
    again, _ = QueueFile.open(fs, "Q1")
    assert again.version == 1 and not again.messages


# -- space reuse and truncation ---------------------------------------------------------------------

def test_freed_blocks_are_reused_by_a_later_flush_not_the_same_one():
    storage = MemoryStorage()
    qf = QueueFile.create(storage, "Q1")
    for i in range(4):
        qf.put(mid(i), b"m", C, 0, i)
    qf.flush()
    freed = qf.messages[mid(1)].first_block
    qf.remove(mid(1))
    qf.put(mid(10), b"n", C, 0, 10)
    qf.flush()
    assert qf.messages[mid(10)].first_block != freed  # version 2 still used that block
    qf.put(mid(11), b"o", C, 0, 11)
    qf.flush()
    assert qf.messages[mid(11)].first_block == freed  # free in version 3: reused
    qf.check()


def test_file_size_stays_bounded_under_churn():
    storage = MemoryStorage()
    qf = QueueFile.create(storage, "Q1")
    rng = random.Random(7)
    live: list[int] = []
    sizes = []
    for cycle in range(150):
        for j in range(20):
            n = cycle * 100 + j
            qf.put(mid(n), payload(n, rng.randrange(0, 3000)), C, 0, n)
            live.append(n)
        while len(live) > 60:
            qf.remove(mid(live.pop(rng.randrange(len(live)))))
        qf.flush()
        qf.check()
        sizes.append(storage.size(qf.file_name))
    # 60 live messages of at most 7 blocks, twice (old and new version), plus metadata.
    assert max(sizes[50:]) <= 2 * 60 * blocks_for(3000) * BLOCK_SIZE + 16 * BLOCK_SIZE
    again, _ = QueueFile.open(storage, "Q1")
    assert contents(again) == contents(qf)


def test_truncation_needs_both_16k_and_one_percent_and_keeps_the_previous_version():
    storage = MemoryStorage()
    qf = QueueFile.create(storage, "Q1")
    for i in range(200):
        qf.put(mid(i), payload(i, 1000), C, 0, i)  # 3 blocks each
    qf.flush()
    full = storage.size(qf.file_name)
    for i in range(200):
        qf.remove(mid(i))
    qf.flush()
    # The previous version (all 200 messages) is still referenced by the other header slot.
    assert storage.size(qf.file_name) == full
    qf.alter("next")
    qf.flush()
    assert storage.size(qf.file_name) == max(qf.extent, 3) * BLOCK_SIZE < full
    # Oversized by less than 16 KiB: left alone.
    small = storage.size(qf.file_name)
    storage.write(qf.file_name, small, bytes(TRUNCATE_MIN_EXCESS - BLOCK_SIZE))
    qf.alter("again")
    qf.flush()
    assert storage.size(qf.file_name) == small + TRUNCATE_MIN_EXCESS - BLOCK_SIZE
    assert QueueFile.open(storage, "Q1")[0].attributes == "again"


def test_no_truncation_when_the_excess_is_under_one_percent():
    storage = MemoryStorage()
    qf = QueueFile.create(storage, "Q1")
    for i in range(4000):
        qf.put(mid(i), b"", C, 0, i)  # 4000 blocks (2 MB) and 521 blocks of directory
    qf.flush()
    qf.alter("b")
    qf.flush()  # the new metadata goes after the end
    size = storage.size(qf.file_name)
    excess = TRUNCATE_MIN_EXCESS + BLOCK_SIZE  # over 16 KiB, under 1% of 2 MB
    storage.write(qf.file_name, size, bytes(excess))
    qf.alter("c")
    qf.flush()  # the new metadata fits where the first version's was: the file does not grow
    assert qf.extent * BLOCK_SIZE < size
    assert storage.size(qf.file_name) == size + excess


# -- corruption ------------------------------------------------------------------------------------

# -- I/O cost ------------------------------------------------------------------------------------

def test_a_flush_writes_at_least_a_block_per_new_message_in_few_requests():
    qf = QueueFile.create(MemoryStorage(), "Q1")
    for i in range(100):
        qf.put(mid(i), b"small", C, 0, i)
    cost = qf.flush()
    assert cost.write_bytes >= 100 * BLOCK_SIZE
    assert len(cost.writes) == 2  # messages + metadata contiguous, then the header
    assert cost.writes[-1] == BLOCK_SIZE and cost.syncs == 2


def test_opening_a_deeper_queue_reads_more_but_never_message_data():
    def open_cost(depth):
        storage = MemoryStorage()
        qf = QueueFile.create(storage, "Q1")
        for i in range(depth):
            qf.put(mid(i), b"d" * 4000, C, 0, i)
        qf.flush()
        return QueueFile.open(storage, "Q1")[1], storage.size("Q1.mqq")

    costs = [open_cost(d) for d in (0, 100, 1000)]
    reads = [c.read_bytes for c, _ in costs]
    assert reads[0] < reads[1] < reads[2]
    # headers and metadata run, and the directory's blocks (one flush wrote them together: one read)
    assert [len(c.reads) for c, _ in costs] == [2, 3, 3]
    assert reads[2] < costs[2][1] / 10  # metadata only: 64 bytes a message, not 4 KB


# -- determinism and the invariant checker under random operations ---------------------------------------

def _script(storage, seed):
    rng = random.Random(seed)
    qf = QueueFile.create(storage, "Q1", "DESCR('x')")
    ids: list[int] = []
    n = 0
    for step in range(300):
        op = rng.random()
        if op < 0.5 or not ids:
            n += 1
            qf.put(mid(n), payload(n, rng.choice(SIZES[:6])), rng.choice([C, PU]), rng.randrange(3), n)
            ids.append(n)
        elif op < 0.75:
            qf.remove(mid(ids.pop(rng.randrange(len(ids)))))
        elif op < 0.9:
            qf.set_state(mid(rng.choice(ids)), rng.choice([C, PU, GU]), rng.randrange(3))
        else:
            qf.alter(f"step {step}")
        if rng.random() < 0.15:
            qf.flush()
        qf.check()
        if step % 50 == 49:
            qf.flush()
            again, _ = QueueFile.open(storage, "Q1")
            again.check()
            assert contents(again) == contents(qf)
            qf = again
    qf.flush()
    return qf


def test_same_calls_give_byte_identical_files(tmp_path):
    a, b, c = MemoryStorage(), MemoryStorage(), DirectoryStorage(tmp_path / "d")
    _script(a, 11)
    _script(b, 11)
    _script(c, 11)
    assert image(a) == image(b) == image(c)
    d = MemoryStorage()
    _script(d, 12)
    assert image(d) != image(a)


# -- names ---------------------------------------------------------------------------------------

MQ_NAMES = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789./_%",
                   min_size=1, max_size=48)


@given(MQ_NAMES)
def test_file_names_round_trip_and_are_safe(name):
    file_name = file_name_for(name)
    assert queue_name_for(file_name) == name
    assert "/" not in file_name and ".." not in file_name and not file_name.startswith(".")
    assert file_name.endswith(".mqq")


@given(MQ_NAMES, MQ_NAMES)
def test_names_differing_only_in_case_get_different_files_even_ignoring_case(a, b):
    if a != b:
        assert file_name_for(a).lower() != file_name_for(b).lower()


def test_readable_names_stay_readable_and_bad_names_are_refused():
    assert file_name_for("SYSTEM.ADMIN.COMMAND.QUEUE") == "SYSTEM.ADMIN.COMMAND.QUEUE.mqq"
    assert file_name_for("A/B%c") == "A%2FB%25%63.mqq"
    assert file_name_for("..X.") == "%2E%2EX%2E.mqq"
    for bad in ("", "A" * 49, "A B", "Q*", "Ä"):
        with pytest.raises(ParameterError, match="queue_name"):
            file_name_for(bad)
    for bad in ("Q1", "Q1.MQQ", "%41.mqq", "%2f.mqq", "a.mqq", "%.mqq"):
        with pytest.raises(ParameterError, match="file_name"):
            queue_name_for(bad)


def test_list_queue_files_skips_other_files():
    storage = MemoryStorage()
    for name in ("Q.B", "q/a", "Q.A"):
        QueueFile.create(storage, name)
    storage.replace("S0000000.LOG", b"")
    storage.replace("%41.mqq", b"")  # not a name file_name_for makes
    assert list_queue_files(storage) == ["Q.A", "Q.B", "q/a"]
    assert isinstance(QueueFile.open(storage, "q/a")[0].messages, Mapping)


def test_stored_message_is_a_value():
    m = StoredMessage(mid(1), C, 0, 5, 2, 1, zlib.crc32(b"hello"), 0)
    assert m == StoredMessage(mid(1), C, 0, 5, 2, 1, zlib.crc32(b"hello"), 0)
    with pytest.raises(AttributeError):
        m.state = GU  # type: ignore[misc]


# -- docs/FORMAT.md §7 kept honest ------------------------------------------------------------

def test_format_md_example_is_what_the_code_writes():
    text = (Path(__file__).resolve().parents[2] / "docs" / "FORMAT.md").read_text(encoding="utf-8")
    section = text[text.index("### 7.9 Example"):]
    block = section[section.index("```"):]
    block = block[3:block.index("```", 3)]
    rows = [(int(m.group(1), 16), bytes.fromhex(m.group(2)))
            for m in map(re.compile(r"^([0-9a-f]{4})  ((?:[0-9a-f]{2} )*[0-9a-f]{2})").match, block.splitlines())
            if m]
    assert len(rows) >= 20
    storage = MemoryStorage()
    qf = QueueFile.create(storage, "Q1")
    qf.put(bytes(range(1, 25)), b"hello", C, 0, 0x1020)
    assert qf.flush().writes == [1536, 512]
    data = image(storage)
    assert len(data) == 6 * BLOCK_SIZE
    for offset, shown in rows:
        assert data[offset:offset + len(shown)] == shown, f"FORMAT.md §7.9 line {offset:04x}"
