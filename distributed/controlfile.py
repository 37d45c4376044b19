"""The log control file's bytes (``amqhlctl.lfh``, docs/FORMAT.md §6.2): the 4-byte magic
``MQLD``, a CRC-32 (little-endian) of the rest, then the control data as a JSON object.
:class:`ControlFile` is that object's fields, written by :meth:`~ControlFile.to_bytes` and
read back, each field checked in the order it is taken, by :meth:`~ControlFile.from_bytes`
(symmetric: what one writes the other reads, field for field). The space that keeps the
file (:mod:`mqlog.distributed.space`) makes one from its state and applies one it read.

MQ's own control file is binary and its layout is not public; JSON keeps the model's
readable. A good checksum says the bytes are the ones written, not that they are what this
version writes (a file edited by hand, its checksum recomputed): every field is checked, and
damage is one :class:`~mqlog.core.errors.LogFormatError` naming the file and the field.
"""

from __future__ import annotations

import json
import zlib

import attrs

from mqlog.core.errors import LogFormatError
from mqlog.core.format.fields import Fields, loads
from mqlog.core.format.records import NO_ADDRESS

CONTROL_FILE = "amqhlctl.lfh"
CONTROL_MAGIC = b"MQLD"
#: extent names run S0000000.LOG … S9999999.LOG and then wrap
EXTENT_NUMBERS = 10_000_000
#: the largest extent number a control file may give (numbers run on where names wrap)
MAX_EXTENT_NUMBER = EXTENT_NUMBERS * 1000
#: the log types, as qm.ini's LogType names them
LINEAR, CIRCULAR = "LINEAR", "CIRCULAR"


def format_lsn(address: int) -> str:
    """An LSN as MQ shows it: four 16-bit parts, most significant first (``<0:0:4:1234>``)."""
    if address < 0:  # (never an LSN: said as what it is, not as its two's complement)
        return f"{address} (not an LSN)"
    return "<" + ":".join(str((address >> shift) & 0xFFFF) for shift in (48, 32, 16, 0)) + ">"


def extent_name(number: int) -> str:
    return f"S{number % EXTENT_NUMBERS:07d}.LOG"


@attrs.frozen
class ExtentEntry:
    """One extent as the control file lists it: ``[number, primary, start, inactive,
    archived, reusable]``."""

    number: int
    primary: bool
    start: int = NO_ADDRESS  # first address it holds (NO_ADDRESS: no range)
    inactive: bool = False  # linear: left the active log
    archived: bool = False  # linear, LogManagement=Archive: SET LOG ARCHIVED named it
    reusable: bool = False  # linear: needed by neither restart nor media recovery

    def to_list(self) -> list:
        return [self.number, self.primary, self.start, self.inactive, self.archived, self.reusable]


@attrs.frozen(kw_only=True)
class ControlFile:
    """What the log control file records: the log's type and extent size, the restart data
    (the last checkpoint, the tail, MEDIALOG's address), the high-water mark, and which
    extents hold which ranges in which ring order."""

    linear: bool  # LogType=LINEAR; False: CIRCULAR
    extent_pages: int  # LogFilePages, fixed at creation
    checkpoint: int  # the last complete checkpoint's Begin record (NO_ADDRESS: none yet)
    checkpoint_number: int
    tail: int  # the oldest address restart needs
    media: int = NO_ADDRESS  # the oldest media recovery record (MEDIALOG's address)
    written_to: int = NO_ADDRESS  # the high-water mark's address (see HighWaterMark)
    written_write: int = 0  # … and its write number
    current: int | None = None  # the extent being written
    ring: tuple = ()  # extent numbers in ring order
    extents: tuple = ()  # ExtentEntry each, by number

    def to_bytes(self) -> bytes:
        """The file's bytes (keys sorted, so the same control data gives the same bytes)."""
        body = json.dumps({
            "type": LINEAR if self.linear else CIRCULAR, "extent_pages": self.extent_pages,
            "checkpoint": self.checkpoint, "checkpoint_number": self.checkpoint_number,
            "tail": self.tail, "current": self.current, "ring": list(self.ring), "media": self.media,
            "written_to": self.written_to, "written_write": self.written_write,
            "extents": [e.to_list() for e in self.extents],
        }, sort_keys=True).encode()
        return CONTROL_MAGIC + zlib.crc32(body).to_bytes(4, "little") + body

    @classmethod
    def from_bytes(cls, raw: bytes, *, file_pages: int | None = None) -> "ControlFile":
        """The control data in ``raw``, every field checked as it is taken: a bad magic or
        checksum (a file cut short, or damaged), contents that are not JSON, a field missing
        or out of range, an extent listed twice or two extents given one address, a circular
        ring naming an extent the list lacks – each a LogFormatError naming the file (and
        the field). ``file_pages``, the configuration's LogFilePages, is refused as soon as
        the file's extent size is read if it differs: LogFilePages is fixed at creation.
        (The high-water mark and MEDIALOG default as in a file from before them.)"""
        if raw[:4] != CONTROL_MAGIC or zlib.crc32(raw[8:]) != int.from_bytes(raw[4:8], "little"):
            raise LogFormatError("not a valid log control file (magic or checksum)", source=CONTROL_FILE, offset=0)
        f = Fields(loads(raw[8:], CONTROL_FILE, "log control file"), CONTROL_FILE, "log control file")
        pages = f.int("extent_pages", 1, 1 << 32)
        if file_pages is not None and pages != file_pages:
            raise LogFormatError(f"the log's extents are {pages} pages, the configuration says "
                                 f"{file_pages}: LogFilePages is fixed at creation", source=CONTROL_FILE)
        linear = f.str("type", choices=(LINEAR, CIRCULAR)) == LINEAR
        media = f.int("media", default=NO_ADDRESS)
        checkpoint, tail, checkpoint_number = f.int("checkpoint"), f.int("tail"), f.int("checkpoint_number")
        written_to, written_write = f.int("written_to", default=NO_ADDRESS), f.int("written_write", default=0)
        ring = tuple(f.int("ring", 0, MAX_EXTENT_NUMBER, value=n) for n in f.list("ring"))
        extents: dict[int, ExtentEntry] = {}
        starts = set()
        for entry in f.list("extents"):
            number, primary, start, inactive, archived, reusable = f.list("extents", value=entry, length=6)
            number = f.int("extents", 0, MAX_EXTENT_NUMBER, value=number)
            if number in extents:
                f.fail("extents", f"lists extent {number} twice")
            primary, inactive = f.bool("extents", value=primary), f.bool("extents", value=inactive)
            start = f.int("extents", value=start)
            archived, reusable = f.bool("extents", value=archived), f.bool("extents", value=reusable)
            if start != NO_ADDRESS:
                if start in starts:
                    f.fail("extents", f"gives two extents the same first address {format_lsn(start)}")
                starts.add(start)
            extents[number] = ExtentEntry(number, primary, start, inactive, archived, reusable)
        current = f.get("current")
        if current is not None and (type(current) is not int or current not in extents):
            f.fail("current", f"is {current!r}, not one of its extents")
        gone = [n for n in ring if n not in extents]
        if gone and not linear:
            # (a linear log's ring is only the primaries it was created with: a file written
            # before reused extents left it may still name them, and the space drops them)
            raise LogFormatError(f"malformed log control file: the ring names {extent_name(gone[0])}, which its "
                                 f"extent list does not have", source=CONTROL_FILE, offset=8)
        return cls(linear=linear, extent_pages=pages, checkpoint=checkpoint, checkpoint_number=checkpoint_number,
                   tail=tail, media=media, written_to=written_to, written_write=written_write, current=current,
                   ring=ring, extents=tuple(extents.values()))
