"""Queue files: where a queue's persistent messages live between checkpoints.
:class:`QueueFile` holds one queue's persistent messages -- committed ones and, with the unit
of work that owns them, uncommitted puts and gets -- so that the log need only hold what
happened since the last checkpoint; it stages changes in memory, flushes them shadow-paged
and loads a file's metadata without its data. The blocks it uses and their bytes are
:mod:`mqlog.core.objects.queuelayout`'s (docs/FORMAT.md, "Queue files").

**Shadow paging.** :meth:`QueueFile.flush` never writes a block that the last durable
version references. It writes the new messages, the directory blocks that changed
(:mod:`mqlog.core.objects.directory`) and a new metadata run (attributes, space map and the
directory's index) into blocks that version leaves free, syncs, then writes one 512-byte header with the next sequence
number into the *other* header slot and syncs again. A one-sector write is atomic, so a
crash at any point leaves either the old header (whose blocks are untouched) or the new one
(whose blocks were synced before it): the old version or the new, never a mix. Blocks the
new version no longer references become free only once its header is durable, so only a
later flush reuses them.

**Metadata, not data.** :meth:`QueueFile.open` reads the two header slots, the metadata
run and the directory blocks -- a few reads, their size proportional to the queue's
depth -- but no message data;
:meth:`QueueFile.read_data` reads a message's blocks when asked and checks its CRC. Data
that is staged but not yet flushed stays in memory until the flush writes it.

Every operation that does I/O returns an :class:`IoCost` (the size of each physical read
and write) so the caller can charge a device.
"""

from __future__ import annotations

import zlib
from bisect import bisect_right
from collections import deque

import attrs

from mqlog.core.disk.storage import Storage
from mqlog.core.errors import ParameterError, QueueFileError, SimulatedCrash, StorageError
from mqlog.core.objects.directory import Directory, read_directory
from mqlog.core.objects.queuelayout import (BLOCK_SIZE, DATA_HEAD, DATA_HEADER_SIZE, DATA_MAGIC, INDEX,
                                            FILE_SUFFIX, HEADER_SLOTS, MAX_MESSAGE_LENGTH, META_HEAD, META_PAYLOAD,
                                            NOT_WRITTEN, SLOT_NAMES, TRUNCATE_MIN_EXCESS, TRUNCATE_MIN_PERCENT, U64,
                                            UNWRITTEN_SLOT, FileHeader, IoCost, MessageState,
                                            StoredMessage, block_crc, blocks_for, decode_meta, encode_directory_block,
                                            encode_meta, encode_space_map,
                                            file_name_for, free_runs, list_queue_files, merge_runs,
                                            meta_blocks_for, queue_name_for, top_of_use)

# What importers take from here (the layout's values and names among them).
__all__ = [
    "BLOCK_SIZE", "FILE_SUFFIX", "MAX_MESSAGE_LENGTH", "NOT_WRITTEN", "Directory", "IoCost", "MessageState",
    "QueueFile", "StoredMessage", "blocks_for", "file_name_for", "list_queue_files",
    "queue_name_for",
]


def _msg_text(msg_id: bytes) -> str:
    return f"message {msg_id.hex().upper()}"


def _check_u64(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= U64:
        raise ParameterError(name, value, "an integer 0 .. 2**64-1")
    return value


def _check_state(state: object) -> MessageState:
    if isinstance(state, bool) or state not in (1, 2, 3):
        raise ParameterError("state", state, "a MessageState")
    return MessageState(state)


class QueueFile:
    """One queue's file: the staged view of its messages and the durable version on storage.

    Use :meth:`create` or :meth:`open`. ``messages`` is the staged view (what the next
    :meth:`flush` writes), in put order, a :class:`Directory` (a read-only mapping of
    message id to :class:`StoredMessage`); ``version`` is the sequence number of the durable
    version. Staging (:meth:`put`, :meth:`set_state`, :meth:`remove`, :meth:`alter`) does
    no I/O. ``messages`` is updated in place, never replaced, so callers may keep a
    reference to it.
    """

    def __init__(self, storage: Storage, queue_name: str, *, header: FileHeader, attributes: str,
                 messages: Directory, free: list[tuple[int, int]],
                 prev_extent: int) -> None:
        self.storage = storage
        self.queue_name = queue_name
        self.file_name = file_name_for(queue_name)
        self.attributes = attributes
        self.messages = messages
        self.version = header.sequence
        self._slot = header.slot
        self._extent = header.extent
        self._meta = (header.meta_first, header.meta_blocks)
        self._prev_extent = prev_extent
        #: runs free in the durable version, below its extent, address order
        self._free = free
        #: data of staged messages not yet written, in put order
        self._pending: dict[bytes, bytes] = {}
        #: runs the durable version uses that the staged view no longer does
        self._to_free: list[tuple[int, int]] = []
        self._dirty = False
        self._broken: str | None = None
        self._broken_by: BaseException | None = None
        self._deleted = False

    def __repr__(self) -> str:
        return (f"QueueFile({self.queue_name!r}, version {self.version}, "
                f"{len(self.messages)} messages, {self._extent} blocks)")

    # -- creating and opening ------------------------------------------------------------

    @classmethod
    def create(cls, storage: Storage, queue_name: str, attributes: str = "") -> QueueFile:
        """A new, empty queue file, durable on return (one atomic ``replace``).

        StorageError if the queue already has a file.
        """
        file_name = file_name_for(queue_name)
        if not isinstance(attributes, str):
            raise ParameterError("attributes", attributes, "a str")
        if storage.exists(file_name):
            raise StorageError(f"{storage.description}: {file_name}: cannot create the file of "
                               f"queue {queue_name}: it already exists")
        attr_bytes = attributes.encode("utf-8")
        # Version 1: header A, slot B zeros, the metadata run from block 2.
        meta_blocks = meta_blocks_for(len(attr_bytes) + 1)
        while True:
            extent = HEADER_SLOTS + meta_blocks
            need = meta_blocks_for(len(attr_bytes) + (extent + 7) // 8)
            if need <= meta_blocks:
                break
            meta_blocks = need
        header = FileHeader(0, 1, extent, HEADER_SLOTS, meta_blocks, 0, len(attr_bytes), queue_name)
        stream = attr_bytes + encode_space_map(extent, [])
        image = header.to_bytes() + bytes(BLOCK_SIZE) + encode_meta(stream, meta_blocks, 1)
        storage.replace(file_name, image)
        return cls(storage, queue_name, header=header, attributes=attributes, messages=Directory(),
                   free=[], prev_extent=0)

    @classmethod
    def open(cls, storage: Storage, queue_name: str) -> tuple[QueueFile, IoCost]:
        """Load a queue file's metadata (header, space map, directory), not its data.

        Both header slots, the metadata run of the newer valid header, then the directory's
        blocks, one read per run (:func:`~mqlog.core.objects.directory.read_directory`).
        O(depth). QueueFileError naming the file and offset if the bytes are damaged; every
        count is checked against the file size before it is used. StorageError if the queue
        has no file.
        """
        file_name = file_name_for(queue_name)
        size = storage.size(file_name)

        def fail(reason: str, offset: int | None) -> QueueFileError:
            return QueueFileError(reason, source=file_name, offset=offset)

        slots = storage.read(file_name, 0, HEADER_SLOTS * BLOCK_SIZE)
        reads = [HEADER_SLOTS * BLOCK_SIZE]
        found = [FileHeader.from_bytes(slots[i * BLOCK_SIZE:(i + 1) * BLOCK_SIZE], i) for i in range(2)]
        good = [h for h in found if isinstance(h, FileHeader)]
        if not good:
            raise fail("not a queue file: no valid header: "
                       + "; ".join(f"slot {SLOT_NAMES[i]} at offset {i * BLOCK_SIZE}: {found[i]}"
                                   for i in range(2)), 0)
        for i, h in enumerate(found):
            # A header is one sector, written atomically: a slot that is neither unwritten
            # nor valid is damage, and it may have held the newer version, so going back to
            # the other slot could silently lose a checkpoint's changes.
            if isinstance(h, str) and h != UNWRITTEN_SLOT:
                raise fail(f"header slot {SLOT_NAMES[i]} is damaged: {h}", i * BLOCK_SIZE)
        if len(good) == 2 and good[0].sequence == good[1].sequence:
            raise fail(f"both header slots claim sequence {good[0].sequence}", 0)
        header = max(good, key=lambda h: h.sequence)
        other = min(good, key=lambda h: h.sequence) if len(good) == 2 else None
        at = header.slot * BLOCK_SIZE
        if header.queue_name != queue_name:
            raise fail(f"the file belongs to queue {header.queue_name!r}, not {queue_name!r}", at)

        # Every count is bounded by the file size before anything is read or allocated.
        blocks_in_file = size // BLOCK_SIZE
        if not HEADER_SLOTS < header.extent <= blocks_in_file:
            raise fail(f"header (sequence {header.sequence}) says the file uses {header.extent} "
                       f"blocks, but it has {blocks_in_file}", at)
        mfirst, mblocks = header.meta_first, header.meta_blocks
        if not (mblocks >= 1 and HEADER_SLOTS <= mfirst and mfirst + mblocks <= header.extent):
            raise fail(f"metadata run of {mblocks} blocks at block {mfirst} is outside the "
                       f"{header.extent} blocks in use", at)
        map_bytes = (header.extent + 7) // 8
        count, attr_len, pages = header.message_count, header.attributes_length, header.directory_blocks
        if count > blocks_in_file or attr_len > size or pages > blocks_in_file:
            raise fail(f"header counts ({count} messages, {pages} directory blocks, {attr_len} attribute "
                       f"bytes) exceed what {size} bytes can hold", at)
        stream_len = attr_len + map_bytes + pages * INDEX.size
        if stream_len > mblocks * META_PAYLOAD:
            raise fail(f"metadata of {stream_len} bytes does not fit its {mblocks} blocks", at)

        raw = storage.read(file_name, mfirst * BLOCK_SIZE, mblocks * BLOCK_SIZE)
        reads.append(mblocks * BLOCK_SIZE)
        if len(raw) < mblocks * BLOCK_SIZE:
            raise fail("the file ends inside the metadata run", len(raw) + mfirst * BLOCK_SIZE)
        stream = decode_meta(raw, mfirst, header.sequence, fail)

        def where(pos: int) -> int:  # file offset of a byte of the metadata stream
            return (mfirst + pos // META_PAYLOAD) * BLOCK_SIZE + META_HEAD.size + pos % META_PAYLOAD

        try:
            attributes = bytes(stream[:attr_len]).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise fail(f"attributes are not UTF-8 ({exc.reason})", where(exc.start)) from None
        extent = header.extent
        bitmap = bytes(stream[attr_len:attr_len + map_bytes])
        if extent % 8 and bitmap[-1] >> (extent % 8):
            raise fail(f"space map marks blocks beyond the {extent} in use", where(attr_len + map_bytes - 1))

        index_pos = attr_len + map_bytes
        messages, runs, directory_reads = read_directory(
            storage, file_name, stream[index_pos:index_pos + pages * INDEX.size],
            lambda i: where(index_pos + i * INDEX.size), extent, count, fail)
        reads += directory_reads

        # The space map must be exactly what the directory and the header use: otherwise a
        # later flush could write over a message it thinks is free.
        runs += [(0, HEADER_SLOTS, at, "a header slot"), (mfirst, mblocks, at, "the metadata run")]
        runs.sort()
        gaps, at_block = [], 0
        for first, blocks, offset, what in runs:
            if first < at_block:
                raise fail(f"blocks from {first} are used twice ({what} overlaps)", offset)
            if first > at_block:
                gaps.append((at_block, first - at_block))
            at_block = first + blocks
        free = free_runs(bitmap, extent)
        if at_block != extent or gaps != free:
            raise fail(f"space map disagrees with the directory ({len(free)} free runs marked, "
                       f"{len(gaps)} left by the messages and directory blocks; highest block used "
                       f"{at_block - 1}, extent {extent})", where(attr_len))
        prev_extent = 0
        if other is not None and other.extent <= blocks_in_file:
            prev_extent = other.extent
        qf = cls(storage, queue_name, header=header, attributes=attributes, messages=messages,
                 free=free, prev_extent=prev_extent)
        return qf, IoCost(reads, [])

    # -- staging -------------------------------------------------------------------------

    def _usable(self) -> None:
        if self._broken is not None:
            if self._broken_by is not None:
                # The power went: every later use meets the same crash, not a format error.
                raise SimulatedCrash(f"{self.file_name}: the storage crashed during a flush")
            raise QueueFileError(f"{self._broken}; reopen the queue file", source=self.file_name)

    def _get(self, msg_id: bytes) -> StoredMessage:
        try:
            return self.messages[msg_id]
        except (KeyError, TypeError):
            raise KeyError(f"{self.file_name}: {_msg_text(bytes(msg_id))} is not on queue "
                           f"{self.queue_name}") from None

    def put(self, msg_id: bytes, data: bytes, state: MessageState, uow: int, put_address: int) -> None:
        """Stage a new message; ValueError if ``msg_id`` is already on the queue."""
        self._usable()
        if not isinstance(msg_id, bytes) or len(msg_id) != 24:
            raise ParameterError("msg_id", msg_id, "24 bytes")
        if msg_id in self.messages:
            raise ValueError(f"{self.file_name}: {_msg_text(msg_id)} is already on queue {self.queue_name}")
        state = _check_state(state)
        _check_u64("uow", uow)
        _check_u64("put_address", put_address)
        data = bytes(data)
        if len(data) > MAX_MESSAGE_LENGTH:
            raise ParameterError("len(data)", len(data), f"at most {MAX_MESSAGE_LENGTH} bytes")
        self.messages.set(StoredMessage(msg_id, state, uow, len(data), NOT_WRITTEN, blocks_for(len(data)),
                                        zlib.crc32(data), put_address))
        self._pending[msg_id] = data
        self._dirty = True

    def set_state(self, msg_id: bytes, state: MessageState, uow: int) -> None:
        """Stage a new state (and owning unit of work) for a message; its data is not rewritten."""
        self._usable()
        stored = self._get(msg_id)
        state = _check_state(state)
        _check_u64("uow", uow)
        if stored.state is state and stored.uow == uow:
            return
        self.messages.set(attrs.evolve(stored, state=state, uow=uow))
        self._dirty = True

    def remove(self, msg_id: bytes) -> None:
        """Stage the removal of a message; its blocks are freed by the next flush."""
        self._usable()
        stored = self._get(msg_id)
        self.messages.discard(msg_id)
        if stored.first_block == NOT_WRITTEN:
            del self._pending[msg_id]
        else:
            self._to_free.append((stored.first_block, stored.blocks))
        self._dirty = True

    def alter(self, attributes: str) -> None:
        """Stage new queue attributes (free text, stored as UTF-8)."""
        self._usable()
        if not isinstance(attributes, str):
            raise ParameterError("attributes", attributes, "a str")
        if attributes != self.attributes:
            self.attributes = attributes
            self._dirty = True

    def dirty(self) -> bool:
        """Whether anything is staged that the durable version does not hold."""
        return self._dirty

    @property
    def extent(self) -> int:
        """Blocks the durable version spans: 1 + the highest block it uses."""
        return self._extent

    # -- flushing --------------------------------------------------------------------------

    def flush(self) -> IoCost:
        """Make the staged view the durable version, by shadow paging; no I/O if not dirty.

        Writes the new messages, the directory blocks that changed and a new metadata run
        (attributes, space map, directory index) into blocks the durable version does not
        use (adjacent blocks in one write), syncs, writes the header into the other slot,
        syncs, then truncates the file if it is oversized. O(changes + new data), and the
        index's join at C speed: 16 bytes per directory block, 2.3 a message.
        """
        self._usable()
        if not self._dirty:
            return IoCost()
        directory = self.messages
        old_extent = self._extent
        free = [[start, count] for start, count in self._free]
        tail = old_extent
        placed = self._place_messages(free, tail)
        for msg_id, data in self._pending.items():
            if msg_id not in placed:  # did not fit a hole: append in put order
                placed[msg_id] = tail
                tail += blocks_for(len(data))
        # The new messages' entries get their blocks now (taken back if the new version
        # does not become the durable one).
        unplaced = {msg_id: directory.place(msg_id, first) for msg_id, first in placed.items()}
        pages, page_freed = directory.prepare_flush()
        # The directory blocks written go together, as one run (``open`` reads a run at a
        # time): into the first hole that holds them all, in address order, else after the end.
        hole = next((i for i, run in enumerate(free) if run[1] >= len(pages)), None) if pages else None
        if hole is not None:
            page_blocks = list(range(free[hole][0], free[hole][0] + len(pages)))
            free[hole][0] += len(pages)
            free[hole][1] -= len(pages)
        else:
            page_blocks = list(range(tail, tail + len(pages)))
            tail += len(pages)
        freed = merge_runs(sorted(self._to_free + [(block, 1) for block in page_freed]), [self._meta])
        attr_bytes = self.attributes.encode("utf-8")
        fixed = len(attr_bytes) + INDEX.size * directory.pages
        # The space map's size depends on where the metadata goes, and that on its size:
        # start from a lower bound (no map) and grow until the run holds the stream.
        meta_blocks = meta_blocks_for(fixed)
        while True:
            hole = next((i for i, run in enumerate(free) if run[1] >= meta_blocks), None)
            if hole is None:
                meta_first, end = tail, tail + meta_blocks
            else:
                meta_first, end = free[hole][0], tail
            extent = end if end > old_extent else top_of_use(free, hole, meta_blocks, freed, old_extent)
            need = meta_blocks_for(fixed + (extent + 7) // 8)
            if need <= meta_blocks:
                break
            meta_blocks = need
        if hole is not None:
            free[hole][0] += meta_blocks
            free[hole][1] -= meta_blocks
        new_free = merge_runs([(s, c) for s, c in free if c], freed)
        if new_free and new_free[-1][0] + new_free[-1][1] > extent:
            new_free.pop()  # the free top of the old version, now beyond the extent

        version = self.version
        try:
            sequence = version + 1
            blocks = [encode_directory_block(page.data, sequence) for page in pages]
            indexes = [INDEX.pack(at, block_crc(block), page.count)
                       for page, at, block in zip(pages, page_blocks, blocks)]
            # The index as the new version has it: the changed pages' entries swapped in.
            kept = [page.index for page in pages]
            for page, index in zip(pages, indexes):
                page.index = index
            try:
                index_stream = directory.index_stream()
            finally:
                for page, index in zip(pages, kept):
                    page.index = index
            stream = bytearray(attr_bytes)
            stream += encode_space_map(extent, new_free)
            stream += index_stream
            return self._write_version(stream, meta_first, meta_blocks, extent, placed, list(zip(page_blocks, blocks)),
                                       attr_bytes, new_free, old_extent,
                                       lambda: directory.flushed(pages, page_blocks, indexes))
        except BaseException:
            if self.version == version:  # the new version never became the durable one
                for msg_id, entry in unplaced.items():
                    directory.set_packed(msg_id, entry)
            raise

    def _write_version(self, stream: bytearray, meta_first: int, meta_blocks: int, extent: int,
                       placed: dict[bytes, int], pages: list[tuple[int, bytes]], attr_bytes: bytes,
                       new_free: list, old_extent: int, durable) -> IoCost:
        """The second half of :meth:`flush`: write the new version's data, directory blocks
        and metadata, then its header, and make it the durable one (``durable()`` is
        called once it is)."""
        sequence = self.version + 1
        meta = encode_meta(stream, meta_blocks, sequence)

        # Everything new, in address order; each run of adjacent blocks is one write.
        pending = self._pending
        # (first block, blocks, what: "meta" | "data" | "page", its bytes or message id)
        pieces: list[tuple[int, int, str, bytes]] = [(meta_first, meta_blocks, "meta", meta)]
        pieces += [(first, blocks_for(len(pending[msg_id])), "data", msg_id) for msg_id, first in placed.items()]
        pieces += [(at, 1, "page", block) for at, block in pages]
        pieces.sort(key=lambda piece: piece[0])
        pieces.append((-1, 0, "", b""))
        writes: list[int] = []
        where: list[tuple[str, int]] = []
        storage, name = self.storage, self.file_name
        run_start = 0
        for i in range(1, len(pieces)):
            prev_first, prev_blocks, _, _ = pieces[i - 1]
            if pieces[i][0] == prev_first + prev_blocks:
                continue
            first = pieces[run_start][0]
            size = (prev_first + prev_blocks - first) * BLOCK_SIZE
            if i - run_start == 1 and pieces[run_start][2] != "data":
                buffer = pieces[run_start][3]  # the metadata run or a directory block alone
            else:
                buffer = bytearray(size)
                for at, _, what, content in pieces[run_start:i]:
                    offset = (at - first) * BLOCK_SIZE
                    if what == "data":
                        data = pending[content]
                        DATA_HEAD.pack_into(buffer, offset, DATA_MAGIC, len(data), content)
                        buffer[offset + DATA_HEADER_SIZE:offset + DATA_HEADER_SIZE + len(data)] = data
                    else:
                        buffer[offset:offset + len(content)] = content
            storage.write(name, first * BLOCK_SIZE, buffer)
            writes.append(size)
            where.append((name, first * BLOCK_SIZE))
            run_start = i
        storage.sync(name)

        slot = 1 - self._slot
        header = FileHeader(slot, sequence, extent, meta_first, meta_blocks, len(self.messages),
                            len(attr_bytes), self.queue_name, self.messages.pages)
        try:
            storage.write(name, slot * BLOCK_SIZE, header.to_bytes())
            writes.append(BLOCK_SIZE)
            where.append((name, slot * BLOCK_SIZE))
            storage.sync(name)
        except BaseException as exc:
            # The new header may or may not reach the disk later: which version is durable
            # is unknown, so no block may be reused until the file is reopened.
            self._broken = f"flush to version {sequence} failed while writing its header"
            self._broken_by = exc if isinstance(exc, SimulatedCrash) else None
            raise

        self.version, self._slot, self._extent = sequence, slot, extent
        self._meta = (meta_first, meta_blocks)
        self._free = new_free
        self._pending.clear()
        self._to_free.clear()
        self._dirty = False
        self._prev_extent = old_extent
        durable()
        self._truncate_if_oversized()
        return IoCost([], writes, 2, where)

    def _place_messages(self, free: list[list[int]], tail: int) -> dict[bytes, int]:
        """First block of each pending message that fits a hole of the durable version.

        Holes are filled in address order, each with the largest pending messages that
        fit, so new data lands low in the file and in few contiguous runs; the rest go
        after the end, in put order (done by the caller). O((holes + messages) log sizes).
        """
        placed: dict[bytes, int] = {}
        if not free or not self._pending:
            return placed
        by_size: dict[int, deque[bytes]] = {}
        for msg_id, data in self._pending.items():
            by_size.setdefault(blocks_for(len(data)), deque()).append(msg_id)
        sizes = sorted(by_size)
        for run in free:
            while sizes and run[1] >= sizes[0]:
                i = bisect_right(sizes, run[1]) - 1
                size = sizes[i]
                queue = by_size[size]
                placed[queue.popleft()] = run[0]
                run[0] += size
                run[1] -= size
                if not queue:
                    del by_size[size]
                    sizes.pop(i)
            if not sizes:
                break
        return placed

    def _truncate_if_oversized(self) -> None:
        # Keep every block of this version and of the one before (the other header slot).
        needed = max(self._extent, self._prev_extent) * BLOCK_SIZE
        excess = self.storage.size(self.file_name) - needed
        if excess > TRUNCATE_MIN_EXCESS and excess * 100 > needed * TRUNCATE_MIN_PERCENT:
            self.storage.truncate(self.file_name, needed)

    # -- data, deletion, invariants -----------------------------------------------------------

    def read_data(self, msg_id: bytes) -> tuple[bytes, IoCost]:
        """A message's data: from memory if not yet flushed, else one read of its blocks.

        QueueFileError naming the file and the message's first block if the blocks do not
        hold that message or its data fails the CRC.
        """
        self._usable()
        stored = self._get(msg_id)
        if stored.first_block == NOT_WRITTEN:
            return self._pending[msg_id], IoCost()
        offset, size = stored.first_block * BLOCK_SIZE, stored.blocks * BLOCK_SIZE
        raw = self.storage.read(self.file_name, offset, size)
        what = f"{_msg_text(msg_id)} (blocks {stored.first_block}..{stored.first_block + stored.blocks - 1})"
        if len(raw) < size:
            raise QueueFileError(f"the file ends inside {what}", source=self.file_name, offset=offset)
        magic, length, stored_id = DATA_HEAD.unpack_from(raw)
        if magic != DATA_MAGIC or length != stored.length or stored_id != msg_id:
            raise QueueFileError(f"block {stored.first_block} does not start {what}: found magic "
                                 f"{magic!r}, length {length}, {_msg_text(stored_id)}",
                                 source=self.file_name, offset=offset)
        data = raw[DATA_HEADER_SIZE:DATA_HEADER_SIZE + length]
        if zlib.crc32(data) != stored.data_crc:
            raise QueueFileError(f"data of {what} fails its CRC", source=self.file_name, offset=offset)
        return data, IoCost([size], [], read_at=[(self.file_name, offset)])

    def delete(self) -> None:
        """Delete the file (the queue is gone); the object is unusable afterwards.

        Allowed after a failed flush too: deleting needs no knowledge of which version is durable.
        """
        if self._deleted:
            raise QueueFileError(f"queue file of {self.queue_name} was already deleted",
                                 source=self.file_name)
        self.storage.delete(self.file_name)
        self._deleted = True
        self._broken = f"queue file of {self.queue_name} was deleted"

    def check(self) -> None:
        """Check the in-memory invariants; AssertionError naming the first one broken.

        The durable version uses the header slots, the metadata run, every written staged
        message and every run awaiting release; these never overlap, end exactly at the
        extent, and the free list is exactly what they leave. Staged, unwritten messages
        have their data in memory and a matching length, block count and CRC. O(depth log depth).
        """
        def require(cond: bool, what: str) -> None:
            if not cond:
                raise AssertionError(f"{self.file_name}: {what}")

        self.messages.check()
        runs = [(0, HEADER_SLOTS), self._meta] + list(self._to_free)
        runs += [(block, 1) for block in self.messages.durable_blocks()]
        for msg_id, m in self.messages.items():
            require(m.msg_id == msg_id, f"{_msg_text(msg_id)} is filed under another id")
            require(m.blocks == blocks_for(m.length), f"{_msg_text(msg_id)}: wrong block count")
            if m.first_block == NOT_WRITTEN:
                data = self._pending.get(msg_id)
                require(data is not None, f"{_msg_text(msg_id)} has neither blocks nor data")
                require(len(data) == m.length and zlib.crc32(data) == m.data_crc,
                        f"{_msg_text(msg_id)}: staged data disagrees with its entry")
            else:
                require(msg_id not in self._pending, f"{_msg_text(msg_id)} is written and pending")
                runs.append((m.first_block, m.blocks))
        require(len(self._pending) == sum(1 for m in self.messages.values()
                                          if m.first_block == NOT_WRITTEN),
                "pending data of a message no longer staged")
        runs.sort()
        gaps, at = [], 0
        for start, count in runs:
            require(count >= 1, f"empty run at block {start}")
            require(start >= at, f"blocks overlap at block {start}")
            if start > at:
                gaps.append((at, start - at))
            at = start + count
        require(at == self._extent, f"highest block in use is {at - 1}, extent says {self._extent}")
        require(gaps == self._free, "the free list is not what the blocks in use leave")
        require(self.storage.size(self.file_name) >= self._extent * BLOCK_SIZE,
                "the file is shorter than its extent")


