"""Queue files refuse damage with the file, the offset and what was found: damaged header slots,
directory blocks and message data, files of another queue or cut short, random bytes, headers
with good CRCs but wild fields, and bit flips anywhere."""

from __future__ import annotations

import functools
import random
import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mqlog.core.errors import QueueFileError
from mqlog.core.disk.faults import FaultInjectingStorage
from mqlog.core.objects.queuelayout import FileHeader, encode_meta
from mqlog.core.objects.queuefile import BLOCK_SIZE, DATA_HEADER_SIZE, QueueFile, file_name_for
from mqlog.core.disk.storage import MemoryStorage
from queuefiles import C, PU, contents, image, mid, payload


def _flushed(storage, count=30):
    qf = QueueFile.create(storage, "Q1")
    for i in range(count):
        qf.put(mid(i), payload(i, 700), C, 0, i)
    qf.flush()
    return qf


def test_a_damaged_header_slot_is_reported_with_its_offset():
    fs = FaultInjectingStorage(MemoryStorage())
    qf = _flushed(fs)
    slot = qf._slot  # the newer header
    fs.flip_bit(qf.file_name, slot * BLOCK_SIZE + 20, 3)
    expected = rf"Q1\.mqq, offset {slot * BLOCK_SIZE}: header slot {'AB'[slot]} is damaged"
    with pytest.raises(QueueFileError, match=expected) as info:
        QueueFile.open(fs, "Q1")
    assert info.value.source == "Q1.mqq" and info.value.offset == slot * BLOCK_SIZE


def test_a_damaged_directory_block_is_reported_with_its_offset():
    fs = FaultInjectingStorage(MemoryStorage())
    qf = _flushed(fs)
    first, count = qf._meta
    target = first + count - 1  # the last metadata block holds directory entries
    fs.flip_bit(qf.file_name, target * BLOCK_SIZE + 100, 0)
    with pytest.raises(QueueFileError, match=f"metadata block {target}") as info:
        QueueFile.open(fs, "Q1")
    assert info.value.offset == target * BLOCK_SIZE


def test_damaged_message_data_is_reported_with_the_message_and_offset():
    fs = FaultInjectingStorage(MemoryStorage())
    qf = _flushed(fs)
    m = qf.messages[mid(5)]
    fs.flip_bit(qf.file_name, m.first_block * BLOCK_SIZE + DATA_HEADER_SIZE + 600, 5)
    again, _ = QueueFile.open(fs, "Q1")  # data is not read at open
    with pytest.raises(QueueFileError, match=f"message {mid(5).hex().upper()}.*fails its CRC") as info:
        again.read_data(mid(5))
    assert info.value.offset == m.first_block * BLOCK_SIZE
    assert again.read_data(mid(6))[0] == payload(6, 700)


def test_a_file_of_another_queue_or_a_truncated_file_is_refused():
    storage = MemoryStorage()
    _flushed(storage)
    storage.replace(file_name_for("Q2"), image(storage))
    with pytest.raises(QueueFileError, match="belongs to queue 'Q1'"):
        QueueFile.open(storage, "Q2")
    storage.truncate("Q1.mqq", storage.size("Q1.mqq") - BLOCK_SIZE)
    with pytest.raises(QueueFileError, match="uses .* blocks, but it has"):
        QueueFile.open(storage, "Q1")


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=4096))
def test_random_bytes_are_never_a_queue_file(data):
    storage = MemoryStorage()
    storage.replace("Q1.mqq", data)
    with pytest.raises(QueueFileError):
        QueueFile.open(storage, "Q1")


@functools.lru_cache(maxsize=1)
def _churned_image() -> tuple[bytes, int, tuple[int, int]]:
    """A file after two flushes (holes, both slots used): its bytes, newer slot, metadata run."""
    storage = MemoryStorage()
    qf = QueueFile.create(storage, "Q1", "attr")
    for i in range(20):
        qf.put(mid(i), payload(i, 97 * i), C, 0, i)
    qf.flush()
    for i in range(0, 20, 3):
        qf.remove(mid(i))
    qf.set_state(mid(1), PU, 4)
    qf.flush()
    return image(storage), qf._slot, qf._meta


def _opens_cleanly_or_fails_cleanly(data: bytes) -> None:
    """Open must raise QueueFileError or give a self-consistent file that can be flushed."""
    storage = MemoryStorage()
    storage.replace("Q1.mqq", data)
    try:
        qf, _ = QueueFile.open(storage, "Q1")
    except QueueFileError:
        return
    qf.check()
    qf.alter("after")
    qf.put(mid(999), b"new", C, 0, 0)
    qf.flush()
    qf.check()
    QueueFile.open(storage, "Q1")[0].check()


HEADER_FIELDS = ["sequence", "extent", "meta_first", "meta_blocks", "message_count", "attributes_length"]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(HEADER_FIELDS),
       st.one_of(st.integers(0, 2**64 - 1), st.integers(0, 80)))
def test_a_header_with_a_good_crc_but_wild_fields_fails_cleanly(field, value):
    """No count in a CRC-valid header makes open allocate or loop beyond the file size."""
    data, slot, _ = _churned_image()
    header = FileHeader.from_bytes(data[slot * BLOCK_SIZE:(slot + 1) * BLOCK_SIZE], slot)
    forged = attrs.evolve(header, **{field: value}).to_bytes()
    _opens_cleanly_or_fails_cleanly(data[:slot * BLOCK_SIZE] + forged + data[(slot + 1) * BLOCK_SIZE:])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=3))
def test_metadata_with_good_crcs_but_wrong_contents_fails_cleanly(changes):
    """Damage the space map, directory or attributes and re-frame the blocks with good CRCs."""
    data, slot, (first, count) = _churned_image()
    sequence = FileHeader.from_bytes(data[slot * BLOCK_SIZE:(slot + 1) * BLOCK_SIZE], slot).sequence
    run = slice(first * BLOCK_SIZE, (first + count) * BLOCK_SIZE)
    stream = bytearray(b"".join(data[run][i * BLOCK_SIZE + 16:(i + 1) * BLOCK_SIZE - 4] for i in range(count)))
    for pos, byte in changes:
        stream[pos % len(stream)] = byte
    damaged = bytearray(data)
    damaged[run] = encode_meta(stream, count, sequence)
    _opens_cleanly_or_fails_cleanly(bytes(damaged))


def test_bit_flips_anywhere_give_queue_file_errors_or_the_same_contents():
    storage = MemoryStorage()
    good = _flushed(storage, 8)
    expected = contents(good)
    pristine = image(storage)
    rng = random.Random(3)
    for _ in range(300):
        damaged = bytearray(pristine)
        pos = rng.randrange(len(damaged))
        damaged[pos] ^= 1 << rng.randrange(8)
        storage.replace("Q1.mqq", bytes(damaged))
        try:
            qf, _ = QueueFile.open(storage, "Q1")
            got = contents(qf)
        except QueueFileError as exc:
            assert exc.source == "Q1.mqq" and exc.offset is not None
            continue
        assert got == expected  # the flip hit unused bytes (old slot payload, padding)
