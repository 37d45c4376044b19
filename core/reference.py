"""The core's own platform: one growing log file with its control data in a small file
beside it, no limits, plain addresses (:func:`reference_platform`). The tests' and the
descriptor's platform; the real ones are :mod:`mqlog.distributed` and :mod:`mqlog.zos`."""

from __future__ import annotations

import struct
import zlib

from mqlog.core.errors import LogFormatError, ParameterError
from mqlog.core.disk.storage import Storage
from mqlog.core.log.addressing import PlainAddressing
from mqlog.core.log.space import ReferenceLogSpace
from mqlog.core.messages import REFERENCE_CONSOLE
from mqlog.core.platform import (DataCodec, LogControl, Platform, RecordCountCheckpoints, Shunting, SpaceDefaults,
                                 SpacePolicy)

_CONTROL = struct.Struct("<4sHQQQI")
_CONTROL_MAGIC = b"MQLC"


class ReferenceSpace(SpaceDefaults, ReferenceLogSpace):
    """The reference log space with control data in a small file beside the log."""

    def __init__(self, storage: Storage, *, file: str = "reference.log", control_file: str = "reference.ctl",
                 start: int = 0):
        super().__init__(storage, file=file, start=start)
        self.control_file = control_file
        self.tail = start

    def release(self, tail: int) -> None:
        self.tail = max(self.tail, tail)

    def usage(self, head: int, tail: int) -> float:
        return 0.0

    def save_control(self, control: LogControl) -> None:
        body = _CONTROL.pack(_CONTROL_MAGIC, 1, control.checkpoint, control.tail, control.checkpoint_number, 0)
        crc = zlib.crc32(body[:-4])
        self.storage.replace(self.control_file, body[:-4] + crc.to_bytes(4, "little"))

    def load_control(self) -> LogControl | None:
        if not self.storage.exists(self.control_file):
            return None
        raw = self.storage.read(self.control_file, 0, _CONTROL.size)
        if len(raw) != _CONTROL.size:
            raise LogFormatError(f"control file is {len(raw)} bytes, expected {_CONTROL.size}",
                                 source=self.control_file, offset=0)
        magic, version, checkpoint, tail, number, crc = _CONTROL.unpack(raw)
        if magic != _CONTROL_MAGIC or version != 1 or zlib.crc32(raw[:-4]) != crc:
            raise LogFormatError("not a valid log control file (magic, version or checksum)",
                                 source=self.control_file, offset=0)
        return LogControl(checkpoint, tail, number)


def reference_console(event: str, fields: dict) -> str | None:
    """The reference platform's messages: plain text, no message ids (platforms have their own)."""
    return REFERENCE_CONSOLE(event, fields)


def reference_platform(storage: Storage, *, checkpoint_records: int = 10_000, codec: DataCodec | None = None,
                       space_policy: SpacePolicy | None = None, shunting: Shunting | None = None,
                       buffer_pages: int = 512, write_threshold_pages: int = 20,
                       pad_partial_pages: bool = False) -> Platform:
    """The core's own platform: one growing log file, no limits, plain addresses.

    Like MQ's SingleWrite it rewrites a partial page in place, so a torn rewrite can take
    records an earlier force hardened on that page; with ``pad_partial_pages`` it never
    rewrites a page (each write starts on a fresh one), which makes it survive torn writes
    at the cost of padding."""
    if not 1 <= checkpoint_records <= 16_000_000:
        raise ParameterError("checkpoint_records", checkpoint_records, "1 to 16000000")
    return Platform(
        name="reference",
        addressing=PlainAddressing(),
        space=ReferenceSpace(storage),
        checkpoint_policy=RecordCountCheckpoints(records=checkpoint_records),
        space_policy=space_policy,
        codec=codec,
        shunting=shunting,
        console=reference_console,
        buffer_pages=buffer_pages,
        write_threshold_pages=write_threshold_pages,
        pad_policy=(lambda used: True) if pad_partial_pages else None,
    )
