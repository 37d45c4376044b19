"""The message channel agents of a channel (:mod:`mqlog.core.workload.channels` says what
they do and why): the sender and the receiver as MQI programs of their queue managers, the
link between them, resynchronisation at each start, and DISPLAY CHSTATUS's figures."""

from __future__ import annotations

from typing import Generator

import attrs
import simpy

from mqlog.core.workload.channels import (DEAD_LETTER_QUEUE, MCA_MESSAGE_US, SHORT_RETRY_S, SYNCQ, ChannelDef, Link,
                                          LinkLost, SyncRecord, channel_xid, decide_channel, in_doubt_batches, luwid,
                                          parse_xqh, sync_records)


#: how long a sender's wait for its first message lasts before it looks for a stop, µs
#: (assumption: MQ's agent wakes at its heartbeat interval; a shorter wake only ends a run sooner)
_POLL_US = 100_000.0


# --- the agents -----------------------------------------------------------------------------

@attrs.define
class ChannelStatus:
    """What DISPLAY CHSTATUS shows of a channel's end, and the channel's counts."""

    status: str = "INACTIVE"  # RUNNING, RETRYING, STOPPED, INACTIVE
    indoubt: bool = False
    lstseqno: int = 0  # the last batch committed: its last message's sequence number
    lstluwid: bytes = bytes(8)
    curseqno: int = 0  # the batch in progress (or in doubt)
    curluwid: bytes = bytes(8)
    curmsgs: int = 0
    batches: int = 0
    messages_sent: int = 0  # persistent and NORMAL-speed messages sent in batches
    fast_messages_sent: int = 0  # non-persistent messages sent outside the batch (NPMSPEED FAST)
    batch_messages_max: int = 0
    backed_out_batches: int = 0  # batches the sender backed out (the link failed before they were in doubt)
    resolved_commit: int = 0
    resolved_backout: int = 0
    outages: int = 0
    in_doubt_us: float = 0.0  # virtual time the sender spent with a batch in doubt
    dead_letters: int = 0
    redelivered: int = 0  # a message the receiver had already committed, delivered again: must stay 0

    def as_dict(self) -> dict:
        out = attrs.asdict(self)
        out["lstluwid"], out["curluwid"] = self.lstluwid.hex(), self.curluwid.hex()
        return out


class Channel:
    """A sender/receiver pair between two running queue managers in one SimPy environment:
    ``sender``/``receiver`` are their workload contexts (:class:`~mqlog.core.workload.workloads.Context`),
    through whose journals and MQI calls the agents work."""

    def __init__(self, definition: ChannelDef, sender, receiver):
        self.definition = definition
        self.sender, self.receiver = sender, receiver
        env = self.env = sender.env
        self.forward = Link(env, definition.link)  # messages and end-of-batch
        self.back = Link(env, definition.link)  # confirmations
        self.stat = ChannelStatus()
        self.stopping = False
        self._apps = [sender.app(f"{definition.name}.S{k}") for k in range(definition.pipelinelength)]
        self._receiver_app = receiver.app(f"{definition.name}.R")
        self._sync = {}  # role -> the msg id of the end's committed synchronisation record
        self._seq = 0
        self._batch = 0
        self._confirm: dict[int, simpy.Event] = {}  # batch -> the receiver's confirmation of it
        self._open: dict[int, simpy.Event] = {}  # batch -> done when its unit is committed (or the link failed)
        self._in_doubt_since = 0.0
        self._keys: dict[int, str] = {}  # a batch's unit of work id -> the journal's key for it, while in doubt

    @property
    def name(self) -> str:
        return self.definition.name

    def start(self) -> simpy.Process:
        return self.env.process(self._run())

    def stop(self) -> None:
        """STOP CHANNEL (MODE QUIESCE): the sender ends once its batch is confirmed."""
        self.stopping = True

    def drained(self) -> bool:
        """Nothing of the channel's in flight: its transmission queue empty, no batch open."""
        queue = self.sender.qm.queues.get(self.definition.transmission_queue)
        return (queue is None or queue.depth == 0) and not self._open and self.stat.curmsgs == 0

    # -- the channel's life: start, run until the link fails or it is stopped, retry --

    def _run(self) -> Generator:
        d = self.definition
        self.sender.qm.say("channel-starting", channel=d.name)
        while True:
            link_up = self.forward.next_up_us()
            if link_up > self.env.now:
                self.stat.status = "RETRYING"
                self.sender.qm.say("channel-retrying", channel=d.name, partner=d.receiver)
                # SHORTTMR: the sender tries again each interval until the link is back
                waits = -(-(link_up - self.env.now) // (SHORT_RETRY_S * 1e6))
                yield self.env.timeout(waits * SHORT_RETRY_S * 1e6)
                continue
            yield from self._resynchronise()
            self.stat.status = "RUNNING"
            self.sender.qm.say("channel-started", channel=d.name)
            self._session_end = self.env.event()
            outage = self._next_outage_us()
            if outage is not None:
                self.env.timeout(outage - self.env.now).callbacks.append(lambda _e, end=self._session_end: self._fail(end))
            receiving = self.env.process(self._receive(self._session_end))
            sent = yield from self._send(self._session_end)
            if sent != "stopped":
                self._fail(self._session_end)  # (the receiver ends its side too: it backs out its batch)
            yield receiving
            if sent == "stopped":
                self.stat.status = "STOPPED"
                self.sender.qm.say("channel-ended", channel=d.name)
                return
            self.stat.outages += 1
            self.sender.qm.say("channel-lost", channel=d.name, partner=d.receiver)

    def _next_outage_us(self) -> float | None:
        now = self.env.now
        starts = [start * 1e6 for start, _ in self.definition.link.outages if start * 1e6 > now]
        return min(starts) if starts else None

    def _fail(self, end: simpy.Event) -> None:
        if not end.triggered:
            self.forward.drop()
            self.back.drop()
            end.succeed("lost")

    def _resynchronise(self) -> Generator:
        """At start: settle the batches in doubt by the receiver's last committed position, then
        learn each end's synchronisation records (what the next batch replaces)."""
        d = self.definition
        sender_qm, receiver_qm = self.sender.qm, self.receiver.qm
        if in_doubt_batches(sender_qm, d.name):
            # a round trip over the link: the receiver's last sequence number and LUWID
            yield self.env.timeout(2 * d.link.latency_us)
            decided = []
            journal = self.sender.journal
            for uow, commit in decide_channel(sender_qm, receiver_qm, d.name):
                key = self._keys.pop(uow.id, None)  # a batch of this run's (not one a restart found in doubt)
                if key is not None:
                    (journal.commit_asked if commit else journal.backout_asked)(key)
                yield from sender_qm.resolve(uow.id, commit)
                if key is not None:
                    journal.ended(key, committed=commit)
                decided.append((uow.id, commit))
            for _uow, commit in decided:
                if commit:
                    self.stat.resolved_commit += 1
                else:
                    self.stat.resolved_backout += 1
            journal.learn(journal.coordination(sender_qm, (d.transmission_queue, SYNCQ)))
            sender_qm.say("channel-resolved", channel=d.name, committed=sum(c for _, c in decided),
                          backed_out=sum(not c for _, c in decided))
        if self.stat.indoubt:
            self.stat.in_doubt_us += self.env.now - self._in_doubt_since
        self.stat.indoubt = False
        self.stat.curmsgs = 0
        self._confirm.clear()
        self._open.clear()
        from mqlog.core.objects.queuefile import MessageState

        self._sync = {}
        for qm, prefix in ((sender_qm, "S"), (receiver_qm, "R")):
            for msg_id, record, state in sync_records(qm, d.name):
                # batch numbers go on from the last one either end holds: a LUWID is never reused
                self._batch = max(self._batch, int.from_bytes(record.luwid[2:], "big") + 1)
                if record.role.startswith(prefix) and state is MessageState.COMMITTED:
                    self._sync[record.role] = msg_id
                    if prefix == "S":
                        self._seq = max(self._seq, record.seq)
                    else:
                        self.stat.lstseqno, self.stat.lstluwid = record.seq, record.luwid
        self._seq = max(self._seq, self.stat.lstseqno)

    # -- the sending agent --

    def _send(self, end: simpy.Event) -> Generator:
        d = self.definition
        xmitq = d.transmission_queue
        env = self.env
        limit = d.batchlim_kb * 1024 if d.batchlim_kb else None
        while True:
            if end.triggered:
                return "lost"
            slot = self._batch % d.pipelinelength
            earlier = self._open.get(self._batch - d.pipelinelength)
            if earlier is not None:
                yield earlier | end  # the slot's last batch must be committed before it is used again
                if end.triggered:
                    return "lost"
            app = self._apps[slot]
            # the first message: wait for one (waking to see a stop or the link's end)
            got = None
            while got is None:
                if end.triggered:
                    return "lost"
                if self.stopping and not self._open:
                    self.forward.arrived.put(("stop",))
                    return "stopped"
                got = yield from app.get(xmitq, syncpoint=True, wait_us=_POLL_US)
            started = env.now
            batch, count, size = self._batch, 0, 0
            self._batch += 1
            self.stat.curluwid = luwid(d.name, batch)
            while True:
                queue, qmgr, data = parse_xqh(got.data)
                fast = not got.persistent and d.npmspeed == "FAST"
                try:
                    yield from self.sender.qm.cpu.charge(MCA_MESSAGE_US, "app")
                    yield from self.forward.send(("msg", got.msg_id, queue, data, got.persistent, fast),
                                                 len(got.data))
                except LinkLost:
                    yield from self._back_out(app)
                    return "lost"
                if fast:
                    self.stat.fast_messages_sent += 1
                else:
                    count += 1
                    self.stat.curmsgs = count
                size += len(got.data)
                if count >= d.batchsz or (limit is not None and size >= limit) or end.triggered:
                    break
                got = yield from app.get(xmitq, syncpoint=True, wait_us=0.0)
                if got is None and app.conn.uow is not None:
                    remaining = started + d.batchint_ms * 1000.0 - env.now
                    if remaining <= 0:
                        break
                    got = yield from app.get(xmitq, syncpoint=True, wait_us=remaining)
                if got is None and app.conn.uow is None:
                    # the queue manager backed the batch's unit out (the longest-running unit of
                    # a full log, AMQ7469): its messages are back on the queue; the channel ends
                    # abnormally, the receiver backs its side out, and it all goes again later
                    self.stat.backed_out_batches += 1
                    self.stat.curmsgs = 0
                    return "lost"
                if got is None:
                    break
            if end.triggered:
                yield from self._back_out(app)
                return "lost"
            # the end of the batch: the sender's synchronisation record in the batch's unit, prepared
            self._seq += count
            seq, luw = self._seq, luwid(d.name, batch)
            role = f"S{slot}"
            old = self._sync.get(role)
            if old is not None and (yield from app.get(SYNCQ, syncpoint=True, msg_id=old)) is None:
                yield from self._back_out(app)  # refused (a full log's 2102, say): the channel ends
                return "lost"
            new = yield from app.put(SYNCQ, SyncRecord(d.name, role, seq, luw, True).to_bytes(), syncpoint=True)
            if new is None:
                yield from self._back_out(app)
                return "lost"
            key = app.key
            uow_id = yield from app.prepare(channel_xid(d.name, luw))
            if uow_id is None:
                return "lost"  # refused (the queue manager is ending): the unit stays in flight
            self.stat.indoubt, self._in_doubt_since = True, env.now
            self._keys[uow_id] = key
            self.stat.curseqno = seq
            confirmed = self._confirm[batch] = env.event()
            self._open[batch] = env.event()
            try:
                yield from self.forward.send(("eob", batch, seq, luw), 0)
            except LinkLost:
                return "lost"  # in doubt until the channel resynchronises
            env.process(self._commit_when_confirmed(batch, seq, key, uow_id, role, new, confirmed, end))
            self.stat.batches += 1
            self.stat.messages_sent += count
            self.stat.batch_messages_max = max(self.stat.batch_messages_max, count)
            self.stat.curmsgs = 0

    def _back_out(self, app) -> Generator:
        """The link failed before the batch was in doubt: its messages go back on the queue."""
        self.stat.curmsgs = 0
        if app.conn.uow is not None:
            yield from app.backout()
            self.stat.backed_out_batches += 1

    def _commit_when_confirmed(self, batch, seq, key, uow_id, role, new, confirmed, end) -> Generator:
        """Wait for the receiver's confirmation of ``batch``, then commit its unit (in doubt until then)."""
        while not confirmed.triggered:
            yield confirmed | end
            if end.triggered and not confirmed.triggered:
                return  # the link failed: the batch stays in doubt until the channel starts again
        journal = self.sender.journal
        journal.commit_asked(key)
        yield from self.sender.qm.resolve(uow_id, True)
        journal.ended(key, committed=True)
        del self._keys[uow_id]
        self._sync[role] = new
        self.stat.lstseqno = max(self.stat.lstseqno, seq)
        del self._confirm[batch]
        self._open.pop(batch).succeed()
        if not self._open:
            self.stat.in_doubt_us += self.env.now - self._in_doubt_since
            self.stat.indoubt = False

    # -- the receiving agent --

    def _receive(self, end: simpy.Event) -> Generator:
        d = self.definition
        app = self._receiver_app
        qm = self.receiver.qm
        journal = self.receiver.journal
        while True:
            taking = self.forward.arrived.get()
            yield taking | end
            if not taking.triggered:
                taking.cancel()
                if app.conn.uow is not None:
                    yield from app.backout()  # the batch never ended: its puts go
                return
            frame = taking.value
            if frame[0] == "stop":
                return
            if frame[0] == "msg":
                _, msg_id, queue, data, persistent, fast = frame
                yield from qm.cpu.charge(MCA_MESSAGE_US, "app")
                earlier = journal.messages.get(msg_id)
                if earlier is not None and earlier.put == "committed" and not fast:
                    self.stat.redelivered += 1
                target = queue if queue in qm.queues else DEAD_LETTER_QUEUE
                if target != queue:
                    self.stat.dead_letters += 1
                put = yield from app.put(target, data, persistent=persistent, syncpoint=not fast, msg_id=msg_id)
                if put is None and not fast and app.conn.uow is None:
                    # the batch's unit was backed out under it (a full log): the batch fails whole
                    yield from self._receiver_failed(app, end)
                    return
                if put is None and target != DEAD_LETTER_QUEUE:
                    self.stat.dead_letters += 1  # (MAXDEPTH's 2053, say: to the dead-letter queue)
                    put = yield from app.put(DEAD_LETTER_QUEUE, data, persistent=persistent, syncpoint=not fast,
                                             msg_id=msg_id)
                if put is None:
                    yield from self._receiver_failed(app, end)
                    return
                continue
            _, batch, seq, luw = frame
            old = self._sync.get("R0")
            if old is not None and (yield from app.get(SYNCQ, syncpoint=True, msg_id=old)) is None:
                yield from self._receiver_failed(app, end)
                return
            new = yield from app.put(SYNCQ, SyncRecord(d.name, "R0", seq, luw, False).to_bytes(), syncpoint=True)
            if new is None or not (yield from app.commit()):
                yield from self._receiver_failed(app, end)
                return
            self._sync["R0"] = new
            self.stat.lstluwid = luw
            confirmed = self._confirm.get(batch)
            try:
                yield from self.back.send(("ok", batch), 0,
                                          deliver=lambda _f: confirmed is not None and not confirmed.triggered
                                          and confirmed.succeed())
            except LinkLost:
                return

    def _receiver_failed(self, app, end: simpy.Event) -> Generator:
        """A call the receiver needed was refused: its batch backs out and the channel ends
        (both ends), to start again after SHORTTMR – the batch is sent again then."""
        if app.conn.uow is not None:
            yield from app.backout()
        self._fail(end)

