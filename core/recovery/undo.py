"""The backward pass of restart: for each unit of work left in the table, its backward chain
of records is walked from its last record to its Begin, reading the log wherever that takes
it (before the checkpoint too), to rebuild what it did; a compensation record (CLR) sends the
walk to its ``undo_next``, so operations already undone are skipped. Units of work that were
not prepared are then backed out, newest operation first – a CLR for each, then a Backout
record – and prepared ones are kept in doubt for their coordinator. A crash during undo and
another restart redo the CLRs and resume where undo stopped: no undo work is repeated.
Uncommitted state that belongs to no unit of work the log knows of is put right at the end
(:meth:`Undo.reconcile`).

Costs. The walk reads each record through restart's page cache (dropped when restart began,
:mod:`.pagecache`): records on pages replay has just read are hits, so a unit that lies after
the replay point costs no device reads, and one that began before it costs a cold read of the
request that holds its record – as many pages as a replay request, ending at that page, so the
records before it are in the cache when the walk reaches them. Each record walked is decoded again (the host's ``replay_record_us``). Backing
out costs, per uncommitted message, its CLR built and logged (``log_record_us``) and the
message reconciled with its queue (``reconcile_message_us``; a queue recovery had not
loaded yet is loaded first) – so recovery follows the number of uncommitted messages, not
the units they are spread over, nor their bytes. :class:`Undo` is a part of
:class:`~mqlog.core.recovery.state.Recovery`, whose state it works on.
"""

from __future__ import annotations

from typing import Generator

from mqlog.core.errors import LogCorruptionError
from mqlog.core.format.pages import PAGE_SIZE, page_of
from mqlog.core.format.records import NO_ADDRESS, Backout, Begin, Clr, ClrAction, Get, Prepare, Put, UndoneOp
from mqlog.core.log.reader import LogReader
from mqlog.core.objects.queuefile import MessageState
from mqlog.core.objects.uow import Op, UnitOfWork
from mqlog.core.objects.uow import UowState as LiveState
from mqlog.core.recovery.outcome import BackoutImpossible, RebuiltUow

#: a backward chain longer than this many records loops (a unit of work is bounded by
#: the limit on its operations and by the log's size long before it)
MAX_CHAIN = 10_000_000


class Undo:
    """The backward chains of units of work, their backout with CLRs, and the units kept in
    doubt."""

    # -- 3. in doubt: the backward chains ----------------------------------------------------

    def read_at(self, address: int) -> Generator:
        """One record at ``address``: a log read request through the page cache, charged to the
        device for the pages the cache does not hold, and the CPU of decoding it. A miss reads
        the aligned blocks of ``chunk`` pages (a replay request's size: 16 on 9.1.1, one on
        legacy) that hold the pages the cache lacks, so a walk backwards finds the records
        before this one in the cache, whichever unit's walk read their block first.
        Assumption: MQ's restart reads the log in blocks of the same size in both directions
        (IBM gives replay's only as "fewer I/O requests"); Linux reads a backward request as
        asked, with no read-ahead."""
        reader = LogReader(self.platform.space, address, format_address=self.platform.addressing.format,
                           record_types=self.platform.record_types,
                           lookahead_pages=0)
        record = None
        for _, record in reader:
            break
        pages = reader.pages_read
        first = page_of(address)
        missing = [first + i * PAGE_SIZE for i in range(pages) if not self.cache.holds(first + i * PAGE_SIZE)]
        if not missing:
            # a hit: the read call alone, the kernel copying from its cache
            self.cache.read(address, pages)
            yield from self.qm.device.file_op("read")
        else:
            # the request reads the aligned blocks of ``chunk`` pages that hold what is missing
            block = self.chunk * PAGE_SIZE
            first = missing[0] - missing[0] % block
            end = missing[-1] - missing[-1] % block + block
            t = self.env.now
            nbytes = yield from self.log_request(first, (end - first) // PAGE_SIZE)
            self.charged["log_read"] += self.env.now - t
            self.report.bytes_read += nbytes
        yield from self.cpu(self.replay_record_us)
        return record

    def walk(self, uow_id: int) -> Generator:
        """The operations still to undo for ``uow_id``, newest first, as (address, record).

        Re-logged copies (roll forward) count only if their round is complete – closed by a
        flagged Prepare – and then replace every older record of the unit; copies of an
        interrupted round are passed over and the original records used."""
        entry = self.table[uow_id]
        ops = []
        address = entry.last
        seen = 0
        in_round = False  # inside the newest complete round of copies
        undone: set[int] = set()  # original records a CLR has already compensated
        fmt = self.platform.addressing.format
        last_at = address
        while True:
            if address == NO_ADDRESS:
                # Every unit of work's chain begins with its Begin record (a CLR that
                # compensated the first operation points at it): a chain that ends without
                # one has lost records, and undo would back out only part of the unit.
                raise LogCorruptionError(f"unit of work {uow_id:X}: its backward chain ends before its Begin record "
                                         f"(last record read at {fmt(last_at)})", address=fmt(last_at))
            record = yield from self.read_at(address)
            seen += 1
            if in_round and (record is None or record.uow != uow_id or not record.relogged):
                # Past the first copy of a complete round: the records it superseded may be
                # overwritten already (moving the tail past them is what re-logging is for).
                break
            if record is None or record.uow != uow_id or seen > MAX_CHAIN:
                if self.platform.space.lost(address):
                    code = self.platform.space.lost_code
                    raise BackoutImpossible(
                        f"{code + ': ' if code else ''}unit of work {uow_id:X} cannot be backed out: the log record at "
                        f"{fmt(address)} it needs was overwritten (archiving is "
                        f"off and the unit was not shunted in time)", address=fmt(address))
                # Anything but the Begin ends undo part-way: the records behind this point
                # are this unit's, and backing out a subset would be silently wrong.
                if record is None:
                    why = "no log record is there"
                elif record.uow != uow_id:
                    why = f"the record there ({type(record).__name__}) belongs to unit of work {record.uow:X}"
                else:
                    why = f"the chain runs on past {MAX_CHAIN} records (it loops)"
                raise LogCorruptionError(f"unit of work {uow_id:X}: its backward chain is broken at {fmt(address)}: "
                                         f"{why}", address=fmt(address))
            last_at = address
            entry.first = min(entry.first, address)
            shunted = record.backout_round()
            if shunted is not None:
                if shunted.index != shunted.count - 1:
                    # A round cut short by a crash: skip its records, use the older chain.
                    address = record.prev
                    continue
                # The newest complete round of shunting: every operation up to here.
                rounds = [(record, shunted)]
                while rounds[-1][1].index > 0:
                    earlier_at = rounds[-1][0].prev
                    earlier = yield from self.read_at(earlier_at)
                    earlier_round = earlier.backout_round() if earlier is not None else None
                    if earlier_round is None:
                        raise LogCorruptionError(f"unit of work {uow_id:X}: its round of shunting is broken at "
                                                 f"{fmt(earlier_at)}", address=fmt(earlier_at))
                    entry.first = min(entry.first, earlier_at)
                    rounds.append((earlier, earlier_round))
                final_at = address
                for _, part in rounds:  # newest record first; within one, newest operation last
                    for op in reversed(part.ops):
                        if op.address in undone:
                            continue
                        stand_in = (Put(op.queue, op.msg_id, b"", op.length, uow=uow_id, prev=final_at)
                                    if op.kind == "put" else Get(op.queue, op.msg_id, 0, op.length, uow=uow_id,
                                                                 prev=final_at))
                        ops.append((op.address, stand_in))
                break
            relogged = record.relogged
            if relogged or in_round:
                if isinstance(record, Prepare) and relogged:
                    if in_round:
                        break  # the previous round's end: all older records are superseded
                    in_round = True
                elif not relogged:
                    break  # an original record, older than a complete round of copies
                elif in_round:
                    ops.append((address, record))
                address = record.prev
                continue
            if isinstance(record, Clr):
                if not undone:
                    # The newest CLR: every operation an interrupted undo already compensated
                    # is named by the CLRs chained behind it. A round of shunting lists all
                    # operations at once, so it needs the whole set, not only the newest.
                    undone.add(record.undoes)
                    probe = record.prev
                    while probe != NO_ADDRESS:
                        older = yield from self.read_at(probe)
                        if not isinstance(older, Clr) or older.uow != uow_id:
                            break
                        undone.add(older.undoes)
                        probe = older.prev
                address = record.undo_next
                continue
            if isinstance(record, (Put, Get)):
                ops.append((address, record))
            if isinstance(record, Begin):
                entry.begin_us = record.time_us
                break
            address = record.prev
        if in_round:
            entry.first = min(a for a, _ in ops) if ops else entry.last
        self.records_walked += seen
        return ops

    # -- 4. undo -----------------------------------------------------------------------------

    def undo(self, uow_id: int, entry: RebuiltUow, ops) -> Generator:
        qm, writer = self.qm, self.qm.writer
        profile = qm.cpu.profile
        last = entry.last
        undone = []
        for seq, (address, record) in enumerate(ops):
            if record.queue in self.owed:
                yield from self.load_queue(record.queue)  # (replay did not index it: a rare case)
            action = ClrAction.REMOVE_PUT if isinstance(record, Put) else ClrAction.RESTORE_GET
            clr = Clr(address, record.prev, action, record.queue, record.msg_id, 0,
                      record.message_length, uow=uow_id, prev=last)
            yield from self.cpu(profile.log_record_us)  # the CLR built, as any logged record
            last = yield from writer.put(clr)
            self.report.clrs_written += 1
            undone.append(UndoneOp(address, seq))
            queue = self.queues.get(record.queue)
            message = queue.messages.get(record.msg_id) if queue else None
            if message is not None and message.uow == uow_id:
                self.compensate(clr)
                self.report.messages_reconciled += 1
                yield from self.cpu(profile.reconcile_message_us)
        # Handed to the writer, not waited for: the writer writes the unit's CLRs and Backout
        # while restart goes on with the next unit, and the end-of-restart checkpoint waits for
        # the log. A crash before they are on disk leaves the unit in flight with the CLRs that
        # reached it: the next restart resumes its undo where they end. So recovery costs the
        # messages, not the units (IBM: 3,200 units slightly faster than 10); a write that
        # fails fails the checkpoint's force too, so this one's failure is not raised here.
        yield from writer.put(Backout(int(self.env.now), undone, uow=uow_id, prev=last))
        writer.force().defused = True
        yield from self.cpu_flush()  # the unit's CPU spent: the writer has the unit's records meanwhile
        self.report.uows_backed_out += 1
        self.finish(uow_id, commit=False)

    def keep_in_doubt(self, uow_id: int, entry: RebuiltUow, ops) -> None:
        qm = self.qm
        uow = UnitOfWork(uow_id, "", entry.begin_us, LiveState.PREPARED, entry.first, entry.last, xid=entry.xid,
                         prepare_address=entry.last, begin=entry.first)  # in doubt on the log: later checkpoints must say so
        for address, record in reversed(ops):
            kind = "put" if isinstance(record, Put) else "get"
            length = record.message_length
            uow.ops.append(Op(kind, record.queue, record.msg_id, True, address, record.prev, length))
        # Non-persistent work survives only on a kept queue (its keeper kept it):
        # the unit keeps it too, so that its resolution reaches it.
        logged = {(op.queue, op.msg_id) for op in uow.ops}
        for name, msg_id in sorted(set(self.by_uow.get(uow_id, ()))):
            queue = self.queues.get(name)
            message = queue.messages.get(msg_id) if queue is not None else None
            if message is None or (name, msg_id) in logged or message.persistent or message.uow != uow_id:
                continue
            kind = "put" if message.state is MessageState.PUT_UNCOMMITTED else "get"
            uow.ops.append(Op(kind, name, msg_id, False, NO_ADDRESS, NO_ADDRESS, message.length))
        qm.hold_in_doubt(uow)
        self.report.uows_indoubt += 1

    def reconcile(self) -> Generator:
        """Uncommitted state of units of work the log does not know: their records never
        reached the disk, so they cannot have committed; put it back as it was."""
        qm = self.qm
        live = set(self.table)
        for uow, members in sorted(self.by_uow.items()):
            if uow in live:
                continue
            for name, msg_id in sorted(set(members)):
                queue = self.queues.get(name)
                message = queue.messages.get(msg_id) if queue else None
                if message is None or message.uow != uow:
                    continue
                if message.state is MessageState.PUT_UNCOMMITTED:
                    queue.remove(message)
                elif message.state is MessageState.GOT_UNCOMMITTED:
                    queue.make_available(message)
                else:
                    continue
                self.report.messages_reconciled += 1
                yield from self.cpu(qm.cpu.profile.reconcile_message_us)
        yield from self.cpu_flush()
