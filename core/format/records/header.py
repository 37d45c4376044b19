"""The record header and what it is made of: the 36-byte frame every record starts with, the
codes it carries (record types, resource managers, codecs) and the enums and field sizes the
record bodies share, and the helpers that check, pad and decode their name and byte fields.

The header (``docs/FORMAT.md`` §3 is the byte-level specification; keep the two in step)::

    offset size field
    0      1    record type            (RecordType, or a platform's code in PLATFORM_TYPES)
    1      1    resource manager       (ResourceManager or a platform's; fixed per type)
    2      2    flags                  (bits 0-3: codec of message data; bit 4: backout-only copy; bit 5: re-logged copy)
    4      4    total length           (header + body, bytes)
    8      8    UOW id                 (0 = not part of a unit of work)
    16     8    previous record of the same UOW (log address; NO_ADDRESS = none)
    24     8    stamp                  (a platform-defined ordering stamp; else 0)
    32     4    CRC-32 of bytes 0-31 followed by the body

All integers are little-endian and unsigned. Log addresses are whatever the platform's
addressing hands out; a record only stores them.
"""

from __future__ import annotations

import enum
import functools
import struct
import zlib

from mqlog.core.errors import RecordTooLargeError

# --- the frame ---------------------------------------------------------------------------

HEADER = struct.Struct("<BBHIQQQ")  # everything before the CRC
HEADER_SIZE = HEADER.size + 4  # 36
_CRC = struct.Struct("<I")

#: "No previous record": the first record of a UOW points here.
NO_ADDRESS = 0xFFFF_FFFF_FFFF_FFFF

#: The largest record the format allows. Decoders refuse larger lengths *before* reading,
#: so a corrupt length can never cause a huge allocation; encoders refuse to write one.
#: 16 MiB leaves room for a checkpoint of ~80 000 active UOWs or a backout of ~1.3 million
#: operations, far beyond MQ's MAXUMSGS default of 10 000, while bounding what a
#: corrupt length can make a reader allocate.
MAX_RECORD_SIZE = 16 << 20

#: IBM's sizing guide splits a large message into 15 700-byte segments, 300 bytes each extra.
PUT_SEGMENT_BYTES = 15_700

QUEUE_NAME_LENGTH = 48  # MQ_Q_NAME_LENGTH
MSG_ID_LENGTH = 24  # MQ_MSG_ID_LENGTH
APPL_NAME_LENGTH = 28  # MQ_PUT_APPL_NAME_LENGTH
XID_MAX_LENGTH = 140  # XA: formatID + gtrid(64) + bqual(64) + lengths
DESCRIPTOR_LENGTH = 364  # an MQMD version 2

FLAG_CODEC_MASK = 0x000F
FLAG_BACKOUT_ONLY = 0x0010
#: a copy of a prepared unit of work's record, re-logged at the head to free log space
#: (roll forward); a flagged Prepare closes a complete round of copies
FLAG_RELOGGED = 0x0020


class RecordType(enum.IntEnum):
    """The core's record type codes: 0x01-0x3F (0x0C-0x3F unassigned). A platform's own
    records take codes in :data:`PLATFORM_TYPES`, named in an enum of the platform's."""

    BEGIN = 0x01
    PUT = 0x02
    PUT_SEGMENT = 0x03
    GET = 0x04
    PREPARE = 0x05
    COMMIT = 0x06
    BACKOUT = 0x07
    CLR = 0x08
    CHECKPOINT_BEGIN = 0x09
    CHECKPOINT_END = 0x0A
    OBJECT_CHANGE = 0x0B


#: The record type codes reserved for platforms' own records. The core decodes one only with
#: the platform's record classes (else as an opaque record) and names none of them; each
#: platform claims a sub-range of its own (its ``RECORD_CODES``, docs/FORMAT.md §3.2) so that
#: the codes of two platforms never meet, and names its codes in an IntEnum of its own.
PLATFORM_TYPES = range(0x40, 0x80)


class ResourceManager(enum.IntEnum):
    """The core's resource managers: the subcomponent that wrote a record (a log print
    shows it). Codes above these (:data:`PLATFORM_RMS`) are platforms'."""

    RECOVERY = 1  # unit-of-work state: begin, prepare, commit, backout
    MESSAGE = 2  # message data: put, get, segments, their compensations
    OBJECT = 3  # object definitions
    CHECKPOINT = 4


#: The resource manager codes reserved for platforms' own subcomponents, each platform naming
#: its own in an IntEnum (a platform record may also name one of the core's, as a record
#: about a unit of work's state names RECOVERY).
PLATFORM_RMS = range(max(ResourceManager) + 1, 0x100)


class Codec(enum.IntEnum):
    """How message data in a put record is stored (header flag bits 0-3)."""

    NONE = 0
    RLE = 1
    ZSTD = 2


class UowState(enum.IntEnum):
    """A UOW's state as a checkpoint records it: in flight, in doubt, in commit, in backout."""

    IN_FLIGHT = 1
    IN_DOUBT = 2
    IN_COMMIT = 3
    IN_BACKOUT = 4


class ObjectAction(enum.IntEnum):
    CREATE = 1
    ALTER = 2
    DELETE = 3


class ObjectType(enum.IntEnum):
    QUEUE = 1
    CHANNEL = 2
    QMGR = 3


class ClrAction(enum.IntEnum):
    """What a compensation record undid."""

    REMOVE_PUT = 1  # the message a put added is removed again
    RESTORE_GET = 2  # the message a get freed is made available again
    REVERSE_OBJECT = 3  # an object change is reversed


# --- field helpers -----------------------------------------------------------------------

def _name_field(max_length: int):
    def check(instance, attribute, value):
        if not isinstance(value, str) or len(value) > max_length or not value.isascii():
            raise ValueError(f"{attribute.name} must be an ASCII string of at most "
                             f"{max_length} characters, got {value!r}")
    return check


def _bytes_field(max_length: int, exact: bool = False):
    def check(instance, attribute, value):
        if not isinstance(value, (bytes, bytearray)):
            raise TypeError(f"{attribute.name} must be bytes, got {type(value).__name__}")
        if (len(value) != max_length) if exact else (len(value) > max_length):
            size = f"exactly {max_length}" if exact else f"at most {max_length}"
            raise ValueError(f"{attribute.name} must be {size} bytes, got {len(value)}")
    return check


@functools.lru_cache(maxsize=4096)
def _pad_name(name: str, length: int) -> bytes:
    # Cached: a log names the same few queues and applications over and over.
    return name.encode("ascii").ljust(length, b" ")


def _codec(value) -> "Codec":
    """The ``codec`` field's converter: a Codec passes as it is (the usual case), cheaply."""
    return value if value.__class__ is Codec else Codec(value)


def _unpad_name(raw: bytes) -> str:
    return raw.rstrip(b" ").decode("ascii", "replace")


#: blank-padded name fields already decoded, to their names: only ASCII names (so a name
#: found here passes the validators), and at most _ASCII_NAMES_MAX of them (a log names the
#: same few queues and applications over and over; a crafted one cannot grow this). Looked
#: up with ``is None``: the empty name "" is a hit like any other.
_ASCII_NAMES: dict[bytes, str] = {}
_ASCII_NAMES_MAX = 4096


def _ascii_name(raw: bytes) -> str | None:
    """The ASCII name in a blank-padded field, or None if it is not ASCII (a decoder's slow
    path then builds the record with ``__init__``, whose validator reports it)."""
    name = _unpad_name(raw)
    if not name.isascii():
        return None
    if len(_ASCII_NAMES) < _ASCII_NAMES_MAX:
        _ASCII_NAMES[raw] = name
    return name


def _frame(rtype: int, rm: int, flags: int, uow: int, prev: int, stamp: int, body: bytes) -> bytes:
    length = HEADER_SIZE + len(body)
    if length > MAX_RECORD_SIZE:
        raise RecordTooLargeError(f"a record of type 0x{rtype:02X} would be {length} bytes; "
                                  f"the format's limit is {MAX_RECORD_SIZE}")
    prefix = HEADER.pack(rtype, rm, flags, length, uow, prev, stamp)
    return b"".join((prefix, _CRC.pack(zlib.crc32(body, zlib.crc32(prefix))), body))


_pack_header, _pack_crc, _crc32 = HEADER.pack, _CRC.pack, zlib.crc32


#: public names of the field helpers a platform's record classes use
pad_name = _pad_name
unpad_name = _unpad_name
name_field = _name_field
