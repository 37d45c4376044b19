"""Host profiles and the simulated CPU that MQI calls are charged to.

What this models: the *host*, not the storage. A :class:`HostProfile` says how many cores
the queue manager and its applications share and how much CPU each MQI call takes on one
of them, by kind (put, get, commit, backout, prepare), with extras for persistent work
(the extra path of a persistent put or get, each record a call logs, the per-byte copy of
persistent message data, and the wakeup of a call that had to wait for a log force), plus
the application's own CPU around each call, and the CPU of compressing and expanding
persistent message data where a platform's codec does (z/OS ``COMPLOG``: per byte, per
algorithm), and restart's own CPU (per log record replayed, per message's index entry loaded
from a queue file, per uncommitted message reconciled with its queue). :class:`Cpu` is those cores in a SimPy
simulation: a FIFO pool of ``cores`` (:class:`Cores`, a ``simpy.Resource(capacity=cores)``
without its scheduling overhead); every charge takes a core, holds it for the charge and
gives it back, so when more calls want CPU than there are cores they queue, and group
commit batches only what the CPU lets arrive.

What it does not model: hyperthreads (cores are physical), caches, NUMA and the scheduler's
time slices (a charge holds its core to the end). A charge's length varies by the profile's
``cpu_jitter`` (a seeded uniform factor: the same seed, the same run); without it,
applications that start in step stay in step, and which of two phase-locked regimes a run
falls into decides its figures (docs/research/issue38-zos-commit-size.md).
Restart runs one thread (:mod:`mqlog.core.recovery`): it charges its CPU to these cores
serially, as kind ``restart``, so a restarted queue manager's ``cpu`` counters show it.

Profiles are data: the built-in table is ``hosts.toml`` in this package (``v93-xeon``, the
default, and ``v91-xeon``), whose comments show how IBM's published CPU per round trip
was split between the fields; a user can write their own TOML file of the same shape,
optionally inheriting from a built-in with ``base = "v93-xeon"``. :func:`get_host` selects
one by name or by ``file.toml[:name]``. Nothing in a file is evaluated.
"""

from __future__ import annotations

import collections
import os
import random
from collections.abc import Generator
from typing import Any

import attrs
import simpy

from mqlog.core.errors import HostProfileError
from mqlog.core.catalogue import ProfileCatalogue, as_float, check_range, check_text

__all__ = [
    "HostProfile",
    "Cpu",
    "Cores",
    "CALL_KINDS",
    "CODEC_ALGORITHMS",
    "DEFAULT_HOST",
    "HOST_FIELDS",
    "MAX_CORES",
    "MAX_CALL_US",
    "load_hosts",
    "get_host",
]

#: the host a run uses unless told otherwise: IBM's current report, paired with NVMe (``ssd``)
DEFAULT_HOST = "v93-xeon"
#: the MQI calls a profile prices
CALL_KINDS = ("put", "get", "commit", "backout", "prepare")
#: upper bound on a profile's cores
MAX_CORES = 4096
#: upper bound on any one CPU figure: one second, in µs
MAX_CALL_US = 1_000_000.0
#: upper bound on the copy cost, ns per byte (1 µs a byte: far slower than any memcpy)
MAX_COPY_NS = 1000.0
#: the compression algorithms a profile prices (a codec's name, lower case: ``Codec.RLE.name``)
CODEC_ALGORITHMS = ("rle", "zstd")



def _check_range(lo: float, hi: float, unit: str = "", *, integer: bool = False):
    """An attrs validator raising :class:`ParameterError` named ``host.<field>``."""
    return check_range("host.", lo, hi, unit, integer=integer)


_check_text = check_text("host.")
_us = _check_range(0.0, MAX_CALL_US, " µs")


@attrs.frozen
class HostProfile:
    """The CPU model of one host. Times are µs of one core; ``copy_ns_per_byte`` is ns.

    Frozen and validated: out-of-range values raise
    :class:`~mqlog.core.errors.ParameterError` naming ``host.<field>``. Derive a variant
    with ``attrs.evolve(profile, name="small", cores=4)``, which validates again.
    """

    name: str = attrs.field(validator=_check_text)
    description: str = attrs.field(validator=_check_text)
    #: where the figures come from and how the round trip's CPU was split
    source: str = attrs.field(validator=_check_text)
    cores: int = attrs.field(validator=_check_range(1, MAX_CORES, integer=True))
    put_us: float = attrs.field(converter=as_float, validator=_us)
    get_us: float = attrs.field(converter=as_float, validator=_us)
    commit_us: float = attrs.field(converter=as_float, validator=_us)
    backout_us: float = attrs.field(converter=as_float, validator=_us)
    prepare_us: float = attrs.field(converter=as_float, validator=_us)
    persistent_put_us: float = attrs.field(converter=as_float, validator=_us)
    persistent_get_us: float = attrs.field(converter=as_float, validator=_us)
    log_record_us: float = attrs.field(converter=as_float, validator=_us)
    force_wait_us: float = attrs.field(converter=as_float, validator=_us)
    copy_ns_per_byte: float = attrs.field(converter=as_float,
                                          validator=_check_range(0.0, MAX_COPY_NS, " ns/byte"))
    app_call_us: float = attrs.field(converter=as_float, validator=_us)
    #: CPU per byte offered to a compressor, and per byte it expands back to, by algorithm
    #: (ns; see hosts.toml for where each figure comes from)
    rle_compress_ns_per_byte: float = attrs.field(converter=as_float,
                                                  validator=_check_range(0.0, MAX_COPY_NS, " ns/byte"))
    rle_expand_ns_per_byte: float = attrs.field(converter=as_float,
                                                validator=_check_range(0.0, MAX_COPY_NS, " ns/byte"))
    zstd_compress_ns_per_byte: float = attrs.field(converter=as_float,
                                                   validator=_check_range(0.0, MAX_COPY_NS, " ns/byte"))
    zstd_expand_ns_per_byte: float = attrs.field(converter=as_float,
                                                 validator=_check_range(0.0, MAX_COPY_NS, " ns/byte"))
    #: restart's CPU (see hosts.toml for how each is derived from the figures above): per log
    #: record replayed (decoded and redone in memory; the bytes read are copied at
    #: ``copy_ns_per_byte`` besides), per message's index entry loaded from a queue file, and
    #: per uncommitted message reconciled with its queue (backed out: removed or restored)
    replay_record_us: float = attrs.field(converter=as_float, validator=_us)
    load_message_us: float = attrs.field(converter=as_float, validator=_us)
    reconcile_message_us: float = attrs.field(converter=as_float, validator=_us)
    #: the log writer's CPU to wake one caller whose force its write satisfied (a futex wake
    #: system call on the writer's thread, which wakes its waiters one after another before
    #: it starts its next write)
    wake_us: float = attrs.field(default=2.5, converter=as_float, validator=_us)
    #: the log writer's CPU for each physical write it starts: issuing the I/O and being
    #: dispatched again when it completes (a platform whose logger task pays it:
    #: ``Platform.writer_io_cpu``, z/OS). 0 unless a profile says (hosts.toml: the x86 hosts'
    #: CPU per round trip already holds their logger's work; z14-3cp's is IBM's figure)
    log_io_us: float = attrs.field(default=0.0, converter=as_float, validator=_us)
    #: how much one charge's CPU varies about its figure: each charge runs its figure times a
    #: factor drawn uniformly from 1 ± ``cpu_jitter``, from the run's seed (caches, TLB misses
    #: and interrupts make no two passes of a path take the same time). 0: every charge is
    #: exactly its figure, and applications that start together stay in step for ever
    #: (a profile that does not say gets the built-ins' 5%: hosts.toml's assumption)
    cpu_jitter: float = attrs.field(default=0.05, converter=as_float, validator=_check_range(0.0, 0.5))

    def call_us(self, kind: str) -> float:
        """The CPU of one MQI call of ``kind`` (one of :data:`CALL_KINDS`) before anything
        it logs: what a non-persistent call costs the queue manager."""
        if kind == "put":
            return self.put_us
        if kind == "get":
            return self.get_us
        if kind == "commit":
            return self.commit_us
        if kind == "backout":
            return self.backout_us
        if kind == "prepare":
            return self.prepare_us
        raise ValueError(f"no MQI call {kind!r}; the calls a host prices: {', '.join(CALL_KINDS)}")

    def logged_us(self, kind: str, nbytes: int = 0) -> float:
        """The extra CPU of a call of ``kind`` that logs a record: a persistent put's or
        get's extra path and its ``nbytes`` of message data copied, or a commit's, backout's
        or prepare's record (the force it waits for is :attr:`force_wait_us`, apart)."""
        if kind == "put":
            return self.persistent_put_us + nbytes * self.copy_ns_per_byte / 1000.0 + self.log_record_us
        if kind == "get":
            return self.persistent_get_us + nbytes * self.copy_ns_per_byte / 1000.0 + self.log_record_us
        return self.log_record_us

    def compress_us(self, algorithms, nbytes: int) -> float:
        """The CPU of offering ``nbytes`` of message data to each of ``algorithms`` (names
        of :data:`CODEC_ALGORITHMS`): every algorithm tried scans the whole data, whether or
        not its result is kept (COMPLOG(ANY) with zstd allowed runs both)."""
        ns = 0.0
        for algorithm in algorithms:
            ns += self._codec_ns(algorithm, "compress")
        return nbytes * ns / 1000.0

    def expand_us(self, algorithm: str, nbytes: int) -> float:
        """The CPU of expanding stored data of ``algorithm`` back to ``nbytes``."""
        return nbytes * self._codec_ns(algorithm, "expand") / 1000.0

    def _codec_ns(self, algorithm: str, what: str) -> float:
        if algorithm == "rle":
            return self.rle_compress_ns_per_byte if what == "compress" else self.rle_expand_ns_per_byte
        if algorithm == "zstd":
            return self.zstd_compress_ns_per_byte if what == "compress" else self.zstd_expand_ns_per_byte
        raise ValueError(f"no compression algorithm {algorithm!r}; the ones a host prices: "
                         f"{', '.join(CODEC_ALGORITHMS)}")

    def round_trip_us(self, message_size: int, *, persistent: bool, commits: int = 4) -> float:
        """The CPU of one request/reply round trip, applications included: a requester's put
        and get, a responder's get and put, and ``commits`` MQCMITs among them (4, each call
        under syncpoint and committed alone, is how IBM's MQ-CPH runs it; 0 is all four out
        of syncpoint). Persistent, every put and get logs a record and every commit logs one
        and waits for its force (out of syncpoint, each put and get waits for its own), and
        the log writer pays to wake each caller that waited. This is the arithmetic
        ``hosts.toml`` shows and a run charges call by call (without contention: a call that
        finds its queue's lock held pays its sleep and wakeup on top, ``lock``)."""
        calls = 4 + commits
        cpu = 2 * self.put_us + 2 * self.get_us + commits * self.commit_us + calls * self.app_call_us
        if persistent:
            cpu += 2 * self.logged_us("put", message_size) + 2 * self.logged_us("get", message_size)
            if commits:
                cpu += commits * (self.logged_us("commit") + self.force_wait_us + self.wake_us)
            else:
                cpu += 4 * (self.force_wait_us + self.wake_us)
        return cpu


#: the fields a profile table in a TOML file may (and, without ``base``, must) set
HOST_FIELDS: tuple[str, ...] = tuple(a.name for a in attrs.fields(HostProfile) if a.name != "name")
#: how host profile files are read and one host chosen (:mod:`mqlog.core.catalogue`)
CATALOGUE = ProfileCatalogue(cls=HostProfile, error=HostProfileError, noun="host", plural="host profiles",
                             example="myhost", option="--host", package=__package__ or "mqlog.core.host",
                             filename="hosts.toml", here=os.path.dirname(__file__),
                             int_fields=frozenset({"cores"}), text_fields=frozenset({"description", "source"}),
                             optional_fields=frozenset({"cpu_jitter", "log_io_us"}),
                             param_prefix="host.")


def load_hosts(path: str | os.PathLike[str] | None = None) -> dict[str, HostProfile]:
    """Load host profiles: the built-in table, or the profiles in a user's TOML file.

    With no ``path``, returns the packaged table. With a path, returns only the profiles
    that file defines, in file order; each is a table of :data:`HOST_FIELDS` (all of them,
    or ``base = "<host>"`` and the ones that differ). An unreadable or malformed file, an
    unknown key, a value of the wrong type or out of range, a missing field or an unknown
    base raises :class:`~mqlog.core.errors.HostProfileError` naming the file, the host and
    the field (and the allowed range).
    """
    return CATALOGUE.load(path)


def get_host(spec: str | HostProfile) -> HostProfile:
    """Select a host profile by name or file.

    ``spec`` is a built-in name (case-insensitive), ``path/to/file.toml`` (that file's only
    profile) or ``path/to/file.toml:name``; a :class:`HostProfile` is returned unchanged.
    Raises :class:`~mqlog.core.errors.HostProfileError` for an unknown name (listing the
    known ones) or a bad file.
    """
    return CATALOGUE.get(spec)


# --------------------------------------------------------------------------- simulation


class Cores:
    """``capacity`` cores, granted first come, first served: what ``simpy.Resource(env,
    capacity)`` does for a charge, with the same order of grants, but a free core is taken
    at once instead of through a scheduled request and release. Every MQI call makes a few
    charges, so the two events a ``simpy.Resource`` adds to each would slow the whole model
    by more than half (perf suite 4) for nothing it shows."""

    __slots__ = ("env", "capacity", "busy", "queue")

    def __init__(self, env: Any, capacity: int):
        self.env = env
        self.capacity = capacity
        self.busy = 0  # cores held
        self.queue: collections.deque[simpy.Event] = collections.deque()  # waiting, oldest first

    def acquire(self, urgent: bool = False) -> simpy.Event | None:
        """Take a core: None if one was free (it is now held), else an event that fires when
        a releasing charge hands its core over – ``urgent``: before every caller queued
        already (a thread just woken from a lock)."""
        if self.busy < self.capacity:
            self.busy += 1
            return None
        event = self.env.event()
        if urgent:
            self.queue.appendleft(event)
        else:
            self.queue.append(event)
        return event

    def release(self) -> None:
        """Give a core back: to the oldest waiter if any (it stays held), else free it."""
        if self.queue:
            self.queue.popleft().succeed()
        else:
            self.busy -= 1


class Cpu:
    """A host's cores in a SimPy simulation; virtual time (``env.now``) is in µs.

    ``yield from cpu.charge(us, "mqi")`` waits for one of ``profile.cores`` cores of
    :attr:`cores` (FIFO, :class:`Cores`), holds it for ``us`` and releases it. The wait
    counts toward the caller's elapsed time and :attr:`wait_us`, the charge toward
    :attr:`busy_us` and its kind's total in :attr:`by_kind` (``app``: the applications'
    own CPU; ``mqi``: the calls' paths; ``log``: persistent extras, records and copies;
    ``force``: wakeups after a log force; ``lock``: wakeups after waiting for a queue's lock;
    ``compress``: a codec compressing message data on
    the putting call's path; ``expand``: restart (or RECOVER CFSTRUCT) expanding it;
    ``restart``: restart's own CPU – replaying records, loading queues' index entries,
    walking and backing out units of work – charged serially, one thread).
    """

    __slots__ = ("env", "profile", "cores", "busy_us", "wait_us", "charges", "by_kind", "_jitter", "_draw")

    def __init__(self, env: Any, profile: HostProfile | str, seed: int = 0):
        self.env = env
        self.profile = get_host(profile)
        self._jitter = self.profile.cpu_jitter
        # its own stream, so that the workload's draws do not move with the CPU's
        self._draw = random.Random(f"cpu:{seed}").random
        self.cores = Cores(env, self.profile.cores)
        self.busy_us = self.wait_us = 0.0
        self.charges = 0
        self.by_kind: dict[str, float] = {"app": 0.0, "mqi": 0.0, "log": 0.0, "force": 0.0, "lock": 0.0, "logger": 0.0,
                                          "compress": 0.0, "expand": 0.0, "restart": 0.0}

    def charge(self, us: float, kind: str, app_us: float = 0.0, path_us: float = 0.0, lock=None,
               holder=None, keep: bool = False) -> Generator[Any, Any, None]:
        """Run ``us`` µs of CPU of ``kind`` on a core (``yield from``), with ``app_us`` of
        the application's own and ``path_us`` of the MQI call's path (``mqi``) in the same
        hold; nothing when all are 0.

        With ``lock`` (a :class:`~mqlog.core.qm.locks.QueueLock`), the lock is taken for
        ``holder`` once the core is held – a thread takes a lock while it runs – and kept
        after the charge. If it is held already, the core is given back at once and the
        caller sleeps until a release wakes it; woken, it is given the next free core before
        the callers queued for one (Linux favours a thread that slept), runs the host's
        ``force_wait_us`` (``lock``: being woken, a futex's sleep and wakeup) and tries the
        lock again. Each of ``us``, ``app_us`` and ``path_us`` runs times the charge's jitter
        factor (one draw a charge that runs). With ``keep`` the thread keeps the core after
        the charge (:meth:`run_held` and :meth:`give_back` follow)."""
        total = us + app_us + path_us
        if total <= 0 and lock is None:
            if keep:
                yield from self.take()
            return
        env = self.env
        cores = self.cores
        # Cores.acquire's free core taken here (and Cores.release's below): a charge is the
        # model's most frequent call, 1.7 a log record, and most find a core free.
        if cores.busy < cores.capacity:
            cores.busy += 1
        else:  # every core busy: queue behind the others
            start = env.now
            yield cores.acquire()
            self.wait_us += env.now - start
        if lock is not None:
            while (sleeping := lock.try_take(holder)) is not None:
                cores.release()
                yield sleeping
                woken_us = self.profile.force_wait_us  # woken: the wakeup first, then try again
                waiting = cores.acquire(woken_us > 0)
                if waiting is not None:
                    start = env.now
                    yield waiting
                    self.wait_us += env.now - start
                if woken_us > 0:
                    try:
                        yield env.timeout(woken_us)
                    except BaseException:
                        cores.release()
                        raise
                    self.busy_us += woken_us
                    self.by_kind["lock"] += woken_us
        if self._jitter and total > 0:
            factor = 1.0 + self._jitter * (2.0 * self._draw() - 1.0)
            total *= factor
        else:
            factor = 1.0  # (x * 1.0 is x: the kinds' sums below are the same as unjittered)
        try:
            yield env.timeout(total)
        except BaseException:
            cores.release()
            raise
        if not keep:
            if cores.queue:
                cores.queue.popleft().succeed()
            else:
                cores.busy -= 1
        self.charges += 1
        self.busy_us += total
        by_kind = self.by_kind
        by_kind[kind] += us * factor
        if app_us:  # (adding 0.0 to a sum changes nothing)
            by_kind["app"] += app_us * factor
        if path_us:
            by_kind["mqi"] += path_us * factor

    def take(self) -> Generator[Any, Any, None]:
        """Wait for a core and keep it (``yield from``): a thread that goes on running between
        steps of one piece of work (a large message copied a segment at a time) does not queue
        for a core again after each. Run the steps with :meth:`run_held`; :meth:`give_back`
        the core when done, or before the thread sleeps."""
        waiting = self.cores.acquire()
        if waiting is not None:
            start = self.env.now
            yield waiting
            self.wait_us += self.env.now - start

    def run_held(self, us: float, kind: str) -> Generator[Any, Any, None]:
        """``us`` µs of CPU of ``kind`` on the core the caller holds (:meth:`take`), jittered
        and counted as a :meth:`charge` is."""
        if us <= 0:
            return
        if self._jitter:
            us *= 1.0 + self._jitter * (2.0 * self._draw() - 1.0)
        yield self.env.timeout(us)
        self.charges += 1
        self.busy_us += us
        self.by_kind[kind] += us

    def give_back(self) -> None:
        """Release the core :meth:`take` took."""
        self.cores.release()

    def counters(self) -> dict[str, float]:
        """A snapshot of the counters (µs) as a plain dict."""
        return {"busy_us": self.busy_us, "wait_us": self.wait_us, "charges": self.charges,
                **{f"{k}_us": v for k, v in self.by_kind.items()}}

    def __repr__(self) -> str:
        return f"Cpu({self.profile.name!r}, cores={self.profile.cores}, busy_us={self.busy_us:g})"
