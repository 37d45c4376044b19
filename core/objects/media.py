"""Media images: a queue's contents written into the log, so that a damaged queue file can be
re-created from the log alone (MQ's ``rcdmqimg`` / ``rcrmqobj``; distributed linear logs).

A queue's **media recovery record** is where re-creating it starts: its creation record
until an image is taken, then the start of its latest image. Every checkpoint keeps it in
the queue table (``QueueEntry.media``), so restart knows it; the oldest over all queues is
MEDIALOG, the first log file media recovery needs.

An image is taken while applications keep working. It is *fuzzy* like a checkpoint: the
queue is snapshotted in one step of virtual time, and its replay point is the log address
before which every record's effect is in that snapshot – the head of the log at that
moment, or earlier if an MQI call that has already logged was still on its way (a commit
waiting for its force, a put waiting to add its message). Replay from there is idempotent
(a put already there is skipped, a get of a message already gone does nothing), the same
argument as restart's from a checkpoint.

The image is this module's bytes (docs/FORMAT.md §6.3), cut into 260 000-byte pieces, each
carried by a platform record whose class gives it ``queue``, ``image_id`` (the replay
point), ``segment``, ``segments``, ``data`` and ``image_start`` (segment 0).
"""

from __future__ import annotations

import struct
import zlib
from typing import Callable, Generator

import attrs

from mqlog.core.errors import LogFormatError, MqlogError
from mqlog.core.objects.queuefile import IoCost, MessageState
from mqlog.core.format.records import NO_ADDRESS

#: IBM MQ, "Calculating the size of the log": a media image logs 800 bytes plus the image, in 260 000-byte segments (+300 each)
IMAGE_SEGMENT_BYTES = 260_000
IMAGE_MAGIC = b"MQMI"
IMAGE_VERSION = 1
_HEAD = struct.Struct("<4sHHII")  # magic, version, reserved, attributes length, message count
_MSG = struct.Struct("<24sB3xQQII")  # msg id, state, uow, put address (arrival order), length, crc32


class MediaRecoveryError(MqlogError):
    """A media image cannot be taken, or a queue cannot be re-created from the log."""


@attrs.frozen
class ImagedMessage:
    msg_id: bytes
    state: MessageState
    uow: int
    put_address: int
    data: bytes


def encode_image(attributes: str, messages: list[ImagedMessage]) -> bytes:
    text = attributes.encode("utf-8")
    parts = [_HEAD.pack(IMAGE_MAGIC, IMAGE_VERSION, 0, len(text), len(messages)), text]
    for m in messages:
        parts.append(_MSG.pack(m.msg_id, int(m.state), m.uow, m.put_address, len(m.data), zlib.crc32(m.data)))
        parts.append(m.data)
    return b"".join(parts)


def decode_image(raw: bytes, *, source: str = "media image") -> tuple[str, list[ImagedMessage]]:
    """The queue's attributes and messages; LogFormatError naming the offset if damaged."""
    def bad(why: str, offset: int) -> LogFormatError:
        return LogFormatError(f"damaged media image: {why}", source=source, offset=offset)

    if len(raw) < _HEAD.size:
        raise bad("shorter than its header", 0)
    magic, version, _, n_text, count = _HEAD.unpack_from(raw)
    if magic != IMAGE_MAGIC or version != IMAGE_VERSION:
        raise bad(f"magic {magic!r} version {version}", 0)
    at = _HEAD.size
    if at + n_text > len(raw):
        raise bad("attributes run past the image", at)
    attributes = raw[at:at + n_text].decode("utf-8", "replace")
    at += n_text
    messages = []
    for _ in range(count):
        if at + _MSG.size > len(raw):
            raise bad("message header runs past the image", at)
        msg_id, state, uow, put_address, length, crc = _MSG.unpack_from(raw, at)
        at += _MSG.size
        data = raw[at:at + length]
        if len(data) != length or zlib.crc32(data) != crc:
            raise bad(f"message data of {length} bytes is short or fails its checksum", at)
        try:
            state = MessageState(state)
        except ValueError:
            raise bad(f"message state {state}", at - _MSG.size) from None
        messages.append(ImagedMessage(msg_id, state, uow, put_address, bytes(data)))
        at += length
    if at != len(raw):
        raise bad(f"{len(raw) - at} bytes after the last message", at)
    return attributes, messages


def snapshot(qm, name: str) -> tuple[int, bytes, IoCost]:
    """The queue's image and its replay point, taken in one step (no virtual time passes):
    (replay point, image bytes, the queue-file reads it cost)."""
    queue = qm.services.queue(name)
    start = qm.services.replay_point()
    reads: list[int] = []
    messages = []
    for message in sorted(queue.messages.values(), key=lambda m: (m.seq, m.msg_id)):
        if not message.persistent:
            continue  # non-persistent messages are never logged, nor recovered
        state, uow = message.state, message.uow
        owner = qm.uows.get(uow) if uow else None
        if owner is not None and owner.end_address != NO_ADDRESS:
            # Its Commit/Backout record is in the log before the replay point; memory catches
            # up when that force returns. The image shows the outcome.
            if (state is MessageState.PUT_UNCOMMITTED) != owner.end_commit:
                continue  # a put backed out, or a get committed: gone
            state, uow = MessageState.COMMITTED, 0
        if message.data is not None:
            data = message.data
        else:
            data, cost = queue.file.read_data(message.msg_id)
            reads.extend(cost.reads)
        messages.append(ImagedMessage(message.msg_id, state, uow, message.seq, data))
    return start, encode_image(queue.attributes, messages), IoCost([], reads)


def record_image(qm, name: str, segment_record: Callable[..., object] | None = None, *,
                 checkpoint: bool = True) -> Generator:
    """Write a media image of queue ``name`` into the log (``rcdmqimg``) and make it the
    queue's media recovery record; returns (replay point, image bytes).

    ``segment_record(queue, image_id, segment, segments, data)`` builds the platform's
    record for one piece (default: the platform's). The image is forced, and a checkpoint
    follows so the new media recovery record is on disk with the queue table –
    unless ``checkpoint`` is False (several images, one checkpoint after them). Refused
    with 2102 if the log cannot hold it."""
    media = qm.platform.media
    if media is None:
        raise MediaRecoveryError(f"media images need a log that supports media recovery (LogType=LINEAR); "
                                 f"the {qm.platform.name} log here does not")
    services = qm.services
    if services.is_imaging(name):
        raise MediaRecoveryError(f"an image of {name} is already being recorded")
    segment_record = segment_record or media.image_record
    start, image, cost = snapshot(qm, name)
    pieces = [image[i:i + IMAGE_SEGMENT_BYTES] for i in range(0, len(image), IMAGE_SEGMENT_BYTES)] or [b""]
    need = 800 + len(image) + 300 * len(pieces)
    # until the image is complete, nothing after start may be left out of a later one
    with services.log_space(need), services.holding(start), services.imaging(name):
        yield from services.charge(cost)
        for i, piece in enumerate(pieces):
            yield from services.log(segment_record(name, start, i, len(pieces), piece))
        yield qm.writer.force()
    queue = qm.queues.get(name)
    if queue is not None:
        queue.media_address, queue.media_us = start, qm.env.now
    qm.counters.media_images += 1
    qm.counters.media_image_bytes += len(image)
    qm.say("media-image", queue=name, address=start, bytes=len(image))
    if checkpoint:
        yield from qm.checkpoint("media image", wait=True)
    return start, image
