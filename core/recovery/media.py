"""Media recovery inside the core: a queue re-created from the log – its media image, or its
creation record, then every later record that touches it (:func:`recreate_queue`, for an
explicit request or restart's own mending) – and, at the end of restart, the queues whose
files would not load or are missing mended that way or left damaged (:func:`mend_damaged`),
and the queues the log has no media recovery record for imaged (:func:`image_unknown`). The
image bytes themselves are :mod:`mqlog.core.objects.media`'s.
"""

from __future__ import annotations

from typing import Generator

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.errors import LogCorruptionError
from mqlog.core.format.records import NO_ADDRESS, ObjectAction, ObjectChange
from mqlog.core.log.reader import LogReader
from mqlog.core.objects.media import MediaRecoveryError, decode_image, record_image
from mqlog.core.objects.queuefile import QueueFile, file_name_for
from mqlog.core.objects.queues import DamagedQueue, Message, Queue
from mqlog.core.objects.uow import MqiError
from mqlog.core.platform import LogControl
from mqlog.core.recovery.state import Recovery
from mqlog.core.recovery.redo import max_depth_of


def recreate_queue(qm, name: str, start: int) -> Generator:
    """Re-create queue ``name`` from the log (an explicit request, or restart's automatic
    media recovery): its media image – or its creation record – at ``start``, then every later
    record that touches it, to the end of the log. Units of work still open in ``qm`` keep
    their uncommitted messages; uncommitted state of any other unit of work is put back as
    it was (its records never reached the disk, or restart already backed it out).

    The damaged file is replaced by a new one, written before this returns. Raises
    LogCorruptionError naming the file and address when the log no longer holds what is
    needed (an extent deleted or archived away)."""
    r = Recovery(qm, LogControl(start, start, 0))
    r.only, r.queues = name, {}
    r.replay_from = start
    storage, addressing = qm.storage, qm.platform.addressing
    reader = LogReader(qm.platform.space, start, format_address=addressing.format,
                       record_types=qm.platform.record_types)
    pieces: list[bytes] = []
    pending: list = []  # records after the replay point, read before the image was complete
    ready = False
    records = 0
    for address, record in reader:
        records += 1
        yield from r.sequential_reads(reader.pages_read)
        yield from r.cpu(r.replay_record_us)
        if not ready:
            if address == start and isinstance(record, ObjectChange) and record.name == name \
                    and record.action is ObjectAction.CREATE:
                ready = True  # never imaged: it starts empty, as created
                _queue_from_image(r, name, record.attributes, [])
                continue
            elif (piece := record.image_piece()) is not None and piece.queue == name and piece.image_id == start:
                if piece.segment != len(pieces):
                    raise LogCorruptionError(f"media image of {name} is missing segment {len(pieces)}",
                                             address=addressing.format(address))
                pieces.append(piece.data)
                if len(pieces) == piece.segments:
                    ready = True
                    attributes, messages = decode_image(b"".join(pieces), source=f"media image of {name}")
                    _queue_from_image(r, name, attributes, messages)
                    for a, rec in pending:
                        yield from r.redo(a, rec)
                    pending = []
                continue
            else:
                pending.append((address, record))
                continue
        yield from r.redo(address, record)
    yield from r.sequential_reads(reader.pages_read, final=True)
    yield from r.cpu_flush()
    end = reader.end
    if not ready or end.address < qm.writer.durable:
        # Nothing is replaced: the old file (if any) stays as it was.
        what = "the media image of" if not ready else "all the log after the media image of"
        raise LogCorruptionError(f"the log does not hold {what} {name} that media recovery needs: it ends at "
                                 f"{addressing.format(end.address)}, before {addressing.format(qm.writer.durable)} "
                                 f"({end.problem or end.reason}; an extent deleted or archived away?)",
                                 source=end.source, offset=end.offset, address=addressing.format(start))
    queue = r.queues.get(name)
    file_name = file_name_for(name)
    if queue is None:
        if storage.exists(file_name):
            storage.delete(file_name)
        return None  # deleted after its image: nothing to re-create
    # Units of work the queue manager no longer has ended without a record in the log.
    r.table = {u: None for u in r.by_uow if u in qm.uows}
    yield from r.reconcile()
    yield qm.writer.force()
    # The new file is built aside and put in place in one atomic step: a crash part way
    # must not leave a valid-looking file with only some of the messages (the next
    # restart would believe it), only the damaged one or the whole new one.
    yield from qm.device.file_op("rename")
    scratch = MemoryStorage()
    queue.file = QueueFile.create(scratch, name, queue.attributes)
    cost = queue.flush(qm.writer.durable, qm.outcome)
    storage.replace(file_name, scratch.read(file_name, 0, scratch.size(file_name)))
    queue.file, _ = QueueFile.open(storage, name)
    yield from qm.charge_io(cost)
    queue.media_address = start
    qm.queues[name] = queue
    qm.damaged.pop(name, None)
    qm.counters.queues_recreated += 1
    qm.say("object-recreated", queue=name, records=records, address=start)
    return queue


def _queue_from_image(r: Recovery, name: str, attributes: str, messages) -> None:
    """The queue as its image shows it, in memory only: its new file is written once the
    whole log after the image has been read."""
    qm = r.qm
    queue = Queue(name, None, max_depth=max_depth_of(attributes, qm.config.max_depth), attributes=attributes)
    for m in messages:
        queue.add(Message(m.msg_id, m.put_address, True, len(m.data), m.data, m.state, m.uow, m.put_address))
        if m.uow:
            r.index(m.uow, name, m.msg_id)
    r.queues[name] = queue


def mend_damaged(r: Recovery) -> Generator:
    """Queues whose files would not load, or which the checkpoint names but whose files are
    gone: re-created from their media images if the log supports media recovery (the queue
    manager does this by itself at startup), else marked damaged: applications then get
    MQRC_OBJECT_DAMAGED and their uncommitted messages are lost."""
    qm = r.qm

    for name in sorted(r.listed - set(r.queues) - set(r.damaged)):
        r.damaged[name] = f"its file {file_name_for(name)} is missing"
    for name in sorted(r.damaged):
        reason = r.damaged[name]
        media = r.media.get(name, NO_ADDRESS)
        qm.say("object-damaged", queue=name, reason=reason)
        if r.platform.media is not None and media != NO_ADDRESS:
            try:
                yield from recreate_queue(qm, name, media)
            except LogCorruptionError as exc:
                reason = f"{reason}; media recovery failed: {exc}"
            else:
                r.report.queues_recreated += 1
                continue
        qm.damaged[name] = DamagedQueue(name, reason, media)
        r.report.queues_damaged.append(name)
    for name, queue in r.queues.items():
        if name in r.media:
            queue.media_address = r.media[name]


def image_unknown(qm) -> Generator:
    """A queue whose media recovery record the log does not name (an older log, or a
    definition no checkpoint caught) is imaged now, where the platform takes images:
    otherwise media recovery could not re-create it, and the oldest log needed for
    media recovery would not count it."""
    if qm.platform.media is None:
        return
    for name in sorted(n for n, q in qm.queues.items() if q.media_address == NO_ADDRESS):
        try:
            yield from record_image(qm, name, checkpoint=False)
        except (MqiError, MediaRecoveryError) as exc:
            qm.say("image-failed", queue=name, reason=str(exc))
