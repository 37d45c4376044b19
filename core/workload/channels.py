"""Message channels between queue managers: the link, the agents at each end, and what each
end's log holds of them.

A sender channel moves messages from a transmission queue on one queue manager to their
destination queues on another, in **batches**; each end is a message channel agent (MCA), an
MQI program of its queue manager (``amqrmppa`` on Linux, the channel initiator on z/OS), so
everything it does goes through that queue manager's MQI calls and log. What IBM documents of
a batch (IBM MQ 9.3 docs, "Channel attributes": BATCHSZ, BATCHINT, BATCHLIM, NPMSPEED; "In-doubt
channels"; the channel's synchronisation data on SYSTEM.CHANNEL.SYNCQ) and how the model does
it:

* **The sender** gets messages from the transmission queue under syncpoint and sends each as
  it gets it. The batch ends when it holds BATCHSZ messages or BATCHLIM kilobytes, or when the
  queue is empty and BATCHINT milliseconds have passed since the batch began (BATCHINT 0: at
  once). It then records its synchronisation data in the batch's unit of work (a persistent
  message on SYSTEM.CHANNEL.SYNCQ replacing the channel's last one: sequence number, logical
  unit of work id, in doubt), prepares the unit (the channel is **in doubt** from here), asks
  the receiver to confirm, and commits the unit when it does.
* **The receiver** puts each message to its destination queue under syncpoint as it arrives,
  keeping the message's id (the MQMD travels with it), and at the end of the batch replaces its
  own synchronisation record (the last sequence number and LUWID it committed), commits, and
  confirms. So a persistent batch costs each end its messages' records and the equivalent of a
  few more (a sync put, a sync get, a prepare and a commit on the sender; a sync put and get and
  a commit on the receiver): IBM's "the equivalent of 3 persistent messages" a batch.
* **NPMSPEED(FAST)**: a non-persistent message is put by the receiver outside syncpoint, as it
  arrives (visible at once, never logged, lost if the channel fails); NORMAL keeps it in the
  batch. Non-persistent messages are never logged either way.
* **PIPELINELENGTH(2)**: the sender starts its next batch while the last one's confirmation is
  on its way (two agents' units of work, each with its own synchronisation record, at most two
  batches in doubt).
* **Resynchronisation**: at channel start (after a restart, after the link came back) the sender
  looks at its units in doubt for the channel and at the receiver's last committed sequence
  number: a batch the receiver committed is committed, one it did not is backed out – its
  messages back on the transmission queue, sent again. Nothing is lost or delivered twice.
  ``RESOLVE CHANNEL`` takes the decision by hand (:func:`resolve_channel`).

Messages on a transmission queue carry the transmission queue header (MQXQH: 104 bytes of its
own and the message's MQMD, 324: :data:`XQH_BYTES`), logged with them on the sender's side.

The link (:class:`Link`) carries frames one way each, in order: a frame takes its bytes over
the bandwidth (one frame at a time each way) and then the latency. An outage
(``LinkDef.outages``) loses the frames in flight and ends the channel at both ends; the sender
retries after SHORTTMR seconds (:data:`SHORT_RETRY_S`) until the link is back.
"""

from __future__ import annotations

import struct
import zlib
from typing import Generator

import attrs
import simpy

from mqlog.core.errors import ParameterError

#: the queue every channel keeps its synchronisation data on (both ends, both platforms)
SYNCQ = "SYSTEM.CHANNEL.SYNCQ"
#: where a receiver puts a message it cannot put to its destination
DEAD_LETTER_QUEUE = "SYSTEM.DEAD.LETTER.QUEUE"
#: the transmission queue header: MQXQH's own fields (StrucId, Version, RemoteQName,
#: RemoteQMgrName: 104 bytes) and the message's MQMD (version 2: 364; IBM's MQXQH embeds the
#: version 1 MQMD, 324), so 428 bytes ahead of every message on a transmission queue
XQH_BYTES = 428
#: a frame's transmission segment header (TSH) on the wire, bytes (assumption: MQ's TSH is
#: 28-36 bytes; frames carry no other overhead in the model)
TSH_BYTES = 36
#: SHORTTMR's default: seconds between a sender's attempts to restart after the link failed
SHORT_RETRY_S = 60.0
#: the MCAs' CPU a message, µs, over the MQI calls they make (assumption: the agents' own work
#: of framing and the TCP send or receive; IBM gives no figure, so it is small beside a call)
MCA_MESSAGE_US = 5.0

_SYNC = struct.Struct(">4s20s2sQ8s1s")  # "SYNC", channel, role, sequence number, LUWID, state
_XQH = struct.Struct(">4sI48s48s")  # "XQH ", version, RemoteQName, RemoteQMgrName


def _name(value: str, width: int) -> bytes:
    return value.encode("ascii").ljust(width)


def xqh(queue: str, qmgr: str) -> bytes:
    """The transmission queue header for a message to ``queue`` on ``qmgr`` (:data:`XQH_BYTES`)."""
    head = _XQH.pack(b"XQH ", 1, _name(queue, 48), _name(qmgr, 48))
    return head + b"MD  " + bytes(XQH_BYTES - len(head) - 4)


def parse_xqh(data: bytes) -> tuple[str, str, bytes]:
    """(destination queue, destination queue manager, the message's own data) of a message on
    a transmission queue; ValueError if it has no header."""
    if len(data) < XQH_BYTES or data[:4] != b"XQH ":
        raise ValueError("a message on a transmission queue without its MQXQH")
    _, _, queue, qmgr = _XQH.unpack_from(data)
    return queue.decode("ascii").rstrip(), qmgr.decode("ascii").rstrip(), data[XQH_BYTES:]


@attrs.frozen
class SyncRecord:
    """One channel end's synchronisation data, as the message on SYSTEM.CHANNEL.SYNCQ holds it."""

    channel: str
    role: str  # "S0"/"S1" the sender's end (a pipeline slot each), "R0" the receiver's
    seq: int  # the sequence number of the batch's last message
    luwid: bytes  # the batch's logical unit of work id (8 bytes)
    indoubt: bool  # the sender's: written in the batch's unit, in doubt until it commits

    def to_bytes(self) -> bytes:
        return _SYNC.pack(b"SYNC", _name(self.channel, 20), self.role.encode("ascii"), self.seq, self.luwid,
                          b"I" if self.indoubt else b"C")

    @classmethod
    def from_bytes(cls, data: bytes) -> "SyncRecord":
        if len(data) != _SYNC.size or data[:4] != b"SYNC":
            raise ValueError(f"not a channel synchronisation record ({len(data)} bytes)")
        _, channel, role, seq, luwid, state = _SYNC.unpack(data)
        return cls(channel.decode("ascii").rstrip(), role.decode(), seq, luwid, state == b"I")


def luwid(channel: str, batch: int) -> bytes:
    """A batch's logical unit of work id: 8 bytes, unique to the channel's batch (the channel's
    CRC-32 in two bytes, so that two channels' LUWIDs differ at a glance, then the batch's number)."""
    return (zlib.crc32(channel.encode()) & 0xFFFF).to_bytes(2, "big") + batch.to_bytes(6, "big")


def channel_xid(channel: str, luw: bytes) -> bytes:
    """The prepared unit's identifier: which channel's which batch (what restart keeps of it)."""
    return b"CHL " + _name(channel, 20) + luw


def xid_channel(xid: bytes) -> tuple[str, bytes] | None:
    """(channel, LUWID) of a sender's batch unit, from its xid; None for another coordinator's."""
    if len(xid) != 32 or xid[:4] != b"CHL ":
        return None
    return xid[4:24].decode("ascii").rstrip(), xid[24:]


def _check(name: str, value, low, high) -> None:
    if not (low <= value <= high):
        raise ParameterError(f"channel {name}", value, f"{low} to {high}")


@attrs.frozen
class LinkDef:
    """The network between two queue managers: one-way latency, bandwidth, and outages
    (virtual (start, length) seconds during which nothing gets through)."""

    latency_us: float = 250.0
    #: megabits a second (1,000: a gigabit LAN)
    bandwidth_mbps: float = 1000.0
    outages: tuple = ()

    def __attrs_post_init__(self):
        _check("latency_us", self.latency_us, 0.0, 10e6)
        _check("bandwidth_mbps", self.bandwidth_mbps, 0.001, 1e6)
        for start, length in self.outages:
            _check("outage start", start, 0.0, 1e6)
            _check("outage length", length, 0.0, 1e6)


@attrs.frozen
class ChannelDef:
    """A sender/receiver channel pair from ``sender`` to ``receiver`` (queue manager names),
    with MQ's attributes by their names and ranges (DEFINE CHANNEL)."""

    name: str
    sender: str
    receiver: str
    #: the transmission queue; by default named after the receiving queue manager, as MQ's
    #: convention has it
    xmitq: str = ""
    batchsz: int = 50  # BATCHSZ 1-9999
    batchint_ms: int = 0  # BATCHINT 0-999999999
    batchlim_kb: int = 5000  # BATCHLIM 0-999999 (0: no limit)
    npmspeed: str = "FAST"  # NPMSPEED FAST | NORMAL
    pipelinelength: int = 1  # PIPELINELENGTH 1-2 (qm.ini's CHANNELS stanza, distributed)
    link: LinkDef = LinkDef()

    def __attrs_post_init__(self):
        if not (1 <= len(self.name) <= 20):
            raise ParameterError("channel name", self.name, "1 to 20 characters")
        _check(f"{self.name} BATCHSZ", self.batchsz, 1, 9999)
        _check(f"{self.name} BATCHINT", self.batchint_ms, 0, 999_999_999)
        _check(f"{self.name} BATCHLIM", self.batchlim_kb, 0, 999_999)
        _check(f"{self.name} PIPELINELENGTH", self.pipelinelength, 1, 2)
        if self.npmspeed not in ("FAST", "NORMAL"):
            raise ParameterError(f"channel {self.name} NPMSPEED", self.npmspeed, "FAST or NORMAL")

    @property
    def transmission_queue(self) -> str:
        return self.xmitq or self.receiver


class LinkLost(Exception):
    """The link failed under a channel: the agent ends its side of the batch."""


class Link:
    """Frames one way, in order, over a :class:`LinkDef`; a frame sent during an outage, or in
    flight when one starts, is lost."""

    def __init__(self, env: simpy.Environment, definition: LinkDef):
        self.env = env
        self.definition = definition
        self.wire = simpy.Resource(env, capacity=1)
        self.arrived = simpy.Store(env)
        self.bytes_sent = 0
        self.frames_sent = 0
        self.generation = 0  # bumped by each outage: frames of an earlier one are dropped

    def up(self, at_us: float | None = None) -> bool:
        t = (self.env.now if at_us is None else at_us) / 1e6
        return not any(start <= t < start + length for start, length in self.definition.outages)

    def next_up_us(self) -> float:
        """When the link is next up, virtual µs (now, if it is)."""
        t = self.env.now
        for start, length in sorted(self.definition.outages):
            if start * 1e6 <= t < (start + length) * 1e6:
                t = (start + length) * 1e6
        return t

    def send(self, frame: tuple, nbytes: int, deliver=None) -> Generator:
        """Put ``frame`` on the wire (its bytes at the bandwidth, one frame at a time); it
        arrives after the latency (into :attr:`arrived`, or handed to ``deliver``) unless the
        link fails first."""
        if not self.up():
            raise LinkLost("link down")
        generation = self.generation
        with self.wire.request() as turn:
            yield turn
            yield self.env.timeout((nbytes + TSH_BYTES) * 8 / self.definition.bandwidth_mbps)
        self.bytes_sent += nbytes + TSH_BYTES
        self.frames_sent += 1
        arrive = self.env.now + self.definition.latency_us
        if not self.up(arrive) or not self.up():
            return  # lost on the way: the outage ends the channel at both ends
        timer = self.env.timeout(self.definition.latency_us)
        deliver = deliver if deliver is not None else self.arrived.put
        timer.callbacks.append(lambda _ev: generation == self.generation and deliver(frame))

    def drop(self) -> None:
        """An outage: frames in flight and not yet taken are lost."""
        self.generation += 1
        self.arrived.items.clear()


# --- synchronisation data -------------------------------------------------------------------

def sync_records(qm, channel: str) -> list[tuple[bytes, SyncRecord, object]]:
    """The channel's synchronisation records on ``qm``'s SYSTEM.CHANNEL.SYNCQ, both ends' (a
    queue manager may be either end of it): (message id, record, the message's state).
    Read as a browse does: nothing is logged (a record spilled to the queue file is read back
    from it, uncharged: restart-time resynchronisation, not the channel's running cost)."""
    queue = qm.queues.get(SYNCQ)
    if queue is None:
        return []
    out = []
    for msg_id, message in list(queue.messages.items()):
        data, _cost = queue.read(message)
        record = SyncRecord.from_bytes(data)
        if record.channel == channel:
            out.append((msg_id, record, message.state))
    return out


def receiver_position(qm, channel: str) -> tuple[int, bytes]:
    """(sequence number, LUWID) of the last batch the receiving end committed; (0, zeros)
    before the first."""
    from mqlog.core.objects.queuefile import MessageState

    best = (0, bytes(8))
    for _msg_id, record, state in sync_records(qm, channel):
        if record.role == "R0" and state is not MessageState.PUT_UNCOMMITTED and record.seq >= best[0]:
            best = (record.seq, record.luwid)
    return best


def in_doubt_batches(qm, channel: str) -> list[tuple[object, SyncRecord | None]]:
    """The sending end's units of work in doubt for ``channel``, oldest first, each with the
    synchronisation record it holds (its batch's sequence number and LUWID)."""
    from mqlog.core.objects.queuefile import MessageState

    held = {}
    for msg_id, record, state in sync_records(qm, channel):
        if record.role.startswith("S") and state is MessageState.PUT_UNCOMMITTED:
            held[record.luwid] = record
    units = []
    for uow in sorted(qm.in_doubt(), key=lambda u: u.id):
        named = xid_channel(uow.xid)
        if named is not None and named[0] == channel:
            units.append((uow, held.get(named[1])))
    return units


def resolution(record: SyncRecord | None, position: tuple[int, bytes]) -> bool:
    """Commit (True) or back out a sender's batch in doubt, given the receiver's last committed
    position: IBM's rule – the receiver committed it when its last LUWID is the batch's (or a
    later batch's: its sequence number is past the batch's)."""
    if record is None:
        return False  # (no record: the batch's unit never reached its sync put: nothing was sent for it)
    seq, luw = position
    return luw == record.luwid or seq >= record.seq


def decide_channel(sender_qm, receiver_qm, channel: str, action: str | None = None) -> list[tuple[object, bool]]:
    """What to do with each batch of ``channel`` in doubt on the sending end: [(unit, commit)] –
    by the receiver's synchronisation data (``action`` None: what the channel does as it
    starts), or as RESOLVE CHANNEL ACTION(COMMIT|BACKOUT) says."""
    if action is not None and action not in ("COMMIT", "BACKOUT"):
        raise ParameterError("RESOLVE CHANNEL ACTION", action, "COMMIT or BACKOUT")
    position = receiver_position(receiver_qm, channel) if action is None else None
    return [(uow, resolution(record, position) if action is None else action == "COMMIT")
            for uow, record in in_doubt_batches(sender_qm, channel)]


def resolve_channel(sender_qm, receiver_qm, channel: str, action: str | None = None, journal=None) -> Generator:
    """Resolve every batch of ``channel`` in doubt on the sending end (a generator in the
    sender's virtual time), as :func:`decide_channel` decides; ``journal``: the sending end's
    application journal, told each outcome by what its queues then hold. Returns [(uow id, committed)]."""
    decided = []
    for uow, commit in decide_channel(sender_qm, receiver_qm, channel, action):
        yield from sender_qm.resolve(uow.id, commit)
        decided.append((uow.id, commit))
    if journal is not None:
        journal.learn(journal.coordination(sender_qm, list(sender_qm.queues)))
    return decided
