"""The queue file's on-disk layout: 512-byte blocks, the two header slots, the metadata run
(attributes, space map, message directory) and message blocks, with their encoders and
checked decoders, the file name a queue's name maps to, and the values a queue file holds
(:class:`MessageState`, :class:`StoredMessage`) and the I/O it reports (:class:`IoCost`).
The file is managed in ``BLOCK_SIZE`` blocks, the unit a torn write cannot split
(:data:`mqlog.core.disk.faults.SECTOR_SIZE`)::

    block 0, 1   header slots A and B: magic, sequence number, where the metadata is, CRC
    block 2 ...  message blocks (a 32-byte message header, then the data; a message takes
                 whole blocks), directory blocks (seven 64-byte entries each) and one run of
                 metadata blocks: the attributes, the space map (one bit per block) and the
                 directory's index (each directory block and its CRC, in queue order)

docs/FORMAT.md ("Queue files") gives every byte; :mod:`mqlog.core.objects.queuefile` uses
this layout to keep a queue's messages.
"""

from __future__ import annotations

import enum
import heapq
import re
import struct
import zlib
from collections.abc import Iterable

import attrs
import numpy as np

from mqlog.core.disk.storage import Storage
from mqlog.core.errors import ParameterError

#: The unit of allocation and of atomic writes: one disk sector, so a header write can
#: never be torn (a torn write lands whole sectors only).
BLOCK_SIZE = 512
#: Blocks 0 and 1 are header slots A and B; everything else starts at block 2.
HEADER_SLOTS = 2
FORMAT_VERSION = 2  # 2: the directory in blocks of its own behind an index (1: in the metadata run)
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
DIR_MAGIC = b"MQQE"
DATA_MAGIC = b"MQQD"

# Header block: the fields, zeros, then the CRC-32 of bytes 0..507 in the last 4 bytes.
_HEADER = struct.Struct("<4sBBHQQQQQQ48sQ")
# Metadata block: magic, index in the run, sequence; 492 payload bytes; CRC-32 at 508.
META_HEAD = struct.Struct("<4sIQ")
META_PAYLOAD = BLOCK_SIZE - META_HEAD.size - 4  # 492
# Directory entry: msg id, state, 3 reserved, length, uow, put address, first block,
# block count, data CRC.
ENTRY = struct.Struct("<24sB3xIQQQII")
ENTRY_SIZE = ENTRY.size  # 64
# Directory block: magic, entries in it, 2 reserved, sequence of the version that wrote it;
# up to ENTRIES_PER_BLOCK entries; zeros; CRC-32 at 508.
DIR_HEAD = struct.Struct("<4sHHQ")
ENTRIES_PER_BLOCK = (BLOCK_SIZE - DIR_HEAD.size - 4) // ENTRY_SIZE  # 7
# Directory index entry (in the metadata stream, one per directory block, in queue order):
# the block, its CRC-32 (as stored in its last 4 bytes), the entries it holds, 2 reserved.
INDEX = struct.Struct("<QIH2x")
# First bytes of a message's first block: magic, data length, msg id.
DATA_HEAD = struct.Struct("<4sI24s")
DATA_HEADER_SIZE = DATA_HEAD.size  # 32
_CRC_AT = BLOCK_SIZE - 4
#: META_HEAD as a numpy record, for framing many blocks at once
_META_HEAD_DTYPE = np.dtype([("magic", "S4"), ("index", "<u4"), ("sequence", "<u8")])
U64 = (1 << 64) - 1
_U32 = (1 << 32) - 1

_NAME_RE = re.compile(r"[A-Za-z0-9./_%]{1,48}\Z")
_FILE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_EMPTY_BYTES_RE = re.compile(rb"\x00+|[^\xff]")

SLOT_NAMES = ("A", "B")
UNWRITTEN_SLOT = "never written (zeros)"


class MessageState(enum.IntEnum):
    """What a stored message is to the units of work."""

    COMMITTED = 1
    #: put by ``uow``, not yet committed: backed out unless it commits
    PUT_UNCOMMITTED = 2
    #: got by ``uow``, not yet committed: still on the queue until it commits
    GOT_UNCOMMITTED = 3


@attrs.frozen(slots=True, weakref_slot=False)
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


#: where ``first_block`` lies in a packed ENTRY (after msg id, state, padding, length, uow
#: and put address), so that a flush can place a message without unpacking its entry
FIRST_AT = 48
STATES = (None, MessageState.COMMITTED, MessageState.PUT_UNCOMMITTED, MessageState.GOT_UNCOMMITTED)


def pack_entry(m: StoredMessage) -> bytes:
    """A directory entry's bytes (docs/FORMAT.md, "Queue files"); unused bytes are zeros."""
    return ENTRY.pack(m.msg_id, m.state, m.length, m.uow, m.put_address, m.first_block, m.blocks, m.data_crc)


def unpack_entry(entry: bytes) -> StoredMessage:
    msg_id, state, length, uow, put_address, first, blocks, crc = ENTRY.unpack(entry)
    return StoredMessage(msg_id, STATES[state], uow, length, first, blocks, crc, put_address)


@attrs.frozen
class IoCost:
    """The physical I/O a call did, in bytes per request, for the caller to charge a device.

    Contiguous blocks go in one request, so ``len(writes)`` is the number of write calls.
    Where the caller knows them, ``write_at`` and ``read_at`` say where each request went,
    one ``(file name, byte offset)`` per entry of ``writes`` and ``reads`` (a page cache in
    front of the device needs them); empty, or None for an entry, where not known (the
    request then reaches the device).
    """

    reads: list[int] = attrs.field(factory=list)
    writes: list[int] = attrs.field(factory=list)
    syncs: int = 0
    write_at: list[tuple[str, int]] = attrs.field(factory=list)
    read_at: list[tuple[str, int]] = attrs.field(factory=list)

    @property
    def read_bytes(self) -> int:
        return sum(self.reads)

    @property
    def write_bytes(self) -> int:
        return sum(self.writes)

    def __add__(self, other: IoCost) -> IoCost:
        def at(positions: list, sizes: list) -> list:  # (None where not known)
            return positions if len(positions) == len(sizes) else [None] * len(sizes)
        return IoCost(self.reads + other.reads, self.writes + other.writes, self.syncs + other.syncs,
                      at(self.write_at, self.writes) + at(other.write_at, other.writes),
                      at(self.read_at, self.reads) + at(other.read_at, other.reads))


def blocks_for(length: int) -> int:
    """How many blocks a message of ``length`` data bytes takes (its header included)."""
    return (DATA_HEADER_SIZE + length + BLOCK_SIZE - 1) // BLOCK_SIZE


def meta_blocks_for(stream_length: int) -> int:
    return max(1, -(-stream_length // META_PAYLOAD))


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

def merge_runs(*lists: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Disjoint, address-sorted lists of (first block, count) merged, adjacent runs joined."""
    out: list[tuple[int, int]] = []
    for start, count in heapq.merge(*lists):
        if out and out[-1][0] + out[-1][1] == start:
            out[-1] = (out[-1][0], out[-1][1] + count)
        else:
            out.append((start, count))
    return out


def top_of_use(free: list[list[int]], hole: int | None, taken: int,
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


def encode_space_map(extent: int, free: list[tuple[int, int]]) -> bytearray:
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


def free_runs(bitmap: bytes, extent: int) -> list[tuple[int, int]]:
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
class FileHeader:
    slot: int
    sequence: int
    extent: int  #: 1 + the highest block this version uses
    meta_first: int
    meta_blocks: int
    message_count: int
    attributes_length: int
    queue_name: str
    directory_blocks: int = 0  #: blocks of the message directory (entries in the index)

    def to_bytes(self) -> bytes:
        head = _HEADER.pack(HEADER_MAGIC, FORMAT_VERSION, self.slot, 0, self.sequence, self.extent,
                            self.meta_first, self.meta_blocks, self.message_count,
                            self.attributes_length, self.queue_name.encode("ascii").ljust(48),
                            self.directory_blocks)
        block = head + bytes(_CRC_AT - len(head))
        return block + zlib.crc32(block).to_bytes(4, "little")

    @classmethod
    def from_bytes(cls, block: bytes, slot: int) -> FileHeader | str:
        """The header in slot ``slot``, or why there is none (a reason, not an exception:
        the other slot may still hold a good one)."""
        if len(block) < BLOCK_SIZE:
            return "missing (file too short)"
        if not any(block):
            return UNWRITTEN_SLOT
        if zlib.crc32(block[:_CRC_AT]) != int.from_bytes(block[_CRC_AT:BLOCK_SIZE], "little"):
            return "bad CRC"
        (magic, version, stored_slot, _res, sequence, extent, meta_first, meta_blocks, count,
         attr_len, name, directory_blocks) = _HEADER.unpack_from(block)
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
        return cls(slot, sequence, extent, meta_first, meta_blocks, count, attr_len, queue_name, directory_blocks)


def encode_meta(stream: bytes | bytearray, meta_blocks: int, sequence: int) -> bytearray:
    """Frame the metadata stream into ``meta_blocks`` blocks, each with magic, index,
    sequence and CRC-32 (unused payload is zeros).

    Every flush frames the whole directory, so this runs over thousands of blocks a flush on
    a deep queue: the payloads and headers are laid out with array operations (numpy), and
    only the CRCs are taken block by block."""
    out = bytearray(meta_blocks * BLOCK_SIZE)
    grid = np.frombuffer(out, dtype=np.uint8).reshape(meta_blocks, BLOCK_SIZE)
    payload = np.zeros(meta_blocks * META_PAYLOAD, dtype=np.uint8)
    payload[:len(stream)] = np.frombuffer(stream, dtype=np.uint8)
    grid[:, META_HEAD.size:_CRC_AT] = payload.reshape(meta_blocks, META_PAYLOAD)
    heads = np.zeros(meta_blocks, dtype=_META_HEAD_DTYPE)
    heads["magic"] = META_MAGIC
    heads["index"] = np.arange(meta_blocks, dtype="<u4")
    heads["sequence"] = sequence
    grid[:, :META_HEAD.size] = heads.view(np.uint8).reshape(meta_blocks, META_HEAD.size)
    view = memoryview(out)
    crc32 = zlib.crc32
    crcs = np.array([crc32(view[base:base + _CRC_AT]) for base in range(0, len(out), BLOCK_SIZE)], dtype="<u4")
    view.release()
    grid[:, _CRC_AT:] = crcs.view(np.uint8).reshape(meta_blocks, 4)
    return out


def encode_directory_block(entries: bytes | bytearray, sequence: int) -> bytes:
    """One directory block: its head, the packed entries (one after the other, at most
    ENTRIES_PER_BLOCK), zeros and the CRC-32 of bytes 0..507."""
    body = DIR_HEAD.pack(DIR_MAGIC, len(entries) // ENTRY_SIZE, 0, sequence) + entries
    body += bytes(_CRC_AT - len(body))
    return body + zlib.crc32(body).to_bytes(4, "little")


def block_crc(block: bytes) -> int:
    """The CRC-32 a block stores in its last 4 bytes."""
    return int.from_bytes(block[_CRC_AT:BLOCK_SIZE], "little")


def decode_directory_block(raw, block: int, crc: int, count: int, fail) -> memoryview:
    """The packed entries of directory block ``block`` (``raw``: its 512 bytes), checked
    against what the index says of it: its CRC (so a block left from another version, even
    one whose own CRC is good, is refused), magic and entry count."""
    offset = block * BLOCK_SIZE
    stored = block_crc(raw)
    if zlib.crc32(raw[:_CRC_AT]) != stored:
        raise fail(f"directory block {block} fails its CRC", offset)
    if stored != crc:
        raise fail(f"block {block} is not the directory block the index names (its CRC is "
                   f"{stored:08X}, the index says {crc:08X}: left from another version)", offset)
    magic, stored_count, _res, _seq = DIR_HEAD.unpack_from(raw)
    if magic != DIR_MAGIC or stored_count != count:
        raise fail(f"block {block} is not a directory block of {count} entries (magic {magic!r}, "
                   f"{stored_count} entries)", offset)
    return memoryview(raw)[DIR_HEAD.size:DIR_HEAD.size + count * ENTRY_SIZE]


def decode_meta(raw: bytes, first: int, sequence: int, fail) -> bytes:
    """The metadata stream from its blocks, each checked: magic, CRC, index, sequence."""
    payloads = []
    view = memoryview(raw)
    for i in range(len(raw) // BLOCK_SIZE):
        base = i * BLOCK_SIZE
        block = view[base:base + BLOCK_SIZE]
        offset = (first + i) * BLOCK_SIZE
        if zlib.crc32(block[:_CRC_AT]) != int.from_bytes(block[_CRC_AT:], "little"):
            raise fail(f"metadata block {first + i} ({i} of the run) fails its CRC", offset)
        magic, index, seq = META_HEAD.unpack_from(block)
        if magic != META_MAGIC or index != i or seq != sequence:
            raise fail(f"block {first + i} is not metadata block {i} of version {sequence} "
                       f"(magic {magic!r}, index {index}, version {seq})", offset)
        payloads.append(block[META_HEAD.size:_CRC_AT])
    return b"".join(payloads)
