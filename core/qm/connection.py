"""An application's connection to the queue manager (an HCONN), and what MQGET hands back.

A :class:`Connection` carries the application's current unit of work and turns each MQI
call into a generator the application drives (``msg_id = yield from conn.put(...)``): the
application's own CPU around the call and the call's path are charged first, on one of the
host's cores (:class:`mqlog.core.host.profiles.Cpu`, priced by the call's kind), the queue
manager does the work (charging what persistent work adds where it logs and forces), and a
unit of work the queue manager backed out ends for the application when it is told so.
"""

from __future__ import annotations

import attrs

from mqlog.core.objects.uow import MqiError, Reason, UnitOfWork


@attrs.frozen
class GotMessage:
    """What MQGET hands the application."""

    msg_id: bytes
    data: bytes
    persistent: bool


class Connection:
    """One application's connection (an HCONN): its current unit of work and its MQI calls."""

    def __init__(self, qm, application: str):
        self.qm = qm  # the QueueManager (not imported: it imports this module)
        self.application = application
        self.uow: UnitOfWork | None = None
        self._in_call: UnitOfWork | None = None  # the unit this call marked busy (no shunting)

    # Every call is a generator: ``result = yield from conn.put(...)``. Each method returns
    # _call's generator itself rather than delegating to it (``yield from``): one generator
    # layer fewer on every MQI call, and every event of the call passes through each layer.

    def put(self, queue: str, data: bytes, *, persistent: bool = True, syncpoint: bool = True,
            msg_id: bytes | None = None):
        """MQPUT; ``msg_id``: the message's id as given (a channel's receiving agent keeps the
        id the message was sent with), else a new one."""
        return self._call("put", self.qm._put(self, queue, data, persistent, syncpoint, msg_id))

    def get(self, queue: str, *, syncpoint: bool = True, wait_us: float = 0.0, msg_id: bytes | None = None):
        """MQGET; ``msg_id``: only that message (MQMO_MATCH_MSG_ID), else the oldest."""
        return self._call("get", self.qm._get(self, queue, syncpoint, wait_us, msg_id))

    def commit(self):
        return self._call("commit", self.qm._commit(self))

    def backout(self):
        return self._call("backout", self.qm._backout(self))

    def prepare(self, xid: bytes = b""):
        """Phase one of two-phase commit; afterwards only the coordinator's commit/backout."""
        return self._call("prepare", self.qm._prepare(self, xid))

    def _call(self, kind: str, call):
        # The application's side first (its own CPU around the call), then the call's path
        # as a non-persistent call of its kind: one hold of one core for both. Calls are never
        # free, so even work that logs nothing moves the clock and competes for the cores.
        qm = self.qm
        if qm.ending == "immediate":
            call.close()
            raise qm.refusal()  # endmqm -i: "any MQI requests made after the command starts fail"
        cpu = qm.cpu
        profile = cpu.profile
        qm._calls += 1  # in progress from its entry: an immediate shutdown waits for it
        try:
            # (an MQPUT's or MQGET's own path is charged with its queue's lock held: mqi.py;
            # the application's CPU by position, app_us: a keyword costs every call more)
            yield from cpu.charge(0.0 if kind == "put" else profile.call_us(kind), "mqi", profile.app_call_us)
            try:
                return (yield from call)
            except MqiError as exc:
                # MQRC_BACKED_OUT ends the unit of work: the application's next call starts afresh.
                if exc.reason is Reason.MQRC_BACKED_OUT and self.uow is not None and self.uow.doomed:
                    self.uow = None
                raise
            finally:
                if self._in_call is not None:
                    self._in_call.in_call -= 1
                    self._in_call = None
        finally:
            qm._call_ended()
