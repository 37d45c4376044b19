"""A run recorded once materialises the same disks and journals as re-running it with the fault.

The fault campaign's engine (core/workload/recording.py) must be indistinguishable from the re-run
it replaces: for every crash point and every torn write of small runs on both platforms,
the image is byte for byte the re-run's durable storage and the journal says the same.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqlog.core.errors import SimulatedCrash, StorageError
from mqlog.core.disk.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.workload.journal import Journal
from mqlog.core.workload.recording import JOURNAL_EVENTS, CowStorage, Recorder, files_of
from mqlog.core.workload.run import RunConfig, restart_run, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.core.disk.storage import MemoryStorage
from mqlog.platforms import choose
from mqlog.torture import in_place_writes

#: small log files, so runs switch files (creates, archives, truncates) and images compare quickly
CONFIGS = [
    ("distributed", {"LogWriteIntegrity": "TripleWrite", "LogFilePages": "64"}),
    ("distributed", {"LogWriteIntegrity": "SingleWrite", "LogFilePages": "64"}),
    ("distributed", {"LogType": "LINEAR", "LogFilePages": "64"}),
    ("zos", {"TWOACTV": "YES", "ACTIVE_LOG_CIS": "32"}),
    ("zos", {"TWOACTV": "NO", "TWOARCH": "NO", "ACTIVE_LOG_CIS": "32", "COMPLOG": "RLE"}),
]
SPEC = build_spec(BUILTINS["putget-pairs"], {"pairs": "2", "messages_per_pair": "12"}, origin="test")


def config(platform: str, log: dict, plan: FaultPlan | None = None) -> RunConfig:
    choice = choose(platform)
    values = choice.configure(dict(log))
    return RunConfig(platform, choice.maker(values), values, SPEC, seed=5, fault_plan=plan)


def recorded(platform: str, log: dict):
    recorder = Recorder()
    result = run_workload(config(platform, log), MemoryStorage(), recorder=recorder)
    return result, recorder.recording()


def rerun(platform: str, log: dict, plan: FaultPlan):
    return run_workload(config(platform, log, plan), MemoryStorage())


@pytest.mark.parametrize("platform, log", CONFIGS, ids=[f"{p}-{'-'.join(v for v in log.values())}"
                                                         for p, log in CONFIGS])
def test_every_crash_point_and_torn_write_materialises_as_the_rerun_leaves_it(platform, log):
    base, recording = recorded(platform, log)
    n = recording.physical_writes
    assert n == base.storage.physical_writes > 20
    assert files_of(recording.materialise(n)) == files_of(base.storage.durable)  # the clean end
    images, journals = recording.images(), recording.journals()
    for k in range(n):
        crashed = rerun(platform, log, FaultPlan(crash_after_writes=k))
        assert crashed.crashed
        assert files_of(images.image(k)) == files_of(crashed.storage.durable), f"crash after write {k}"
        assert journals.at(k).to_json() == crashed.journal.to_json(), f"journal at crash after write {k}"
    # torn: the writes over pages on disk, and those with writes in flight beside them (a power
    # loss tears those too: z/OS's two copies of new CIs)
    torn = sorted({w.number for w in in_place_writes(recording.write_log())}.union(recording.in_flight_at))
    assert torn
    assert bool(recording.in_flight_at) == (log.get("TWOACTV") == "YES")
    cursor = recording.images()
    for k in torn:
        for mode in ("random", "prefix"):
            plan = FaultPlan(tear_write=k, tear_mode=mode, seed=1000 + k)
            expected = files_of(rerun(platform, log, plan).storage.durable)
            assert files_of(recording.materialise_torn(k, 1000 + k, mode)) == expected, f"tear {k} {mode}"
        assert files_of(cursor.torn(k, 1000 + k, "random")) == files_of(
            rerun(platform, log, FaultPlan(tear_write=k, tear_mode="random", seed=1000 + k)).storage.durable)


@pytest.mark.parametrize("platform, log", [CONFIGS[0], CONFIGS[3]], ids=["distributed", "zos"])
def test_a_restart_recorded_once_materialises_every_crash_during_it(platform, log):
    _, recording = recorded(platform, log)
    k = recording.physical_writes * 2 // 3
    maker = config(platform, log).make_platform
    image = recording.materialise(k)
    probe = Recorder().storage(CowStorage(image), FaultPlan(), keep_write_log=False)
    restart_run(maker, probe)
    from mqlog.core.workload.recording import Recording

    restart = Recording(probe.ops, [], probe.physical_writes, base=image)
    assert restart.physical_writes > 2
    images = restart.images()
    for j in range(restart.physical_writes + 1):
        disk = MemoryStorage()
        for name, data in files_of(image).items():
            disk.write(name, 0, data)
        try:
            restart_run(maker, FaultInjectingStorage(disk, FaultPlan(crash_after_writes=j)))
        except SimulatedCrash:
            pass
        assert files_of(images.image(j)) == files_of(disk), f"restart crashed after its write {j}"
    assert files_of(image) == files_of(recording.materialise(k))  # the views never wrote through


def test_the_recording_journal_records_every_method_that_changes_the_journal():
    readers = {"verify", "to_json", "from_json", "in_doubt_keys", "copy", "settlement", "coordination"}
    public = {n for n in vars(Journal) if not n.startswith("_") and callable(getattr(Journal, n))}
    assert public - readers == set(JOURNAL_EVENTS)


def test_a_cursor_only_moves_forward():
    _, recording = recorded(*CONFIGS[0])
    images = recording.images()
    images.image(10)
    with pytest.raises(Exception, match="only moves forward"):
        images.image(9)


def test_an_edit_hook_drops_a_write_from_the_durable_image():
    """How a lost write is materialised: the write never reaches the disk, later ones do."""
    _, recording = recorded(*CONFIGS[3])
    n = recording.physical_writes
    ops = {w: recording.write(w) for w in range(1, n + 1)}

    def overwritten_later(w):  # a later write covers the same bytes: losing this one shows nowhere
        _, name, offset, data = ops[w]
        return any(op[0] == "write" and op[1] == name and op[2] < offset + len(data) and offset < op[2] + len(op[3])
                   for op in (ops[v] for v in range(w + 1, n + 1)))

    lost = next(w for w in range(n // 2, n + 1) if ops[w][0] == "write" and not overwritten_later(w))

    def drop(op):
        return [] if op[1] == "write" and op[0] == lost else [op]

    full, edited = recording.materialise(n), recording.images(edit=drop).image(n)
    assert files_of(edited) != files_of(full)
    assert files_of(recording.replay(edit=drop).durable) == files_of(edited)


# -- the copy-on-write view behaves as a copy ------------------------------------------------

_names = st.sampled_from(["a", "b", "c"])
_ops = st.lists(st.one_of(
    st.tuples(st.just("write"), _names, st.integers(0, 20000), st.binary(min_size=0, max_size=9000)),
    st.tuples(st.just("truncate"), _names, st.integers(0, 20000)),
    st.tuples(st.just("create"), _names, st.integers(0, 12000)),
    st.tuples(st.just("replace"), _names, st.binary(max_size=5000)),
    st.tuples(st.just("delete"), _names),
    st.tuples(st.just("read"), _names, st.integers(0, 20000), st.integers(0, 10000)),
), max_size=25)


@settings(max_examples=150, deadline=None)
@given(_ops, st.binary(min_size=1, max_size=10000))
def test_a_view_does_what_a_copy_does_and_leaves_its_base_alone(ops, seed_bytes):
    base = MemoryStorage()
    base.write("a", 0, seed_bytes)
    base.write("b", 5000, seed_bytes)
    before = files_of(base)
    copy, view = MemoryStorage(), CowStorage(base)
    for name, data in before.items():
        copy.write(name, 0, data)
    for op in ops:
        results = []
        for s in (copy, view):
            try:
                results.append(("ok", getattr(s, op[0])(*op[1:])))
            except StorageError as exc:
                results.append(("error", str(exc)))
        assert results[0] == results[1], op
        assert copy.list() == view.list()
        assert all(copy.size(n) == view.size(n) for n in copy.list())
    assert files_of(view) == files_of(copy)
    assert files_of(base) == before


def test_a_journal_copy_is_independent_of_the_original():
    journal = Journal()
    journal.put("app", b"m" * 24, "Q1", True, syncpoint=True)
    journal.commit_asked("app")
    copy = journal.copy()
    journal.ended("app", committed=True)
    journal.crash()
    copy.crash()  # the commit was asked, never answered: maybe
    assert copy.to_json()["messages"][(b"m" * 24).hex()][2] == "maybe"
    assert journal.to_json()["messages"][(b"m" * 24).hex()][2] == "committed"
