"""The distributed media-image record (type 0x40) and the ``rcdmqimg`` / ``rcrmqobj`` operations
on a running queue manager (IBM MQ, "Media recovery"). The image bytes and the re-creation are the core's
(:mod:`mqlog.core.objects.media`, :func:`mqlog.core.recovery.media.recreate_queue`); this module gives them
their record and their MQ names."""

from __future__ import annotations

import enum
import struct
from typing import ClassVar, Generator

import attrs

from mqlog.core.objects.media import IMAGE_SEGMENT_BYTES, MediaRecoveryError, record_image
from mqlog.core.format.records import (HEADER_SIZE, NO_ADDRESS, QUEUE_NAME_LENGTH, ImagePiece, LogRecord, name_field,
                                       pad_name, unpad_name)
from mqlog.core.objects.queues import DamagedQueue
from mqlog.core.recovery.media import recreate_queue


#: the record type codes the distributed platform claims of the core's platform codes
#: (``PLATFORM_TYPES``; docs/FORMAT.md §3.2)
RECORD_CODES = range(0x40, 0x60)


class DistributedRecordType(enum.IntEnum):
    """The distributed platform's record type codes (in :data:`RECORD_CODES`)."""

    MEDIA_IMAGE = 0x40


class DistributedResourceManager(enum.IntEnum):
    """The distributed platform's resource managers (above the core's)."""

    MEDIA = 5  # media images


@attrs.frozen
class MediaImage(LogRecord):
    """One piece of a queue's media image (IBM MQ, "Calculating the size of the log": 800 bytes plus the image, in
    260 000-byte segments of 300 bytes' overhead each).

    ``image_id`` is the image's replay point: the queue's media recovery record while this
    is its latest image."""

    TYPE: ClassVar = DistributedRecordType.MEDIA_IMAGE
    RM: ClassVar = DistributedResourceManager.MEDIA
    _S: ClassVar = struct.Struct(f"<{QUEUE_NAME_LENGTH}sQIII")  # queue, image id, segment, segments, length
    FIRST_SIZE: ClassVar = 800
    NEXT_SIZE: ClassVar = 300

    queue: str = attrs.field(validator=name_field(QUEUE_NAME_LENGTH))
    image_id: int = NO_ADDRESS
    segment: int = 0
    segments: int = 1
    data: bytes = b""
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)

    def __attrs_post_init__(self):
        if not 0 <= self.segment < self.segments or len(self.data) > IMAGE_SEGMENT_BYTES:
            raise ValueError(f"media image segment {self.segment} of {self.segments} with {len(self.data)} bytes")

    @property
    def image_start(self) -> bool:
        return self.segment == 0

    def image_piece(self) -> ImagePiece:
        return ImagePiece(self.queue, self.image_id, self.segment, self.segments, self.data)

    def _fixed(self) -> int:
        return (self.FIRST_SIZE if self.segment == 0 else self.NEXT_SIZE) - HEADER_SIZE

    def _body(self) -> bytes:
        head = self._S.pack(pad_name(self.queue, QUEUE_NAME_LENGTH), self.image_id, self.segment, self.segments,
                            len(self.data))
        return head.ljust(self._fixed(), b"\0") + self.data

    @classmethod
    def _from_body(cls, flags, uow, prev, stamp, body):
        if len(body) < cls._S.size:
            raise ValueError("media image body shorter than its fixed part")
        queue, image_id, segment, segments, n = cls._S.unpack_from(body)
        fixed = (cls.FIRST_SIZE if segment == 0 else cls.NEXT_SIZE) - HEADER_SIZE
        if fixed + n != len(body):
            raise ValueError(f"media image data length {n} does not match the record length")
        return cls(unpad_name(queue), image_id, segment, segments, bytes(body[fixed:]), uow=uow, prev=prev,
                   stamp=stamp)


#: the distributed platform's record classes (``Platform.record_types``)
RECORD_TYPES = (MediaImage,)


def rcdmqimg(qm, queue: str) -> Generator:
    """``rcdmqimg -t queue QUEUE``: write the queue's image to the log, moving its media
    recovery record (and perhaps MEDIALOG) forward. Returns (replay point, image bytes)."""
    return (yield from record_image(qm, queue, MediaImage))


def rcrmqobj(qm, queue: str) -> Generator:
    """``rcrmqobj -t queue QUEUE``: re-create the queue from its latest image and the log
    after it, replacing its file (damaged or not).

    A queue in use – an MQI call on it in progress, a getter waiting, a message held by a
    unit of work – is refused: re-create it when idle. While it is being re-created,
    applications get MQRC_OBJECT_DAMAGED; if re-creation fails, the queue is left exactly
    as it was."""
    if qm.platform.media is None:
        raise MediaRecoveryError("rcrmqobj needs a log that supports media recovery (LogType=LINEAR)")
    live = qm.queues.get(queue)
    if live is not None:
        busy = live.getters or live.calls or any(m.busy or m.uow for m in live.messages.values())
        if busy or qm.services.is_imaging(queue):
            raise MediaRecoveryError(f"{queue} is in use (an MQI call, a waiting getter, a unit of work or an "
                                     f"image); re-create it when idle")
        start = live.media_address
        if start == NO_ADDRESS:
            raise MediaRecoveryError(f"the log names no media recovery record for {queue}")
        del qm.queues[queue]
        qm.damaged[queue] = DamagedQueue(queue, "being re-created (rcrmqobj)", start)
        yield qm.writer.force()  # everything logged so far is what the new queue must show
    elif queue in qm.damaged:
        start = qm.damaged[queue].media
        if start == NO_ADDRESS:
            raise MediaRecoveryError(f"the log names no media recovery record for {queue}")
    else:
        raise MediaRecoveryError(f"no queue {queue} on queue manager {qm.config.name}")
    try:
        return (yield from recreate_queue(qm, queue, start))
    except BaseException:
        if live is not None:  # as it was: the old file has not been touched
            qm.damaged.pop(queue, None)
            qm.queues[queue] = live
        raise


__all__ = ["MediaImage", "rcdmqimg", "rcrmqobj", "MediaRecoveryError"]
