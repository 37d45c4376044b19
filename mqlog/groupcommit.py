"""A group-commit study on the real log writer: N committers, each putting and committing.

Each simulated application repeats: append a persistent put record of ``message_size``
bytes, append a commit record, force. The writer, the device profile and the storage are
the real ones; only the applications are this small. It shows group commit:
as more units of work commit at once, each physical write carries more of them.

It is a focused study of the writer alone; ``mqlog run`` drives the whole queue manager.
"""

from __future__ import annotations

import random
import attrs
import simpy

from mqlog.core.disk.devices import Device, DeviceProfile, get_profile
from mqlog.core.errors import ParameterError
from mqlog.core.log.reader import LogReader
from mqlog.core.format.records import PUT_SEGMENT_BYTES, Begin, Commit, Put, PutSegment, split_message
from mqlog.core.log.space import ReferenceLogSpace
from mqlog.core.disk.storage import MemoryStorage, Storage
from mqlog.core.log.writer import LogWriter


@attrs.frozen
class GroupCommitResult:
    """What one run of the study measured."""

    committers: int
    commits: int
    message_size_bytes: int
    device: str
    virtual_s: float
    forces: int
    logical_bytes: int
    physical_bytes: int
    physical_writes: int
    useful_bytes_per_write: float
    commits_per_write: float
    commit_latency_us: float  # mean time from force to durable
    commits_per_second: float
    records_read_back: int
    end_of_log: str

    def as_dict(self) -> dict:
        return attrs.asdict(self)


def run_group_commit(committers: int, commits_each: int = 50, message_size: int = 2048, *,
                     device: str | DeviceProfile = "ssd", storage: Storage | None = None,
                     think_us: float = 100.0, seed: int = 0) -> GroupCommitResult:
    """Run the study once and read the log back to check every committed record is there.

    ``think_us`` is each application's mean time between commits (exponentially
    distributed, from ``seed``), so that commits arrive unsynchronised as in real work.
    """
    if not 1 <= committers <= 10_000:
        raise ParameterError("committers", committers, "1 to 10000")
    if not 1 <= commits_each <= 1_000_000:
        raise ParameterError("commits", commits_each, "1 to 1000000")
    if not 0 <= message_size <= 100 * 1024 * 1024:  # MQ's largest message: 100 MB
        raise ParameterError("message_size", message_size, "0 to 104857600 bytes")
    if not 0 <= think_us <= 60e6:
        raise ParameterError("think_us", think_us, "0 to 60000000 µs")
    profile = get_profile(device) if isinstance(device, str) else device
    storage = storage if storage is not None else MemoryStorage()
    env = simpy.Environment()
    space = ReferenceLogSpace(storage)
    if storage.exists(space.file):
        storage.delete(space.file)  # a fresh log each run, never the tail of an older one
    writer = LogWriter(env, space, Device(env, profile))
    latencies: list[float] = []

    def application(app: int):
        # Each application draws from its own generator, so payloads are made one at a
        # time (no run holds all its messages) and the same seed gives the same bytes.
        rng = random.Random(seed * 1_000_003 + app)
        for n in range(commits_each):
            think = rng.expovariate(1 / think_us) if think_us else 0.0
            data = rng.randbytes(message_size)
            if think:
                yield env.timeout(think)
            uow = (app << 32) | (n + 1)
            msg_id = n.to_bytes(24, "little")
            queue = f"APP.QUEUE.{app % 10}"
            prev = yield from writer.put(Begin(int(env.now), f"APP{app:04d}", uow=uow))
            segments = split_message(data)
            prev = yield from writer.put(Put(queue, msg_id, segments[0], len(data), 0, len(segments),
                                             uow=uow, prev=prev))
            for i, segment in enumerate(segments[1:], 1):
                prev = yield from writer.put(PutSegment(queue, msg_id, i, i * PUT_SEGMENT_BYTES, segment,
                                                        uow=uow, prev=prev))
            yield from writer.put(Commit(int(env.now), 1, uow=uow, prev=prev))
            asked = env.now
            yield writer.force()
            latencies.append(env.now - asked)

    for app in range(committers):
        env.process(application(app))
    env.run()
    reader = LogReader(space, space.start)
    records = sum(1 for _ in reader)
    end = reader.end
    stats = writer.stats
    total = committers * commits_each
    seconds = env.now / 1e6
    return GroupCommitResult(
        committers=committers, commits=total, message_size_bytes=message_size, device=profile.name,
        virtual_s=seconds, forces=stats.forces, logical_bytes=stats.logical_bytes,
        physical_bytes=stats.physical_bytes, physical_writes=stats.physical_writes,
        useful_bytes_per_write=stats.logical_bytes / stats.physical_writes,
        commits_per_write=total / stats.physical_writes,
        commit_latency_us=sum(latencies) / len(latencies),
        commits_per_second=total / seconds if seconds else 0.0,
        records_read_back=records, end_of_log=end.reason)
