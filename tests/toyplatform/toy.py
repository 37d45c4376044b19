"""A minimal third platform, to prove that a platform is one package plus one registry line
(issue 41): a log of fixed-size files that are never reused (``TOY00000.LOG``,
``TOY00001.LOG``, ...), its control data in one small file (``toy.ctl``), plain addresses,
the core's record-count checkpoints – built only on the core's protocols
(:class:`~mqlog.core.platform.PlatformLogSpace` through
:class:`~mqlog.core.platform.SpaceDefaults`), and described by :data:`DESCRIPTOR`.

It plugs in by one entry in the registry (:data:`REGISTRY_LINE`, which the ``toy_registered``
fixture of ``conftest.py`` adds to :data:`mqlog.platforms.PLATFORMS`), and its test package
runs the log-space conformance suite (``test_logspace.py``), the recovery contract
(``contract_configs.py``) and a run, a crash and ``restart --verify`` through the command
line (``test_plugs_in.py``).
"""

from __future__ import annotations

import re
import struct
import zlib
from typing import Sequence

from mqlog.core.descriptor import LogParam, PlatformDescriptor, WholeNumber
from mqlog.core.disk.faults import FileRoles
from mqlog.core.disk.storage import Storage
from mqlog.core.errors import LogFormatError
from mqlog.core.format.pages import PAGE_SIZE, PageRun
from mqlog.core.log.addressing import PlainAddressing
from mqlog.core.log.space import PhysicalWrite
from mqlog.core.platform import LogControl, Platform, RecordCountCheckpoints, SpaceDefaults
from mqlog.core.reference import reference_console

#: pages one log file holds: small, so that a short run crosses several files
FILE_PAGES = 8
CONTROL_FILE = "toy.ctl"
_NAME = re.compile(r"TOY\d{5}\.LOG")
_CONTROL = struct.Struct("<4sQQQ")
_MAGIC = b"TOYC"


def file_name(number: int) -> str:
    return f"TOY{number:05d}.LOG"


class ToyLogSpace(SpaceDefaults):
    """Log address ``a`` lives in file ``a // file bytes`` at the rest: files are filled in
    turn and never reused, so the log never fills and release only moves the tail."""

    def __init__(self, storage: Storage, *, file_pages: int = FILE_PAGES):
        self.storage = storage
        self.file_bytes = file_pages * PAGE_SIZE
        self.tail = 0

    def _where(self, address: int) -> tuple[str, int]:
        number, offset = divmod(address, self.file_bytes)
        return file_name(number), offset

    def plan_write(self, run: PageRun) -> Sequence[PhysicalWrite]:
        writes, address, pages = [], run.first_address, tuple(run.pages)
        while pages:  # one write a file the run touches, in order
            name, offset = self._where(address)
            room = (self.file_bytes - offset) // PAGE_SIZE
            writes.append(PhysicalWrite(name, offset, address, pages[:room]))
            address, pages = address + room * PAGE_SIZE, pages[room:]
        return tuple(writes)

    def read_page(self, address: int) -> tuple[bytes, str, int]:
        name, offset = self._where(address)
        if not self.storage.exists(name):
            return b"", name, offset
        return self.storage.read(name, offset, PAGE_SIZE), name, offset

    def release(self, tail: int) -> None:
        self.tail = max(self.tail, tail)

    def usage(self, head: int, tail: int) -> float:
        return 0.0

    def save_control(self, control: LogControl) -> None:
        body = _CONTROL.pack(_MAGIC, control.checkpoint, control.tail, control.checkpoint_number)
        self.storage.replace(CONTROL_FILE, body + zlib.crc32(body).to_bytes(4, "little"))

    def load_control(self) -> LogControl | None:
        if not self.storage.exists(CONTROL_FILE):
            return None
        raw = self.storage.read(CONTROL_FILE, 0, _CONTROL.size + 4)
        body, crc = raw[:_CONTROL.size], raw[_CONTROL.size:]
        if len(raw) != _CONTROL.size + 4 or zlib.crc32(body).to_bytes(4, "little") != crc or body[:4] != _MAGIC:
            raise LogFormatError("not a toy control file (length, magic or checksum)", source=CONTROL_FILE, offset=0)
        _, checkpoint, tail, number = _CONTROL.unpack(body)
        return LogControl(checkpoint, tail, number)


def toy_platform(storage: Storage, *, checkpoint_records: int = 200, log_scale: int = 1) -> Platform:
    """The toy platform over ``storage`` (``log_scale``: files that many times larger)."""
    return Platform(name="toy", addressing=PlainAddressing(),
                    space=ToyLogSpace(storage, file_pages=FILE_PAGES * log_scale),
                    checkpoint_policy=RecordCountCheckpoints(records=checkpoint_records),
                    console=reference_console)


DESCRIPTOR = PlatformDescriptor(
    "toy", "a minimal third platform of the tests: fixed-size log files never reused",
    lambda storage, values: toy_platform(storage, checkpoint_records=values["checkpoint_records"]),
    (LogParam("checkpoint_records", 200, WholeNumber(1, 1_000_000), "log records between checkpoints"),),
    file_roles=lambda: FileRoles(control=lambda name: name == CONTROL_FILE,
                                 log=lambda name: bool(_NAME.fullmatch(name)),
                                 needed=lambda name: bool(_NAME.fullmatch(name)),
                                 single_copy=lambda values: "the toy log"),
    file_names=((_NAME.pattern, "a toy log file"),), log_file_noun="toy file", title="Toy")

#: the platform's one line in the registry (:data:`mqlog.platforms.PLATFORMS`)
REGISTRY_LINE = {DESCRIPTOR.name: DESCRIPTOR}
