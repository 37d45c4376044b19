"""The z/OS platform assembled for the core: RBA addresses (6 or 8 bytes), the active-log and
archive space with its BSDS, LOGLOAD checkpoints that also come at every log switch, COMPLOG
compression, and the queue manager's console messages in MQ for z/OS's words (IBM MQ for z/OS messages, CSQJ and CSQR).

How the log is written (calibration cases Z1, Z4-Z6): one logger task takes what the buffer
holds when a commit (or WRTHRSH's full CIs) wakes it, pays the host's ``log_io_us`` for each
write it starts, and carries at most 128 CIs a write. With dual logging (TWOACTV) new CIs go
to both copies at once; the CI being rewritten – the partial one the last write ended on –
goes to copy 2 only once copy 1 holds it, so that one copy of every acknowledged CI is intact
at every moment (QJSTSERW; Db2's documented order), except on a device that never splits a CI
(write-cached DASD, ``atomic_write_bytes`` 4096), where both copies are written at once (IBM:
"In some MQ versions, all writes to dual logs are done in parallel if the primary log data set
is on a write-cached DASD"). The order itself is :meth:`mqlog.zos.ring.ActiveRing.copy_writes`."""

from __future__ import annotations

import attrs

from mqlog.core.log.addressing import PlainAddressing
from mqlog.core.platform import Platform, RecordCountCheckpoints, Shunting
from mqlog.core.disk.storage import Storage
from mqlog.core.format.pages import PAGE_SIZE
from mqlog.zos.codec import CompLogCodec
from mqlog.zos.messages import JobLog, console
from mqlog.zos.records import RECORD_TYPES, EveryThirdCheckpoint, pageset_records, shunt_round
from mqlog.zos.space import DEFAULT_MAX_OFFLOADS, ZosLogSpace

#: z/OS writes a buffer when this many CIs are filled (WRTHRSH default)
DEFAULT_WRTHRSH = 20
#: the most CIs one write to an active log data set carries
MAX_WRITE_CIS = 128
#: DEFINE BUFFPOOL's BUFFERS default, and how full a pool gets before the deferred write
#: processor writes its oldest changed pages to the page set
DEFAULT_BUFFERS = 1000
BUFFER_POOL_FULL = 0.85
#: ... and how much of it may wait for write I/O before updates are written synchronously
BUFFER_POOL_SYNC = 0.95


class LrsnClock:
    """The clock LRSNs come from: one per queue-sharing group (its members share it), so that
    every LRSN is unique and later than any given before – the order records were written
    in, across all the members' logs, which is the order their effects were seen in."""

    def __init__(self):
        self.last = 0

    def tick(self, now_us: float) -> int:
        value = max(int((now_us + LRSN_EPOCH_US) * LRSN_PER_US), self.last + 1)
        self.last = value
        return value


@attrs.frozen
class RbaAddressing(PlainAddressing):
    """Relative byte addresses: 6 bytes (12 hex digits) or 8 bytes (16 hex digits)."""

    name: str = "RBA"
    digits: int = 16
    clock: LrsnClock = attrs.field(factory=LrsnClock, eq=False, repr=False)

    def format(self, address: int) -> str:
        if address < 0:  # (never an RBA: said as what it is, not as "-0000…")
            return f"{address} (not an RBA)"
        return f"{address:0{self.digits}X}"

    def stamp(self, now_us: float) -> int:
        """The LRSN of a record written now, in a queue-sharing group: like a store-clock
        value, 4096 units a microsecond, the same clock for every member, so records of
        different members' logs can be put in one order. 0 outside a group."""
        return self.clock.tick(now_us) if self.stamps else 0


#: LRSN units per virtual microsecond (a store clock ticks 4096 times a microsecond)
LRSN_PER_US = 4096
#: virtual time 0 is this far after the LRSN's epoch (a store clock is never 0)
LRSN_EPOCH_US = 1_000_000


def rba_addressing(rba8: bool = True, start: int = 0, lrsn: bool = False) -> RbaAddressing:
    digits = 16 if rba8 else 12
    return RbaAddressing(start=start, limit=1 << (4 * digits), digits=digits, stamps=lrsn)


#: The shutdown modes as z/OS says them (IBM MQ for z/OS: STOP QMGR, refadmin q086810_;
#: "Normal termination", csqsat0364): controlled is MODE(QUIESCE) (applications finish, then
#: the shutdown checkpoint), immediate is MODE(FORCE) ("active threads: back out" before the
#: shutdown checkpoint). STOP QMGR has no preemptive mode: IBM's answer to a queue manager
#: that will not stop is the z/OS CANCEL of its address space, which the model's preemptive
#: end is (the processes killed, what the OS accepted on disk).
STOP_QMGR = {"controlled": "STOP QMGR MODE(QUIESCE)", "immediate": "STOP QMGR MODE(FORCE)",
             "preemptive": "CANCEL of the queue manager's address space"}


def zos_platform(storage: Storage, *, data_sets: int = 3, cis: int = 4096, dual: bool = True,
                 dual_archive: bool = True, dual_bsds: bool = True, offload: bool = True, max_arch: int = 500,
                 outbuff_kb: int = 4000, wrthrsh: int = DEFAULT_WRTHRSH, logload: int = 500_000,
                 rba8: bool = True, start_rba: int = 0, codec=None, qm_name: str = "CSQ1",
                 lrsn: bool = False, maxcnoff: int = DEFAULT_MAX_OFFLOADS, inbuff_kb: int = 60,
                 arcpfx1: str = "CSQARC1", arcpfx2: str = "CSQARC2", buffers: int = DEFAULT_BUFFERS) -> Platform:
    """The z/OS queue manager's log over ``storage`` (the ZosLogConfig's values); ``lrsn``:
    a queue-sharing group member, whose records carry LRSNs."""
    addressing = rba_addressing(rba8, start_rba, lrsn)
    if codec is None:
        # Always a codec, even for COMPLOG(NONE): records written under another setting must
        # stay readable, and SET LOG COMPLOG switches it while running.
        codec = CompLogCodec("NONE")
    space = ZosLogSpace(storage, data_sets=data_sets, cis=cis, dual=dual, dual_archive=dual_archive,
                        dual_bsds=dual_bsds, offload=offload, max_arch=max_arch, start=start_rba, rba8=rba8,
                        max_offloads=maxcnoff, offload_read_bytes=inbuff_kb * 1024, arcpfx1=arcpfx1, arcpfx2=arcpfx2)
    buffer_pages = max(18, outbuff_kb // 4)
    return Platform(
        name="zos",
        addressing=addressing,
        space=space,
        checkpoint_policy=RecordCountCheckpoints(records=logload, interval_us=float("inf"), on_switch=True),
        space_policy=None,
        codec=codec,
        shunting=Shunting(EveryThirdCheckpoint(), shunt_round),
        full_log_waits=True,  # CSQJ111A: work waits for space, it is not refused
        uows_pin_log=False,  # the log behind a long unit of work is archived, not kept active
        checkpoint_records=pageset_records,
        record_types=RECORD_TYPES,
        console=console(qm_name, addressing, offload),
        persistent_put_to_waiting_getter=False,  # z/OS hands only non-persistent messages across
        buffer_pages=buffer_pages,
        write_threshold_pages=min(wrthrsh, buffer_pages),
        # One logger task writes the log: it "schedules the write, waits for it to complete,
        # and then moves on to the next piece of data" (IBM MQ 9.4, "Faster log throughput
        # with zHyperLink"), paying its own CPU for each write (the host's log_io_us); a
        # commit that comes while a write is in flight goes out in the next one. One write
        # carries at most 128 CIs: "MQ can write up to 128 pages in an I/O. If there are more
        # than 128 buffers to write there will be more than 1 I/O" (C. Paice, formerly of IBM
        # Hursley's MQ performance team, "What should I monitor for MQ on z/OS - logging
        # statistics", 2020; Db2's Redbook SG24-8404 calls "128 CIs per log write I/O" its
        # large write).
        writer_io_cpu=True,
        max_write_pages=MAX_WRITE_CIS,
        # A partial CI is rewritten in place, never abandoned, however busy the log: RBAs are
        # byte addresses with no gaps (a record's RBA is where it sits), IBM counts CI rewrites
        # as routine (QJSTSERW: a CI written again goes serially to the two copies, as DB2's
        # log manager does), and nothing IBM publishes for z/OS speaks of padding or of holding
        # a partial CI back, as the distributed logger does ("tries very hard not to write
        # partial pages"). Dual copies protect the rewrite (zos/ring.py copy_writes: copy 2
        # after copy 1, or both at once on a device that never splits a CI).
        pad_policy=None,
        # A queue's persistent messages stay in its buffer pool until the pool is 85% full:
        # short-lived ones are never written to the page set, and "older messages are written
        # out to DASD each time the buffer pool becomes 85% full" (IBM MQ for z/OS, "Defining
        # your buffer pools"). The model's queues each have the pool to themselves (one active
        # queue a pool: an assumption where several share one).
        queue_buffer_bytes=int(buffers * PAGE_SIZE * BUFFER_POOL_FULL),
        # ... and those writes are the buffer manager's ("a form of caching whereby messages
        # ... are stored temporarily in buffers before being stored in page sets on DASD ...
        # controlled by a buffer manager", IBM MQ for z/OS, "Buffers and buffer pools").
        # Assumption: its write-out at 85% is asynchronous to the application whose put
        # filled the pool (a deferred write task, as DB2's), the put not waiting for it.
        queue_file_writes="deferred",
        # ... until "more than 95% of the pages in the buffer pool" are "waiting for write
        # I/O": then an update is "performed synchronously" (IBM MQ for z/OS, "Buffer manager
        # data records", QPSTDMC), the putting call writing its spill and waiting for it
        queue_writes_behind_max=int(buffers * PAGE_SIZE * BUFFER_POOL_SYNC),
        # A checkpoint writes the pages "waiting for write I/O that had been there for at least
        # two checkpoints" (QPSTIMW, ibid.): "updates which have been around for more than 2
        # checkpoints are written to disk. During restart the page set knows how far back in
        # the log restart needs to go" (Colin Paice, "What should I monitor for MQ on z/OS –
        # buffer pool", 2020). Assumption: a message is the unit (its pages go together).
        checkpoint_write_lag=1,
        error_log="CSQMSTR.JESMSGLG",
        error_log_format=JobLog(),
        end_commands=STOP_QMGR,
        # FORCE: "active threads: back out", and a stop in any mode ends the connections before
        # "the shutdown checkpoint is taken" (STOP_QMGR's sources): restart finds none to back out
        stop_backs_out_in_flight=True,
    )


def zos_platform_from_config(storage: Storage, config, *, qm_name: str = "CSQ1") -> Platform:
    """The platform a :class:`mqlog.zos.config.ZosLogConfig` describes."""
    return zos_platform(storage, data_sets=config.active_logs, cis=config.active_log_cis, dual=config.twoactv,
                        dual_archive=config.twoarch, dual_bsds=config.twobsds, offload=config.offload,
                        max_arch=config.maxarch, outbuff_kb=config.outbuff, wrthrsh=config.wrthrsh,
                        logload=config.logload, rba8=config.rba8, start_rba=config.startrba,
                        maxcnoff=config.maxcnoff, inbuff_kb=config.inbuff,
                        # the names of the archives offloaded from now on; those already made keep
                        # the names the BSDS records for them
                        arcpfx1=config.arcpfx1, arcpfx2=config.arcpfx2,
                        codec=CompLogCodec(config.complog, allow_zstd=config.zstd_in_any), qm_name=qm_name,
                        buffers=config.buffers,
                        # SHARED_QUEUES: a queue-sharing group member, whose records carry LRSNs
                        # (the run joins it: mqlog.zos.qsg.attach_shared_queues)
                        lrsn=bool(config.shared_queue_names))


__all__ = ["zos_platform", "zos_platform_from_config", "RbaAddressing", "rba_addressing"]
