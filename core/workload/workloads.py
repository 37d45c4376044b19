"""The built-in workloads (``mqlog workloads``) as simulated applications issuing MQI calls in virtual time.

Each workload is a function that, given a :class:`Context`, starts SimPy processes (the
applications) on a running queue manager. Applications go through :class:`App`, which
journals what each call told the application (for ``restart --verify``) and fingerprints
the operations it *issued* – call, queue, persistence, syncpoint, payload bytes.

Each application's stream of calls is fixed by the spec and the seed; a platform's timing
changes only how the streams interleave and, for workloads bounded by a duration, how far
each one gets. So the **fingerprint** hashes the spec, the seed and the first
``FINGERPRINT_OPS`` calls of every application: two runs of one spec on different platforms
offered identical work exactly when their fingerprints agree.

Payload bytes come from :mod:`mqlog.core.workload.payload`, drawn from a generator seeded per
application, so the same spec and seed give the same bytes on every platform.

**An application ends when the queue manager says it is ending.** IBM's programmer response to
both MQRC_Q_MGR_QUIESCING (2161, "the queue manager is quiescing (preparing to shut down)") and
MQRC_Q_MGR_STOPPING (2162, "the queue manager is shutting down ... No more MQI calls can be
issued") is the same: "The application should tidy up and end" (IBM MQ docs, API reason codes
q042200_ and q042210_); a unit of work the queue manager coordinates "is backed out
automatically". So an :class:`App` whose call is refused with either journals and counts the
call as it does any refusal and then raises :class:`ApplicationEnded`, which the wrapper every
application runs in catches (:meth:`Context.start`, and :func:`applications` around the
workload itself, where applications run inline): the application's process ends cleanly at its
first such refusal, whatever loop it is in, and issues nothing more – not even MQDISC, which
the stopping queue manager would refuse too. Each application so counts at most one refused
call of an end, as a real one does.
"""

from __future__ import annotations

import hashlib
import random
from typing import Callable, Generator

import attrs
import simpy

from mqlog.core.workload.journal import Journal
from mqlog.core.workload.payload import make_payload
from mqlog.core.objects.uow import MqiError, Reason

#: calls of each application that the fingerprint covers (every platform issues at least these)
FINGERPRINT_OPS = 32

#: the reason codes that tell an application the queue manager is ending (see the module docstring)
ENDING_REASONS = (Reason.MQRC_Q_MGR_QUIESCING, Reason.MQRC_Q_MGR_STOPPING)


class ApplicationEnded(Exception):
    """An application's call was refused because the queue manager is ending, and the
    application ends: raised by :class:`App` once the call is journalled and counted, caught by
    the wrapper the application runs in (:meth:`Context.start`, :func:`applications`). Never
    leaves a workload."""


@attrs.define
class WorkloadCounters:
    """Application-level figures the workload itself knows."""

    round_trips: int = 0
    backed_out_by_qmgr: int = 0  # MQRC_BACKED_OUT seen by applications
    #: every refused MQI call (a get's MQRC_NO_MSG_AVAILABLE is no refusal: it is counted in
    #: ``no_message``), by reason code name: {"MQRC_SYNCPOINT_LIMIT_REACHED": {"reason": 2024,
    #: "calls": n}}; MQRC_BACKED_OUT is here too, as well as in ``backed_out_by_qmgr``
    failed_calls: dict = attrs.Factory(dict)
    no_message: int = 0  # gets that timed out with MQRC_NO_MSG_AVAILABLE
    #: MQCMITs that committed and the virtual µs they took, call to return (what MQ's
    #: accounting reports as a commit's elapsed time: SMF 116 on z/OS, amqsrua's on Linux)
    commits_timed: int = 0
    commit_elapsed_us: float = 0.0


#: the log writer's counters the measured window (:meth:`Context.set_up`) counts afresh
MEASURED_COUNTERS = ("physical_writes", "physical_bytes", "logical_bytes", "write_cycles", "forces_waited",
                     "write_time_total_us", "writer_busy_us", "io_busy_us", "primary_writes",
                     "primary_write_time_us")


class Context:
    """What a workload needs: the queue manager, its spec, randomness, the journal."""

    def __init__(self, env: simpy.Environment, qm, spec, seed: int, journal: Journal):
        self.env = env
        self.qm = qm
        self.spec = spec
        self.seed = seed
        self.journal = journal
        self.counters = WorkloadCounters()
        self.apps: list[App] = []
        self.payload_kind = spec.get("payload")
        #: the log writer's counters and the round trips when the measured window started,
        #: with the time and what started it (see :meth:`set_up` and :meth:`ramped`)
        self.set_up_at: dict | None = None
        #: the same figures when the workload's last call returned (:meth:`finished`)
        self.finished_at: dict | None = None
        self._ramping: set[str] | None = None

    def set_up(self) -> None:
        """The workload's set-up is done and its applications start: what the log wrote so
        far (one small forced write a definition) is not the workload's steady state, which
        IBM's figures measure (amqsrua's intervals in a run of minutes, the queues defined
        beforehand). The metrics' ``measured_*`` figures count from here – or from the end of
        the ramp (:meth:`ramped`) where the workload has one."""
        self._mark("set-up")

    def ramp(self, apps) -> None:
        """The applications (names) whose first round trip ends the ramp: once each of them
        has called :meth:`ramped`, the measured window starts again there."""
        self._ramping = set(apps)

    def ramped(self, app: str) -> None:
        """``app`` finished its first round trip. When every ramping application has, the
        run is in its steady state – as many round trips in flight as there will be at the
        end – and the measured window restarts: bytes logged for round trips still in flight
        at the end are then balanced by those in flight at the start, as in IBM's rates
        measured over minutes (from set-up, a short window of many requesters counts the
        last ones' bytes without their round trips: 4% of F13's 20 KB figure)."""
        ramping = self._ramping
        if ramping is None or app not in ramping:
            return
        ramping.discard(app)
        if not ramping:
            self._ramping = None
            self._mark("ramp-up")

    def finished(self) -> None:
        """The workload's last call returned: the measured window ends here, before what the
        shutdown writes (its checkpoint)."""
        self.finished_at = self._figures("finished")

    def _mark(self, what: str) -> None:
        self.set_up_at = self._figures(what)

    def _figures(self, what: str) -> dict:
        writer = self.qm.writer
        counters = {**writer.stats.as_dict(), **writer.busy_now()} if writer is not None else {}
        c = self.counters
        return {"us": self.env.now, "from": what, "round_trips": c.round_trips,
                "commits_timed": c.commits_timed, "commit_elapsed_us": c.commit_elapsed_us,
                **{k: counters.get(k, 0) for k in MEASURED_COUNTERS}}

    def rng_for(self, name: str) -> random.Random:
        # A string seed is hashed (SHA-512) by random.Random: stable across runs and machines.
        return random.Random(f"{self.seed}/{self.spec.workload}/{name}")

    def start(self, application: Generator) -> simpy.Process:
        """Start one application's loop as a process of its own, which ends cleanly when the
        application does (:class:`ApplicationEnded`)."""
        return self.env.process(_until_ended(application))

    def app(self, name: str) -> "App":
        app = App(self, name)
        self.apps.append(app)
        return app

    def fingerprint(self) -> str:
        """The spec, the seed and every application's first calls, applications in name order."""
        h = hashlib.sha256()
        h.update(repr((self.spec.workload, sorted(self.spec.params.items()), self.seed)).encode())
        for app in sorted(self.apps, key=lambda a: a.name):
            h.update(app.name.encode())
            h.update(app.digest.digest())
        return h.hexdigest()

    @property
    def ending(self) -> bool:
        """The queue manager was told to end (:meth:`QueueManager.end`): a loop starts no new
        unit of work and its application disconnects (a controlled shutdown waits for that;
        an immediate one refuses the calls anyway)."""
        return self.qm.ending is not None


class App:
    """One simulated application: a connection whose calls are journalled and fingerprinted."""

    def __init__(self, ctx: Context, name: str):
        self.ctx = ctx
        self.name = name
        self.conn = ctx.qm.connect(name)
        self.rng = ctx.rng_for(name)
        self.digest = hashlib.sha256()
        self.calls = 0
        # (the context's parts every call uses, held here: one attribute load a use, not two)
        self.journal, self.counters, self.env = ctx.journal, ctx.counters, ctx.env
        self._uow = 0
        #: the journal's name for the application's current unit of work: one string per
        #: unit, not per call (a log-fill's unit of work journals 10,000 messages under it)
        self.key = f"{name}.0"

    def _next_uow(self) -> None:
        """The application's unit of work ended: the next one's journal key."""
        self._uow += 1
        self.key = f"{self.name}.{self._uow}"

    def payload(self, size: int) -> bytes:
        return make_payload(self.ctx.payload_kind, size, self.rng)

    # Each call counts itself and, while it is among the first FINGERPRINT_OPS, adds itself to
    # the fingerprint: tested at the call, so that the later calls – nearly all of a run's – build
    # no tuple, make no method call and hash no payload for it.

    def _issued(self, parts: tuple) -> None:
        """Add a call (one of the first FINGERPRINT_OPS) to the fingerprint."""
        self.digest.update(repr(parts).encode())

    def _backed_out(self) -> None:
        self.journal.ended(self.key, committed=False)
        self.counters.backed_out_by_qmgr += 1
        self._next_uow()

    def put(self, queue: str, data: bytes, *, persistent: bool = True, syncpoint: bool = True,
            msg_id: bytes | None = None) -> Generator:
        """MQPUT (``msg_id``: the id to give the message, else a new one); returns the message
        id, or None if the call failed (counted)."""
        self.calls += 1
        if self.calls <= FINGERPRINT_OPS:
            self._issued(("put", queue, persistent, syncpoint, hashlib.sha256(data).digest()))
        try:
            msg_id = yield from self.conn.put(queue, data, persistent=persistent, syncpoint=syncpoint, msg_id=msg_id)
        except MqiError as exc:
            self._failed(exc)
            self._end_if_told(exc)
            return None
        self.journal.put(self.key, msg_id, queue, persistent, syncpoint)
        return msg_id

    def get(self, queue: str, *, syncpoint: bool = True, wait_us: float = 0.0,
            msg_id: bytes | None = None) -> Generator:
        """MQGET (waiting up to ``wait_us``; ``msg_id``: only that message); returns the
        message or None."""
        self.calls += 1
        if self.calls <= FINGERPRINT_OPS:
            self._issued(("get", queue, syncpoint))
        journal = self.journal
        journal.get_asked(queue, syncpoint)
        try:
            got = yield from self.conn.get(queue, syncpoint=syncpoint, wait_us=wait_us, msg_id=msg_id)
        except MqiError as exc:
            journal.get_failed(queue, syncpoint)
            if exc.reason is Reason.MQRC_NO_MSG_AVAILABLE:
                self.counters.no_message += 1
            else:
                self._failed(exc)
                self._end_if_told(exc)
            return None
        journal.got(self.key, got.msg_id, queue, syncpoint, got.persistent)
        return got

    def commit(self) -> Generator:
        """MQCMIT; True if it committed."""
        self.calls += 1
        if self.calls <= FINGERPRINT_OPS:
            self._issued(("commit",))
        journal = self.journal
        journal.commit_asked(self.key)
        started = self.env.now
        try:
            yield from self.conn.commit()
        except MqiError as exc:
            self._failed(exc)
            if exc.reason is Reason.MQRC_Q_MGR_STOPPING:
                journal.refused(self.key)
            self._end_if_told(exc)
            return False
        journal.ended(self.key, committed=True)
        counters = self.counters
        counters.commits_timed += 1
        counters.commit_elapsed_us += self.env.now - started
        self._next_uow()
        return True

    def backout(self) -> Generator:
        self.calls += 1
        if self.calls <= FINGERPRINT_OPS:
            self._issued(("backout",))
        self.journal.backout_asked(self.key)
        try:
            yield from self.conn.backout()
        except MqiError as exc:  # refused by an immediate shutdown: the unit stays in flight
            self._failed(exc)
            self.journal.refused(self.key)
            self._end_if_told(exc)
            return
        self.journal.ended(self.key, committed=False)
        self._next_uow()

    def prepare(self, xid: bytes) -> Generator:
        """Phase one of two-phase commit; the unit of work then belongs to the coordinator."""
        self.calls += 1
        if self.calls <= FINGERPRINT_OPS:
            self._issued(("prepare", xid))
        self.journal.prepare_asked(self.key)
        try:
            uow_id = yield from self.conn.prepare(xid)
        except MqiError as exc:
            self._failed(exc)
            if exc.reason is Reason.MQRC_Q_MGR_STOPPING:
                self.journal.refused(self.key)
            self._end_if_told(exc)
            return None
        self.journal.prepared(self.key, uow_id)
        self.conn.uow = None
        self._next_uow()
        return uow_id

    def _failed(self, exc: MqiError) -> None:
        # By name and number, as MQ's own trace and error reports give them: a run summary
        # can then say which refusal it was without a table of codes.
        entry = self.counters.failed_calls.setdefault(exc.reason.name, {"reason": int(exc.reason), "calls": 0})
        entry["calls"] += 1
        if exc.reason is Reason.MQRC_BACKED_OUT:
            self._backed_out()

    def _end_if_told(self, exc: MqiError) -> None:
        # After the refusal is journalled and counted: the application tidies up and ends.
        if exc.reason in ENDING_REASONS:
            raise ApplicationEnded(f"{self.name}: {exc.reason.name}")


def _until_ended(application: Generator) -> Generator:
    """Drive ``application`` (``yield from``: its events pass through unchanged, so a run in
    which no application ends early is event for event what it was without this) until it
    returns or ends at a refusal that says the queue manager is ending."""
    try:
        return (yield from application)
    except ApplicationEnded:
        return None


def applications(ctx: Context, workload: str) -> Generator:
    """Run the built-in ``workload``'s applications on ``ctx`` to their end; an application
    that runs inline in the workload's own process (log-fill's, deep-queue's) ends it as it ends."""
    return _until_ended(RUNNERS[workload](ctx))


# --- the built-ins -------------------------------------------------------------------------

def _define(ctx: Context, names, max_depth: int = 999_999_999) -> Generator:
    """The workload's set-up: define its queues (those not there yet); the measured window
    starts when it is done (:meth:`Context.set_up`)."""
    for name in names:
        if name not in ctx.qm.queues:
            yield from ctx.qm.define_queue(name, max_depth=max_depth)
    ctx.set_up()


def requester_responder(ctx: Context) -> Generator:
    """MQ-CPH style: requesters put a request and wait for the reply; responders get each
    request and put a reply of the same size; ``rate`` paces the requesters in total."""
    p = ctx.spec.get
    pairs = p("queue_pairs")
    persistent = p("persistent")
    syncpoint = persistent
    size = p("message_size")
    stop = p("duration") * 1e6
    requests = [f"CPH.REQUEST.{i:03d}" for i in range(pairs)]
    replies = [f"CPH.REPLY.{i:03d}" for i in range(pairs)]
    yield from _define(ctx, requests + replies)
    env = ctx.env
    rate = p("rate")
    interval = p("requesters") / rate * 1e6 if rate else 0.0  # mean µs between one requester's requests
    served = min(pairs, p("responders"))  # pairs with a responder: requests go round-robin over these
    think = p("think_us")

    def requester(n: int):
        app = ctx.app(f"REQUESTER{n:05d}")
        # Paced requesters follow a Poisson schedule of their own (a steady offered rate that
        # does not drift when one round trip is slow); unpaced ones go as fast as they can.
        next_at = app.rng.expovariate(1 / interval) if interval else 0.0
        i = n
        while True:
            if env.now >= stop or ctx.ending:
                return  # a slow round trip ran past the end: no waiting for the next request
            if next_at > env.now:
                yield env.timeout(min(next_at, stop) - env.now)
            if env.now >= stop or ctx.ending:
                return
            pair = i % served
            i += 1
            yield from app.put(requests[pair], app.payload(size), persistent=persistent, syncpoint=syncpoint)
            if syncpoint:
                yield from app.commit()
            got = yield from app.get(replies[pair], syncpoint=syncpoint, wait_us=max(0.0, stop - env.now))
            if got is not None:
                if syncpoint:
                    yield from app.commit()
                ctx.counters.round_trips += 1
                ctx.ramped(app.name)
            if think:
                yield env.timeout(think)  # the requester's own work before its next request
            if interval:
                next_at += app.rng.expovariate(1 / interval)

    def responder(n: int):
        app = ctx.app(f"RESPONDER{n:05d}")
        pair = n % served
        while env.now < stop and not ctx.ending:
            got = yield from app.get(requests[pair], syncpoint=syncpoint, wait_us=max(0.0, stop - env.now))
            if got is None:
                continue
            yield from app.put(replies[pair], app.payload(len(got.data)), persistent=persistent, syncpoint=syncpoint)
            if syncpoint:
                yield from app.commit()

    procs = [ctx.start(responder(n)) for n in range(p("responders"))]
    procs += [ctx.start(requester(n)) for n in range(p("requesters"))]
    # the ramp ends when every requester has had its first reply (MQ-CPH's figures are
    # steady-state rates)
    ctx.ramp(f"REQUESTER{n:05d}" for n in range(p("requesters")))
    yield simpy.AllOf(env, procs)


def putget_pairs(ctx: Context) -> Generator:
    """Each pair has its own queue: a putter puts (and commits) messages, a getter gets them."""
    p = ctx.spec.get
    pairs, count, size = p("pairs"), p("messages_per_pair"), p("message_size")
    syncpoint, persistent = p("syncpoint"), p("persistent")
    think = p("think_us")
    queues = [f"PAIR.{i:05d}" for i in range(pairs)]
    yield from _define(ctx, queues)
    env = ctx.env

    def putter(i: int):
        app = ctx.app(f"PUTTER{i:05d}")
        for _ in range(count):
            if ctx.ending:
                return
            yield from app.put(queues[i], app.payload(size), persistent=persistent, syncpoint=syncpoint)
            if syncpoint:
                yield from app.commit()
            if think:
                # The putter's own work between messages; the getter takes each as it comes.
                # (No zero timeout when there is none: it would reorder events, and so change
                # every figure of a run that asked for no think time.)
                yield env.timeout(think)

    def getter(i: int):
        app = ctx.app(f"GETTER{i:05d}")
        for _ in range(count):
            if ctx.ending:
                return
            got = yield from app.get(queues[i], syncpoint=syncpoint, wait_us=60e6)
            if got is None:
                return
            if syncpoint:
                yield from app.commit()

    procs = [ctx.start(getter(i)) for i in range(pairs)] + [ctx.start(putter(i)) for i in range(pairs)]
    yield simpy.AllOf(env, procs)


def putget(ctx: Context) -> Generator:
    """MQ-CPH's PutGet: each application puts a message to its own queue and gets it back,
    committing each call when under syncpoint, ``messages`` times, with ``think_us`` of its
    own work between iterations. Outside syncpoint there is nothing to commit."""
    p = ctx.spec.get
    apps, count, size = p("apps"), p("messages"), p("message_size")
    syncpoint, persistent, think = p("syncpoint"), p("persistent"), p("think_us")
    queues = [f"PUTGET.{i:05d}" for i in range(apps)]
    yield from _define(ctx, queues)
    env = ctx.env

    def app_loop(i: int):
        app = ctx.app(f"PUTGET{i:05d}")
        queue = queues[i]
        for _ in range(count):
            if ctx.ending:
                return
            yield from app.put(queue, app.payload(size), persistent=persistent, syncpoint=syncpoint)
            if syncpoint:
                yield from app.commit()
            # Its own message is on its own queue (committed, or put outside any unit of
            # work): the get finds it at once unless the put failed, so it does not wait.
            got = yield from app.get(queue, syncpoint=syncpoint)
            if got is not None:
                if syncpoint:
                    yield from app.commit()
                ctx.counters.round_trips += 1
            if think:
                yield env.timeout(think)

    yield simpy.AllOf(env, [ctx.start(app_loop(i)) for i in range(apps)])


def long_uow(ctx: Context) -> Generator:
    """One unit of work opens early and never commits (or is prepared and never resolved)
    while background workers keep logging: the log must act (roll back, roll forward, shunt)."""
    p = ctx.spec.get
    size, stop = p("message_size"), p("duration") * 1e6
    background = p("background")
    queues = ["LONG.UOW"] + [f"BACKGROUND.{i:04d}" for i in range(background)]
    yield from _define(ctx, queues)
    env = ctx.env

    def long_app():
        app = ctx.app("LONGUOW")
        for _ in range(p("long_messages")):
            yield from app.put("LONG.UOW", app.payload(size))
        if p("prepared"):
            yield from app.prepare(b"MQLOG.LONG.UOW.XID")
            return  # the coordinator never answers: in doubt to the end
        yield env.timeout(max(0.0, stop - env.now))
        if ctx.ending:
            return  # ended while it waited: its unit is left in flight
        # It never commits. It comes back for one more put – which is how it learns, with
        # MQRC_BACKED_OUT, if the queue manager backed it out to free log space – then gives up.
        yield from app.put("LONG.UOW", app.payload(size))
        yield from app.backout()

    def worker(i: int):
        app = ctx.app(f"BACKGROUND{i:04d}")
        queue = queues[1 + i]
        while env.now < stop and not ctx.ending:
            yield from app.put(queue, app.payload(size))
            yield from app.commit()
            yield from app.get(queue, wait_us=1e6)
            yield from app.commit()

    procs = [ctx.start(long_app())] + [ctx.start(worker(i)) for i in range(background)]
    yield simpy.AllOf(env, procs)


def log_fill(ctx: Context) -> Generator:
    """One uncommitted message held open per queue, then a stream of messages in units of
    work: the held units pin the log's tail while the stream fills it.

    ``commit`` true commits each unit, false backs each out, both one unit after another on
    one connection; ``never`` is IBM's restart-time experiment: ``transactions`` units, each
    on a connection of its own, take the messages round-robin (message i goes to unit
    i % transactions) and all stay open when the workload ends, so a crash then leaves them
    in flight. A put beyond MAXUMSGS is refused (MQRC 2024) and counted, as any failed call."""
    p = ctx.spec.get
    queues = [f"FILL.{i:04d}" for i in range(p("queues"))]
    size, total, transactions = p("message_size"), p("messages"), p("transactions")
    commit = p("commit")
    yield from _define(ctx, queues)
    env = ctx.env
    for i, queue in enumerate(queues):
        holder = ctx.app(f"HOLDER{i:04d}")
        yield from holder.put(queue, holder.payload(size))
    if commit == "never":
        # Units that would get no message never begin: there are at most as many as messages.
        units = [ctx.app(f"FILLER{u:08d}") for u in range(min(transactions, total))]
        for sent in range(total):
            if ctx.ending:
                break
            unit = units[sent % transactions]
            yield from unit.put(queues[sent % len(queues)], unit.payload(size))
        yield env.timeout(0)
        return
    filler = ctx.app("FILLER")
    per = max(1, -(-total // transactions))
    sent = 0
    while sent < total and not ctx.ending:
        for _ in range(min(per, total - sent)):
            yield from filler.put(queues[sent % len(queues)], filler.payload(size))
            sent += 1
        if commit:
            yield from filler.commit()
        else:
            yield from filler.backout()
    yield env.timeout(0)


def deep_queue(ctx: Context) -> Generator:
    """Queues pre-loaded with many committed messages, then a small workload beside them."""
    p = ctx.spec.get
    queues = [f"DEEP.{i:04d}" for i in range(p("queues"))]
    size = p("message_size")
    yield from _define(ctx, queues)
    loader = ctx.app("LOADER")
    for i in range(p("depth") * len(queues)):  # depth messages on each queue
        if ctx.ending:
            break  # (its unit of work is committed below, as a controlled end lets it)
        yield from loader.put(queues[i % len(queues)], loader.payload(size))
        if i % 100 == 99:
            yield from loader.commit()
    yield from loader.commit()
    worker = ctx.app("WORKER")
    for i in range(p("then_messages")):
        if ctx.ending:
            return
        queue = queues[i % len(queues)]
        yield from worker.put(queue, worker.payload(size))
        yield from worker.commit()
        yield from worker.get(queue)
        yield from worker.commit()


#: name -> the function that runs it
RUNNERS: dict[str, Callable[[Context], Generator]] = {
    "requester-responder": requester_responder,
    "putget-pairs": putget_pairs,
    "putget": putget,
    "long-uow": long_uow,
    "log-fill": log_fill,
    "deep-queue": deep_queue,
}
