"""The bootstrap data set's bytes: the 4-byte magic ``MQLB``, a CRC-32 (little-endian) of the
rest, then the inventory as a JSON object (docs/FORMAT.md §6.5). One encoder and one decoder,
for the log space that keeps the BSDS and the BSDS map that shows each copy, so the two always
agree on which copy is valid and why another is not; and :class:`BsdsInventory`, the
inventory's fields, written by :meth:`~BsdsInventory.to_bytes` and read back, each field
checked, by :meth:`~BsdsInventory.from_bytes` (symmetric: what one writes the other reads,
field for field; :meth:`~BsdsInventory.from_inventory` is its second half, for a space that
has chosen among the copies :func:`decode_bsds` found valid).
"""

from __future__ import annotations

import json
import zlib

import attrs

from mqlog.core.errors import LogFormatError
from mqlog.core.format.fields import Fields
from mqlog.core.format.records import NO_ADDRESS

#: the BSDS copies, in order (the second with TWOBSDS)
BSDS_FILES = ("BSDS01", "BSDS02")
BSDS_MAGIC = b"MQLB"


def encode_bsds(inventory: dict) -> bytes:
    """A BSDS copy's bytes for ``inventory`` (keys sorted, so the same inventory gives the same bytes)."""
    body = json.dumps(inventory, sort_keys=True).encode()
    return BSDS_MAGIC + zlib.crc32(body).to_bytes(4, "little") + body


def decode_bsds(raw: bytes) -> tuple[dict | None, str | None]:
    """A BSDS copy's inventory, or why it is not one: ``(inventory, None)`` or ``(None,
    problem)``, ``problem`` being ``"magic or checksum"`` or ``"contents: ..."`` (a good
    checksum over something that is not a BSDS: not JSON, or no whole-number sequence)."""
    if raw[:4] != BSDS_MAGIC or zlib.crc32(raw[8:]) != int.from_bytes(raw[4:8], "little"):
        return None, "magic or checksum"
    try:
        inventory = json.loads(raw[8:])
    except RecursionError:
        return None, "contents: nested too deep to decode"
    except ValueError as exc:  # (UnicodeDecodeError too) its checksum is good, its contents are not JSON
        return None, f"contents: {exc}"
    sequence = inventory.get("sequence") if isinstance(inventory, dict) else None
    if not isinstance(sequence, int):
        return None, "contents: no sequence number"
    return inventory, None


#: most active data sets per copy (DEFINE LOG and CSQJU003 NEWLOG together; IBM: 310)
MAX_DATA_SETS = 310
#: bounds on archive sequence numbers and on an active data set's archive number (negative:
#: an offload under way under that number)
MAX_ARCHIVE_SEQ = 10_000_000


@attrs.frozen(kw_only=True)
class BsdsInventory:
    """What a BSDS copy records (docs/FORMAT.md §6.5): the log's geometry, the active data
    sets and the archives, the high-water marks, and the checkpoints restart may start from."""

    sequence: int  # update sequence number (the copies' time stamp)
    cis: int  # CIs in each active data set
    copies: int  # active log copies (2 with TWOACTV)
    start: int  # RBA of the first log byte
    rba8: bool  # 8-byte RBAs (converted); False: 6-byte
    current: int  # index of the current active data set
    high_written: int  # highest RBA written
    written_to: int  # the high-water mark's address (see HighWaterMark)
    written_write: int  # … and its write number
    tail: int  # oldest RBA restart may need
    checkpoint: int  # the latest checkpoint's RBA
    checkpoint_number: int
    checkpoints: tuple  # ((rba, number), ...), oldest first
    next_archive: int  # the next archive sequence number
    active: tuple  # ((number, start, full, archive), ...)
    archives: tuple  # ((seq, start, end, (files...), complete), ...)
    #: the oldest change the page sets lacked at the latest checkpoint, where restart begins
    #: if it is before the checkpoint (the page sets' recovery RBA; NO_ADDRESS: none)
    redo_from: int = NO_ADDRESS

    @property
    def high_offloaded(self) -> int:
        """The highest RBA an archive that completed holds (NO_ADDRESS: none)."""
        return max((end for _, _, end, _, complete in self.archives if complete), default=NO_ADDRESS)

    def to_bytes(self) -> bytes:
        """The copy's bytes (:func:`encode_bsds` of the inventory's fields)."""
        return encode_bsds({
            "sequence": self.sequence, "cis": self.cis, "copies": self.copies, "start": self.start,
            "rba8": self.rba8, "current": self.current, "high_written": self.high_written,
            "written_to": self.written_to, "written_write": self.written_write,
            "high_offloaded": self.high_offloaded, "tail": self.tail, "checkpoint": self.checkpoint,
            "checkpoint_number": self.checkpoint_number, "checkpoints": [list(c) for c in self.checkpoints],
            "redo_from": self.redo_from,
            "next_archive": self.next_archive,
            "active": [list(d) for d in self.active],
            "archives": [[q, s, e, list(files), c] for q, s, e, files, c in self.archives],
        })

    @classmethod
    def from_bytes(cls, raw: bytes, name: str) -> "BsdsInventory":
        """The inventory copy ``name``'s bytes hold, as :meth:`to_bytes` wrote it: a bad magic
        or checksum (a copy cut short or damaged), or contents that are not a BSDS, is a
        :class:`~mqlog.core.errors.LogFormatError` naming the copy (:func:`decode_bsds`'s
        reason), a field out of place one naming the field (:meth:`from_inventory`)."""
        data, problem = decode_bsds(raw)
        if problem is not None:
            raise LogFormatError(f"not a valid BSDS ({problem})", source=name, offset=0)
        return cls.from_inventory(data, name)

    @classmethod
    def from_inventory(cls, data: dict, name: str) -> "BsdsInventory":
        """The inventory :func:`decode_bsds` gave for copy ``name``, every field checked: a
        field missing or out of range is a :class:`~mqlog.core.errors.LogFormatError` naming
        the copy and the field. (``high_offloaded`` is derived from the archives, not read;
        ``rba8`` and the high-water mark default as in a BSDS from before them.)"""
        f = Fields(data, name, "BSDS")
        checkpoints = tuple((f.int("checkpoints", value=rba), f.int("checkpoints", value=number))
                            for rba, number in (f.list("checkpoints", value=c, length=2)
                                                for c in f.list("checkpoints")))
        active = tuple((f.int("active", 1, MAX_DATA_SETS, value=n), f.int("active", value=s),
                        f.bool("active", value=full), f.int("active", -MAX_ARCHIVE_SEQ, MAX_ARCHIVE_SEQ, value=a))
                       for n, s, full, a in (f.list("active", value=d, length=4) for d in f.list("active")))
        if not active:
            f.fail("active", "lists no active data set")
        archives = tuple((f.int("archives", 1, MAX_ARCHIVE_SEQ, value=q), f.int("archives", value=s),
                          f.int("archives", value=e),
                          tuple(f.str("archives", value=n) for n in f.list("archives", value=files)),
                          f.bool("archives", value=c))
                         for q, s, e, files, c in (f.list("archives", value=x, length=5) for x in f.list("archives")))
        return cls(sequence=f.int("sequence"), cis=f.int("cis", 1, 1 << 32), copies=f.int("copies", 1, 2),
                   start=f.int("start"), rba8=f.bool("rba8", default=True),
                   current=f.int("current", 0, len(active) - 1), high_written=f.int("high_written"),
                   written_to=f.int("written_to", default=NO_ADDRESS), written_write=f.int("written_write", default=0),
                   tail=f.int("tail"), checkpoint=f.int("checkpoint"), checkpoint_number=f.int("checkpoint_number"),
                   checkpoints=checkpoints, next_archive=f.int("next_archive", 1, MAX_ARCHIVE_SEQ),
                   active=active, archives=archives, redo_from=f.int("redo_from", default=NO_ADDRESS))
