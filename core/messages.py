"""Console messages as tables: each event the queue manager reports (``qm.say(event, ...)``) maps
to the lines a platform writes for it, each a message id and a text template over the event's
fields. A :class:`MessageTable` is a platform's console hook: it picks the event's lines (a
line may apply only when its ``when`` says so), fills the templates with ``str.format`` – the
fields, the table's own values such as the queue manager's name, and format specs of the
platform's own such as ``{checkpoint:rba}`` – and lays each out with its id. An event mapped
to no lines is known and says nothing; an event not in the table gives None too. The
reference platform's plain messages, without ids, are here as well.
"""

from __future__ import annotations

import string
from collections import ChainMap
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from mqlog.core.format.records import NO_ADDRESS

__all__ = ["REFERENCE_CONSOLE", "REFERENCE_MESSAGES", "Message", "MessageTable", "Said", "VIRTUAL_EPOCH",
           "cut_at_written_end"]

#: The virtual clock's zero as a date, for platforms whose logs stamp their lines with a date
#: and time: a fixed date, never the wall clock, so that the same spec and seed give the
#: same bytes. A queue manager's clock runs from it: a run's events at their virtual time,
#: a later restart's after the run's end (see the platforms' error-log formats).
VIRTUAL_EPOCH = (2026, 1, 1)


class Said(str):
    """A console line as the queue manager said it (``qm.messages``): the text, as a str
    every reader may use as it is, and ``at_us``, the virtual time (µs on the queue
    manager's clock) of the event it reports, which a platform's log stamps it with."""

    at_us: float

    def __new__(cls, text: str, at_us: float):
        said = super().__new__(cls, text)
        said.at_us = at_us
        return said

    def __reduce__(self):  # kept whole when copied or sent to another process
        return (Said, (str(self), self.at_us))


@attrs.frozen
class Message:
    """One line of a message: its id ("" for none) and the text after it, a ``str.format``
    template. ``when`` (a test of the fields) says whether the line is written at all;
    ``extra`` adds fields the template needs that plain formatting cannot make."""

    id: str
    text: str
    when: Callable[[Mapping[str, Any]], bool] | None = None
    extra: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    defaults: Mapping[str, Any] = attrs.field(factory=dict)


#: lines a console keeps made (:attr:`MessageTable._made`); it starts again when full
MADE_MAX = 4096
_UNMADE = object()


class _Formatter(string.Formatter):
    def __init__(self, specs: Mapping[str, Callable[[Any], str]]):
        self.specs = specs

    def format_field(self, value: Any, format_spec: str) -> str:
        special = self.specs.get(format_spec)
        return special(value) if special is not None else super().format_field(value, format_spec)


@attrs.frozen
class MessageTable:
    """A platform's console: ``table(event, fields)`` is the message, or None.

    ``layout`` places a line's id and text (it may also use ``values``); a line without an id
    is its text alone. ``values`` are fields every template may use; ``specs`` are format
    specs of the platform's own (``{address:lsn}``), each a function of the value.
    """

    table: Mapping[str, tuple[Message, ...]]
    layout: str = "{id} {text}"
    values: Mapping[str, Any] = attrs.field(factory=dict)
    specs: Mapping[str, Callable[[Any], str]] = attrs.field(factory=dict)
    #: the lines already made, by event and fields: a log that stays full says the same
    #: messages at every checkpoint (a round of shunting refused and a long-running unit of
    #: work, for each of hundreds of units, thousands of times), and formatting them was
    #: most of such a run's time
    _made: dict = attrs.field(factory=dict, init=False, eq=False, repr=False)

    def __call__(self, event: str, fields: Mapping[str, Any]) -> str | None:
        lines = self.table.get(event)
        if not lines:
            return None
        try:  # (each value's type too: 1, 1.0 and True are equal keys but print differently)
            key = (event, *((name, type(value), value) for name, value in sorted(fields.items())))
            made = self._made.get(key, _UNMADE)
        except TypeError:  # a field that cannot be a key (a list, say): made every time
            return self._make(lines, fields)
        if made is _UNMADE:
            if len(self._made) >= MADE_MAX:
                self._made.clear()
            made = self._made[key] = self._make(lines, fields)
        return made

    def _make(self, lines: tuple[Message, ...], fields: Mapping[str, Any]) -> str | None:
        formatter = _Formatter(self.specs)
        out = []
        for line in lines:
            known = ChainMap(dict(fields), self.values, line.defaults)
            if line.when is not None and not line.when(known):
                continue
            if line.extra is not None:
                known = known.new_child(dict(line.extra(known)))
            text = formatter.vformat(line.text, (), known)
            out.append(formatter.vformat(self.layout, (), ChainMap({"id": line.id, "text": text},
                                                                  self.values))
                       if line.id else text)
        return "\n".join(out) if out else None


def virtual_datetime(us: float):
    """The date and time ``us`` µs after :data:`VIRTUAL_EPOCH` (UTC, to the µs)."""
    from datetime import datetime, timedelta, timezone

    return datetime(*VIRTUAL_EPOCH, tzinfo=timezone.utc) + timedelta(microseconds=round(us))


def timed_lines(lines, base_us: float) -> list[tuple[float, str]]:
    """Each line of ``lines`` (``qm.messages``; one message may hold several lines) with its
    time on the clock that starts at ``base_us``: a :class:`Said` at its event's time, a
    plain line (said outside the queue manager, without a time) at the time of the line
    before it. Never earlier than the line before, so a log's stamps do not go back."""
    out = []
    last = base_us
    for message in lines:
        at = message.at_us if isinstance(message, Said) else None
        last = max(last, base_us + at) if at is not None else last
        out.extend((last, line) for line in str(message).splitlines())
    return out


def _from_start(fields: Mapping[str, Any]) -> bool:
    return fields["checkpoint"] == NO_ADDRESS


def _clean_end(fields: Mapping[str, Any]) -> bool:
    return fields["end"].reason == "end"


def cut_at_written_end(fields: Mapping[str, Any]) -> bool:
    """Whether the log simply ends, its last record cut short by space never written: the
    crash came while that record's write was on its way, so nothing in it was acknowledged.
    That is how a log ends after a crash, not damage: a torn or damaged page is worded so."""
    from mqlog.core.format.pages import STALE, UNWRITTEN

    end = fields["end"]
    return end.reason == "incomplete" and end.problem in (UNWRITTEN, STALE)


#: The reference platform's messages: plain text, no message ids (platforms have their own).
REFERENCE_MESSAGES: dict[str, tuple[Message, ...]] = {
    # channels (mqlog.core.workload.channels): the reference platform's plain notes
    "channel-starting": (),
    "channel-started": (Message("", "Channel {channel} started"),),
    "channel-ended": (Message("", "Channel {channel} ended normally"),),
    "channel-lost": (Message("", "Channel {channel} to {partner} ended abnormally: the link failed"),),
    "channel-retrying": (Message("", "Channel {channel}: {partner} not available, retrying"),),
    "channel-resolved": (Message("", "Channel {channel} resynchronised: {committed} batch(es) in doubt "
                                     "committed, {backed_out} backed out"),),
    "restart-begin": (
        Message("", "Restart: recovering from the checkpoint at the start of the log", when=_from_start),
        Message("", "Restart: recovering from the checkpoint at {checkpoint:016X}",
                when=lambda f: not _from_start(f)),
    ),
    "replay-complete": (
        Message("", "Replay complete: {records} log records replayed; the log ends: {end.reason}",
                when=_clean_end),
        Message("", "Replay complete: {records} log records replayed; the log ends: end of written log at "
                    "{end.address:016X} (the last record, cut short there, was never acknowledged)",
                when=cut_at_written_end),
        Message("", "Replay complete: {records} log records replayed; the log ends: {end.reason} "
                    "({end.problem} at {end.source} offset {end.offset})",
                when=lambda f: not _clean_end(f) and not cut_at_written_end(f)),
    ),
    "uows-recovered": (
        Message("", "Units of work recovered: {committed} committed during replay, "
                    "{backed_out} backed out, {in_doubt} in doubt"),
    ),
    "restart-complete": (Message("", "Restart complete in {seconds:.6f} virtual seconds"),),
    "uow-rolled-back": (
        Message("", "Unit of work {uow:X} of {application} rolled back to release log space"),
    ),
    "uow-rolled-forward": (
        Message("", "Unit of work {uow:X} of {application} rolled forward to release log space"),
    ),
    # the rest of what the core reports, the reference platform does not say
    **{event: () for event in (
        "checkpoint", "image-failed", "log-disk-full", "log-full", "log-full-housekeeping",
        "log-full-long-uow", "long-uow-at-switch", "media-extent", "media-image",
        "object-damaged", "object-recreated", "qm-ended", "qm-stopping", "restart-extent",
        "rollforward-no-room", "shunt-failed", "uow-shunted")},
}

REFERENCE_CONSOLE = MessageTable(REFERENCE_MESSAGES, layout="{text}")
