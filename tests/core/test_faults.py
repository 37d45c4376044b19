"""Crash, tear, I/O-error and bit-flip behaviour of the fault-injecting storage wrapper."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mqlog.core.errors import ParameterError, SimulatedCrash, StorageError, StorageFullError
from mqlog.core.disk.faults import SECTOR_SIZE, FaultInjectingStorage, FaultPlan, WriteRecord
from mqlog.core.disk.storage import DirectoryStorage, MemoryStorage, Storage


@pytest.fixture(params=["memory", "directory"])
def inner(request, tmp_path):
    s = MemoryStorage() if request.param == "memory" else DirectoryStorage(tmp_path / "d")
    yield s
    s.close()


def test_is_a_storage():
    assert isinstance(FaultInjectingStorage(MemoryStorage()), Storage)


# -- volatility ------------------------------------------------------------------------

def test_unsynced_writes_vanish_on_crash_synced_ones_survive(inner):
    fs = FaultInjectingStorage(inner)
    fs.create("log", 1024)
    fs.write("log", 0, b"forced")
    fs.sync("log")
    fs.write("log", 6, b"-lazy")
    fs.write("other", 0, b"never synced")
    # Before the crash the page-cache view shows everything.
    assert fs.read("log", 0, 11) == b"forced-lazy"
    assert fs.read("other", 0, 100) == b"never synced"
    fs.crash()
    assert inner.read("log", 0, 11) == b"forced\0\0\0\0\0"
    assert inner.size("log") == 1024
    assert inner.read("other", 0, 100) == b""  # created (metadata), but its data is gone


def test_sync_is_per_file(inner):
    fs = FaultInjectingStorage(inner)
    fs.write("a", 0, b"AAAA")
    fs.write("b", 0, b"BBBB")
    fs.sync("a")
    fs.crash()
    assert inner.read("a", 0, 4) == b"AAAA"
    assert inner.read("b", 0, 4) == b""


def test_overlay_extension_shows_in_size_and_reads(inner):
    fs = FaultInjectingStorage(inner)
    fs.create("f", 10)
    fs.write("f", 20, b"xyz")
    assert fs.size("f") == 23
    assert inner.size("f") == 10
    assert fs.read("f", 8, 100) == bytes(12) + b"xyz"
    fs.sync("f")
    assert inner.read("f", 0, 100) == bytes(20) + b"xyz"


def test_truncate_is_durable_and_clips_unsynced_data(inner):
    fs = FaultInjectingStorage(inner)
    fs.write("f", 0, b"0123456789")
    fs.truncate("f", 4)
    assert fs.read("f", 0, 100) == b"0123"
    fs.sync("f")
    assert inner.read("f", 0, 100) == b"0123"


def test_delete_drops_unsynced_data(inner):
    fs = FaultInjectingStorage(inner)
    fs.write("f", 0, b"data")
    fs.delete("f")
    assert not fs.exists("f")
    fs.write("f", 2, b"x")
    assert fs.read("f", 0, 10) == b"\0\0x"


# -- crash_after_writes ----------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 5])
def test_crash_after_n_writes_lets_exactly_n_land(n):
    inner = MemoryStorage()
    fs = FaultInjectingStorage(inner, FaultPlan(crash_after_writes=n))
    fs.create("log", 0)
    for i in range(n):
        fs.write("log", i * 4, b"rec%d" % i)
        fs.sync("log")
    with pytest.raises(SimulatedCrash):
        fs.write("log", n * 4, b"lost")
    assert fs.crashed
    assert inner.read("log", 0, 1000) == b"".join(b"rec%d" % i for i in range(n))
    for later in (lambda: fs.read("log", 0, 4), lambda: fs.write("log", 0, b"x"),
                  lambda: fs.sync("log"), lambda: fs.exists("log"), lambda: fs.size("log"),
                  lambda: fs.replace("ctl", b"x"), lambda: fs.create("new")):
        with pytest.raises(SimulatedCrash):
            later()


def test_crash_drops_unsynced_writes_of_every_file():
    inner = MemoryStorage()
    fs = FaultInjectingStorage(inner, FaultPlan(crash_after_writes=2))
    fs.write("a", 0, b"a")
    fs.write("b", 0, b"b")
    with pytest.raises(SimulatedCrash):
        fs.write("a", 1, b"c")
    assert inner.read("a", 0, 9) == b"" and inner.read("b", 0, 9) == b""


# -- torn writes -----------------------------------------------------------------------

OLD = bytes(range(256)) * 40  # 10240 bytes of recognisable old content


def _torn(mode: str, seed: int, offset: int, length: int, atomic: int = SECTOR_SIZE) -> tuple[bytes, bytes]:
    inner = MemoryStorage()
    inner.write("ext", 0, OLD)
    fs = FaultInjectingStorage(inner, FaultPlan(tear_write=2, tear_mode=mode, seed=seed, atomic_bytes=atomic))
    fs.write("ext", 9000, b"unsynced")  # write 1: dropped by the crash
    new = bytes([0xEE]) * length
    with pytest.raises(SimulatedCrash):
        fs.write("ext", offset, new)  # write 2: torn
    assert fs.crashed
    return inner.read("ext", 0, len(OLD)), new


def _sector_verdicts(after: bytes, new: bytes, offset: int, unit: int = SECTOR_SIZE) -> list[str]:
    """For each sector (block of ``unit``) the write touched: 'old' or 'new' (asserting it is
    one of them)."""
    end = offset + len(new)
    verdicts = []
    for start in range(offset - offset % unit, end, unit):
        lo, hi = max(start, offset), min(start + unit, end)
        got = after[lo:hi]
        if got == new[lo - offset:hi - offset]:
            verdicts.append("new")
        elif got == OLD[lo:hi]:
            verdicts.append("old")
        else:
            pytest.fail(f"sector at {start} is a mixture of old and new bytes")
    return verdicts


@pytest.mark.parametrize("mode", ["prefix", "random"])
@pytest.mark.parametrize("offset,length", [(1024, 4096), (700, 3000)])
def test_torn_write_lands_whole_sectors_some_old_some_new(mode, offset, length):
    after, new = _torn(mode, 7, offset, length)
    verdicts = _sector_verdicts(after, new, offset)
    assert "old" in verdicts and "new" in verdicts
    # Nothing outside the write changed, and the dropped unsynced write is not there.
    assert after[:offset] == OLD[:offset]
    assert after[offset + length:] == OLD[offset + length:]
    if mode == "prefix":
        k = verdicts.count("new")
        assert verdicts == ["new"] * k + ["old"] * (len(verdicts) - k)


@pytest.mark.parametrize("mode", ["prefix", "random"])
def test_torn_write_is_deterministic_per_seed(mode):
    first, _ = _torn(mode, 3, 512, 8 * SECTOR_SIZE)
    again, _ = _torn(mode, 3, 512, 8 * SECTOR_SIZE)
    assert first == again
    others = {_torn(mode, seed, 512, 8 * SECTOR_SIZE)[0] for seed in range(4, 12)}
    assert any(o != first for o in others)


@pytest.mark.parametrize("mode", ["prefix", "random"])
def test_a_device_that_never_splits_a_block_has_its_writes_torn_in_whole_blocks(mode):
    """A device whose 4 KiB blocks land whole or not at all (write-cached DASD, a CI a block):
    a tear lands whole 4 KiB blocks, never part of one; a write within one block lands nothing."""
    offset, length = 1024, 2 * 4096  # three blocks touched, the first and last in part
    seen = set()
    for seed in range(1, 9):
        after, new = _torn(mode, seed, offset, length, atomic=4096)
        verdicts = _sector_verdicts(after, new, offset, unit=4096)
        assert "old" in verdicts and "new" in verdicts and len(verdicts) == 3
        seen.add(tuple(verdicts))
    assert len(seen) > 1  # the seed chooses which blocks land
    after, _ = _torn(mode, 1, 4096, 4096, atomic=4096)  # one block: all or nothing, so nothing
    assert after == OLD
    with pytest.raises(ParameterError, match="atomic_bytes"):
        FaultPlan(atomic_bytes=1000)


def test_torn_single_sector_write_lands_nothing():
    after, _ = _torn("random", 1, 1030, 100)
    assert after == OLD


def test_torn_write_past_end_of_file_extends_only_with_landed_sectors():
    inner = MemoryStorage()
    fs = FaultInjectingStorage(inner, FaultPlan(tear_write=1, tear_mode="prefix", seed=5))
    new = bytes(range(1, 256)) * 20
    with pytest.raises(SimulatedCrash):
        fs.write("tail", 0, new)
    size = inner.size("tail")
    assert 0 < size < len(new) and size % SECTOR_SIZE == 0
    assert inner.read("tail", 0, size) == new[:size]


def test_tear_helper_damages_the_durable_image_deterministically():
    images = []
    for _ in range(2):
        inner = MemoryStorage()
        inner.write("f", 0, OLD)
        FaultInjectingStorage(inner, FaultPlan(seed=9, tear_mode="random")).tear(
            "f", 0, b"\xff" * 4096)
        images.append(inner.read("f", 0, len(OLD)))
    assert images[0] == images[1] != OLD
    assert set(_sector_verdicts(images[0], b"\xff" * 4096, 0)) == {"old", "new"}


# -- replace ---------------------------------------------------------------------------

@pytest.mark.parametrize("plan", [FaultPlan(crash_after_writes=1), FaultPlan(tear_write=2)])
def test_replace_is_atomic_under_a_crash(inner, plan):
    fs = FaultInjectingStorage(inner, plan)
    fs.replace("ctl", b"old control record " * 100)
    with pytest.raises(SimulatedCrash):
        fs.replace("ctl", b"new control record " * 100)
    assert inner.read("ctl", 0, 10_000) == b"old control record " * 100


def test_replace_is_durable_at_once_and_supersedes_unsynced_writes(inner):
    fs = FaultInjectingStorage(inner)
    fs.write("ctl", 0, b"unsynced junk that is longer")
    fs.replace("ctl", b"v2")
    assert fs.read("ctl", 0, 100) == b"v2"
    fs.crash()
    assert inner.read("ctl", 0, 100) == b"v2"


# -- injected I/O error ----------------------------------------------------------------

def test_write_error_changes_nothing_and_storage_stays_usable(inner):
    fs = FaultInjectingStorage(inner, FaultPlan(write_error_at=2))
    fs.create("f", 8)
    fs.write("f", 0, b"ok")
    with pytest.raises(StorageError, match="injected") as info:
        fs.write("f", 2, b"BAD")
    assert not isinstance(info.value, SimulatedCrash)
    assert "f" in str(info.value)
    assert fs.read("f", 0, 8) == b"ok" + bytes(6)
    fs.write("f", 2, b"ok")
    fs.sync("f")
    assert inner.read("f", 0, 8) == b"okok" + bytes(4)
    assert not fs.crashed


def test_write_error_on_replace_keeps_the_old_file():
    inner = MemoryStorage()
    fs = FaultInjectingStorage(inner, FaultPlan(write_error_at=2))
    fs.replace("ctl", b"v1")
    with pytest.raises(StorageError):
        fs.replace("ctl", b"v2")
    assert fs.read("ctl", 0, 10) == b"v1"


# -- flip_bit --------------------------------------------------------------------------

def _bits_differing(a: bytes, b: bytes) -> int:
    return sum(bin(x ^ y).count("1") for x, y in zip(a, b, strict=True))


def test_flip_bit_changes_exactly_one_bit(inner):
    fs = FaultInjectingStorage(inner)
    fs.write("f", 0, OLD[:2048])
    fs.sync("f")
    fs.flip_bit("f", 1000, 6)
    after = inner.read("f", 0, 2048)
    assert _bits_differing(after, OLD[:2048]) == 1
    assert after[1000] == OLD[1000] ^ 0x40
    assert fs.read("f", 0, 2048) == after


def test_flip_bit_also_damages_the_volatile_view():
    inner = MemoryStorage()
    fs = FaultInjectingStorage(inner)
    fs.create("f", 16)
    fs.write("f", 0, b"\x00" * 16)
    fs.flip_bit("f", 3, 0)
    assert fs.read("f", 3, 1) == b"\x01"
    fs.sync("f")
    assert inner.read("f", 3, 1) == b"\x01"


def test_flip_bit_refuses_bad_arguments():
    fs = FaultInjectingStorage(MemoryStorage())
    fs.create("f", 4)
    with pytest.raises(ParameterError):
        fs.flip_bit("f", 0, 8)
    with pytest.raises(StorageError, match="f"):
        fs.flip_bit("f", 4, 0)


# -- write_log -------------------------------------------------------------------------

def test_write_log_records_a_vectored_write_as_one_write():
    fs = FaultInjectingStorage(MemoryStorage())
    fs.write("log", 0, [b"page1" * 10, b"page2" * 10, b"page3" * 10])
    fs.write("log", 150, b"tail")
    fs.replace("ctl", b"abc")
    fs.sync("log")  # syncing is not a physical write
    assert fs.physical_writes == 3
    assert fs.write_log == [
        WriteRecord(1, "log", 0, 150, True),
        WriteRecord(2, "log", 150, 4, False),
        WriteRecord(3, "ctl", 0, 3, False, "replace"),
    ]
    assert fs.read("log", 0, 200) == b"page1" * 10 + b"page2" * 10 + b"page3" * 10 + b"tail"


def test_write_log_includes_the_write_that_crashed():
    fs = FaultInjectingStorage(MemoryStorage(), FaultPlan(crash_after_writes=1))
    fs.write("f", 0, b"a")
    with pytest.raises(SimulatedCrash):
        fs.write("f", 1, b"b")
    with pytest.raises(SimulatedCrash):
        fs.write("f", 2, b"c")  # refused after the crash: not attempted
    assert [r.number for r in fs.write_log] == [1, 2]
    assert fs.physical_writes == 2


# -- plan validation -------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {"crash_after_writes": -1}, {"tear_write": 0}, {"write_error_at": 0},
    {"tear_mode": "suffix"}, {"seed": -3}, {"crash_after_writes": 1.5}, {"tear_write": True},
])
def test_bad_plans_are_parameter_errors(kwargs):
    with pytest.raises(ParameterError) as info:
        FaultPlan(**kwargs)
    assert next(iter(kwargs)) in str(info.value)


# -- model check: the durable image is exactly the last synced state -------------------

_fault_op = st.one_of(
    st.tuples(st.just("write"), st.integers(0, 2000), st.binary(min_size=0, max_size=600)),
    st.tuples(st.just("writev"), st.integers(0, 2000),
              st.lists(st.binary(max_size=300), max_size=3)),
    st.tuples(st.just("sync"), st.none(), st.none()),
)


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(_fault_op, max_size=15))
def test_view_and_durable_image_follow_a_page_cache_model(ops):
    inner = MemoryStorage()
    fs = FaultInjectingStorage(inner)
    fs.create("f", 100)
    view, durable = bytearray(100), bytearray(100)
    for kind, offset, data in ops:
        if kind == "sync":
            fs.sync("f")
            durable = bytearray(view)
            continue
        fs.write("f", offset, data)
        payload = data if kind == "write" else b"".join(data)
        if payload:
            view.extend(bytes(max(0, offset - len(view))))
            view[offset:offset + len(payload)] = payload
        assert fs.read("f", 0, 5000) == bytes(view)
        assert fs.size("f") == len(view)
    fs.crash()
    assert inner.read("f", 0, 5000) == bytes(durable)


# -- a cache that lies, a misdirected write, fsync EIO, a full file system -------------------

def test_a_lost_write_is_read_back_until_the_crash_and_never_durable():
    fs = FaultInjectingStorage(MemoryStorage(), FaultPlan(lose_write=2))
    fs.write("f", 0, b"a" * 8192)
    fs.sync("f")
    fs.write("f", 4096, b"b" * 4096)  # write 2: acknowledged, synced, never on the media
    fs.sync("f")
    assert fs.read("f", 0, 8192) == b"a" * 4096 + b"b" * 4096
    assert fs.lied[:3] == (2, "f", 4096)
    fs.crash()
    assert fs.durable.read("f", 0, 8192) == b"a" * 8192


def test_a_later_write_that_reaches_the_media_replaces_the_lost_one_in_reads():
    fs = FaultInjectingStorage(MemoryStorage(), FaultPlan(lose_write=1))
    fs.write("f", 0, b"x" * 4096)
    fs.sync("f")
    fs.write("f", 1024, b"y" * 1024)
    fs.sync("f")
    assert fs.read("f", 0, 4096) == b"x" * 1024 + b"y" * 1024 + b"x" * 2048
    assert fs.durable.read("f", 0, 4096) == bytes(1024) + b"y" * 1024


def test_a_misdirected_write_lands_pages_away_and_leaves_its_target_old():
    fs = FaultInjectingStorage(MemoryStorage(), FaultPlan(misdirect_write=2, misdirect_pages=2))
    fs.write("f", 0, bytes(5 * 4096))
    fs.sync("f")
    fs.write("f", 4096, b"m" * 4096)
    fs.sync("f")
    assert fs.read("f", 4096, 4096) == b"m" * 4096  # the cache shows it where it was aimed
    fs.crash()
    assert fs.durable.read("f", 4096, 4096) == bytes(4096)
    assert fs.durable.read("f", 3 * 4096, 4096) == b"m" * 4096


def test_a_failed_fsync_loses_the_unsynced_writes_and_the_next_sync_succeeds_without_them():
    fs = FaultInjectingStorage(MemoryStorage(), FaultPlan(sync_error_at=2))
    fs.write("f", 0, b"1" * 512)
    fs.sync("f")
    fs.write("f", 512, b"2" * 512)
    with pytest.raises(StorageError, match="EIO"):
        fs.sync("f")
    fs.sync("f")  # "succeeds": the pages were marked clean
    assert fs.read("f", 0, 1024) == b"1" * 512
    assert fs.durable.read("f", 0, 1024) == b"1" * 512


def test_enospc_fails_the_allocation_and_changes_nothing():
    fs = FaultInjectingStorage(MemoryStorage(), FaultPlan(enospc_at=2))
    fs.create("a", 4096)
    with pytest.raises(StorageError, match="ENOSPC"):
        fs.create("b", 4096)
    assert not fs.exists("b")
    fs.write("a", 0, b"z" * 4096)  # within the file: no allocation
    fs.sync("a")
    assert fs.durable.read("a", 0, 4096) == b"z" * 4096


@pytest.mark.parametrize("kwargs", [{"lose_write": 0}, {"misdirect_pages": 0}, {"misdirect_pages": 2000},
                                    {"sync_error_at": -1}, {"enospc_at": "3"}])
def test_bad_new_plans_are_parameter_errors(kwargs):
    with pytest.raises(ParameterError):
        FaultPlan(**kwargs)


def test_enospc_on_a_replace_that_grows_a_file_keeps_the_old_file():
    fs = FaultInjectingStorage(MemoryStorage(), FaultPlan(enospc_at=2))
    fs.replace("c", b"old")
    with pytest.raises(StorageFullError):
        fs.replace("c", b"a larger file")
    assert fs.read("c", 0, 100) == b"old"


# -- writes in flight together: one power loss tears them all ---------------------------------

def _flying(seed: int, *, begin_second: bool = True):
    """Two 8-sector writes on their way to the device at once (two copies); the first to
    finish is torn. Returns the durable bytes of the second's file."""
    disk = MemoryStorage()
    fs = FaultInjectingStorage(disk, FaultPlan(tear_write=1, seed=seed))
    for name in ("A", "B"):
        fs.create(name, 4096)
    if begin_second:
        fs.begin_write("A", 0, b"\x01" * 4096)
        fs.begin_write("B", 0, [b"\x02" * 2048, b"\x02" * 2048])  # (a vectored write's buffers)
    with pytest.raises(SimulatedCrash, match="torn, and 1 other write in flight with it" if begin_second else "torn$"):
        fs.write("A", 0, b"\x01" * 4096)
    with pytest.raises(SimulatedCrash):
        fs.write("B", 0, b"\x02" * 4096)  # (it finished after the power was gone)
    return disk.read("B", 0, 4096)


def test_a_power_loss_tears_every_write_in_flight_not_only_the_one_it_hit():
    landed = set()
    for seed in range(40):
        b = _flying(seed)
        sectors = [b[i:i + SECTOR_SIZE] for i in range(0, 4096, SECTOR_SIZE)]
        assert all(s in (bytes(SECTOR_SIZE), b"\x02" * SECTOR_SIZE) for s in sectors)  # whole sectors
        landed.add(sum(s != bytes(SECTOR_SIZE) for s in sectors))
    # any number of the second write's sectors: none, some, all (it was anywhere on its way)
    assert 0 in landed and 8 in landed and len(landed) > 4


def test_a_write_not_begun_beside_the_torn_one_lands_nothing():
    assert _flying(1, begin_second=False) == bytes(4096)


def test_a_write_that_finished_before_the_power_loss_is_not_in_flight_any_more():
    disk = MemoryStorage()
    fs = FaultInjectingStorage(disk, FaultPlan(tear_write=2, seed=3))
    fs.create("A", 4096)
    fs.begin_write("A", 0, b"\x01" * 4096)
    fs.write("A", 0, b"\x01" * 4096)  # done, but never synced: a power loss drops it whole
    with pytest.raises(SimulatedCrash, match="torn$"):
        fs.write("A", 0, b"\x03" * 4096)
    assert set(disk.read("A", 0, 4096)) <= {0, 3}
