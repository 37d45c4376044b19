"""MQPUT and MQGET: what a put or a get logs, forces and changes on its queue, and what its
persistent part costs the host. :class:`MqiCallsMixin` is part of
:class:`mqlog.core.qm.manager.QueueManager` (split from it at this seam to keep the module
small); the application reaches these through its :class:`~mqlog.core.qm.connection.Connection`.

A persistent MQPUT/MQGET outside syncpoint logs its record and forces at once; inside syncpoint
nothing is forced until MQCMIT/MQBACK. A persistent MQPUT outside syncpoint to a getter already
waiting outside syncpoint passes the message straight across with no log write where the
platform allows it. A put or get pays its persistent path, its record and the copy of its data
just before the record is appended, then its data's compression where the platform's codec
compresses it; a call that had to wait for a log force pays its wakeup once its effect is
visible (:meth:`MqiCallsMixin._woken`). The first MQPUT or MQGET on a queue that restart left
unloaded pays its load first (:meth:`MqiCallsMixin._load_unloaded`). A queue whose persistent
messages outgrow its buffer spills them to its file, log first (:meth:`MqiCallsMixin._spill`).
"""

from __future__ import annotations

from typing import Callable, Generator, Iterable

import attrs
import simpy

from mqlog.core.format.records import NO_ADDRESS, PUT_SEGMENT_BYTES, Codec, Get, Put, PutSegment, split_message
from mqlog.core.objects.queuefile import IoCost, MessageState
from mqlog.core.objects.queues import Message, Queue
from mqlog.core.objects.uow import MqiError, Reason, UnitOfWork
from mqlog.core.qm.connection import Connection, GotMessage
from mqlog.core.qm.locks import QueueLock

#: IBM MQ's log sizing for a put, the room claimed before it is logged: 750 bytes and its
#: data (800 with the chain's slack) ...
PUT_LOG_BYTES = 800
#: ... and 300 more for each segment of a large message
SEGMENT_LOG_BYTES = 300

#: (module constants: quicker than the enum's attributes)
_COMMITTED, _PUT_UNCOMMITTED = MessageState.COMMITTED, MessageState.PUT_UNCOMMITTED


class MqiCallsMixin:
    """MQPUT and MQGET of a :class:`~mqlog.core.qm.manager.QueueManager`."""

    # -- MQPUT -------------------------------------------------------------------------------

    def _new_msg_id(self) -> bytes:
        self._msg_counter += 1
        return (b"AMQ " + self.config.name[:8].encode("ascii").ljust(8)
                + self._incarnation.to_bytes(4, "big") + self._msg_counter.to_bytes(8, "big"))

    def _put(self, conn: Connection, queue_name: str, data: bytes, persistent: bool, syncpoint: bool,
             msg_id: bytes | None = None):
        queue = self._queue(queue_name)
        if queue.unloaded is not None:
            yield from self._load_unloaded(queue)
        uow = self._uow_for(conn) if syncpoint else None
        if queue.depth >= queue.max_depth:
            raise MqiError(Reason.MQRC_Q_FULL, f"{queue_name} is at MAXDEPTH {queue.max_depth}")
        if msg_id is None:  # (a channel's receiving agent puts a message with the id it was sent with)
            msg_id = self._new_msg_id()
        self.counters.messages_put += 1
        path_us = self.cpu.profile.put_us  # the call's path: with the queue's lock held, below
        if not syncpoint and queue.getters and (not persistent or self.platform.persistent_put_to_waiting_getter):
            # A put outside syncpoint that may go straight to a waiting MQGET: its path first,
            # as it looks for one (a handed-over message never reaches the queue).
            yield from self.cpu.charge(0.0, "mqi", path_us=path_us)
            path_us = 0.0
            for i, (event, getter_syncpoint) in enumerate(queue.getters):
                if not getter_syncpoint and not event.triggered:  # (not one whose wait ran out)
                    del queue.getters[i]
                    if persistent:
                        self.counters.direct_handoffs += 1
                    event.succeed(GotMessage(msg_id, data, persistent))
                    return msg_id
        # The log held (as _held does) and the message logged and put here rather than in
        # generators of their own: each event of the call passes through every layer. (The
        # message goes onto the queue from its fields, with no Message built: Queue.put.)
        seq = queue.next_seq()
        mark = self._hold(queue)
        try:
            if persistent:
                address = yield from self._log_put(queue, msg_id, data, uow, path_us)
            else:
                yield from self._locked_charge(queue, 0.0, msg_id, path_us)
                address = NO_ADDRESS
            if syncpoint:
                queue.put(msg_id, seq, persistent, len(data), data, _PUT_UNCOMMITTED, uow.id, address)
                uow.ops.add("put", queue.name, msg_id, persistent, address, len(data))
                if uow.first != NO_ADDRESS:  # uow.logged
                    self.units.logged_ops += 1
            else:
                # (the queue's lock goes before the force: see mqlog.core.qm.locks)
                self._unlock_queue(queue, msg_id)
                waited = (yield from self._force()) if persistent else False
                queue.put(msg_id, seq, persistent, len(data), data, _COMMITTED, 0, address)
                self._wake_getters(queue)
                yield from self._woken(waited)
        except MqiError:
            # Refused while it was being logged (a full log's 2102, a backout's 2003): the
            # application was told it failed, so it is no put. Counted until now because a
            # checkpoint taken while the put waited for the log counts it as begun.
            self.counters.messages_put -= 1
            raise
        finally:
            self._unhold(mark, queue)
            self._unlock_queue(queue, msg_id)  # (the put's msg id holds its queue's lock)
        if persistent and queue.unflushed_bytes > self.queue_buffer_bytes:
            yield from self._spill(queue)
        return msg_id

    def _locked_charge(self, queue: Queue, us: float, holder, path_us: float = 0.0, keep: bool = False) -> Generator:
        """Part of an MQPUT or MQGET with ``queue``'s lock held (:mod:`mqlog.core.qm.locks`):
        ``path_us`` of the call's path and ``us`` of its persistent extras, one hold of a core;
        the lock is taken once the call has the core – a thread takes a lock while it runs –
        unless ``holder`` holds it already. A caller that finds it held gives its core up and
        sleeps until a release wakes it; woken, it is run next (the scheduler favours a thread
        that slept), pays the CPU of being woken and tries again (:meth:`Cpu.charge
        <mqlog.core.host.profiles.Cpu.charge>`). The lock stays held (by ``holder``) until
        :meth:`_unlock_queue`. Returns the charge's generator itself (``yield from``): no
        generator layer of its own for the call's events to pass through."""
        mutex = queue.mutex
        if mutex is None:
            mutex = queue.mutex = QueueLock(self.env)
        elif mutex.holder is holder:
            mutex = None  # (held already: nothing to take)
        # (by position – app_us, path_us, lock, holder, keep – as _call's: every keyword costs
        # a call about 150 machine instructions more, and an MQPUT or MQGET makes both)
        return self.cpu.charge(us, "log", 0.0, path_us, mutex, holder, keep)

    @staticmethod
    def _unlock_queue(queue: Queue, holder) -> None:
        mutex = queue.mutex
        if mutex is not None and mutex.holder is holder:
            mutex.release()

    def _hold(self, queue: Queue | None = None) -> int:
        """Hold the log address a call that logs records before their effect is in memory
        starts from, so a media image's replay point stays before it, until :meth:`_unhold`;
        ``queue``: the MQPUT's or MQGET's queue, which counts the call meanwhile."""
        mark = self.writer.next_address
        self._inflight.add(mark)
        if queue is not None:
            queue.calls += 1
        return mark

    def _unhold(self, mark: int, queue: Queue | None = None) -> None:
        if queue is not None:
            queue.calls -= 1
        self._inflight.remove(mark)

    def _held(self, call: Generator, queue: Queue | None = None) -> Generator:
        """Run ``call`` – which logs records before their effect is in memory – holding
        the log address it starts from (:meth:`_hold`)."""
        mark = self._hold(queue)
        try:
            return (yield from call)
        finally:
            self._unhold(mark, queue)

    def _force(self) -> Generator:
        """Wait until everything appended so far is on disk; True if that meant waiting."""
        event = self.writer.force()
        waited = not event.triggered
        yield event
        return waited

    def _woken(self, waited: bool) -> Iterable:
        """An MQI call that waited for a log force pays the host's CPU to be woken (the
        system call, the sleep and the wakeup) – after its effect is made visible, so that
        nothing (a checkpoint's queue-file flush, say) sees the log ahead of memory longer
        than the force itself took."""
        if waited:
            return self.cpu.charge(self.cpu.profile.force_wait_us, "force")
        return ()  # (what to ``yield from``: the charge's generator or nothing, no layer of its own)

    def _log_put(self, queue: Queue, msg_id: bytes, data: bytes, uow: UnitOfWork | None, path_us: float) -> Generator:
        # The persistent put's extra CPU: its path, its record (one, however many segments:
        # see hosts.toml) and the copy of its data, before the record reaches the buffer – of
        # a message in segments, the first segment's copy: each later one is copied just
        # before it is appended, so a large message enters the log buffer at the speed it is
        # copied, and the writer can write its first CIs while the rest is being copied.
        profile = self.cpu.profile
        codec_on = self.platform.codec is not None and self.platform.codec.active
        charge_us = profile.logged_us("put", len(data))
        deferred_us, held = 0.0, False
        if len(data) > PUT_SEGMENT_BYTES:
            # the later segments' copy, charged as each is appended; the thread keeps its core
            # from its first charge through them (a compressor's charge comes between them
            # otherwise: then it queues again)
            copy_us = len(data) * profile.copy_ns_per_byte / 1000.0
            deferred_us = copy_us * ((len(data) - PUT_SEGMENT_BYTES) / len(data))
            charge_us -= deferred_us
            held = not codec_on
        yield from self._locked_charge(queue, charge_us, msg_id, path_us, keep=held)
        codec, stored = Codec.NONE, data
        if codec_on and data:
            # A kept queue (one whose keeper is outside this queue manager) is the
            # platform's to refuse (z/OS COMPLOG never compresses such puts).
            codec, stored, tried = self.platform.codec.compress(data, kept=queue.keeper is not None)
            self.counters.compression_in_bytes += len(data)
            self.counters.compression_out_bytes += len(stored)
            if tried:
                # Every compressor that scanned the data costs the putting call its CPU per
                # byte, on the host's cores: the put takes longer and competes with the rest.
                yield from self.cpu.charge(self.cpu.profile.compress_us(tried, len(data)), "compress")
        segments = split_message(stored)
        if deferred_us and len(segments) == 1:
            # compressed into one segment: the rest of the copy now, before it is appended
            yield from self.cpu.charge(deferred_us, "log")
        need = len(stored) + PUT_LOG_BYTES + SEGMENT_LOG_BYTES * len(segments)
        if len(segments) == 1 and uow is not None:
            # The usual case, built once with its chain pointer (not built and then evolved).
            return (yield from self._log_uow(uow, lambda prev: Put(
                queue.name, msg_id, stored, len(data), 0, 1, codec, uow=uow.id, prev=prev), need=need))
        first = Put(queue.name, msg_id, segments[0], len(data), 0, len(segments), codec,
                    uow=uow.id if uow else 0)
        if len(segments) == 1:
            return (yield from self._log(first, need=need))
        # each later segment's share of the copy (of the data as offered: compressed data is
        # copied from the uncompressed message)
        per_byte = deferred_us / (len(stored) - len(segments[0]))

        def room(nbytes: int) -> bool:  # an append of nbytes goes in without waiting
            return self.writer.has_room(nbytes + PUT_SEGMENT_BYTES) and (uow is None or uow.busy is None)

        # Where a unit of work pins the log behind it (distributed), the whole message must
        # fit beside the reserve, and room for it is claimed before its first record: a
        # message larger than the log is refused (2102) rather than left half logged. Where
        # the log behind a unit is archived (z/OS), a message may be larger than the whole
        # active log: each segment claims its own room, waiting for offloads as it goes.
        pinned = self.platform.uows_pin_log
        claim = need if pinned else len(segments[0]) + PUT_LOG_BYTES + SEGMENT_LOG_BYTES  # (the first's share)
        try:
            if held and not (self._has_room(claim) and room(len(segments[0]))):
                self.cpu.give_back()  # the thread sleeps, for log space or buffer space
                held = False
            yield from self._claim_waiting(claim)  # held until the last segment is appended
        except BaseException:
            if held:
                self.cpu.give_back()
            raise
        try:
            if uow is None:
                address = prev = yield from self._log(first, essential=True)
            else:
                address = prev = yield from self._log_uow(uow, lambda prev: attrs.evolve(first, prev=prev),
                                                          essential=True)
            for i, seg in enumerate(segments[1:], 1):
                # The thread copies segment after segment on the core it holds, and gives the
                # core up only when an append must wait (the buffer full, a round of shunting)
                if not held:
                    yield from self.cpu.take()
                    held = True
                yield from self.cpu.run_held(per_byte * len(seg), "log")
                if not room(len(seg)):
                    self.cpu.give_back()
                    held = False
                if uow is None:
                    prev = yield from self._log(PutSegment(queue.name, msg_id, i, i * len(segments[0]), seg,
                                                           codec, prev=prev),
                                                essential=pinned, need=len(seg) + SEGMENT_LOG_BYTES)
                else:
                    yield from self._log_uow(uow, lambda prev, i=i, seg=seg: PutSegment(
                        queue.name, msg_id, i, i * len(segments[0]), seg, codec, uow=uow.id, prev=prev),
                        essential=pinned, need=len(seg) + SEGMENT_LOG_BYTES)
            return address
        finally:
            if held:
                self.cpu.give_back()
            self.reserve.give_back(claim)

    def _spill(self, queue: Queue) -> Generator:
        """The queue buffer is full: write the queue's messages to its file (log first: the
        write-ahead rule). On a platform whose queue files go through the host's page cache
        the writes are one buffered ``write`` call's, forced by the next checkpoint
        (:mod:`mqlog.core.disk.filecache`)."""
        self.counters.spills += 1
        yield self.writer.force()
        yield from self.write_queue_file(lambda: queue.flush(self.writer.durable, self.outcome))

    def write_queue_file(self, flush: Callable[[], IoCost]) -> Generator:
        """A spill's writes to a queue file (``flush()`` makes them and returns their cost), in
        normal running and in restart's replay alike: on a platform whose queue files go
        through the host's page cache, one buffered ``write`` call, whose bytes land at its end
        with the pages they dirty held at once (a get in between must find them); on the
        others, the writes the buffer manager makes behind the call (:meth:`charge_io`)."""
        if self.platform.queue_file_writes == "cached":
            yield from self.device.file_op("write")
        yield from self.charge_io(flush())

    def outcome(self, uow_id: int, durable: int):
        """How a unit of work ended, if its Commit/Backout record is on disk (True: committed,
        False: backed out), else None. A queue file must show that outcome: restart starts
        after that record and will not see it again."""
        uow = self.uows.get(uow_id)
        if uow is None or uow.end_address == NO_ADDRESS or uow.end_address >= durable:
            return None
        return uow.end_commit

    def _load_unloaded(self, queue: Queue) -> Generator:
        """The first MQPUT or MQGET on a queue restart did not load pays its load (IBM: a
        queue is loaded on first use after restart; callers wait until it is): a file-system
        call, the metadata reads, the CPU of its index entries. Calls that arrive while it
        loads wait for it."""
        pending = queue.unloaded
        if isinstance(pending, simpy.Event):
            yield pending
            return
        loaded = queue.unloaded = self.env.event()
        cost, messages = pending
        yield from self.device.file_op("open")
        yield from self.charge_io(cost)
        yield from self.cpu.charge(messages * self.cpu.profile.load_message_us, "restart")
        queue.unloaded = None
        self.counters.queues_loaded_on_use += 1
        loaded.succeed()

    def charge_io(self, cost: IoCost, behind: bool = True) -> Generator:
        """Charge a queue file's I/O (a flush, a load) to the device and the counters, as the
        platform's queue files are written (:attr:`Platform.queue_file_writes
        <mqlog.core.platform.Platform.queue_file_writes>`): into the host's page cache, for
        the next checkpoint to force (:meth:`sync_queue_files`), or by writes the call does
        not wait for – unless not ``behind``: a checkpoint writes its own flushes one after
        another and waits for each. A read reaches the device for what the page cache does
        not hold (every read, where the platform's queue files do not go through it)."""
        device, counters = self.device, self.counters
        cached = self.platform.queue_file_writes == "cached"
        writes = cost.writes
        if writes and cached and len(cost.write_at) == len(writes):
            # (a request whose place is not known reaches the device, as on other platforms)
            cache, unplaced = self.file_cache, []
            for n, at in zip(writes, cost.write_at):
                if at is None:
                    unplaced.append(n)
                else:
                    cache.write(at[0], at[1], n)
                    counters.queue_file_bytes_cached += n
            writes = unplaced
        if writes:
            limit = self.platform.queue_writes_behind_max
            if behind and limit is not None:
                # (one queue's writes: a spill's or a flush's are of one file)
                key = cost.write_at[0][0] if cost.write_at and cost.write_at[0] is not None else None
                waiting = self.bytes_behind.get(key, 0)
                if waiting + sum(writes) > limit:
                    behind = False  # the pool is too full of pages waiting for write I/O
                    counters.queue_sync_writes += 1
                else:
                    self.bytes_behind[key] = waiting + sum(writes)
            else:
                key = None
            if behind:
                process = self.env.process(self._write_behind(writes, key if limit is not None else False))
                self.writes_behind = [p for p in self.writes_behind if p.is_alive] + [process]
            else:
                yield from self._write_behind(writes)
        places = cost.read_at if cached and len(cost.read_at) == len(cost.reads) else [None] * len(cost.reads)
        for n, at in zip(cost.reads, places):
            for m in ((n,) if at is None else self.file_cache.read(at[0], at[1], n)):
                counters.queue_file_bytes_read += m
                yield from device.read(m)

    def _write_behind(self, sizes: list[int], key: str | None | bool = False) -> Generator:
        """Queue-file writes no call waits for (a checkpoint waits for them: :meth:`sync_queue_files`);
        each done is taken off ``key``'s bytes behind (False: not counted there)."""
        for n in sizes:
            self.counters.queue_file_bytes_written += n
            yield from self.device.write(n)
            if key is not False:
                self.bytes_behind[key] -= n

    def sync_queue_files(self) -> Generator:
        """What a checkpoint does before its End record says the queue files are consistent
        with the log: force the page cache's dirty pages of each file written since the last
        one (its write-back requests, then an ``fsync``), and wait for the writes in progress
        that no call waited for (:mod:`mqlog.core.disk.filecache`)."""
        device, counters, storage = self.device, self.counters, self.storage
        for name, requests in self.file_cache.take_dirty(lambda n: storage.size(n) if storage.exists(n) else None):
            for n in requests:
                counters.queue_file_bytes_written += n
                yield from device.write(n)
            yield from device.file_op("fsync")
        behind, self.writes_behind = self.writes_behind, []
        for process in behind:
            if process.is_alive:
                yield process

    # -- MQGET -------------------------------------------------------------------------------

    def _get(self, conn: Connection, queue_name: str, syncpoint: bool, wait_us: float, msg_id: bytes | None = None):
        if self.ending is not None:
            raise self.refusal()  # quiescing: MQGMO_FAIL_IF_QUIESCING (see end())
        queue = self._queue(queue_name)
        if queue.unloaded is not None:
            yield from self._load_unloaded(queue)
        uow = self._uow_for(conn) if syncpoint else None
        deadline = self.env.now + wait_us
        # The look for a message is the call's path, with the queue's lock held (a get woken
        # by a message looks again, its path already paid); the lock stays held through the
        # get, by the connection.
        while True:
            taker = self.config.member + 1 if queue.keeper is not None else 0
            message = queue.take_first(taker) if msg_id is None else queue.take(msg_id, taker)
            if message is not None:
                break
            remaining = deadline - self.env.now
            if remaining <= 0:
                raise MqiError(Reason.MQRC_NO_MSG_AVAILABLE, queue_name)
            event = self.env.event()
            entry = (event, syncpoint)
            queue.getters.append(entry)
            self._deadlines.add(event, deadline)
            # (a condition, as when the wait was on a timeout too: the same steps, so the same
            # order as before among calls resuming at one instant; the second event never triggers)
            yield event | self.env.event()
            self._deadlines.ended()
            if entry in queue.getters:
                queue.getters.remove(entry)
            if event.triggered and isinstance(event.value, GotMessage):
                self.counters.messages_got += 1
                return event.value  # handed over directly by an out-of-syncpoint put
            if self.ending is not None:
                raise self.refusal()  # the end command cancelled the wait
        try:
            data, cost = queue.read(message)
            if cost.reads:
                yield from self.charge_io(cost)
            self.counters.messages_got += 1
            mark = self._hold(queue)  # (as _held does, without a generator layer of its own)
            try:
                return (yield from self._get_message(queue, message, uow, data, conn))
            except MqiError:
                # Refused while it was being logged (a full log's 2102): the message stays on the
                # queue and the application was told the get failed, so it is no get (as MQPUT).
                self.counters.messages_got -= 1
                raise
            finally:
                self._unhold(mark, queue)
        finally:
            self._unlock_queue(queue, conn)

    def _get_message(self, queue: Queue, message: Message, uow: UnitOfWork | None, data: bytes,
                     holder) -> Generator:
        if message.persistent:
            stored = queue.file.messages.get(message.msg_id) if queue.file is not None else None
            block = stored.first_block if stored is not None else 0
            try:
                # The persistent get's extra CPU: its path, its record and the copy of its data.
                profile = self.cpu.profile
                yield from self._locked_charge(queue, profile.logged_us("get", message.length), holder)
                if uow is None:
                    address = yield from self._log(Get(queue.name, message.msg_id, block, message.length))
                else:  # (built once, with its chain pointer)
                    address = yield from self._log_uow(uow, lambda prev: Get(
                        queue.name, message.msg_id, block, message.length, uow=uow.id, prev=prev))
            except MqiError:
                queue.make_available(message)  # the get did not happen: the message is there for others
                self._wake_getters(queue)
                raise
        else:
            address = NO_ADDRESS
        if uow is None:
            # The queue's lock goes before the force (see mqlog.core.qm.locks: not held across
            # the I/O); the message is still taken (busy) while it waits: nobody else can get it.
            self._unlock_queue(queue, holder)
            waited = (yield from self._force()) if message.persistent else False
            queue.remove(message)
            yield from self._woken(waited)
        else:
            queue.lock(message, uow.id, address)
            uow.ops.add("get", queue.name, message.msg_id, message.persistent, address, message.length)
            if uow.first != NO_ADDRESS:  # uow.logged
                self.units.logged_ops += 1
        return GotMessage(message.msg_id, data, message.persistent)

    def _wake_getters(self, queue: Queue) -> None:
        """Wake as many waiting MQGETs as there are messages to take, oldest first (one
        message wakes one waiter: the others sleep on)."""
        getters = queue.getters
        if getters and queue.available:
            n = len(queue.available)
            keep = []
            for entry in getters:
                event = entry[0]
                if event.triggered:
                    continue
                if n:
                    event.succeed(None)
                    n -= 1
                else:
                    keep.append(entry)
            queue.getters = keep

