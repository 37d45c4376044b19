"""Queue files: where a queue's persistent messages live between checkpoints.

A queue file holds one queue's persistent messages -- committed ones and, with the unit of
work that owns them, uncommitted puts and gets -- so that the log need only hold what
happened since the last checkpoint. The file is managed in ``BLOCK_SIZE`` (512-byte)
blocks, the unit a torn write cannot split (:data:`mqlog.core.disk.faults.SECTOR_SIZE`)::

    block 0, 1   header slots A and B: magic, sequence number, where the metadata is, CRC
    block 2 ...  message blocks (a 32-byte message header, then the data; a message takes
                 whole blocks) and one run of metadata blocks: the attributes, the space map
                 (one bit per block) and the message directory (64 bytes per message)

docs/FORMAT.md ("Queue files") gives every byte.

**Shadow paging.** :meth:`QueueFile.flush` never writes a block that the last durable
version references. It writes the new messages and a whole new metadata run into blocks
that version leaves free, syncs, then writes one 512-byte header with the next sequence
number into the *other* header slot and syncs again. A one-sector write is atomic, so a
crash at any point leaves either the old header (whose blocks are untouched) or the new one
(whose blocks were synced before it): the old version or the new, never a mix. Blocks the
new version no longer references become free only once its header is durable, so only a
later flush reuses them.

**Metadata, not data.** :meth:`QueueFile.open` reads the two header slots and the metadata
run -- two reads, their size proportional to the queue's depth -- but no message data;
:meth:`QueueFile.read_data` reads a message's blocks when asked and checks its CRC. Data
that is staged but not yet flushed stays in memory until the flush writes it.

Every operation that does I/O returns an :class:`IoCost` (the size of each physical read
and write) so the caller can charge a device.
"""

from __future__ import annotations

import enum
import heapq
import re
import struct
import zlib
from bisect import bisect_right
from collections import deque
from collections.abc import Iterable

import attrs

from mqlog.core.errors import ParameterError, QueueFileError, SimulatedCrash, StorageError
from mqlog.core.disk.storage import Storage

__all__ = [
    "BLOCK_SIZE", "FILE_SUFFIX", "MAX_MESSAGE_LENGTH", "NOT_WRITTEN", "IoCost", "MessageState",
    "QueueFile", "StoredMessage", "blocks_for", "file_name_for", "list_queue_files",
    "queue_name_for",
]

#: The unit of allocation and of atomic writes: one disk sector, so a header write can
#: never be torn (a torn write lands whole sectors only).
BLOCK_SIZE = 512
#: Blocks 0 and 1 are header slots A and B; everything else starts at block 2.
HEADER_SLOTS = 2
FORMAT_VERSION = 1
FILE_SUFFIX = ".mqq"
MAX_NAME_LENGTH = 48
#: MQ's largest message (MAXMSGL 100 MB); the directory stores lengths in 4 bytes.
MAX_MESSAGE_LENGTH = 100 * 1024 * 1024
#: ``first_block`` of a staged message that no flush has written yet (block 0 is a
#: header slot, so no written message can start there).
NOT_WRITTEN = 0
#: A flush truncates the file when it is larger than needed by both of these (MQ's rule).
TRUNCATE_MIN_EXCESS = 16 * 1024
TRUNCATE_MIN_PERCENT = 1

HEADER_MAGIC = b"MQQH"
META_MAGIC = b"MQQM"
DATA_MAGIC = b"MQQD"

# Header block: the fields, zeros, then the CRC-32 of bytes 0..507 in the last 4 bytes.
_HEADER = struct.Struct("<4sBBHQQQQQQ48s")
# Metadata block: magic, index in the run, sequence; 492 payload bytes; CRC-32 at 508.
_META_HEAD = struct.Struct("<4sIQ")
_META_PAYLOAD = BLOCK_SIZE - _META_HEAD.size - 4  # 492
# Directory entry: msg id, state, 3 reserved, length, uow, put address, first block,
# block count, data CRC.
_ENTRY = struct.Struct("<24sB3xIQQQII")
ENTRY_SIZE = _ENTRY.size  # 64
# First bytes of a message's first block: magic, data length, msg id.
_DATA_HEAD = struct.Struct("<4sI24s")
DATA_HEADER_SIZE = _DATA_HEAD.size  # 32
_CRC_AT = BLOCK_SIZE - 4
_U64 = (1 << 64) - 1
_U32 = (1 << 32) - 1

_NAME_RE = re.compile(r"[A-Za-z0-9./_%]{1,48}\Z")
_FILE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_EMPTY_BYTES_RE = re.compile(rb"\x00+|[^\xff]")

_SLOT_NAMES = ("A", "B")
_UNWRITTEN_SLOT = "never written (zeros)"


class MessageState(enum.IntEnum):
    """What a stored message is to the units of work."""

    COMMITTED = 1
    #: put by ``uow``, not yet committed: backed out unless it commits
    PUT_UNCOMMITTED = 2
    #: got by ``uow``, not yet committed: still on the queue until it commits
    GOT_UNCOMMITTED = 3


@attrs.frozen(slots=True)
class StoredMessage:
    """One directory entry: a message as the queue file knows it (not its data)."""

    msg_id: bytes  #: 24 bytes
    state: MessageState
    uow: int  #: the owning unit of work (0 for a committed message)
    length: int  #: data bytes
    first_block: int  #: ``NOT_WRITTEN`` until a flush has written it
    blocks: int  #: whole blocks taken: header and data
    data_crc: int  #: CRC-32 of the data
    put_address: int  #: the log address of its put record


@attrs.frozen
class IoCost:
    """The physical I/O a call did, in bytes per request, for the caller to charge a device.

    Contiguous blocks go in one request, so ``len(writes)`` is the number of write calls.
    """

    reads: list[int] = attrs.field(factory=list)
    writes: list[int] = attrs.field(factory=list)
    syncs: int = 0

    @property
    def read_bytes(self) -> int:
        return sum(self.reads)

    @property
    def write_bytes(self) -> int:
        return sum(self.writes)

    def __add__(self, other: IoCost) -> IoCost:
        return IoCost(self.reads + other.reads, self.writes + other.writes, self.syncs + other.syncs)


def blocks_for(length: int) -> int:
    """How many blocks a message of ``length`` data bytes takes (its header included)."""
    return (DATA_HEADER_SIZE + length + BLOCK_SIZE - 1) // BLOCK_SIZE


def _meta_blocks_for(stream_length: int) -> int:
    return max(1, -(-stream_length // _META_PAYLOAD))


# -- names -------------------------------------------------------------------------------

def _check_queue_name(queue_name: object) -> str:
    if not isinstance(queue_name, str) or not _NAME_RE.match(queue_name):
        raise ParameterError("queue_name", queue_name,
                             "1 to 48 characters of A-Z a-z 0-9 . / _ %")
    return queue_name


def file_name_for(queue_name: str) -> str:
    """The flat storage file name of a queue's file: reversible, case-safe, no '/'.

    Upper-case letters, digits and '_' stay; a '.' stays unless it is the first or last
    character or follows another '.'; every other character is ``%`` and its ASCII code in
    two upper-case hex digits. So no two queue names give names that differ only in case
    (lower-case letters are escaped), no name contains ``..`` or starts with '.', and the
    suffix ``.mqq`` follows. ``file_name_for("SYSTEM.ADMIN/q")`` is
    ``"SYSTEM.ADMIN%2F%71.mqq"``.
    """
    _check_queue_name(queue_name)
    out = []
    last = len(queue_name) - 1
    for i, ch in enumerate(queue_name):
        if ch in _FILE_CHARS or (ch == "." and 0 < i < last and queue_name[i - 1] != "."):
            out.append(ch)
        else:
            out.append(f"%{ord(ch):02X}")
    return "".join(out) + FILE_SUFFIX


def queue_name_for(file_name: str) -> str:
    """The queue whose file is ``file_name``: the inverse of :func:`file_name_for`.

    ParameterError if ``file_name`` is not exactly what :func:`file_name_for` makes of
    some queue name.
    """
    def bad() -> ParameterError:
        return ParameterError("file_name", file_name,
                              f"a queue file name made by file_name_for (ending {FILE_SUFFIX!r})")

    if not isinstance(file_name, str) or not file_name.endswith(FILE_SUFFIX):
        raise bad()
    stem = file_name[:-len(FILE_SUFFIX)]
    if len(stem) > 3 * MAX_NAME_LENGTH:
        raise bad()
    out = []
    i = 0
    while i < len(stem):
        ch = stem[i]
        if ch == "%":
            code = stem[i + 1:i + 3]
            if len(code) != 2 or any(c not in "0123456789ABCDEF" for c in code):
                raise bad()
            out.append(chr(int(code, 16)))
            i += 3
        else:
            out.append(ch)
            i += 1
    name = "".join(out)
    if not _NAME_RE.match(name) or file_name_for(name) != file_name:
        raise bad()
    return name


def list_queue_files(storage: Storage) -> list[str]:
    """The names of the queues that have a file in ``storage``, sorted."""
    names = []
    for file_name in storage.list():
        if file_name.endswith(FILE_SUFFIX):
            try:
                names.append(queue_name_for(file_name))
            except ParameterError:
                continue  # not one of ours
    return sorted(names)


# -- runs of blocks and the space map -------------------------------------------------------

def _merge_runs(*lists: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Disjoint, address-sorted lists of (first block, count) merged, adjacent runs joined."""
    out: list[tuple[int, int]] = []
    for start, count in heapq.merge(*lists):
        if out and out[-1][0] + out[-1][1] == start:
            out[-1] = (out[-1][0], out[-1][1] + count)
        else:
            out.append((start, count))
    return out


def _top_of_use(free: list[list[int]], hole: int | None, taken: int,
                freed: list[tuple[int, int]], extent: int) -> int:
    """1 + the highest block still in use below ``extent``, given the free runs left after
    allocation (``taken`` blocks more from run ``hole``) and the runs being freed.

    Walks down from ``extent`` only across free runs that touch the top: O(those runs).
    """
    i, j = len(free) - 1, len(freed) - 1
    top = extent
    while True:
        while i >= 0 and free[i][1] - (taken if i == hole else 0) == 0:
            i -= 1
        if i >= 0 and free[i][0] + free[i][1] == top:
            top = free[i][0] + (taken if i == hole else 0)
            if i == hole:
                return top  # the metadata run sits just below: in use
            i -= 1
        elif j >= 0 and freed[j][0] + freed[j][1] == top:
            top = freed[j][0]
            j -= 1
        else:
            return top


def _encode_space_map(extent: int, free: list[tuple[int, int]]) -> bytearray:
    """The space map of ``extent`` blocks: bit ``b % 8`` of byte ``b // 8`` is 1 when block
    ``b`` is in use. O(extent / 8 + runs): whole bytes are cleared as slices."""
    bitmap = bytearray(b"\xff") * ((extent + 7) // 8)
    if extent % 8:
        bitmap[-1] = (1 << (extent % 8)) - 1
    for start, count in free:
        b, end = start, start + count
        while b < end and b & 7:
            bitmap[b >> 3] &= ~(1 << (b & 7)) & 0xFF
            b += 1
        whole = (end - b) >> 3
        if whole:
            bitmap[b >> 3:(b >> 3) + whole] = bytes(whole)
            b += whole << 3
        while b < end:
            bitmap[b >> 3] &= ~(1 << (b & 7)) & 0xFF
            b += 1
    return bitmap


def _free_runs(bitmap: bytes, extent: int) -> list[tuple[int, int]]:
    """The free runs below ``extent`` in a space map; all-ones bytes are skipped at C speed."""
    runs: list[tuple[int, int]] = []

    def add(start: int, count: int) -> None:
        if runs and runs[-1][0] + runs[-1][1] == start:
            runs[-1] = (runs[-1][0], runs[-1][1] + count)
        else:
            runs.append((start, count))

    for match in _EMPTY_BYTES_RE.finditer(bitmap):
        lo, hi = match.span()
        byte = bitmap[lo]
        if byte == 0:
            add(lo * 8, (hi - lo) * 8)
        else:
            for bit in range(8):
                if not byte >> bit & 1:
                    add(lo * 8 + bit, 1)
    if runs and runs[-1][0] + runs[-1][1] > extent:  # the unused bits of the last byte
        start, _ = runs.pop()
        if start < extent:
            runs.append((start, extent - start))
    return runs


# -- the header ------------------------------------------------------------------------------

@attrs.frozen
class _Header:
    slot: int
    sequence: int
    extent: int  #: 1 + the highest block this version uses
    meta_first: int
    meta_blocks: int
    message_count: int
    attributes_length: int
    queue_name: str

    def to_bytes(self) -> bytes:
        head = _HEADER.pack(HEADER_MAGIC, FORMAT_VERSION, self.slot, 0, self.sequence, self.extent,
                            self.meta_first, self.meta_blocks, self.message_count,
                            self.attributes_length, self.queue_name.encode("ascii").ljust(48))
        block = head + bytes(_CRC_AT - len(head))
        return block + zlib.crc32(block).to_bytes(4, "little")

    @classmethod
    def from_bytes(cls, block: bytes, slot: int) -> _Header | str:
        """The header in slot ``slot``, or why there is none (a reason, not an exception:
        the other slot may still hold a good one)."""
        if len(block) < BLOCK_SIZE:
            return "missing (file too short)"
        if not any(block):
            return _UNWRITTEN_SLOT
        if zlib.crc32(block[:_CRC_AT]) != int.from_bytes(block[_CRC_AT:BLOCK_SIZE], "little"):
            return "bad CRC"
        (magic, version, stored_slot, _res, sequence, extent, meta_first, meta_blocks, count,
         attr_len, name) = _HEADER.unpack_from(block)
        if magic != HEADER_MAGIC:
            return f"bad magic {magic!r}"
        if version != FORMAT_VERSION:
            return f"format version {version} (this code reads {FORMAT_VERSION})"
        if stored_slot != slot:
            return f"holds the header of slot {stored_slot}"
        try:
            queue_name = name.decode("ascii").rstrip(" ")
        except UnicodeDecodeError:
            return "queue name is not ASCII"
        return cls(slot, sequence, extent, meta_first, meta_blocks, count, attr_len, queue_name)


# -- the queue file ------------------------------------------------------------------------------

def _msg_text(msg_id: bytes) -> str:
    return f"message {msg_id.hex().upper()}"


def _check_u64(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _U64:
        raise ParameterError(name, value, "an integer 0 .. 2**64-1")
    return value


def _check_state(state: object) -> MessageState:
    if isinstance(state, bool) or state not in (1, 2, 3):
        raise ParameterError("state", state, "a MessageState")
    return MessageState(state)


class QueueFile:
    """One queue's file: the staged view of its messages and the durable version on storage.

    Use :meth:`create` or :meth:`open`. ``messages`` is the staged view (what the next
    :meth:`flush` writes), in put order; ``version`` is the sequence number of the durable
    version. Staging (:meth:`put`, :meth:`set_state`, :meth:`remove`, :meth:`alter`) does
    no I/O. The ``messages`` dict is updated in place, never replaced, so callers may keep
    a reference to it.
    """

    def __init__(self, storage: Storage, queue_name: str, *, header: _Header, attributes: str,
                 messages: dict[bytes, StoredMessage], free: list[tuple[int, int]],
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
        meta_blocks = _meta_blocks_for(len(attr_bytes) + 1)
        while True:
            extent = HEADER_SLOTS + meta_blocks
            need = _meta_blocks_for(len(attr_bytes) + (extent + 7) // 8)
            if need <= meta_blocks:
                break
            meta_blocks = need
        header = _Header(0, 1, extent, HEADER_SLOTS, meta_blocks, 0, len(attr_bytes), queue_name)
        stream = attr_bytes + _encode_space_map(extent, [])
        image = header.to_bytes() + bytes(BLOCK_SIZE) + _encode_meta(stream, meta_blocks, 1)
        storage.replace(file_name, image)
        return cls(storage, queue_name, header=header, attributes=attributes, messages={},
                   free=[], prev_extent=0)

    @classmethod
    def open(cls, storage: Storage, queue_name: str) -> tuple[QueueFile, IoCost]:
        """Load a queue file's metadata (header, space map, directory), not its data.

        Two reads: both header slots, then the metadata run of the newer valid header.
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
        found = [_Header.from_bytes(slots[i * BLOCK_SIZE:(i + 1) * BLOCK_SIZE], i) for i in range(2)]
        good = [h for h in found if isinstance(h, _Header)]
        if not good:
            raise fail("not a queue file: no valid header: "
                       + "; ".join(f"slot {_SLOT_NAMES[i]} at offset {i * BLOCK_SIZE}: {found[i]}"
                                   for i in range(2)), 0)
        for i, h in enumerate(found):
            # A header is one sector, written atomically: a slot that is neither unwritten
            # nor valid is damage, and it may have held the newer version, so going back to
            # the other slot could silently lose a checkpoint's changes.
            if isinstance(h, str) and h != _UNWRITTEN_SLOT:
                raise fail(f"header slot {_SLOT_NAMES[i]} is damaged: {h}", i * BLOCK_SIZE)
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
        count, attr_len = header.message_count, header.attributes_length
        if count > blocks_in_file or attr_len > size:
            raise fail(f"header counts ({count} messages, {attr_len} attribute bytes) exceed "
                       f"what {size} bytes can hold", at)
        stream_len = attr_len + map_bytes + count * ENTRY_SIZE
        if stream_len > mblocks * _META_PAYLOAD:
            raise fail(f"metadata of {stream_len} bytes does not fit its {mblocks} blocks", at)

        raw = storage.read(file_name, mfirst * BLOCK_SIZE, mblocks * BLOCK_SIZE)
        reads.append(mblocks * BLOCK_SIZE)
        if len(raw) < mblocks * BLOCK_SIZE:
            raise fail("the file ends inside the metadata run", len(raw) + mfirst * BLOCK_SIZE)
        stream = _decode_meta(raw, mfirst, header.sequence, fail)

        def where(pos: int) -> int:  # file offset of a byte of the metadata stream
            return (mfirst + pos // _META_PAYLOAD) * BLOCK_SIZE + _META_HEAD.size + pos % _META_PAYLOAD

        try:
            attributes = bytes(stream[:attr_len]).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise fail(f"attributes are not UTF-8 ({exc.reason})", where(exc.start)) from None
        extent = header.extent
        bitmap = bytes(stream[attr_len:attr_len + map_bytes])
        if extent % 8 and bitmap[-1] >> (extent % 8):
            raise fail(f"space map marks blocks beyond the {extent} in use", where(attr_len + map_bytes - 1))

        messages: dict[bytes, StoredMessage] = {}
        runs = [(0, HEADER_SLOTS, -1), (mfirst, mblocks, -1)]  # (first, count, entry position)
        pos = attr_len + map_bytes
        states = MessageState
        for (msg_id, state, length, uow, put_address, first, blocks, crc) in _ENTRY.iter_unpack(
                stream[pos:pos + count * ENTRY_SIZE]):
            if state not in (1, 2, 3):
                raise fail(f"directory entry of {_msg_text(msg_id)} has state {state}", where(pos))
            if blocks != blocks_for(length):
                raise fail(f"directory entry of {_msg_text(msg_id)}: {length} bytes cannot take "
                           f"{blocks} blocks", where(pos))
            if first < HEADER_SLOTS or first + blocks > extent:
                raise fail(f"directory entry of {_msg_text(msg_id)}: blocks {first}..{first + blocks - 1} "
                           f"are outside the {extent} in use", where(pos))
            if msg_id in messages:
                raise fail(f"{_msg_text(msg_id)} has two directory entries", where(pos))
            messages[msg_id] = StoredMessage(msg_id, states(state), uow, length, first, blocks, crc,
                                             put_address)
            runs.append((first, blocks, pos))
            pos += ENTRY_SIZE

        # The space map must be exactly what the directory and the header use: otherwise a
        # later flush could write over a message it thinks is free.
        runs.sort()
        gaps, at = [], 0
        for first, blocks, entry in runs:
            if first < at:
                what = "a directory entry" if entry >= 0 else "the metadata run"
                raise fail(f"blocks from {first} are used twice ({what} overlaps)",
                           where(entry) if entry >= 0 else header.slot * BLOCK_SIZE)
            if first > at:
                gaps.append((at, first - at))
            at = first + blocks
        free = _free_runs(bitmap, extent)
        if at != extent or gaps != free:
            raise fail(f"space map disagrees with the directory ({len(free)} free runs marked, "
                       f"{len(gaps)} left by the messages; highest block used {at - 1}, "
                       f"extent {extent})", where(attr_len))
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
        self.messages[msg_id] = StoredMessage(msg_id, state, uow, len(data), NOT_WRITTEN,
                                              blocks_for(len(data)), zlib.crc32(data), put_address)
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
        self.messages[msg_id] = attrs.evolve(stored, state=state, uow=uow)
        self._dirty = True

    def remove(self, msg_id: bytes) -> None:
        """Stage the removal of a message; its blocks are freed by the next flush."""
        self._usable()
        stored = self._get(msg_id)
        del self.messages[msg_id]
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

        Writes the new messages and a new metadata run into blocks the durable version does
        not use (contiguous blocks in one write), syncs, writes the header into the other
        slot, syncs, then truncates the file if it is oversized. O(depth + new data).
        """
        self._usable()
        if not self._dirty:
            return IoCost()
        old_extent = self._extent
        free = [[start, count] for start, count in self._free]
        tail = old_extent
        placed = self._place_messages(free, tail)
        for msg_id in self._pending:
            if msg_id not in placed:  # did not fit a hole: append in put order
                placed[msg_id] = tail
                tail += self.messages[msg_id].blocks
        freed = sorted(self._to_free)
        freed = _merge_runs(freed, [self._meta])
        attr_bytes = self.attributes.encode("utf-8")
        fixed = len(attr_bytes) + ENTRY_SIZE * len(self.messages)
        # The space map's size depends on where the metadata goes, and that on its size:
        # start from a lower bound (no map) and grow until the run holds the stream.
        meta_blocks = _meta_blocks_for(fixed)
        while True:
            hole = next((i for i, run in enumerate(free) if run[1] >= meta_blocks), None)
            if hole is None:
                meta_first, end = tail, tail + meta_blocks
            else:
                meta_first, end = free[hole][0], tail
            extent = end if end > old_extent else _top_of_use(free, hole, meta_blocks, freed, old_extent)
            need = _meta_blocks_for(fixed + (extent + 7) // 8)
            if need <= meta_blocks:
                break
            meta_blocks = need
        if hole is not None:
            free[hole][0] += meta_blocks
            free[hole][1] -= meta_blocks
        new_free = _merge_runs([(s, c) for s, c in free if c], freed)
        if new_free and new_free[-1][0] + new_free[-1][1] > extent:
            new_free.pop()  # the free top of the old version, now beyond the extent

        sequence = self.version + 1
        stream = bytearray(attr_bytes)
        stream += _encode_space_map(extent, new_free)
        entries = bytearray(ENTRY_SIZE * len(self.messages))
        pack_into, pos = _ENTRY.pack_into, 0
        for msg_id, m in self.messages.items():
            pack_into(entries, pos, msg_id, m.state, m.length, m.uow, m.put_address,
                      placed.get(msg_id, m.first_block), m.blocks, m.data_crc)
            pos += ENTRY_SIZE
        stream += entries
        meta = _encode_meta(stream, meta_blocks, sequence)

        # Everything new, in address order; each run of adjacent blocks is one write.
        messages, pending = self.messages, self._pending
        pieces = sorted([(first, messages[msg_id].blocks, msg_id) for msg_id, first in placed.items()]
                        + [(meta_first, meta_blocks, None)])
        pieces.append((-1, 0, None))
        writes: list[int] = []
        storage, name = self.storage, self.file_name
        run_start = 0
        for i in range(1, len(pieces)):
            prev_first, prev_blocks, _ = pieces[i - 1]
            if pieces[i][0] == prev_first + prev_blocks:
                continue
            first = pieces[run_start][0]
            size = (prev_first + prev_blocks - first) * BLOCK_SIZE
            if i - run_start == 1 and pieces[run_start][2] is None:
                buffer = meta
            else:
                buffer = bytearray(size)
                for at, _, msg_id in pieces[run_start:i]:
                    offset = (at - first) * BLOCK_SIZE
                    if msg_id is None:
                        buffer[offset:offset + len(meta)] = meta
                    else:
                        data = pending[msg_id]
                        _DATA_HEAD.pack_into(buffer, offset, DATA_MAGIC, len(data), msg_id)
                        buffer[offset + DATA_HEADER_SIZE:offset + DATA_HEADER_SIZE + len(data)] = data
            storage.write(name, first * BLOCK_SIZE, buffer)
            writes.append(size)
            run_start = i
        storage.sync(name)

        slot = 1 - self._slot
        header = _Header(slot, sequence, extent, meta_first, meta_blocks, len(self.messages),
                         len(attr_bytes), self.queue_name)
        try:
            storage.write(name, slot * BLOCK_SIZE, header.to_bytes())
            writes.append(BLOCK_SIZE)
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
        for msg_id, first in placed.items():
            m = messages[msg_id]
            messages[msg_id] = StoredMessage(msg_id, m.state, m.uow, m.length, first, m.blocks,
                                             m.data_crc, m.put_address)
        self._pending.clear()
        self._to_free.clear()
        self._dirty = False
        self._prev_extent = old_extent
        self._truncate_if_oversized()
        return IoCost([], writes, 2)

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
        for msg_id in self._pending:
            by_size.setdefault(self.messages[msg_id].blocks, deque()).append(msg_id)
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
        magic, length, stored_id = _DATA_HEAD.unpack_from(raw)
        if magic != DATA_MAGIC or length != stored.length or stored_id != msg_id:
            raise QueueFileError(f"block {stored.first_block} does not start {what}: found magic "
                                 f"{magic!r}, length {length}, {_msg_text(stored_id)}",
                                 source=self.file_name, offset=offset)
        data = raw[DATA_HEADER_SIZE:DATA_HEADER_SIZE + length]
        if zlib.crc32(data) != stored.data_crc:
            raise QueueFileError(f"data of {what} fails its CRC", source=self.file_name, offset=offset)
        return data, IoCost([size], [])

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

        runs = [(0, HEADER_SLOTS), self._meta] + list(self._to_free)
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


def _encode_meta(stream: bytes | bytearray, meta_blocks: int, sequence: int) -> bytearray:
    """Frame the metadata stream into ``meta_blocks`` blocks, each with magic, index,
    sequence and CRC-32 (unused payload is zeros)."""
    out = bytearray(meta_blocks * BLOCK_SIZE)
    view = memoryview(out)
    for i in range(meta_blocks):
        base = i * BLOCK_SIZE
        _META_HEAD.pack_into(out, base, META_MAGIC, i, sequence)
        chunk = stream[i * _META_PAYLOAD:(i + 1) * _META_PAYLOAD]
        out[base + _META_HEAD.size:base + _META_HEAD.size + len(chunk)] = chunk
        crc = zlib.crc32(view[base:base + _CRC_AT])
        out[base + _CRC_AT:base + BLOCK_SIZE] = crc.to_bytes(4, "little")
    view.release()
    return out


def _decode_meta(raw: bytes, first: int, sequence: int, fail) -> bytes:
    """The metadata stream from its blocks, each checked: magic, CRC, index, sequence."""
    payloads = []
    view = memoryview(raw)
    for i in range(len(raw) // BLOCK_SIZE):
        base = i * BLOCK_SIZE
        block = view[base:base + BLOCK_SIZE]
        offset = (first + i) * BLOCK_SIZE
        if zlib.crc32(block[:_CRC_AT]) != int.from_bytes(block[_CRC_AT:], "little"):
            raise fail(f"metadata block {first + i} ({i} of the run) fails its CRC", offset)
        magic, index, seq = _META_HEAD.unpack_from(block)
        if magic != META_MAGIC or index != i or seq != sequence:
            raise fail(f"block {first + i} is not metadata block {i} of version {sequence} "
                       f"(magic {magic!r}, index {index}, version {seq})", offset)
        payloads.append(block[_META_HEAD.size:_CRC_AT])
    return b"".join(payloads)
