"""A queue file's message directory in memory: entries grouped in pages, one page a
directory block on disk, so that a flush writes the pages that changed and an index of all
of them, not every entry (docs/FORMAT.md, "Queue files").

Entries are kept packed (ENTRY, 64 bytes, what the file holds), a page's in one bytearray:
not a value object a message, nor a bytes object each (33 bytes of header and a list slot
more). Bytes are not traced by Python's garbage collector, and a deep queue's directory is
the bulk of what a queue manager holds per message.

**Pages.** A page holds up to ``ENTRIES_PER_BLOCK`` entries in put order, and the pages
are in put order, so the directory read page by page is the queue in put order. A new
entry goes into the last page while it has room, else into a new page; an entry that
changes stays in its page; a page emptied by removals leaves the directory. A page that
changed is *dirty*: the next flush writes it into a new block (never over the block the
durable version uses, which is freed once the new version is durable). Before a flush, a
dirty page under half full takes in the pages after it while their entries fit (so a queue
whose messages are got out of order does not leave a trail of near-empty blocks); a merged
page's block is freed like a dirty page's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from operator import attrgetter

from mqlog.core.disk.storage import Storage
from mqlog.core.objects.queuelayout import (BLOCK_SIZE, DIR_HEAD, ENTRIES_PER_BLOCK, ENTRY, ENTRY_SIZE, FIRST_AT,
                                            HEADER_SLOTS, INDEX, STATES, MessageState, StoredMessage, blocks_for,
                                            decode_directory_block, pack_entry, unpack_entry)

_MSG_ID = 24  # the bytes of an entry that are its message id
_PAGE_FULL = ENTRIES_PER_BLOCK * ENTRY_SIZE  # the bytes of a full page's entries
#: ``open`` reads directory blocks up to this many blocks apart (32 KiB) in one request, the
#: blocks between read and dropped: a request costs a device latency, a few KiB more cost
#: little (an assumption, below Linux's default read-ahead of 128 KiB)
READ_THROUGH_BLOCKS = 64
_index_of = attrgetter("index")


class _Page:
    """Up to ENTRIES_PER_BLOCK packed entries in put order, one after the other in ``data``,
    and where the durable version holds them: ``block`` (0: in no durable version yet) with
    ``index``, its index entry; ``prev``/``next``: the pages before and after it."""

    __slots__ = ("key", "data", "block", "index", "prev", "next", "group")

    def __init__(self, key: int, prev: _Page | None) -> None:
        self.key = key
        self.data = bytearray()  # the packed entries, ENTRY_SIZE bytes each
        self.block = 0
        self.index = b""
        self.prev = prev
        self.next: _Page | None = None
        self.group = -1  # the run of blocks the durable version holds it in (-1: none)

    @property
    def count(self) -> int:
        """The entries it holds."""
        return len(self.data) // ENTRY_SIZE

    @property
    def entries(self) -> list[bytes]:
        """Its packed entries, each a bytes object (a copy)."""
        data = self.data
        return [bytes(data[at:at + ENTRY_SIZE]) for at in range(0, len(data), ENTRY_SIZE)]

    def ids(self) -> Iterator[bytes]:
        """The message ids of its entries, in order (copies)."""
        data = self.data
        return (bytes(data[at:at + _MSG_ID]) for at in range(0, len(data), ENTRY_SIZE))

    def find(self, msg_id: bytes) -> int:
        """The offset in ``data`` of the entry of ``msg_id``."""
        data = self.data
        for at in range(0, len(data), ENTRY_SIZE):
            if data.startswith(msg_id, at):
                return at
        raise AssertionError(f"message {msg_id.hex().upper()} is not in its directory page")

    def entry(self, at: int) -> bytes:
        return bytes(self.data[at:at + ENTRY_SIZE])


class Directory(Mapping):
    """The staged message directory: message id -> :class:`StoredMessage`, in put order.

    Reading an entry unpacks it (a :class:`StoredMessage` is a snapshot, not a live view);
    :class:`~mqlog.core.objects.queuefile.QueueFile` changes entries through :meth:`set`,
    :meth:`place` and :meth:`discard`, and flushes through :meth:`prepare_flush` and
    :meth:`flushed`. Every operation costs O(1) but a flush's, which costs O(pages changed)
    and the index's join (C speed, 16 bytes a page)."""

    __slots__ = ("_where", "_pages", "_last", "_next_key", "_dirty", "_dropped", "_groups", "_next_group")

    def __init__(self) -> None:
        self._where: dict[bytes, _Page] = {}  # message id -> its page; insertion = put order
        self._pages: dict[int, _Page] = {}  # page key -> page, in put order (keys rise)
        self._last: _Page | None = None
        self._next_key = 0
        self._dirty: dict[int, _Page] = {}  # pages changed since the durable version
        #: blocks of durable pages that left the directory (emptied, merged): freed by the
        #: next flush that succeeds
        self._dropped: list[int] = []
        #: the runs the durable version's directory blocks lie in, oldest first: group ->
        #: its pages (written together by one flush, so read together by ``open``)
        self._groups: dict[int, dict[int, _Page]] = {}
        self._next_group = 0

    # -- reading -----------------------------------------------------------------------------

    def __getitem__(self, msg_id: bytes) -> StoredMessage:
        page = self._where[msg_id]
        return unpack_entry(page.entry(page.find(msg_id)))

    def get(self, msg_id: bytes, default=None):
        page = self._where.get(msg_id)
        return default if page is None else unpack_entry(page.entry(page.find(msg_id)))

    def __contains__(self, msg_id: object) -> bool:
        return msg_id in self._where

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def __repr__(self) -> str:
        return f"Directory({len(self._where)} entries in {len(self._pages)} pages)"

    def state_of(self, msg_id: bytes) -> tuple[MessageState, int] | None:
        """(state, owning unit of work) of a message, or None if it has no entry."""
        page = self._where.get(msg_id)
        if page is None:
            return None
        data, at = page.data, page.find(msg_id)
        return STATES[data[at + 24]], int.from_bytes(data[at + 32:at + 40], "little")

    @property
    def pages(self) -> int:
        return len(self._pages)

    # -- staging -----------------------------------------------------------------------------

    def _new_page(self) -> _Page:
        page = _Page(self._next_key, self._last)
        self._next_key += 1
        if self._last is not None:
            self._last.next = page
        self._pages[page.key] = page
        self._last = page
        return page

    def set(self, m: StoredMessage) -> None:
        """Add the entry of ``m.msg_id`` after every other, or replace it where it is."""
        self.set_packed(m.msg_id, pack_entry(m))

    def set_packed(self, msg_id: bytes, entry: bytes) -> None:
        page = self._where.get(msg_id)
        if page is not None:
            at = page.find(msg_id)
            page.data[at:at + ENTRY_SIZE] = entry
        else:
            page = self._last
            if page is None or len(page.data) >= _PAGE_FULL:
                page = self._new_page()
            page.data += entry
            self._where[msg_id] = page
        self._dirty[page.key] = page

    def place(self, msg_id: bytes, first_block: int) -> bytes:
        """Give a message its first block; returns its entry as it was."""
        page = self._where[msg_id]
        at = page.find(msg_id)
        entry = page.entry(at)
        page.data[at + FIRST_AT:at + FIRST_AT + 8] = first_block.to_bytes(8, "little")
        self._dirty[page.key] = page
        return entry

    def discard(self, msg_id: bytes) -> None:
        page = self._where.pop(msg_id)
        at = page.find(msg_id)
        del page.data[at:at + ENTRY_SIZE]
        if page.data:
            self._dirty[page.key] = page
        else:
            self._drop(page)

    def _drop(self, page: _Page) -> None:
        del self._pages[page.key]
        self._dirty.pop(page.key, None)
        self._leave_group(page)
        if page.block:
            self._dropped.append(page.block)
        if page.prev is not None:
            page.prev.next = page.next
        if page.next is not None:
            page.next.prev = page.prev
        else:
            self._last = page.prev

    # -- loading and flushing -----------------------------------------------------------------

    def _leave_group(self, page: _Page) -> None:
        if page.group >= 0:
            members = self._groups[page.group]
            del members[page.key]
            if not members:
                del self._groups[page.group]
            page.group = -1

    def load_page(self, entries: list[bytes], block: int, index: bytes) -> None:
        """Append a page as the durable version holds it (``open``): clean, in ``block``."""
        page = self._new_page()
        page.data = bytearray(b"".join(entries))
        page.block, page.index = block, index
        for entry in entries:
            self._where[entry[:_MSG_ID]] = page

    def group_loaded(self, runs: list[list[int]]) -> None:
        """After ``open``: the blocks the directory was read from, run by run (address order),
        each run a group."""
        by_block = {page.block: page for page in self._pages.values()}
        for run in runs:
            group = self._next_group
            self._next_group += 1
            members = self._groups[group] = {}
            for block in run:
                page = by_block[block]
                page.group = group
                members[page.key] = page

    def prepare_flush(self) -> tuple[list[_Page], list[int]]:
        """The dirty pages in put order (a page at most half full first takes in the pages
        after it while their entries fit), and the blocks the durable version uses that the
        flushed one will not: the old blocks of those pages and of every page dropped since
        the last flush."""
        half = ENTRIES_PER_BLOCK // 2
        for key in sorted(self._dirty):
            page = self._pages.get(key)
            if page is None or page.count > half:
                continue
            nxt = page.next
            while nxt is not None and len(page.data) + len(nxt.data) <= _PAGE_FULL:
                page.data += nxt.data
                for msg_id in nxt.ids():
                    self._where[msg_id] = page  # (the dict keeps the key object it has)
                after = nxt.next
                self._drop(nxt)
                nxt = after
        self._merge_groups()
        dirty = [self._dirty[key] for key in sorted(self._dirty)]
        return dirty, [page.block for page in dirty if page.block] + self._dropped

    def _merge_groups(self) -> None:
        """Keep the directory in few runs of blocks, so that ``open`` reads it in few requests:
        a flush writes its changed blocks together, as a new run; while the newest run left
        behind holds at most twice the blocks being written, its blocks are written again
        with them (a log-structured merge). Runs then grow geometrically from newest to
        oldest – O(log pages) of them – and a block is rewritten O(log pages) times over
        its life, not at every flush."""
        size = len(self._dirty)
        if not size:
            return
        dirty, groups = self._dirty, self._groups
        for group in reversed(list(groups)):
            if len(groups[group]) > 2 * size + len(dirty):
                break  # too big however many of its blocks are dirty already
            members = [page for page in groups[group].values() if page.key not in dirty]
            if len(members) > 2 * size:
                break
            for page in members:
                dirty[page.key] = page
            size += len(members)

    def flushed(self, pages: list[_Page], blocks: list[int], indexes: list[bytes]) -> None:
        """The flushed version is durable: ``pages`` are in ``blocks`` with those index entries."""
        group = self._next_group
        self._next_group += 1
        members = self._groups[group] = {}
        for page, block, index in zip(pages, blocks, indexes):
            self._leave_group(page)
            page.block, page.index, page.group = block, index, group
            members[page.key] = page
        if not members:
            del self._groups[group]
        self._dirty.clear()
        self._dropped.clear()

    def index_stream(self) -> bytes:
        """The directory index as the metadata stream holds it, every page in order."""
        return b"".join(map(_index_of, self._pages.values()))

    def durable_blocks(self) -> list[int]:
        """Every block of the durable version's directory that this object knows of: the
        pages' blocks, and those of pages dropped since (still the durable version's)."""
        return [page.block for page in self._pages.values() if page.block] + self._dropped

    def check(self) -> None:
        """AssertionError naming the first broken invariant of the pages."""
        seen = 0
        prev = None
        for key, page in self._pages.items():
            assert page.key == key, f"directory page {key} is filed under another key"
            assert page.prev is prev and (prev is None or prev.next is page), f"directory page {key} is mislinked"
            assert len(page.data) % ENTRY_SIZE == 0, f"directory page {key} holds part of an entry"
            assert 1 <= page.count <= ENTRIES_PER_BLOCK, f"directory page {key} has {page.count} entries"
            assert key in self._dirty or (page.block and len(page.index) == INDEX.size), \
                f"clean directory page {key} has no block"
            for entry in page.entries:
                assert self._where.get(entry[:_MSG_ID]) is page, f"directory page {key} holds an entry filed elsewhere"
            seen += page.count
            prev = page
        assert prev is self._last and (prev is None or prev.next is None), "the last page is not the newest"
        assert all(self._pages.get(k) is p for k, p in self._dirty.items()), "a dirty page left the directory"
        for group, members in self._groups.items():
            assert members and all(self._pages.get(k) is p and p.group == group for k, p in members.items()), \
                f"directory run {group} holds a page that is not in it"
        assert sum(map(len, self._groups.values())) == sum(1 for p in self._pages.values() if p.block), \
            "a durable directory block is in no run, or in two"
        assert seen == len(self._where), "a message is filed under a page that does not hold it"
        order = [msg_id for page in self._pages.values() for msg_id in page.ids()]
        assert order == list(self._where), "the pages are not in put order"


def read_directory(storage: Storage, file_name: str, index, index_at: Callable[[int], int], extent: int,
                   count: int, fail) -> tuple[Directory, list[tuple[int, int, int, str]], list[int]]:
    """Load the directory a version's index names (``open``): each directory block read
    and checked against its index entry, each entry checked as FORMAT.md says.

    ``index``: the index's bytes; ``index_at(i)``: the file offset of index entry ``i``;
    ``count``: the messages the header says there are. Adjacent directory blocks are read
    in one request. Returns the directory, the runs of blocks it uses (first, count, file
    offset of what uses them, what) and the size of each read."""
    pages = list(INDEX.iter_unpack(index))
    total = 0
    for i, (block, _crc, entries) in enumerate(pages):
        if not HEADER_SLOTS <= block < extent:
            raise fail(f"directory index entry {i} names block {block}, outside the {extent} in use", index_at(i))
        if not 1 <= entries <= ENTRIES_PER_BLOCK:
            raise fail(f"directory index entry {i} says block {block} holds {entries} entries "
                       f"(1 to {ENTRIES_PER_BLOCK})", index_at(i))
        total += entries
    if total != count:
        raise fail(f"the directory index counts {total} messages, the header {count}", index_at(0))

    raw: dict[int, bytes] = {}
    reads: list[int] = []
    read_runs: list[list[int]] = []
    wanted = sorted({block for block, _, _ in pages})
    start = 0
    for i in range(1, len(wanted) + 1):
        if i < len(wanted) and wanted[i] - wanted[i - 1] <= READ_THROUGH_BLOCKS:
            continue
        first, n = wanted[start], wanted[i - 1] + 1 - wanted[start]
        data = storage.read(file_name, first * BLOCK_SIZE, n * BLOCK_SIZE)
        reads.append(n * BLOCK_SIZE)
        if len(data) < n * BLOCK_SIZE:
            raise fail(f"the file ends inside directory block {first + len(data) // BLOCK_SIZE}",
                       first * BLOCK_SIZE + len(data))
        for block in wanted[start:i]:
            raw[block] = data[(block - first) * BLOCK_SIZE:(block - first + 1) * BLOCK_SIZE]
        read_runs.append(wanted[start:i])
        start = i

    directory = Directory()
    runs: list[tuple[int, int, int, str]] = []
    where_ids = directory._where
    for block, crc, entries in pages:
        body = decode_directory_block(raw[block], block, crc, entries, fail)
        offset = block * BLOCK_SIZE + DIR_HEAD.size
        runs.append((block, 1, block * BLOCK_SIZE, "a directory block"))
        page: list[bytes] = []
        for (msg_id, state, length, uow, put_address, first, blocks, data_crc) in ENTRY.iter_unpack(body):
            if state not in (1, 2, 3):
                raise fail(f"directory entry of {_msg_text(msg_id)} has state {state}", offset)
            if blocks != blocks_for(length):
                raise fail(f"directory entry of {_msg_text(msg_id)}: {length} bytes cannot take "
                           f"{blocks} blocks", offset)
            if first < HEADER_SLOTS or first + blocks > extent:
                raise fail(f"directory entry of {_msg_text(msg_id)}: blocks {first}..{first + blocks - 1} "
                           f"are outside the {extent} in use", offset)
            if msg_id in where_ids or any(e.startswith(msg_id) for e in page):
                raise fail(f"{_msg_text(msg_id)} has two directory entries", offset)
            # Packed again from its fields, not copied: unused bytes are written back as zeros.
            page.append(ENTRY.pack(msg_id, state, length, uow, put_address, first, blocks, data_crc))
            runs.append((first, blocks, offset, "a directory entry"))
            offset += ENTRY_SIZE
        directory.load_page(page, block, INDEX.pack(block, crc, entries))
    if len(wanted) == len(pages):  # (a block named twice is refused by the caller's overlap check)
        directory.group_loaded(read_runs)
    return directory, runs, reads


def _msg_text(msg_id: bytes) -> str:
    return f"message {msg_id.hex().upper()}"
