"""What the queue-file tests share: message ids and payloads made from a number, a storage's
durable image, and everything a queue file's version holds."""

from __future__ import annotations

import random

from mqlog.core.objects.queuefile import MessageState, QueueFile, file_name_for
from mqlog.core.disk.storage import MemoryStorage

C, PU, GU = MessageState.COMMITTED, MessageState.PUT_UNCOMMITTED, MessageState.GOT_UNCOMMITTED


def mid(n: int) -> bytes:
    return n.to_bytes(24, "big")


def payload(n: int, length: int) -> bytes:
    return random.Random(n).randbytes(length)


def snapshot(storage) -> MemoryStorage:
    """A copy of every file in ``storage`` (its durable image, for a wrapper's inner)."""
    copy = MemoryStorage()
    for name in storage.list():
        copy.replace(name, storage.read(name, 0, storage.size(name)))
    return copy


def image(storage, queue: str = "Q1") -> bytes:
    name = file_name_for(queue)
    return storage.read(name, 0, storage.size(name))


def contents(qf: QueueFile) -> tuple:
    """Everything a version holds: attributes, entries in order (without placement), data."""
    entries = [(m.msg_id, m.state, m.uow, m.length, m.put_address, m.data_crc) for m in qf.messages.values()]
    data = {k: qf.read_data(k)[0] for k in qf.messages}
    return qf.attributes, entries, data
