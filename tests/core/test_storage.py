"""Behaviour of the two storage backends, checked against each other and a bytearray model."""

from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mqlog.core.errors import MqlogError, StorageError
from mqlog.core.disk.storage import DirectoryStorage, MemoryStorage, Storage


@pytest.fixture(params=["memory", "directory"])
def storage(request, tmp_path):
    if request.param == "memory":
        s = MemoryStorage()
    else:
        s = DirectoryStorage(tmp_path / "store")
    yield s
    s.close()


def test_both_backends_satisfy_the_protocol(tmp_path):
    assert isinstance(MemoryStorage(), Storage)
    assert isinstance(DirectoryStorage(tmp_path), Storage)


def test_create_is_preformatted_with_zeros(storage):
    storage.create("ext.0001", 4096)
    assert storage.exists("ext.0001")
    assert storage.size("ext.0001") == 4096
    assert storage.read("ext.0001", 0, 4096) == bytes(4096)
    storage.create("empty")
    assert storage.size("empty") == 0


def test_create_refuses_an_existing_file(storage):
    storage.create("ctl", 10)
    storage.write("ctl", 0, b"x")
    with pytest.raises(StorageError, match="ctl"):
        storage.create("ctl", 10)
    assert storage.read("ctl", 0, 1) == b"x"


def test_write_then_read_and_short_read_at_end(storage):
    storage.write("f", 0, b"hello world")
    assert storage.read("f", 6, 5) == b"world"
    assert storage.read("f", 6, 100) == b"world"
    assert storage.read("f", 11, 10) == b""
    assert storage.read("f", 50, 10) == b""


def test_write_overwrites_in_place(storage):
    storage.create("f", 8)
    storage.write("f", 2, b"ab")
    assert storage.read("f", 0, 8) == b"\0\0ab\0\0\0\0"
    assert storage.size("f") == 8


def test_write_accepts_any_bytes_like(storage):
    storage.write("f", 0, bytearray(b"abc"))
    storage.write("f", 3, memoryview(b"defg")[1:3])
    assert storage.read("f", 0, 10) == b"abcef"


def test_vectored_write_is_contiguous(storage):
    storage.write("f", 3, [b"ab", bytearray(b""), b"cde", memoryview(b"f")])
    assert storage.size("f") == 9
    assert storage.read("f", 0, 9) == b"\0\0\0abcdef"


def test_write_extends_with_a_zero_filled_gap(storage):
    storage.write("f", 0, b"xy")
    storage.write("f", 1000, b"z")
    assert storage.size("f") == 1001
    data = storage.read("f", 0, 2000)
    assert data == b"xy" + bytes(998) + b"z"


def test_empty_write_creates_but_does_not_extend(storage):
    storage.write("f", 100, b"")
    assert storage.exists("f")
    assert storage.size("f") == 0


def test_replace_swaps_whole_content(storage):
    storage.write("ctl", 0, b"a much longer old control record")
    storage.replace("ctl", b"new")
    assert storage.size("ctl") == 3
    assert storage.read("ctl", 0, 100) == b"new"
    storage.replace("fresh", b"created by replace")
    assert storage.read("fresh", 0, 100) == b"created by replace"
    assert storage.list() == ["ctl", "fresh"]  # no temporary left behind


def test_replace_then_write_goes_to_the_new_file(storage):
    storage.write("ctl", 0, b"old old old")
    storage.replace("ctl", b"new")
    storage.write("ctl", 3, b"+")
    assert storage.read("ctl", 0, 100) == b"new+"


def test_truncate_shrinks_and_extends(storage):
    storage.write("f", 0, b"0123456789")
    storage.truncate("f", 4)
    assert storage.read("f", 0, 100) == b"0123"
    storage.truncate("f", 6)
    assert storage.read("f", 0, 100) == b"0123\0\0"


def test_delete(storage):
    storage.create("f", 1)
    storage.delete("f")
    assert not storage.exists("f")
    with pytest.raises(StorageError, match="gone"):
        storage.delete("gone")


def test_list_is_sorted_and_filtered_by_prefix(storage):
    for name in ["log.0003", "log.0001", "amqhlctl.lfh", "log.0002", "queue.q1"]:
        storage.create(name)
    assert storage.list() == ["amqhlctl.lfh", "log.0001", "log.0002", "log.0003", "queue.q1"]
    assert storage.list("log.") == ["log.0001", "log.0002", "log.0003"]
    assert storage.list("nothing") == []


@pytest.mark.parametrize("op", ["read", "size", "truncate", "sync", "delete"])
def test_missing_file_is_a_storage_error_naming_it(storage, op):
    calls = {
        "read": lambda: storage.read("missing.ext", 0, 10),
        "size": lambda: storage.size("missing.ext"),
        "truncate": lambda: storage.truncate("missing.ext", 0),
        "sync": lambda: storage.sync("missing.ext"),
        "delete": lambda: storage.delete("missing.ext"),
    }
    with pytest.raises(StorageError, match=r"missing\.ext") as info:
        calls[op]()
    assert isinstance(info.value, MqlogError)


def test_negative_offsets_are_refused(storage):
    storage.create("f", 10)
    with pytest.raises(StorageError, match="f"):
        storage.write("f", -1, b"x")
    with pytest.raises(StorageError):
        storage.read("f", -1, 1)
    assert storage.read("f", 0, 10) == bytes(10)


@pytest.mark.parametrize("bad", ["../escape", "/etc/passwd", "sub/file", "..", ".", ""])
def test_names_that_could_escape_are_refused(storage, bad):
    with pytest.raises(StorageError) as info:
        storage.write(bad, 0, b"x")
    assert repr(bad) in str(info.value)
    with pytest.raises(StorageError):
        storage.create(bad)
    with pytest.raises(StorageError):
        storage.replace(bad, b"x")


def test_directory_storage_never_writes_outside_its_directory(tmp_path):
    store = DirectoryStorage(tmp_path / "inner")
    for bad in ["../outside", str(tmp_path / "abs")]:
        with pytest.raises(StorageError):
            store.write(bad, 0, b"x")
        with pytest.raises(StorageError):
            store.replace(bad, b"x")
    store.close()
    assert sorted(os.listdir(tmp_path)) == ["inner"]
    assert os.listdir(tmp_path / "inner") == []


def test_directory_storage_keeps_files_across_reopen(tmp_path):
    first = DirectoryStorage(tmp_path, fsync=True)
    first.create("ext", 1024)
    first.write("ext", 512, [b"a" * 100, b"b" * 100])
    first.sync("ext")
    first.replace("ctl", b"control")
    first.close()
    second = DirectoryStorage(tmp_path)
    assert second.list() == ["ctl", "ext"]
    assert second.read("ext", 512, 200) == b"a" * 100 + b"b" * 100
    assert second.read("ctl", 0, 100) == b"control"
    second.close()


def test_directory_storage_with_many_files_recycles_descriptors(tmp_path):
    store = DirectoryStorage(tmp_path)
    names = [f"q{i:03d}" for i in range(store.max_open_files * 2 + 3)]
    for i, name in enumerate(names):
        store.write(name, 0, bytes([i]))
    assert [store.read(n, 0, 1) for n in names] == [bytes([i]) for i in range(len(names))]
    store.close()


def test_memory_storage_close_keeps_contents():
    store = MemoryStorage()
    store.write("f", 0, b"abc")
    store.close()
    assert store.read("f", 0, 3) == b"abc"


# -- both backends agree with a plain bytearray model ---------------------------------

_chunks = st.binary(min_size=0, max_size=700)
_op = st.one_of(
    st.tuples(st.just("write"), st.integers(0, 3000), _chunks),
    st.tuples(st.just("writev"), st.integers(0, 3000), st.lists(_chunks, min_size=0, max_size=4)),
    st.tuples(st.just("truncate"), st.integers(0, 3500), st.none()),
    st.tuples(st.just("replace"), st.none(), _chunks),
)


def _apply_model(model: bytearray, op) -> bytearray:
    kind, offset, data = op
    if kind in ("write", "writev"):
        payload = data if kind == "write" else b"".join(data)
        if payload:
            if offset > len(model):
                model.extend(bytes(offset - len(model)))
            model[offset:offset + len(payload)] = payload
    elif kind == "truncate":
        del model[offset:]
        model.extend(bytes(offset - len(model)))
    else:
        model = bytearray(data)
    return model


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(_op, max_size=12), probe=st.tuples(st.integers(0, 4000), st.integers(0, 4000)))
def test_random_writes_match_a_bytearray_model_on_both_backends(ops, probe):
    with tempfile.TemporaryDirectory() as tmp:
        backends = [MemoryStorage(), DirectoryStorage(tmp)]
        model = bytearray()
        for store in backends:
            store.create("f")
        for op in ops:
            model = _apply_model(model, op)
            kind, offset, data = op
            for store in backends:
                if kind == "write":
                    store.write("f", offset, data)
                elif kind == "writev":
                    store.write("f", offset, data)
                elif kind == "truncate":
                    store.truncate("f", offset)
                else:
                    store.replace("f", data)
        offset, length = probe
        for store in backends:
            assert store.size("f") == len(model)
            assert store.read("f", 0, len(model) + 10) == bytes(model)
            assert store.read("f", offset, length) == bytes(model[offset:offset + length])
            store.close()


def test_dots_inside_a_plain_name_are_fine(storage):
    storage.write("a..log", 0, b"x")
    assert storage.read("a..log", 0, 1) == b"x"


def _failing_directory_fsync(monkeypatch, err: int):
    """os.fsync failing with ``err`` on a directory's descriptor, as it would on a broken disk."""
    import stat

    real = os.fsync

    def fsync(fd):
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(err, os.strerror(err))
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def test_a_failed_directory_fsync_after_replace_is_an_error_naming_the_directory(tmp_path, monkeypatch):
    """replace promises the new file survives a crash only once the directory is synced: a
    failed sync is a StorageError naming the directory, not ignored."""
    import errno

    store = DirectoryStorage(tmp_path, fsync=True)
    _failing_directory_fsync(monkeypatch, errno.EIO)
    with pytest.raises(StorageError, match="directory") as info:
        store.replace("ctl", b"control")
    assert str(tmp_path) in str(info.value)
    store.close()


def test_a_file_system_that_cannot_sync_a_directory_is_tolerated(tmp_path, monkeypatch):
    """EINVAL: the file system does not support fsync of a directory; there is no other way to
    ask, so replace goes on (and the file is there)."""
    import errno

    store = DirectoryStorage(tmp_path, fsync=True)
    _failing_directory_fsync(monkeypatch, errno.EINVAL)
    store.replace("ctl", b"control")
    assert store.read("ctl", 0, 100) == b"control"
    store.close()
