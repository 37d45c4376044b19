"""The distributed queue manager's messages for its error log (AMQERR01.LOG), in MQ's words and
ids: one table from each event the queue manager and the log space report to the lines
written for it (a message id and a text template, see :mod:`mqlog.core.messages`). ``{qm}``
is the queue manager's name and ``{address:lsn}`` an LSN as MQ prints it. Messages without an
id are the model's own notes; events mapped to no lines are known and say nothing.

:class:`AmqErrLog` lays the file out as MQ does, an entry a message: a header whose first line
is the date and time, the message, and a dashed line. The header's layout is MQ's as the
Elastic Filebeat ``ibmmq`` module parses it (``Process(…) User(…) Program(…) Host(…)
Installation(…) VRMF(…) QMgr(…) Time(<ISO 8601>) …``, then ``AMQnnnnX: text``,
``EXPLANATION:``, ``ACTION:``). Kept: the date and time – of the run's virtual clock, from
:data:`~mqlog.core.messages.VIRTUAL_EPOCH`, to the µs where MQ gives ms – and QMgr(). Left
out, because the model has no such thing or no IBM text for it: Process, User, Program,
Host, Installation, VRMF, the inserts, and the EXPLANATION and ACTION paragraphs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import re

from mqlog.core.messages import Message, MessageTable, cut_at_written_end, timed_lines, virtual_datetime
from mqlog.distributed.space import format_lsn

__all__ = ["MESSAGES", "AmqErrLog", "console"]


def _clean_end(fields: Mapping[str, Any]) -> bool:
    return fields["end"].reason == "end"


_LOG_FULL = (Message("AMQ7463", "The log for queue manager {qm} is full."),)

MESSAGES: dict[str, tuple[Message, ...]] = {
    # channels (the MCA's messages, IBM MQ 9.3 "AMQ9000-9999 (IBM MQ for Multiplatforms)")
    "channel-starting": (Message("AMQ9002I", "Channel '{channel}' is starting."),),
    "channel-started": (),
    "channel-ended": (Message("AMQ9001I", "Channel '{channel}' ended normally."),),
    "channel-lost": (Message("AMQ9999E", "Channel '{channel}' to host '{partner}' ended abnormally."),),
    "channel-retrying": (Message("AMQ9202E", "Remote host '{partner}' not available, retry later."),),
    # (no IBM message found for a sender resynchronising at start: the model's own note)
    "channel-resolved": (Message("", "Channel '{channel}' resynchronised with its partner: {committed} batch(es) "
                                     "in doubt committed, {backed_out} backed out."),),
    "restart-begin": (
        Message("AMQ5037I", "The queue manager task 'LOGGER' has started."),
    ),
    "replay-complete": (
        Message("AMQ7229I", "{records} log records accessed on queue manager '{qm}' during the "
                            "log replay phase."),
        Message("AMQ7230I", "Log replay for queue manager '{qm}' complete.", when=_clean_end),
        Message("AMQ7230I", "Log replay for queue manager '{qm}' complete. The log ends: end of "
                            "written log at LSN {end.address:lsn} (the last record, cut short there, was "
                            "never acknowledged).", when=cut_at_written_end),
        Message("AMQ7230I", "Log replay for queue manager '{qm}' complete. The log ends at a "
                            "damaged or torn page: {end.problem}.",
                when=lambda f: not _clean_end(f) and not cut_at_written_end(f)),
    ),
    # IBM's three lines after replay, in its words (as MQ 9.3 writes them to AMQERR01.LOG):
    # the records the recovery phase read (here: walking the in-flight units back), the
    # transaction manager's state, and how many of the in-flight units were resolved – backed
    # out; units in doubt stay unresolved until their coordinator decides.
    "uows-recovered": (
        Message("AMQ7231I", "{records} log records accessed on queue manager '{qm}' during the "
                            "recovery phase."),
        Message("AMQ7232I", "Transaction manager state recovered for queue manager '{qm}'."),
        Message("AMQ7233I", "{backed_out} out of {in_flight} in-flight transactions resolved for "
                            "queue manager '{qm}'."),
    ),
    "restart-complete": (
        Message("AMQ8003I", "IBM MQ queue manager '{qm}' started ({seconds:.6f} virtual seconds)."),
    ),
    # endmqm -c or -i has ended the queue manager (after its shutdown checkpoint): IBM's
    # AMQ8004I, "IBM MQ queue manager <insert_5> ended." (severity 0, AMQ8xxx: Administration,
    # IBM MQ 9.2 docs, amq8), as MQ writes it to AMQERR01.LOG and a container's output, e.g.
    # "AMQ8004I: IBM MQ queue manager 'QM1' ended.". Nothing when the command is accepted (IBM
    # documents no message for it), nor after endmqm -p, which kills the processes before they
    # could say anything (no documented message either): the model says nothing it cannot cite.
    "qm-ended": (Message("AMQ8004I", "IBM MQ queue manager '{qm}' ended."),),
    "uow-rolled-back": (
        Message("AMQ7469", "Transactions rolled back to release log space. Unit of work {uow:X} "
                           "of application {application} was rolled back."),
    ),
    "uow-rolled-forward": (
        Message("AMQ7469", "Transactions rolled forward to release log space. Prepared unit of "
                           "work {uow:X} was re-logged at the head of the log."),
    ),
    "log-full": _LOG_FULL,
    "AMQ7463": _LOG_FULL,
    "log-full-long-uow": (
        Message("AMQ7465", "The log for queue manager {qm} is full because a long-running "
                           "transaction (unit of work {uow:X} of application {application}) has "
                           "prevented log space from being released."),
    ),
    "log-full-housekeeping": (
        Message("AMQ7466", "There is a problem with the size of the log for queue manager {qm}: "
                           "log records are being written faster than housekeeping can release "
                           "space. Increase the number of log files or reduce the rate of "
                           "logging."),
    ),
    "rollforward-no-room": (
        Message("AMQ7465", "Prepared unit of work {uow:X} cannot be re-logged to release log "
                           "space: it needs about {needed} bytes the log does not have. It holds "
                           "the log until its coordinator resolves it."),
    ),
    "restart-extent": (
        Message("AMQ7467I", "The oldest log file required to start queue manager {qm} is "
                           "{extent}."),
    ),
    "media-extent": (
        Message("AMQ7468I", "The oldest log file required to perform media recovery of queue "
                           "manager {qm} is {extent}."),
    ),
    "media-image": (
        Message("", "Media image of queue {queue} recorded ({bytes} bytes from LSN "
                    "{address:lsn})."),
    ),
    "object-damaged": (Message("AMQ7472", "Object {queue}, type queue damaged. {reason}"),),
    "object-recreated": (
        Message("", "Queue {queue} re-created from its media image at LSN {address:lsn} and "
                    "{records} log records."),
    ),
    "extent-missing": (
        Message("AMQ6767", "Log file {extent} for queue manager {qm} could not be opened: it is "
                           "needed for restart or media recovery but is not in the log "
                           "directory."),
    ),
    "log-disk-full": (
        Message("AMQ6708", "A disk full condition was encountered when formatting a new log file "
                           "for queue manager {qm}: {reason}"),
    ),
    "extent-archived-again": (Message("", "Log extent {extent} was already marked as archived."),),
    # reported, but not written to the error log
    **{event: () for event in (
        "checkpoint", "extent-reusable", "image-failed", "long-uow-at-switch", "qm-stopping",
        "secondary-released", "shunt-failed", "uow-shunted")},
}


def console(qm_name: str) -> MessageTable:
    """Messages for the error log (AMQERR01.LOG), in MQ's words and ids."""
    return MessageTable(MESSAGES, layout="{id}: {text}", values={"qm": qm_name},
                        specs={"lsn": format_lsn})


_TIME = re.compile(r"Time\((\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{6})Z\)")
_RULE = "-" * 79


class AmqErrLog:
    """AMQERR01.LOG's entries (see the module docstring) for queue manager ``qm_name``."""

    def __init__(self, qm_name: str):
        self.qm_name = qm_name

    def entries(self, lines, base_us: float) -> str:
        out = []
        for at, line in timed_lines(lines, base_us):
            when = virtual_datetime(at)
            hour = when.hour % 12 or 12
            out += [f"{when:%m/%d/%Y} {hour:02d}:{when:%M:%S} {'AM' if when.hour < 12 else 'PM'} - "
                    f"QMgr({self.qm_name})",
                    f"{'':<24}Time({when:%Y-%m-%dT%H:%M:%S}.{when.microsecond:06d}Z)", "", line, _RULE]
        return "".join(line + "\n" for line in out)

    def clock_us(self, text: str) -> float | None:
        found = _TIME.findall(text)
        if not found:
            return None
        from datetime import datetime, timedelta, timezone

        y, mo, d, h, mi, s, us = map(int, found[-1])
        return float((datetime(y, mo, d, h, mi, s, us, tzinfo=timezone.utc) - virtual_datetime(0))
                     // timedelta(microseconds=1))
