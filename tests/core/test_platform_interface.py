"""The platform plug-in interface as a third platform sees it (docs/architecture.md).

A platform built here only from what ``mqlog.core.platform`` writes down – the Protocols,
without the core's reference classes or ``SpaceDefaults`` – runs a workload, crashes and
restarts with nothing lost; one without any optional part works too. The core names no
platform concept and probes no platform object: checked over its source.
"""

from __future__ import annotations

import ast
import re
import pathlib
import struct
import zlib

import attrs
import pytest

from mqlog.core.errors import LogFormatError
from mqlog.core.format.pages import PAGE_SIZE
from mqlog.core.format.records import (NO_ADDRESS, LogRecord, OpaqueRecord, RecordType, ResourceManager,
                                       decode_record, record_table)
from mqlog.core.log.addressing import PlainAddressing
from mqlog.core.log.reader import LogReader
from mqlog.core.log.space import PhysicalWrite
from mqlog.core.platform import (CheckpointPolicy, LogControl, Platform, PlatformLogSpace,
                                 QueueManagerServices)
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.qm.services import QmServices
from mqlog.core.workload.run import RunConfig, restart_run, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec

CORE = pathlib.Path(__file__).resolve().parents[2] / "core"

_CONTROL = struct.Struct("<QQQQ")


class LedgerSpace:
    """A third platform's log space: pages in files of ``file_pages`` pages each (a new file
    is a log switch), control data in a small checksummed file. Every member of
    PlatformLogSpace is its own: it subclasses nothing of the core's."""

    def __init__(self, storage, file_pages: int = 32):
        self.storage = storage
        self.file_pages = file_pages
        self.switches = 0
        self.archive_offloads = 0
        self.events: list[tuple[str, dict]] = []
        self.capacity_bytes = 0
        self._highest_file = -1

    def _where(self, address: int) -> tuple[str, int]:
        page = address // PAGE_SIZE
        return f"LEDGER{page // self.file_pages:04d}.LOG", (page % self.file_pages) * PAGE_SIZE

    def plan_write(self, run):
        writes, address = [], run.first_address
        for page in run.pages:
            name, offset = self._where(address)
            number = address // PAGE_SIZE // self.file_pages
            if number > self._highest_file:
                if self._highest_file >= 0:
                    self.switches += 1
                    self.events.append(("ledger-switch", {"file": name}))
                self._highest_file = number
            if writes and writes[-1].file == name and writes[-1].offset + writes[-1].nbytes == offset:
                last = writes[-1]
                writes[-1] = attrs.evolve(last, pages=last.pages + (page,))
            else:
                writes.append(PhysicalWrite(name, offset, address, (page,)))
            address += PAGE_SIZE
        return writes

    def copy_jobs(self):
        return ()  # keeps every file where it is: nothing to copy in the background

    def waits_for_copies(self, run) -> bool:
        return False

    def read_page(self, address: int):
        name, offset = self._where(address)
        if not self.storage.exists(name):
            return b"", name, offset
        return self.storage.read(name, offset, PAGE_SIZE), name, offset

    def release(self, tail: int) -> None:
        pass  # keeps every file: never reuses

    def usage(self, head: int, tail: int) -> float:
        return 0.0

    def save_control(self, control: LogControl) -> None:
        body = _CONTROL.pack(control.checkpoint, control.tail, control.checkpoint_number, control.media)
        self.storage.replace("LEDGER.CTL", body + zlib.crc32(body).to_bytes(4, "little"))

    def load_control(self) -> LogControl | None:
        if not self.storage.exists("LEDGER.CTL"):
            return None
        raw = self.storage.read("LEDGER.CTL", 0, _CONTROL.size + 4)
        if zlib.crc32(raw[:-4]).to_bytes(4, "little") != raw[-4:]:
            raise LogFormatError("ledger control data fails its checksum", source="LEDGER.CTL", offset=0)
        return LogControl(*_CONTROL.unpack(raw[:-4]))

    def free_bytes(self, head: int, tail: int) -> int | None:
        return None

    def recovery_extents(self):
        return None

    lost_code = ""

    def lost(self, address: int) -> bool:
        return False

    def metrics(self) -> dict:
        return {"ledger_files": self._highest_file + 1}

    def resource_monitor(self, head: int, writer_stats: dict) -> dict:
        return {}

    def high_water(self) -> int | None:
        return None  # keeps no high-water mark: restart takes the end of the log as it finds it

    def scan_to(self, address: int) -> int | None:
        return None  # past a bad page the reader looks its own few pages further

    def scan_page(self, address: int):
        return self.read_page(address)  # (it counts no reads)

    def unwritten_run(self, address: int, limit: int) -> int:
        return 0  # past the end the reader reads page by page

    def check_files(self, start: int) -> None:
        pass  # nothing to compare the files with


@attrs.frozen
class EveryFiftyRecords:
    interval_us: float | None = None

    def counts(self, record) -> bool:
        return True  # every record logged counts towards the next checkpoint

    def due(self, records_since: int, us_since: float, switched: bool = False) -> bool:
        return records_since >= 50 or switched


def ledger_platform(storage) -> Platform:
    """Only the required parts and settings: no space policy, codec, shunting, media images,
    checkpoint records or console."""
    return Platform(name="ledger", addressing=PlainAddressing(), space=LedgerSpace(storage),
                    checkpoint_policy=EveryFiftyRecords(), buffer_pages=32, write_threshold_pages=4)


SPEC = build_spec(BUILTINS["putget-pairs"], {"pairs": "3", "messages_per_pair": "40"}, origin="test")


def _run(crash_after_writes=None):
    cfg = RunConfig("ledger", ledger_platform, {}, SPEC, seed=11, crash_after_writes=crash_after_writes)
    return run_workload(cfg, MemoryStorage())


def test_the_third_platform_satisfies_the_written_protocols():
    platform = ledger_platform(MemoryStorage())
    assert isinstance(platform.space, LedgerSpace)
    # Structural: every member the Protocols name is there (no default is inherited).
    for protocol, obj in ((PlatformLogSpace, platform.space), (CheckpointPolicy, platform.checkpoint_policy)):
        names = {n for n in protocol.__annotations__} | {
            n for n, v in vars(protocol).items() if callable(v) and not n.startswith("_")} | {
            n for base in protocol.__mro__[1:] if base.__name__ == "LogSpace"
            for n, v in vars(base).items() if callable(v) and not n.startswith("_")}
        missing = sorted(n for n in names if not hasattr(obj, n))
        assert not missing, (protocol.__name__, missing)
    assert platform.space_policy is None and platform.codec is None and platform.shunting is None
    assert platform.media is None and platform.console is None and platform.checkpoint_records is None


def test_a_platform_without_optional_parts_runs_a_workload_switching_files():
    result = _run()
    assert not result.crashed
    m = result.metrics
    assert m["messages_put"] == 120 and m["messages_got"] == 120
    assert m["log_switches"] == result.qm.platform.space.switches > 0  # the core read the space's count
    assert m["platform_ledger_files"] == m["log_switches"] + 1  # and its own metrics
    assert m["checkpoints"] > 2
    assert result.qm.platform.space.events == []  # the queue manager said (drained) every event


@pytest.mark.parametrize("crash_after_writes", [15, 40, 90])
def test_the_third_platform_crashes_and_restarts_with_nothing_lost(crash_after_writes):
    result = _run(crash_after_writes)
    assert result.crashed
    report, verdict, qm = restart_run(ledger_platform, result.storage.durable, journal=result.journal)
    assert verdict.ok, verdict.details[:5]
    assert report.records_replayed > 0
    qm.check()


# --- the services object ---------------------------------------------------------------------

def test_the_queue_manager_hands_platforms_a_services_object_that_logs_and_claims_space():
    result = _run()
    qm = result.qm
    services = qm.services
    assert isinstance(services, QmServices)
    for name in ("checkpoint_number", "queues", "log", "log_space", "replay_point", "holding", "imaging",
                 "is_imaging", "queue", "charge"):
        assert hasattr(QueueManagerServices, name) and hasattr(services, name)
    assert services.checkpoint_number == qm.counters.checkpoints
    # A replay point held back stays put while records are appended after it.
    qm.stopped = False
    held = services.replay_point()
    with services.holding(held):
        def log_one():
            from mqlog.core.format.records import CheckpointBegin
            with services.log_space(4096):
                return (yield from services.log(CheckpointBegin(99, 0)))
        address = qm.env.run(until=qm.env.process(log_one()))
        assert address >= held and services.replay_point() == held
    assert services.replay_point() == qm.writer.next_address > held


# --- records: the public base and the platform's own types --------------------------------

@attrs.frozen
class LedgerNote(LogRecord):
    """A third platform's record: one of its own, decoded only with its record types."""

    TYPE = 0x50
    RM = ResourceManager.OBJECT
    text: str = ""
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)

    def _body(self) -> bytes:
        return self.text.encode("ascii")

    @classmethod
    def _from_body(cls, flags, uow, prev, stamp, body):
        return cls(bytes(body).decode("ascii"), uow=uow, prev=prev, stamp=stamp)


def test_a_platform_record_decodes_with_the_platforms_types_and_opaquely_without():
    raw = LedgerNote("hello").to_bytes()
    assert decode_record(raw, types=record_table((LedgerNote,))) == LedgerNote("hello")
    opaque = decode_record(raw)  # no global registry: without the platform's types it is opaque
    assert isinstance(opaque, OpaqueRecord) and opaque.to_bytes() == raw
    assert LedgerNote.from_bytes(raw) == LedgerNote("hello")
    # What recovery asks a record has neutral answers on the base.
    note = LedgerNote("x")
    assert note.backout_round() is None and note.image_piece() is None and not note.relogged and note.data == b""


def test_record_tables_refuse_a_core_code_or_two_classes_for_one_code():
    @attrs.frozen
    class Impostor(LedgerNote):
        TYPE = RecordType.PUT

    with pytest.raises(ValueError, match="not a platform record type"):
        record_table((Impostor,))

    @attrs.frozen
    class Twin(LedgerNote):
        pass

    with pytest.raises(ValueError, match="already"):
        record_table((LedgerNote, Twin))


def test_the_reader_decodes_platform_records_only_with_the_types_it_is_given():
    from mqlog.core.log.space import ReferenceLogSpace
    from mqlog.core.log.writer import LogWriter
    from mqlog.core.disk.devices import Device, get_profile
    import simpy

    env, storage = simpy.Environment(), MemoryStorage()
    space = ReferenceLogSpace(storage)
    writer = LogWriter(env, space, Device(env, get_profile("ram")))

    def go():
        yield from writer.put(LedgerNote("one"))
        yield writer.force()

    env.run(until=env.process(go()))
    with_types = [r for _, r in LogReader(space, 0, record_types=(LedgerNote,))]
    without = [r for _, r in LogReader(space, 0)]
    assert with_types == [LedgerNote("one")]
    assert len(without) == 1 and isinstance(without[0], OpaqueRecord) and without[0].type == 0x50


# --- the core names no platform concept and probes no platform object -------------------

def _core_sources():
    return sorted(p for p in CORE.rglob("*.py"))


def test_the_core_probes_no_object_with_getattr_or_hasattr_except_where_it_is_not_a_platforms():
    """getattr/hasattr in the core only where the object is the standard library's or the
    core's own (listed with why); anything else would be probing a platform object."""
    allowed = {
        ("disk/storage.py", "os"),  # optional os functions (O_CLOEXEC, pwritev) on this system
        ("format/construct.py", "cls"),  # attrs hooks of the core's own record classes
        ("workload/recording.py", "Journal"),  # the core's journal, wrapped method by method
        ("workload/recording.py", "fs"),
        ("workload/recording.py", "journal"),
        ("workload/run.py", "cause"),  # an exception's cause chain
    }
    found = []
    for path in _core_sources():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                    "getattr", "hasattr") and node.args:
                target = ast.unparse(node.args[0])
                rel = path.relative_to(CORE).as_posix()
                if (rel, target) not in allowed:
                    found.append(f"{rel}:{node.lineno}: {node.func.id}({target}, …)")
    assert not found, found


def test_the_core_names_no_queue_sharing_group_cf_structure_or_z_os_message():
    """Shared queues, CF structures and the z/OS messages and codes live in ``zos/``: the core
    reaches them only through the plug-in interface, so its source never names them."""
    platform_words = re.compile(r"\bQSG\b|queue.sharing|coupling.facility|\bCF\b|\bCSQ[A-Z0-9]{4,}|\b00D1[0-9A-F]{4}\b",
                                re.IGNORECASE)
    found = [f"{path.relative_to(CORE).as_posix()}:{n}: {line.strip()}"
             for path in _core_sources() for n, line in enumerate(path.read_text().splitlines(), 1)
             if platform_words.search(line)]
    assert not found, found
