"""Queue-sharing groups (LRSN addressing and CF structure backup records): several z/OS queue managers
share queues held in a coupling-facility (CF) structure, each logging its own work in its
own log.

**Shared queues.** A shared queue is one :class:`~mqlog.core.objects.queues.Queue` object (no queue
file) that every member holds in its ``queues``: a put by one member can be got by another.
Unit-of-work ids carry the member's number (``QmConfig.member``), so units of different
members never clash on a message. The structure outlives a member: when a member restarts,
the CF is the truth about the messages, and the member's restart only resolves its own units
of work there (backs out those in flight, keeps those in doubt) – the model's peer recovery.

**LRSN.** A byte position orders one log, not several: every member's records carry an LRSN
(the record header's stamp), a store-clock value of the same clock for all members, so the
records of all logs can be merged into one order. Records with the same LRSN keep their
member's order.

**BACKUP CFSTRUCT / RECOVER CFSTRUCT.** A backup writes CF-backup records (0x62) into the
issuing member's log: each shared queue's image (the core's media-image bytes) and, per
member, the RBA from which that member's log must be read to bring the images up to date –
its log's head at the moment of the snapshot, or earlier where an MQI call already logging
has not yet taken effect (the fuzzy-image rule of :mod:`mqlog.core.objects.media`). When a structure
fails its messages are gone (applications get MQRC_CF_STRUCTURE_FAILED, 2373). RECOVER
CFSTRUCT reads the latest backup, reads every member's log from its RBA, merges the records
that touch the structure's queues by LRSN, and redoes them onto the images; uncommitted
state of units of work that no member still has is put back. Non-persistent messages are
not recovered (they are never logged). All members must be running for a backup or a
recovery (the model does not read a stopped member's log).
"""

from __future__ import annotations

import contextlib
import enum
import struct
from typing import Generator

import attrs

from mqlog.core.errors import LogCorruptionError, MqlogError
from mqlog.core.objects.uow import MqiError
from mqlog.core.objects.media import IMAGE_SEGMENT_BYTES, ImagedMessage, decode_image, encode_image
from mqlog.core.platform import LogControl
from mqlog.core.objects.queuefile import MessageState
from mqlog.core.objects.queues import Message, Queue
from mqlog.core.log.reader import LogReader
from mqlog.core.format.records import NO_ADDRESS, Backout, Clr, Commit, Get, Prepare, Put, PutSegment
from mqlog.core.recovery.state import Recovery
from mqlog.core.objects.uow import MEMBER_SHIFT
from mqlog.zos.records import CfBackup

_MEMBER = struct.Struct("<B48sQ")
_QUEUE = struct.Struct("<48sI")


class QsgError(MqlogError):
    """A queue-sharing group request that cannot be carried out (names what is missing)."""


class QsgReason(enum.IntEnum):
    """MQI reason codes of queue-sharing groups (names as in the MQ headers)."""

    MQRC_CF_STRUCTURE_FAILED = 2373  # a shared queue's coupling-facility structure has failed


@attrs.define(eq=False)
class CfStructure:
    """A coupling-facility structure: the keeper (core ``QueueKeeper``) of its shared queues."""

    name: str
    queues: dict = attrs.field(factory=dict)  # name -> the shared Queue
    failed: bool = False

    def check(self, queue: str, ending: bool) -> None:
        if self.failed:
            raise MqiError(QsgReason.MQRC_CF_STRUCTURE_FAILED,
                           f"{queue}: its coupling-facility structure has failed"
                           + ("; retry after it is recovered" if ending else ""))


@attrs.frozen
class BackupEntry:
    """Where the latest backup of a structure is (MQ keeps this in Db2's tables)."""

    member: str
    address: int  # its first CF-backup record in that member's log
    backup_id: int


class QueueSharingGroup:
    """The members, their CF structures and the structures' backups."""

    def __init__(self, name: str = "QSG1"):
        from mqlog.zos.platform import LrsnClock

        self.name = name
        self.clock = LrsnClock()  # one clock for every member's LRSNs
        self.members: dict[str, object] = {}  # queue manager name -> QueueManager, in joining order
        self.structures: dict[str, CfStructure] = {}
        self.backups: dict[str, BackupEntry] = {}

    # -- membership and shared queues ------------------------------------------------------

    def join(self, qm) -> None:
        """Add a queue manager (before its start or restart): it sees every shared queue."""
        numbers = {m.config.member for n, m in self.members.items() if n != qm.config.name}
        if qm.config.member in numbers:
            raise QsgError(f"member number {qm.config.member} of {qm.config.name} is already used in {self.name}")
        self.members[qm.config.name] = qm
        addressing = qm.settings.addressing
        if not getattr(addressing, "stamps", False):
            raise QsgError(f"{qm.config.name} does not stamp its records with LRSNs: build its platform with lrsn=True")
        # Every member draws LRSNs from the group's clock (a run-time setting: the platform
        # bundle itself is frozen).
        qm.settings.addressing = attrs.evolve(addressing, clock=self.clock)
        for structure in self.structures.values():
            for queue in structure.queues.values():
                qm.add_kept_queue(queue)

    def define_structure(self, name: str) -> CfStructure:
        structure = self.structures.get(name)
        if structure is None:
            structure = self.structures[name] = CfStructure(name)
        return structure

    def define_shared_queue(self, name: str, structure: str, *, max_depth: int = 999_999_999) -> Queue:
        """DEFINE QLOCAL(name) QSGDISP(SHARED) CFSTRUCT(structure): one queue for all members."""
        cf = self.define_structure(structure)
        queue = Queue(name, None, max_depth=max_depth,
                      attributes=f"MAXDEPTH({max_depth}) QSGDISP(SHARED) CFSTRUCT({structure})")
        queue.keeper = cf
        cf.queues[name] = queue
        for qm in self.members.values():
            qm.add_kept_queue(queue)
        return queue

    def _structure(self, name: str) -> CfStructure:
        cf = self.structures.get(name)
        if cf is None:
            raise QsgError(f"no CF structure {name} in {self.name}")
        return cf

    def _running(self) -> list:
        down = [n for n, m in self.members.items() if m.writer is None or m.stopped]
        if down:
            raise QsgError(f"members {', '.join(down)} of {self.name} are not running")
        return list(self.members.values())

    # -- structure failure, backup and recovery --------------------------------------------

    def fail_structure(self, name: str) -> None:
        """The structure fails: its messages are lost until RECOVER CFSTRUCT."""
        cf = self._structure(name)
        cf.failed = True
        for queue in cf.queues.values():
            queue.messages.clear()
            queue.available.clear()

    def backup_cfstruct(self, qm, name: str) -> Generator:
        """BACKUP CFSTRUCT(name) issued on member ``qm``: CF-backup records in its log."""
        cf = self._structure(name)
        if cf.failed:
            raise QsgError(f"CF structure {name} has failed: recover it before backing it up")
        members = self._running()
        # The snapshot: one step of virtual time, every member's replay point with it.
        starts = [(member.config.member, member.config.name, member.services.replay_point())
                  for member in members]
        images = [(queue.name, encode_image(queue.attributes, self._imaged(queue)))
                  for queue in sorted(cf.queues.values(), key=lambda q: q.name)]
        # Every record whose effect the images show must be on disk before the backup counts:
        # a member that crashed before would restart behind its replay point.
        heads = [(m, m.writer.next_address) for m in members]
        yield self._all_forced(heads)
        if any(m.writer.failed is not None or m.stopped or m.writer.durable < head for m, head in heads):
            raise QsgError(f"a member stopped while the backup of {name} was taken: take it again")
        payload = b"".join([struct.pack("<I", len(starts))]
                           + [_MEMBER.pack(n, name_.encode("ascii").ljust(48), start) for n, name_, start in starts]
                           + [struct.pack("<I", len(images))]
                           + [_QUEUE.pack(q.encode("ascii").ljust(48), len(img)) + img for q, img in images])
        pieces = [payload[i:i + IMAGE_SEGMENT_BYTES] for i in range(0, len(payload), IMAGE_SEGMENT_BYTES)]
        backup_id = qm.writer.next_address
        need = 800 + len(payload) + 300 * len(pieces)
        services = qm.services
        with contextlib.ExitStack() as held:
            try:
                held.enter_context(services.log_space(need))
            except MqiError:
                raise QsgError(f"the log of {qm.config.name} cannot hold a backup of {name} ({len(payload)} bytes) "
                               f"now") from None
            first = NO_ADDRESS
            for i, piece in enumerate(pieces):
                address = yield from services.log(CfBackup(name, backup_id, i, len(pieces), piece))
                first = address if first == NO_ADDRESS else first
            yield qm.writer.force()
        self.backups[name] = BackupEntry(qm.config.name, first, backup_id)
        qm.say("cf-backup", structure=name, bytes=len(payload))
        return len(payload)

    def _imaged(self, queue: Queue) -> list:
        """A shared queue's persistent messages as an image shows them: the outcome of a
        unit of work whose Commit/Backout record is already logged (by whichever member)."""
        by_member = {m.config.member: m for m in self.members.values()}
        out = []
        for message in sorted(queue.messages.values(), key=lambda m: (m.seq, m.msg_id)):
            if not message.persistent:
                continue
            state, uow = message.state, message.uow
            owner_qm = by_member.get(uow >> MEMBER_SHIFT) if uow else None
            owner = owner_qm.uows.get(uow) if owner_qm is not None else None
            if owner is not None and owner.end_address != NO_ADDRESS:
                if (state is MessageState.PUT_UNCOMMITTED) != owner.end_commit:
                    continue
                state, uow = MessageState.COMMITTED, 0
            out.append(ImagedMessage(message.msg_id, state, uow, message.seq, message.data or b""))
        return out

    def recover_cfstruct(self, qm, name: str) -> Generator:
        """RECOVER CFSTRUCT(name) issued on member ``qm``: the structure rebuilt from its latest
        backup and every member's log after it, merged by LRSN. Returns the records redone."""
        cf = self._structure(name)
        entry = self.backups.get(name)
        if entry is None:
            raise QsgError(f"no backup of CF structure {name}: BACKUP CFSTRUCT({name}) first")
        members = self._running()
        owner = self.members.get(entry.member)
        if owner is None:
            raise QsgError(f"the backup of {name} is in the log of {entry.member}, which left {self.name}")
        qm.say("cf-recovery-begin", structure=name)
        starts, images = yield from self._read_backup(owner, name, entry)
        queues: dict[str, Queue] = {}
        r = Recovery(qm, LogControl(NO_ADDRESS, 0, 0))
        r.rebuilding = True
        r.queues = queues
        for queue_name, (attributes, messages) in images.items():
            fresh = Queue(queue_name, None, max_depth=cf.queues[queue_name].max_depth, attributes=attributes)
            fresh.keeper = cf
            for m in messages:  # imaged in arrival order: numbered again, before the replayed puts
                r.next_seq += 1
                fresh.add(Message(m.msg_id, r.next_seq, True, len(m.data), m.data, m.state, m.uow, m.put_address))
                if m.uow:
                    r.index(m.uow, queue_name, m.msg_id)
            queues[queue_name] = fresh
        # Every member's records after its replay point that bear on the structure, by LRSN:
        # each member's log forced first, then all read, and the units still open noted, in
        # one step (units with work on the failed structure cannot commit or back out meanwhile).
        yield self._all_forced([(m, m.writer.next_address) for m in members])
        wanted = (Put, PutSegment, Get, Commit, Backout, Clr, Prepare)
        merged, read_bytes = [], []
        for member in members:
            start = starts.get(member.config.member)
            if start is None:
                raise QsgError(f"the backup of {name} names no replay point for {member.config.name}")
            reader = LogReader(member.platform.space, start, format_address=member.platform.addressing.format,
                               record_types=member.platform.record_types)
            for address, record in reader:
                if isinstance(record, wanted):
                    merged.append((record.stamp, member.config.member, address, record))
            read_bytes.append((member, reader.bytes_read))
        live = {u for m in members for u in m.uows}
        for member, nbytes in read_bytes:
            yield from member.device.read(nbytes)
        merged.sort(key=lambda item: item[:3])
        for _, _, address, record in merged:
            queue_name = getattr(record, "queue", None)
            if queue_name is not None and queue_name not in queues:
                continue  # another structure's or a private queue
            yield from r.cpu(r.replay_record_us)
            yield from r.redo(address, record)
        # Units of work no member still has ended without a record of their outcome here.
        r.table = {u: None for u in r.by_uow if u in live}
        yield from r.reconcile()
        yield from r.cpu_flush()
        for queue_name, fresh in queues.items():
            shared = cf.queues[queue_name]
            shared.take_messages(fresh)
            for event, _ in shared.getters:
                if not event.triggered:
                    event.succeed(None)
            shared.getters = []
        cf.failed = False
        qm.say("cf-recovery-complete", structure=name, records=len(merged))
        return len(merged)

    def _all_forced(self, heads):
        """An event that fires once every member's log is on disk up to the given head."""
        env = next(iter(self.members.values())).env
        return env.all_of([m.writer.force(head) for m, head in heads])

    def _read_backup(self, owner, name: str, entry: BackupEntry) -> Generator:
        space = owner.platform.space
        reader = LogReader(space, entry.address, format_address=owner.platform.addressing.format,
                           record_types=owner.platform.record_types)
        pieces: list[bytes] = []
        for _, record in reader:
            if isinstance(record, CfBackup) and record.structure == name and record.backup_id == entry.backup_id:
                if record.segment != len(pieces):
                    break
                pieces.append(record.data)
                if len(pieces) == record.segments:
                    break
        yield from owner.device.read(reader.bytes_read)
        if not pieces or len(pieces) != record.segments:
            raise LogCorruptionError(f"the log of {owner.config.name} does not hold the whole backup of CF "
                                     f"structure {name}", address=owner.platform.addressing.format(entry.address))
        payload = b"".join(pieces)
        at = 0
        (n,) = struct.unpack_from("<I", payload, at)
        at += 4
        starts = {}
        for _ in range(n):
            number, _member, start = _MEMBER.unpack_from(payload, at)
            starts[number] = start
            at += _MEMBER.size
        (q,) = struct.unpack_from("<I", payload, at)
        at += 4
        images = {}
        for _ in range(q):
            raw_name, length = _QUEUE.unpack_from(payload, at)
            at += _QUEUE.size
            queue_name = raw_name.rstrip(b" ").decode("ascii")
            images[queue_name] = decode_image(payload[at:at + length], source=f"CF backup of {name}")
            at += length
        return starts, images


#: the CF structure a run's shared queues are defined in (SHARED_QUEUES)
SHARED_STRUCTURE = "APPL1"


def attach_shared_queues(names: tuple[str, ...], structure: str = SHARED_STRUCTURE):
    """A platform's ``attach`` for a run whose queues ``names`` are shared (SHARED_QUEUES):
    the queue manager joins a queue-sharing group of its own, whose CF structure keeps them
    (DEFINE QLOCAL(name) QSGDISP(SHARED) CFSTRUCT(structure)). The workload then finds them
    defined and uses them beside its private queues. The structure lives as long as the run:
    a restart of the files the run left does not find the shared queues' messages."""
    names = tuple(names)

    def attach(qm) -> None:
        qsg = QueueSharingGroup()
        qsg.join(qm)
        for name in names:
            qsg.define_shared_queue(name, structure)

    return attach


__all__ = ["QueueSharingGroup", "CfStructure", "QsgError", "BackupEntry", "attach_shared_queues"]
