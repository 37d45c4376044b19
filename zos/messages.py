"""The z/OS queue manager's messages for its job log (CSQMSTR.JESMSGLG), in MQ for z/OS's words
and ids: one table from each event the queue manager, the log space and the queue-sharing
group report to the lines written for it (a message id and a text template, see
:mod:`mqlog.core.messages`). Every line with an id reads ``ID QMGR text``; ``{rba:rba}`` is
an RBA as wide as the addressing's. Where IBM's message numbers are known but their texts are
not public (CSQJ160I, CSQJ161I, CSQE121I, CSQE130I, CSQE131I) the wording is ours. A unit of
work is named as MQ for z/OS names it, by its URID: the RBA of its first (Begin UR) record,
which the core's events give as ``begin`` (it stays the unit's URID after a round of
shunting moves its first record needed for backout). Events mapped to no lines are known
and say nothing.

:class:`JobLog` stamps each line as a JES2 job log (JESMSGLG) does: the time of day,
``hh.mm.ss`` – here with the virtual clock's µs, ``hh.mm.ss.ffffff`` – before the message,
and a ``---- THURSDAY, 01 JAN 2026 ----`` line first and where the date changes, as JES
writes at midnight; the clock runs from :data:`~mqlog.core.messages.VIRTUAL_EPOCH`, never the wall
clock. Left out: the job log's banner, the job id column and the console's routing flags.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import re

from mqlog.core.messages import Message, MessageTable, timed_lines, virtual_datetime
from mqlog.core.format.records import NO_ADDRESS

__all__ = ["MESSAGES", "JobLog", "console"]


def _has_checkpoint(fields: Mapping[str, Any]) -> bool:
    return fields["checkpoint"] != NO_ADDRESS


def _rba_digits(fields: Mapping[str, Any]) -> dict[str, str]:
    """The RBAs of an RBA warning, as wide as the mode the space says it is in."""
    digits = 2 * fields["width"]
    return {"now": f"{fields['rba']:0{digits}X}", "range_end": f"{fields['end']:0{digits}X}"}


def _stage(stage: int):
    return lambda fields: fields["stage"] == stage


_STAGE = {"stage": 1}
_OUT_OF_SPACE = (Message("CSQJ111A", "OUT OF SPACE IN ACTIVE LOG DATA SETS"),)

MESSAGES: dict[str, tuple[Message, ...]] = {
    # channels (the channel initiator's CSQX messages; csect names left out)
    "channel-starting": (),
    "channel-started": (Message("CSQX500I", "{channel} started"),),
    "channel-ended": (Message("CSQX501I", "{channel} is no longer active"),),
    "channel-lost": (Message("CSQX599E", "Channel {channel} ended abnormally"),),
    "channel-retrying": (Message("", "Channel {channel}: {partner} not available, retrying after SHORTTMR"),),
    "channel-resolved": (Message("", "Channel {channel} resynchronised: {committed} batch(es) in doubt "
                                     "committed, {backed_out} backed out"),),
    "restart-begin": (
        Message("CSQR001I", "RESTART INITIATED"),
        Message("CSQR003I", "RESTART - PRIOR CHECKPOINT RBA={checkpoint:rba}", when=_has_checkpoint),
    ),
    "replay-complete": (
        Message("CSQR004I", "RESTART - UR COUNTS - IN COMMIT=0, INDOUBT={in_doubt}, "
                            "INFLIGHT={in_flight}, IN BACKOUT=0",
                defaults={"in_doubt": 0, "in_flight": 0}),
    ),
    "uows-recovered": (
        Message("CSQR005I", "RESTART - FORWARD RECOVERY COMPLETE - IN COMMIT=0, INDOUBT={in_doubt}"),
        Message("CSQR006I", "RESTART - BACKWARD RECOVERY COMPLETE - INFLIGHT=0, IN BACKOUT=0"),
    ),
    "restart-complete": (Message("CSQR002I", "RESTART COMPLETED"),),
    # STOP QMGR, as IBM's "Stop messages" (MQ for z/OS System Setup Guide, "Stopping a queue
    # manager") lists them and the CSQY and CSQ9 message pages explain them: CSQY002I when "the
    # STOP QMGR command is accepted" (csq_y: "Message CSQ9022I is issued when the queue manager
    # shutdown process has completed"), then, when it has, CSQ9022I from CSQYASCP and CSQ3104I
    # from CSQ3EC0X. Left out: CSQY009I before CSQY002I ("' STOP QMGR' COMMAND ACCEPTED FROM
    # USER(userid), STOP MODE(...)"), as the model has no user to name, and CSQ3100I ("SUBSYSTEM
    # ssnm READY FOR START COMMAND"), which the subsystem, not the queue manager, writes. A
    # CANCEL of the address space (the preemptive end) issues no STOP QMGR: none of these.
    "qm-stopping": (Message("CSQY002I", "QUEUE MANAGER STOPPING"),),
    "qm-ended": (
        Message("CSQ9022I", "CSQYASCP ' STOP QMGR' NORMAL COMPLETION"),
        Message("CSQ3104I", "CSQ3EC0X - TERMINATION COMPLETE"),
    ),
    "CSQJ001I": (
        Message("CSQJ001I", "CURRENT COPY {copy} ACTIVE LOG DATA SET IS DSNAME={dsname}, "
                            "STARTRBA={start:rba} ENDRBA={end:rba}"),
    ),
    "CSQJ002I": (
        Message("CSQJ002I", "END OF ACTIVE LOG DATA SET DSNAME={dsname}, STARTRBA={start:rba} "
                            "ENDRBA={end:rba}"),
    ),
    "CSQJ003I": (
        Message("CSQJ003I", "FULL ARCHIVE LOG VOLUME DSNAME={dsname}, STARTRBA={start:rba} "
                            "ENDRBA={end:rba}, COPY{copy}VOL=MQLOG"),
    ),
    "CSQJ124E": (
        Message("CSQJ124E", "OFFLOAD OF ACTIVE LOG SUSPENDED FROM RBA {start:rba} TO RBA "
                            "{end:rba} DUE TO I/O ERROR"),
    ),
    "CSQJ110E": (
        Message("CSQJ110E", "LAST COPY{copy} ACTIVE LOG DATA SET IS {percent} PERCENT FULL"),
    ),
    "CSQJ111A": _OUT_OF_SPACE,
    # the queue manager says why next (…-housekeeping or …-long-uow): CSQJ111A once
    "log-full": (),
    "log-full-housekeeping": _OUT_OF_SPACE,
    "log-full-long-uow": (
        Message("CSQJ111A", "OUT OF SPACE IN ACTIVE LOG DATA SETS (URID={begin:rba} of "
                            "{application} holds the log)"),
    ),
    "rba-warning": (
        Message("CSQI045I", "Log RBA has reached {now}. Plan a log reset",
                when=_stage(1), extra=_rba_digits, defaults=_STAGE),
        Message("CSQI046E", "Log RBA has reached {now}. Perform a log reset",
                when=_stage(2), extra=_rba_digits, defaults=_STAGE),
        Message("CSQI047E", "Log RBA has reached {now}. Stop queue manager and reset logs",
                when=_stage(3), extra=_rba_digits, defaults=_STAGE),
        Message("CSQJ032E", "WARNING - APPROACHING END OF THE LOG RBA RANGE OF {range_end}. "
                            "CURRENT LOG RBA IS {now}.",
                when=lambda f: f["stage"] < 3, extra=_rba_digits, defaults=_STAGE),
        Message("CSQJ032E", "CRITICAL - APPROACHING END OF THE LOG RBA RANGE OF {range_end}. "
                            "CURRENT LOG RBA IS {now}.",
                when=lambda f: f["stage"] >= 3, extra=_rba_digits, defaults=_STAGE),
    ),
    "rba-termination": (
        Message("CSQJ032E", "CRITICAL - THE LOG RBA HAS REACHED {limit:X}: THE QUEUE MANAGER "
                            "TERMINATES WITH REASON CODE 00D10257"),
    ),
    "long-uow-at-switch": (
        Message("CSQJ160I", "LONG-RUNNING UOW FOUND, URID={begin:rba} CONNECTION NAME={application} "
                            "({checkpoints} CHECKPOINTS, FIRST RBA {first:rba})",
                when=lambda f: f["times"] == 1, defaults={"times": 1}),
        # {switches}: with OFFLOAD=NO the log switches without offloading
        Message("CSQJ161I", "UOW UNRESOLVED AFTER {times} {switches}, URID={begin:rba} "
                            "CONNECTION NAME={application}",
                when=lambda f: f["times"] != 1, defaults={"times": 1}),
    ),
    "cf-backup": (
        Message("CSQE121I", "BACKUP OF STRUCTURE {structure} COMPLETED ({bytes} BYTES)"),
    ),
    "cf-recovery-begin": (Message("CSQE130I", "RECOVERY OF STRUCTURE {structure} STARTED"),),
    "cf-recovery-complete": (
        Message("CSQE131I", "RECOVERY OF STRUCTURE {structure} COMPLETED ({records} LOG RECORDS "
                            "MERGED BY LRSN)"),
    ),
    "shunt-failed": (
        Message("CSQR027I", "UNABLE TO COMPLETE LOG SHUNTING FOR URID={begin:rba}: {bytes} "
                            "BYTES DO NOT FIT IN THE ACTIVE LOG NOW"),
    ),
    # IBM's text (support page "CSQJ160I ... CSQR026I" for a long-running SVRCONN unit of
    # work, ibm.com/support/pages/node/347143): "CSQR026I LONG-RUNNING UOW SHUNTED TO RBA=rba,
    # URID=urid CONNECTION NAME=name", written when a round of shunting is complete
    "uow-shunted": (
        Message("CSQR026I", "LONG-RUNNING UOW SHUNTED TO RBA={address:rba}, URID={begin:rba} "
                            "CONNECTION NAME={application}"),
    ),
    # One BSDS copy missing or not valid: MQ "changes to single BSDS mode and issues ...
    # CSQJ126E BSDS ERROR FORCED SINGLE BSDS MODE. This is followed by one of the following
    # messages: CSQJ107E READ ERROR ON BSDS DSNAME=... ERROR STATUS=... CSQJ108E WRITE ERROR ON
    # BSDS ..." (IBM MQ for z/OS, "BSDS problems", "I/O error"). The model has no VSAM return
    # code to give as ERROR STATUS and leaves it out. (A copy missing at start is CSQJ100E
    # "ERROR OPENING BSDSn DSNAME=..." at MQ, which ends startup; the model goes on with the
    # other copy, as it always has, and says the read error.)
    "bsds-damaged": (
        Message("CSQJ126E", "BSDS ERROR FORCED SINGLE BSDS MODE"),
        Message("CSQJ107E", "READ ERROR ON BSDS DSNAME={dsname}"),
    ),
    # Both BSDS copies valid but out of step (zos/space.py _load): IBM's text with the copies'
    # update sequence numbers for the system time stamps the model does not keep, and without
    # the UTILITY part (no utility time stamp): "CSQJ120E DUAL BSDS DATA SETS HAVE UNEQUAL TIME
    # STAMPS, SYSTEM BSDS1=...,BSDS2=..., UTILITY BSDS1=...,BSDS2=..." (IBM MQ for z/OS, "BSDS
    # problems", "Unequal time stamps"). The queue manager goes on with the more recent copy.
    "bsds-out-of-step": (
        Message("CSQJ120E", "DUAL BSDS DATA SETS HAVE UNEQUAL TIME STAMPS, SYSTEM BSDS1={seq1},BSDS2={seq2}"),
    ),
    # Active log data sets (zos/ring.py: open_data_sets, read_copies, _say_single), in IBM's
    # words ("Active log problems", "Archive log problems"), without the ERROR STATUS and SMS
    # REASON CODE fields, which come from z/OS media manager and dynamic allocation, which the
    # model does not have: "CSQJ103E LOG ALLOCATION ERROR DSNAME=dsname, ERROR STATUS=eeeeiiii,
    # SMS REASON CODE=sss"; "CSQJ106E LOG READ ERROR DSNAME=..., LOGRBA=..., ERROR
    # STATUS=ccccffss"; "CSQJ004I ACTIVE LOG COPY n INACTIVE, LOG IN SINGLE MODE, ENDRBA=...".
    "log-allocation-error": (Message("CSQJ103E", "LOG ALLOCATION ERROR DSNAME={dsname}"),),
    "log-read-error": (Message("CSQJ106E", "LOG READ ERROR DSNAME={dsname}, LOGRBA={rba:rba}"),),
    "CSQJ004I": (Message("CSQJ004I", "ACTIVE LOG COPY {copy} INACTIVE, LOG IN SINGLE MODE, ENDRBA={end:rba}"),),
    "log-disk-full": (Message("CSQJ103E", "LOG ALLOCATION ERROR: {reason}"),),
    "archive-dropped": (
        Message("", "Archive data set {dsname} dropped from the BSDS inventory (MAXARCH reached)"),
    ),
    # A queue whose file would not load (the model's queue files stand for page sets): MQ for
    # z/OS reports a page set it cannot read with CSQP004E (an I/O error, with media manager
    # codes the model does not have) and one that is not usable as offline (CSQI005I); it has
    # no message for one damaged queue, so the line carries no message id, as the
    # distributed platform's AMQ7472 does for the same event.
    "object-damaged": (Message("", "Queue {queue} damaged: {reason}"),),
    # reported, but not written to the job log
    **{event: () for event in (
        "checkpoint", "define-log", "image-failed", "media-extent", "media-image",
        "object-recreated", "restart-extent", "rollforward-no-room",
        "set-log", "uow-rolled-back", "uow-rolled-forward")},
}


def console(qm_name: str, addressing, offload: bool = True) -> MessageTable:
    """Messages for the queue manager's job log, as MQ for z/OS writes them; ``addressing``
    formats RBAs; ``offload``: archiving is on (OFFLOAD=YES), so what happens at a log switch
    is an offload."""
    return MessageTable(MESSAGES, layout="{id} {qm} {text}",
                        values={"qm": qm_name,
                                "switches": "OFFLOADS" if offload else "ACTIVE LOG SWITCHES"},
                        specs={"rba": addressing.format})


_DAYS = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_DATE_LINE = re.compile(r"^---- [A-Z]+, (\d\d) ([A-Z]{3}) (\d{4}) ----$", re.MULTILINE)
_TIME_LINE = re.compile(r"^(\d\d)\.(\d\d)\.(\d\d)\.(\d{6}) ", re.MULTILINE)


def _date_line(when) -> str:
    return f"---- {_DAYS[when.weekday()]}, {when.day:02d} {_MONTHS[when.month - 1]} {when.year} ----"


class JobLog:
    """The job log's stamped lines (see the module docstring)."""

    def entries(self, lines, base_us: float) -> str:
        out = []
        day = None  # each start of the queue manager's job log says its date first
        for at, line in timed_lines(lines, base_us):
            when = virtual_datetime(at)
            if when.date() != day:
                day = when.date()
                out.append(_date_line(when))
            out.append(f"{when:%H.%M.%S}.{when.microsecond:06d} {line}")
        return "".join(line + "\n" for line in out)

    def clock_us(self, text: str) -> float | None:
        dates, times = list(_DATE_LINE.finditer(text)), list(_TIME_LINE.finditer(text))
        if not dates or not times:
            return None
        from datetime import datetime, timedelta, timezone

        d, mon, y = dates[-1].groups()
        h, mi, s, us = map(int, times[-1].groups())
        when = datetime(int(y), _MONTHS.index(mon) + 1, int(d), h, mi, s, us, tzinfo=timezone.utc)
        return float((when - virtual_datetime(0)) // timedelta(microseconds=1))
