"""The archive inventory's index (zos/archives.py): whatever the entries – tiling the log as
offloads make them, or overlapping as a BSDS edited or restored may list them – and however
they are added, completed and dropped, the archive found for an RBA is the one a walk of the
inventory from its newest entry finds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mqlog.zos.archives import ArchiveLog
from mqlog.zos.datasets import ArchiveEntry

CI = 4096


def walked(entries, address):
    """The archive for ``address`` as a walk of the inventory finds it (what the index replaces)."""
    for entry in reversed(entries):
        if entry.complete and entry.start <= address <= entry.end:
            return entry
    return None


def test_offloaded_archives_tile_the_log_and_each_rba_finds_its_own():
    log = ArchiveLog(ArchiveEntry(n, (n - 1) * 16 * CI, n * 16 * CI - 1, (f"A{n}",), complete=True)
                     for n in range(1, 101))
    assert log.covering(0).seq == 1 and log.covering(16 * CI).seq == 2 and log.covering(100 * 16 * CI - 1).seq == 100
    assert log.covering(100 * 16 * CI) is None
    log[41].complete = False  # (an offload under way: not yet an archive to read)
    assert log.covering(41 * 16 * CI) is None and log.waiting(42) is log[41]
    assert [e.seq for e in log.drop_oldest(97)] == [1, 2] and log.recorded == 97 and log[0].seq == 3
    assert log.covering(0) is None and log.covering(2 * 16 * CI).seq == 3


@st.composite
def steps(draw):
    """A script of appends (start, length, complete), completions and removals (by position)."""
    return draw(st.lists(st.one_of(
        st.tuples(st.just("add"), st.integers(0, 40), st.integers(0, 12), st.booleans()),
        st.tuples(st.just("complete"), st.integers(0, 50)),
        st.tuples(st.just("remove"), st.integers(0, 50)),
        st.tuples(st.just("drop"), st.integers(0, 6))), max_size=40))


@settings(max_examples=300, deadline=None)
@given(steps())
def test_the_index_finds_what_the_walk_finds(script):
    log, entries, seq = ArchiveLog(), [], 0
    for step in script:
        if step[0] == "add":
            seq += 1
            _, start, length, complete = step
            entry = ArchiveEntry(seq, start * CI, (start + length) * CI - 1, (f"A{seq}",), complete)
            log.append(entry)
            entries.append(entry)
        elif step[0] == "complete" and entries:
            entries[step[1] % len(entries)].complete = True
        elif step[0] == "remove" and entries:
            entry = entries.pop(step[1] % len(entries))
            log.remove(entry)
        elif step[0] == "drop":
            dropped = log.drop_oldest(step[1])
            complete = [e for e in entries if e.complete]
            assert dropped == complete[:max(0, len(complete) - step[1])]
            entries = [e for e in entries if not any(e is d for d in dropped)]
        assert list(log) == entries and len(log) == len(entries)
        for address in range(-CI, 54 * CI, CI // 2):
            assert log.covering(address) is walked(entries, address), address
