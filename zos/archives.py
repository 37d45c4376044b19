"""The archive log as the BSDS inventories it: the archive data sets' entries in the BSDS's
order (oldest first), with an index by RBA range, so that a read of a page that has left the
active log finds its archive in O(log n) rather than by a walk of the whole inventory – the
inventory holds up to MAXARCH (1,000 by default, at most 10,000) recorded archives, and a
restart or a log print reads such pages one after another (IBM MQ for z/OS, "The BSDS":
"the archive log data sets, and the RBA range each one holds").

:class:`ArchiveLog` is a sequence of :class:`~mqlog.zos.datasets.ArchiveEntry` (what readers
of ``space.archives`` iterate); entries are added at the end (:meth:`~ArchiveLog.append`, an
offload taking its number) and removed anywhere (:meth:`~ArchiveLog.remove`, MAXARCH
dropping the oldest), and an entry's range never changes once it is in the log (its
``complete`` flag does: the index never depends on it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sortedcontainers import SortedList

from mqlog.zos.datasets import ArchiveEntry


class ArchiveLog(Sequence):
    """The archive entries of one BSDS in its order, indexed by the RBA each starts at."""

    __slots__ = ("_entries", "_index", "_placed", "_added", "_span")

    def __init__(self, entries: Iterable[ArchiveEntry] = ()):
        self._entries: list[ArchiveEntry] = []
        #: (start RBA, order added, entry): the order added breaks ties, so entries are
        #: never compared, and it is the inventory's order (entries are added only at its end)
        self._index = SortedList()
        self._placed: dict[int, tuple] = {}  # id(entry) -> its key in _index
        self._added = 0
        #: the longest range (end - start) an entry has had: a lookup looks back no further
        self._span = 0
        for entry in entries:
            self.append(entry)

    # -- the inventory --------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, index):
        return self._entries[index]

    def __iter__(self):
        return iter(self._entries)

    def __repr__(self) -> str:
        return f"ArchiveLog({self._entries!r})"

    def append(self, entry: ArchiveEntry) -> None:
        """Record ``entry`` as the newest archive (an offload took its number)."""
        key = (entry.start, self._added, entry)
        self._added += 1
        self._entries.append(entry)
        self._index.add(key)
        self._placed[id(entry)] = key
        self._span = max(self._span, entry.end - entry.start)

    def remove(self, entry: ArchiveEntry) -> None:
        """Drop ``entry`` (this one, not one equal to it) from the inventory (MAXARCH: the
        file stays)."""
        del self._entries[next(i for i, e in enumerate(self._entries) if e is entry)]
        self._index.remove(self._placed.pop(id(entry)))

    # -- questions ------------------------------------------------------------------------------

    def covering(self, address: int) -> ArchiveEntry | None:
        """The newest complete archive whose range holds ``address``, or None: O(log n) plus
        the entries starting within the longest range before it (one, where archives tile
        the log as offloads make them)."""
        found, order = None, -1
        for start, added, entry in self._index.irange((address - self._span,), (address, float("inf"))):
            if added > order and entry.complete and address <= entry.end:
                found, order = entry, added
        return found

    def waiting(self, seq: int) -> ArchiveEntry | None:
        """The first archive numbered ``seq`` whose offload has not completed (a crash cut it
        short: it is redone under the same number), or None."""
        return next((e for e in self._entries if e.seq == seq and not e.complete), None)

    @property
    def recorded(self) -> int:
        """How many archives the BSDS records as complete."""
        return sum(1 for e in self._entries if e.complete)

    def drop_oldest(self, keep: int) -> list[ArchiveEntry]:
        """Drop the oldest complete archives until at most ``keep`` remain (MAXARCH): the
        entries dropped, oldest first."""
        excess = self.recorded - keep
        dropped = [e for e in self._entries if e.complete][:max(0, excess)]
        for entry in dropped:
            self.remove(entry)
        return dropped
