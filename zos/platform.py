"""The z/OS platform assembled for the core: RBA addresses (6 or 8 bytes), the active-log and
archive space with its BSDS, LOGLOAD checkpoints that also come at every log switch, COMPLOG
compression, and the queue manager's console messages in MQ for z/OS's words (SPEC §5)."""

from __future__ import annotations

import attrs

from mqlog.core.log.addressing import PlainAddressing
from mqlog.core.platform import Platform, RecordCountCheckpoints, Shunting
from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.disk.storage import Storage
from mqlog.zos.codec import CompLogCodec
from mqlog.zos.records import RECORD_TYPES, EveryThirdCheckpoint, pageset_records, shunt_round
from mqlog.zos.space import ZosLogSpace

#: z/OS writes a buffer when this many CIs are filled (WRTHRSH default)
DEFAULT_WRTHRSH = 20


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


def console(qm_name: str, addressing: RbaAddressing, offload: bool = True):
    """Messages for the queue manager's job log, as MQ for z/OS writes them; ``offload``:
    archiving is on (OFFLOAD=YES), so what happens at a log switch is an offload."""
    rba = addressing.format

    def message(event: str, fields: dict) -> str | None:
        if event == "restart-begin":
            checkpoint = fields["checkpoint"]
            prior = "" if checkpoint == NO_ADDRESS else f"\nCSQR003I {qm_name} RESTART - PRIOR CHECKPOINT RBA={rba(checkpoint)}"
            return f"CSQR001I {qm_name} RESTART INITIATED{prior}"
        if event == "replay-complete":
            return (f"CSQR004I {qm_name} RESTART - UR COUNTS - IN COMMIT=0, INDOUBT={fields.get('in_doubt', 0)}, "
                    f"INFLIGHT={fields.get('in_flight', 0)}, IN BACKOUT=0")
        if event == "uows-recovered":
            return (f"CSQR005I {qm_name} RESTART - FORWARD RECOVERY COMPLETE - IN COMMIT=0, "
                    f"INDOUBT={fields['in_doubt']}\n"
                    f"CSQR006I {qm_name} RESTART - BACKWARD RECOVERY COMPLETE - INFLIGHT=0, IN BACKOUT=0")
        if event == "restart-complete":
            return f"CSQR002I {qm_name} RESTART COMPLETED"
        if event == "CSQJ001I":
            return (f"CSQJ001I {qm_name} CURRENT COPY {fields['copy']} ACTIVE LOG DATA SET IS "
                    f"DSNAME={fields['dsname']}, STARTRBA={rba(fields['start'])} ENDRBA={rba(fields['end'])}")
        if event == "CSQJ002I":
            return (f"CSQJ002I {qm_name} END OF ACTIVE LOG DATA SET DSNAME={fields['dsname']}, "
                    f"STARTRBA={rba(fields['start'])} ENDRBA={rba(fields['end'])}")
        if event == "CSQJ003I":
            return (f"CSQJ003I {qm_name} FULL ARCHIVE LOG VOLUME DSNAME={fields['dsname']}, "
                    f"STARTRBA={rba(fields['start'])} ENDRBA={rba(fields['end'])}, COPY{fields['copy']}VOL=MQLOG")
        if event == "CSQJ124E":
            return (f"CSQJ124E {qm_name} OFFLOAD OF ACTIVE LOG SUSPENDED FROM RBA {rba(fields['start'])} TO RBA "
                    f"{rba(fields['end'])} DUE TO I/O ERROR")
        if event == "CSQJ110E":
            return f"CSQJ110E {qm_name} LAST COPY{fields['copy']} ACTIVE LOG DATA SET IS {fields['percent']} PERCENT FULL"
        if event == "CSQJ111A":
            return f"CSQJ111A {qm_name} OUT OF SPACE IN ACTIVE LOG DATA SETS"
        if event == "log-full":
            return None  # the queue manager says why next (…-housekeeping or …-long-uow): CSQJ111A once
        if event == "log-full-housekeeping":
            return f"CSQJ111A {qm_name} OUT OF SPACE IN ACTIVE LOG DATA SETS"
        if event == "log-full-long-uow":
            return (f"CSQJ111A {qm_name} OUT OF SPACE IN ACTIVE LOG DATA SETS (unit of work {fields['uow']:X} of "
                    f"{fields['application']} holds the log)")
        if event == "rba-warning":
            width, now = fields["width"], f"{fields['rba']:0{2 * fields['width']}X}"
            stage = fields.get("stage", 1)
            first = {1: f"CSQI045I {qm_name} Log RBA has reached {now}. Plan a log reset",
                     2: f"CSQI046E {qm_name} Log RBA has reached {now}. Perform a log reset",
                     3: f"CSQI047E {qm_name} Log RBA has reached {now}. Stop queue manager and reset logs"}[stage]
            level = "WARNING" if stage < 3 else "CRITICAL"
            return (f"{first}\nCSQJ032E {qm_name} {level} - APPROACHING END OF THE LOG RBA RANGE OF "
                    f"{fields['end']:0{2 * width}X}. CURRENT LOG RBA IS {now}.")
        if event == "rba-termination":
            return (f"CSQJ032E {qm_name} CRITICAL - THE LOG RBA HAS REACHED {fields['limit']:X}: THE QUEUE MANAGER "
                    f"TERMINATES WITH REASON CODE 00D10257")
        if event == "long-uow-at-switch":
            # IBM names CSQJ160I (found) and CSQJ161I (still there at a later offload) for
            # this; their exact texts are not public, the wording is ours
            if fields.get("times", 1) == 1:
                return (f"CSQJ160I {qm_name} LONG-RUNNING UOW FOUND, URID={fields['uow']:X} CONNECTION NAME="
                        f"{fields['application']} ({fields['checkpoints']} CHECKPOINTS, FIRST RBA "
                        f"{rba(fields['first'])})")
            # with OFFLOAD=NO the log switches without offloading: count switches, not offloads
            after = "OFFLOADS" if offload else "ACTIVE LOG SWITCHES"
            return (f"CSQJ161I {qm_name} UOW UNRESOLVED AFTER {fields['times']} {after}, URID={fields['uow']:X} "
                    f"CONNECTION NAME={fields['application']}")
        if event == "cf-backup":
            # CSQE121I / CSQE130I / CSQE131I are IBM's numbers for these; the wording is ours
            return f"CSQE121I {qm_name} BACKUP OF STRUCTURE {fields['structure']} COMPLETED ({fields['bytes']} BYTES)"
        if event == "cf-recovery-begin":
            return f"CSQE130I {qm_name} RECOVERY OF STRUCTURE {fields['structure']} STARTED"
        if event == "cf-recovery-complete":
            return (f"CSQE131I {qm_name} RECOVERY OF STRUCTURE {fields['structure']} COMPLETED "
                    f"({fields['records']} LOG RECORDS MERGED BY LRSN)")
        if event == "shunt-failed":
            return (f"CSQR027I {qm_name} UNABLE TO COMPLETE LOG SHUNTING FOR UNIT OF WORK {fields['uow']:X}: "
                    f"{fields['bytes']} BYTES DO NOT FIT IN THE ACTIVE LOG NOW")
        if event == "bsds-damaged":
            return f"CSQJ126E {qm_name} BSDS ERROR, LOG MAP OF {fields['dsname']} IS NOT USABLE; USING THE OTHER COPY"
        if event == "log-disk-full":
            return f"CSQJ103E {qm_name} LOG ALLOCATION ERROR: {fields['reason']}"
        if event == "archive-dropped":
            return f"Archive data set {fields['dsname']} dropped from the BSDS inventory (MAXARCH reached)"
        return None

    return message


def zos_platform(storage: Storage, *, data_sets: int = 3, cis: int = 4096, dual: bool = True,
                 dual_archive: bool = True, dual_bsds: bool = True, offload: bool = True, max_arch: int = 500,
                 outbuff_kb: int = 4000, wrthrsh: int = DEFAULT_WRTHRSH, logload: int = 500_000,
                 rba8: bool = True, start_rba: int = 0, codec=None, qm_name: str = "CSQ1",
                 lrsn: bool = False) -> Platform:
    """The z/OS queue manager's log over ``storage`` (the ZosLogConfig's values); ``lrsn``:
    a queue-sharing group member, whose records carry LRSNs."""
    addressing = rba_addressing(rba8, start_rba, lrsn)
    if codec is None:
        # Always a codec, even for COMPLOG(NONE): records written under another setting must
        # stay readable, and SET LOG COMPLOG switches it while running.
        codec = CompLogCodec("NONE")
    space = ZosLogSpace(storage, data_sets=data_sets, cis=cis, dual=dual, dual_archive=dual_archive,
                        dual_bsds=dual_bsds, offload=offload, max_arch=max_arch, start=start_rba, rba8=rba8)
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
        pad_policy=None,  # a partial CI is rewritten in place; dual copies protect it
        error_log="CSQMSTR.JESMSGLG",
    )


def zos_platform_from_config(storage: Storage, config, *, qm_name: str = "CSQ1") -> Platform:
    """The platform a :class:`mqlog.zos.config.ZosLogConfig` describes."""
    return zos_platform(storage, data_sets=config.active_logs, cis=config.active_log_cis, dual=config.twoactv,
                        dual_archive=config.twoarch, dual_bsds=config.twobsds, offload=config.offload,
                        max_arch=config.maxarch, outbuff_kb=config.outbuff, wrthrsh=config.wrthrsh,
                        logload=config.logload, rba8=config.rba8, start_rba=config.startrba,
                        codec=CompLogCodec(config.complog, allow_zstd=config.zstd_in_any), qm_name=qm_name)


__all__ = ["zos_platform", "zos_platform_from_config", "RbaAddressing", "rba_addressing"]
