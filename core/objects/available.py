"""A queue's available set: its committed, unlocked messages, taken oldest first."""

from __future__ import annotations

from collections.abc import MutableMapping
from heapq import heappop, heappush

_MISSING = object()


class Available(MutableMapping):
    """A queue's committed, unlocked messages: arrival number -> message id, taken oldest
    first; iterated in arrival order (the mapping a ``SortedDict`` was here before).

    A dict holds the entries; a heap of arrival numbers finds the oldest. Messages mostly
    arrive in increasing order, so a push costs next to nothing, and a message made
    available again (a backout, restart's redo) just goes into the heap where it belongs.
    Deleting a number leaves its heap entry behind: an entry counts only while its number
    is in the dict (one may be there twice after a delete and re-insert: harmless), and the
    heap is rebuilt at an insert once the stale entries outnumber the live ones.
    """

    __slots__ = ("_heap", "_map")

    def __init__(self, items=()):
        self._map: dict[int, bytes] = {}
        self._heap: list[int] = []
        for seq, msg_id in dict(items).items():
            self[seq] = msg_id

    def __setitem__(self, seq: int, msg_id: bytes) -> None:
        entries = self._map
        if seq not in entries:
            heap = self._heap
            if len(heap) > 2 * len(entries) + 64:
                heap = self._heap = sorted(entries)  # drop the stale entries (a sorted list is a heap)
            heappush(heap, seq)
        entries[seq] = msg_id

    def __getitem__(self, seq: int) -> bytes:
        return self._map[seq]

    def __delitem__(self, seq: int) -> None:
        del self._map[seq]

    def discard(self, seq: int) -> None:
        """Remove ``seq`` if it is there."""
        self._map.pop(seq, None)

    def __contains__(self, seq) -> bool:
        return seq in self._map

    def __len__(self) -> int:
        return len(self._map)

    def __iter__(self):
        return iter(sorted(self._map))

    def __repr__(self) -> str:
        return f"Available({dict(self.items())!r})"

    def pop(self, seq: int, default=_MISSING):
        if default is _MISSING:
            return self._map.pop(seq)
        return self._map.pop(seq, default)

    def popitem(self, index: int = -1) -> tuple[int, bytes]:
        """Remove and return the item at ``index`` in arrival order (SortedDict's
        convention: the newest by default, 0 the oldest)."""
        if not self._map:
            raise KeyError("popitem(): the available set is empty")
        if index == 0:
            return self.pop_first()
        seq = sorted(self._map)[index]
        return seq, self._map.pop(seq)

    def pop_first(self) -> tuple[int, bytes]:
        """Remove and return the oldest entry (KeyError if there is none)."""
        heap, entries = self._heap, self._map
        while heap:
            seq = heappop(heap)
            msg_id = entries.pop(seq, _MISSING)
            if msg_id is not _MISSING:
                return seq, msg_id
        raise KeyError("pop_first(): the available set is empty")

    def clear(self) -> None:
        self._map.clear()
        self._heap.clear()
