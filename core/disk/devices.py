"""Storage device profiles and the simulated device the log's I/O is charged to.

What this models: the *storage device*, not the host. Every I/O costs a fixed latency
plus its size over the rate it transfers at, taken from a :class:`DeviceProfile`::

    service_us = latency_us + nbytes / rate        (rate = bandwidth_mb_s when alone)

(bandwidth is in MB/s with MB = 10**6 bytes, which is numerically bytes per
microsecond). Reads and writes are both charged, each with its own latency and
bandwidth; a file-system call costs what its class on the profile's file system says
(:mod:`mqlog.core.disk.fscalls`: served by the kernel, a network round trip, or a durable
write). A :class:`Device` serves at most ``queue_depth`` I/Os at once;
the rest wait in a FIFO queue, and that wait counts toward the caller's elapsed time
but not toward the device's service (busy) time.

The path to the device is shared. An I/O holds its slot for its latency (per I/O,
never shared: seek, controller and protocol round trip) and then for its transfer.
The transfers in progress share the device's channel, ``channel_mb_s``, by processor
sharing with water-filling: each gets an equal part, except that none goes faster
than its own ``read_bandwidth_mb_s``/``write_bandwidth_mb_s``, and what such a
transfer leaves unused is divided among the others. Rates change exactly when a
transfer starts or ends (event-driven, no polling), so two log copies, an archive
offload beside the log, or a checkpoint's queue-file writes beside a log write slow
one another down once together they want more than the channel carries. A transfer
alone costs exactly ``latency + nbytes / bandwidth`` (when the channel is at least
that bandwidth, which a profile without ``channel_mb_s`` guarantees: its channel is
the larger of its two bandwidths).

What it does not model: any cache (page cache, read-ahead, write-back -- every read
that reaches a device is cold, and every write is synchronous and durable; restart reads
the log through a page cache of its own, dropped when it begins as IBM dropped the
file-system cache before timing restarts: :mod:`mqlog.core.recovery.pagecache`; the queue
files' writes and reads go through the host's page cache in front of the device,
:mod:`mqlog.core.disk.filecache`), host CPU time, system-call overhead,
alignment or I/O-size effects beyond the linear size term, full-duplex links (reads
and writes share one channel), contention between different devices (each
:class:`Device` has its own channel), and variance (service times are deterministic).

Time is virtual and in **microseconds** everywhere, like the SimPy environment's
``now`` throughout mqlog.

Profiles are data: the built-in table is ``devices.toml`` in this package (``ssd``,
``san``, ``nfs1``, ``nfs2``, ``nfs3``, z/OS's ``dasd`` and an idealised ``ram``), and a
user can write their own TOML file in the same shape, optionally inheriting from a
built-in with ``base = "san"``. :func:`get_profile` selects one by name or by
``file.toml[:name]``.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import attrs
import simpy

from mqlog.core.disk.fscalls import FileSystemCalls, as_calls
from mqlog.core.errors import DeviceProfileError, ParameterError
from mqlog.core.catalogue import ProfileCatalogue, as_float, check_range, check_text

__all__ = [
    "DeviceProfile",
    "Device",
    "load_profiles",
    "get_profile",
    "PROFILE_FIELDS",
    "MAX_LATENCY_US",
    "MAX_BANDWIDTH_MB_S",
    "MAX_QUEUE_DEPTH",
    "MAX_READ_AHEAD_KB",
]

#: Upper bound on any latency or file-operation cost: 10 seconds, in µs.
MAX_LATENCY_US = 10_000_000.0
#: Upper bound on a bandwidth, in MB/s (10**6 MB/s = 1 TB/s).
MAX_BANDWIDTH_MB_S = 1_000_000.0
#: Upper bound on a device's queue depth.
MAX_QUEUE_DEPTH = 1024
#: Upper bound on a read-ahead window, in KiB (Linux's read_ahead_kb takes larger, but a
#: window beyond 64 MiB reads whole log extents at once)
MAX_READ_AHEAD_KB = 65536



# --------------------------------------------------------------------------- profiles


def _check_range(lo: float, hi: float, unit: str = "", *, lo_open: bool = False, integer: bool = False):
    """An attrs validator raising :class:`ParameterError` named ``device.<field>``."""
    return check_range("device.", lo, hi, unit, lo_open=lo_open, integer=integer)


_check_name = _check_str = check_text("device.")
_latency = _check_range(0.0, MAX_LATENCY_US, " µs (up to 10 s)")
#: the atomic write units a profile may declare: a sector up to 64 KiB, powers of two
ATOMIC_WRITE_SIZES = tuple(512 << k for k in range(8))


def _atomic_bytes(instance, attribute, value) -> None:
    if isinstance(value, bool) or value not in ATOMIC_WRITE_SIZES:
        raise ParameterError(f"device.{attribute.name}", value,
                             "a power of two from 512 to 65536 bytes (512 · 2^k)")
_bandwidth = _check_range(0.0, MAX_BANDWIDTH_MB_S, " MB/s", lo_open=True)


def _channel(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    """``channel_mb_s``: absent (None: the larger bandwidth) or a bandwidth like the others."""
    if value is not None:
        _bandwidth(instance, attribute, value)


@attrs.frozen
class DeviceProfile:
    """The cost model of one storage device. All times are in microseconds (µs).

    One read of ``n`` bytes costs ``read_latency_us + n / read_bandwidth_mb_s`` µs of
    device service time, a write likewise with the write figures. A file-system call costs
    by its class in ``fs_calls`` (:class:`~mqlog.core.disk.fscalls.FileSystemCalls`):
    ``local_call_us`` (the kernel serves it), ``round_trip_us`` (a network round trip to a
    file server) or ``write_latency_us`` (made durable: one small synchronous write).
    ``read_ahead_kb`` is the page cache's read-ahead window on a forward sequential read
    (:mod:`mqlog.core.recovery.pagecache`). Bandwidths are in MB/s with
    MB = 10**6 bytes, i.e. bytes per µs. ``queue_depth`` is how many I/Os the device
    serves at once. ``channel_mb_s`` is the path those I/Os' transfers share (see
    :class:`Device`); left out (None), it is the larger of the two bandwidths, which
    :attr:`channel` gives either way -- None rather than a number filled in, so that a
    profile derived with another bandwidth (``base =``, ``attrs.evolve``) follows it.

    Frozen and validated: out-of-range values raise
    :class:`~mqlog.core.errors.ParameterError` naming ``device.<field>``. Derive a
    variant with ``attrs.evolve(profile, name="fast-san", write_latency_us=100)``,
    which validates again.
    """

    name: str = attrs.field(validator=_check_name)
    description: str = attrs.field(validator=_check_str)
    read_latency_us: float = attrs.field(converter=as_float, validator=_latency)
    write_latency_us: float = attrs.field(converter=as_float, validator=_latency)
    read_bandwidth_mb_s: float = attrs.field(converter=as_float, validator=_bandwidth)
    write_bandwidth_mb_s: float = attrs.field(converter=as_float, validator=_bandwidth)
    queue_depth: int = attrs.field(validator=_check_range(1, MAX_QUEUE_DEPTH, integer=True))
    channel_mb_s: float | None = attrs.field(default=None, converter=as_float, validator=_channel)
    #: a file-system call the kernel serves from memory (a system call, no I/O), µs
    local_call_us: float = attrs.field(default=2.0, converter=as_float, validator=_latency)
    #: one request to a file server and its answer, nothing made durable, µs (0: no network)
    round_trip_us: float = attrs.field(default=0.0, converter=as_float, validator=_latency)
    #: the cost class of each file-system call (left out: a local file system's)
    fs_calls: FileSystemCalls = attrs.field(factory=FileSystemCalls, converter=as_calls)
    #: the page cache's read-ahead window on forward sequential reads, KiB (Linux's default
    #: read_ahead_kb, for block devices and, since 5.4, NFS mounts)
    read_ahead_kb: int = attrs.field(default=128, validator=_check_range(4, MAX_READ_AHEAD_KB, integer=True))
    #: the aligned block a crash never splits, bytes: a write torn by a crash lands whole
    #: blocks of this size only. 512, a sector, on a block device MQ cannot rely on for more;
    #: 4096 on DASD whose log CI (one 4 KB block) the control unit takes into its
    #: non-volatile cache whole or not at all, where the logger may rely on it
    atomic_write_bytes: int = attrs.field(default=512, validator=_atomic_bytes)

    @property
    def channel(self) -> float:
        """The channel the transfers share, MB/s: ``channel_mb_s``, or the larger bandwidth."""
        if self.channel_mb_s is not None:
            return self.channel_mb_s
        return max(self.read_bandwidth_mb_s, self.write_bandwidth_mb_s)

    def call_us(self, call: str) -> float:
        """What one file-system ``call`` (a key of :data:`~mqlog.core.disk.fscalls.CALLS`)
        costs on this profile, µs, alone on the device."""
        kind = self.fs_calls.of(call)
        if kind == "local":
            return self.local_call_us
        return self.round_trip_us if kind == "round-trip" else self.write_latency_us

    def read_time_us(self, nbytes: int) -> float:
        """Device service time, in µs, of one read of ``nbytes`` bytes alone on the device
        (no queueing, no other transfer sharing the channel)."""
        if nbytes < 0:
            raise ParameterError("nbytes", nbytes, "a byte count >= 0")
        return self.read_latency_us + nbytes / min(self.read_bandwidth_mb_s, self.channel)

    def write_time_us(self, nbytes: int) -> float:
        """Device service time, in µs, of one durable write of ``nbytes`` bytes alone on the
        device (no queueing, no other transfer sharing the channel)."""
        if nbytes < 0:
            raise ParameterError("nbytes", nbytes, "a byte count >= 0")
        return self.write_latency_us + nbytes / min(self.write_bandwidth_mb_s, self.channel)


#: The fields a profile table in a TOML file may (and, without ``base``, must -- all but
#: :data:`OPTIONAL_FIELDS`) set.
PROFILE_FIELDS: tuple[str, ...] = tuple(
    a.name for a in attrs.fields(DeviceProfile) if a.name != "name"
)
#: the fields a profile may leave out: their defaults are a local file system's
OPTIONAL_FIELDS = frozenset({"channel_mb_s", "local_call_us", "round_trip_us", "fs_calls", "read_ahead_kb",
                             "atomic_write_bytes"})
#: how device profile files are read and one profile chosen (:mod:`mqlog.core.catalogue`)
CATALOGUE = ProfileCatalogue(cls=DeviceProfile, error=DeviceProfileError, noun="profile",
                             plural="device profiles", example="mydisk", option="",
                             package=__package__ or "mqlog.core.disk", filename="devices.toml",
                             here=os.path.dirname(__file__),
                             int_fields=frozenset({"queue_depth", "read_ahead_kb", "atomic_write_bytes"}),
                             optional_fields=OPTIONAL_FIELDS, param_prefix="device.",
                             table_fields=frozenset({"fs_calls"}))


def load_profiles(path: str | os.PathLike[str] | None = None) -> dict[str, DeviceProfile]:
    """Load device profiles: the built-in table, or the profiles in a user's TOML file.

    With no ``path``, returns the packaged table (``ssd``, ``san``, ``nfs1``, ``nfs2``,
    ``nfs3``, ``dasd``, ``ram``). With a path, returns only the profiles that file defines, in
    file order. The file has one table per profile::

        [mydisk]
        base = "san"              # optional: built-in or earlier profile to start from
        write_latency_us = 120    # override some fields

    Without ``base`` every field in :data:`PROFILE_FIELDS` but :data:`OPTIONAL_FIELDS` is
    required; ``fs_calls`` is a table (``fs_calls = { open = "round-trip" }``), and with
    ``base`` it overrides the base's entries one by one. The file is
    parsed as TOML data only; nothing in it is evaluated. An unreadable or malformed
    file, an unknown key, a value of the wrong type or out of range, a missing field or
    an unknown base raises :class:`~mqlog.core.errors.DeviceProfileError` naming the
    file, the profile and the field.
    """
    return CATALOGUE.load(path)


def get_profile(spec: str | DeviceProfile) -> DeviceProfile:
    """Select a device profile by name or file.

    ``spec`` is a built-in name (``ssd``, ``san``, ``nfs1``, ``nfs2``, ``nfs3``, ``dasd``, ``ram``;
    case-insensitive), ``path/to/file.toml`` (that file's only profile) or
    ``path/to/file.toml:name``. A :class:`DeviceProfile` is returned unchanged.
    Raises :class:`~mqlog.core.errors.DeviceProfileError` for an unknown name (listing
    the known ones) or a bad file.
    """
    return CATALOGUE.get(spec)


# --------------------------------------------------------------------------- simulation


class _Transfer:
    """One I/O's transfer on a :class:`Device`: registered when the I/O takes its slot,
    moving bytes from ``begin`` (the slot's start plus the I/O's latency) at ``rate``."""

    __slots__ = ("nbytes", "cap", "begin", "left", "rate", "wake", "done", "end")

    def __init__(self, nbytes: int, cap: float, begin: float):
        self.nbytes = nbytes
        self.cap = cap          # its own bandwidth: the most it may take of the channel
        self.begin = begin      # when its latency ends and bytes start to move
        self.left = float(nbytes)  # bytes still to move as of the device's _stamp
        self.rate = 0.0         # bytes/µs now (0 before begin)
        self.wake: Any = None   # what its I/O waits on: the lone timeout, or an event
        self.done = False
        self.end = 0.0          # when it finished (or, alone, when it will)


class Device:
    """A storage device in a SimPy simulation; virtual time (``env.now``) is in µs.

    Use from a SimPy process::

        svc_us = yield from device.write(4096)
        svc_us = yield from device.read(1 << 20)
        svc_us = yield from device.file_op("open")

    Each call waits for one of ``profile.queue_depth`` slots of :attr:`resource` (a
    FIFO ``simpy.Resource``) and holds it for its service: the I/O's latency, then its
    transfer, which shares the profile's :attr:`~DeviceProfile.channel` with the other
    transfers in progress (water-filling: an equal part each, none above its own
    bandwidth, what one cannot use going to the others). It releases the slot and
    returns the service time in µs. The caller's elapsed time is queueing wait plus
    service; only service counts toward :attr:`busy_us`.

    How the sharing is computed: a transfer that starts on an otherwise idle device
    is *alone* and simply waits ``latency + nbytes / rate`` -- one timeout, the cost
    of a device without a channel. The moment a second I/O takes a slot, the device
    brings every transfer's remaining bytes up to date, divides the channel among
    those moving, and schedules one tick at the next instant anything changes (a
    transfer's latency ending, or its last byte); each tick does the same again.
    Which transfers a tick finishes or starts is decided when it is scheduled, so
    floating-point rounding of the clock can neither lose nor repeat one, and the
    arithmetic is the same in every run (deterministic). An I/O interrupted while
    queued or in service leaves the channel to the others at once.

    Counters, updated when an operation completes (an operation interrupted while
    queued or in service is not counted):

    ``reads``, ``writes``, ``file_ops``
        operations completed;
    ``bytes_read``, ``bytes_written``
        bytes transferred;
    ``calls``
        file-system calls completed, by call (``{"open": 3, ...}``);
    ``read_us``, ``write_us``, ``file_op_total_us``
        service time of each kind (latency + the transfer's actual time; a call's cost), µs;
    ``busy_us``
        their sum but the calls the kernel serves (``local``), µs (with ``queue_depth`` > 1 it can exceed elapsed time);
    ``wait_us``
        time callers spent queued for a slot, µs;
    ``shared_us``
        of the service time, how much longer transfers took than they would have
        alone on the device, because they shared its channel, µs.
    """

    __slots__ = (
        "env", "profile", "resource",
        "_r_lat", "_r_bw", "_w_lat", "_w_bw", "_calls", "_channel", "calls",
        "_xfers", "_stamp", "_lone", "_tick", "_due_end", "_due_begin",
        "reads", "writes", "file_ops", "bytes_read", "bytes_written",
        "read_us", "write_us", "file_op_total_us", "busy_us", "wait_us", "shared_us",
    )

    def __init__(self, env: Any, profile: DeviceProfile | str):
        profile = get_profile(profile)
        self.env = env
        self.profile = profile
        self.resource = simpy.Resource(env, capacity=profile.queue_depth)
        self._channel = profile.channel
        self._r_lat = profile.read_latency_us
        self._r_bw = min(profile.read_bandwidth_mb_s, self._channel)
        self._w_lat = profile.write_latency_us
        self._w_bw = min(profile.write_bandwidth_mb_s, self._channel)
        # each call: (its cost, whether it holds a device slot: all but the kernel's own)
        self._calls = {call: (profile.call_us(call), profile.fs_calls.of(call) != "local")
                       for call in attrs.fields_dict(FileSystemCalls)}
        self._xfers: list[_Transfer] = []   # registered transfers, in registration order
        self._stamp = 0.0                   # when every transfer's ``left`` was brought up to date
        self._lone: _Transfer | None = None  # the only transfer, waiting on its own timeout
        self._tick: Any = None              # the scheduled tick (older ones are stale)
        self._due_end: list[_Transfer] = []    # what that tick finishes ...
        self._due_begin: list[_Transfer] = []  # ... and starts moving
        self.reset_counters()

    def reset_counters(self) -> None:
        """Zero every counter (e.g. after setting up, before the measured phase)."""
        self.reads = self.writes = self.file_ops = 0
        self.bytes_read = self.bytes_written = 0
        self.read_us = self.write_us = self.file_op_total_us = 0.0
        self.busy_us = self.wait_us = self.shared_us = 0.0
        self.calls: dict[str, int] = {}

    # ------------------------------------------------------------------ one I/O

    def _serve(self, latency: float, nbytes: int, cap: float) -> Generator[Any, Any, float]:
        """Queue for a free slot, then take ``latency`` and the transfer of ``nbytes`` at up
        to ``cap`` bytes/µs; the queueing counts as wait. Returns the service time, µs."""
        env = self.env
        start = env.now
        with self.resource.request() as req:
            yield req
            t0 = env.now
            self.wait_us += t0 - start
            if nbytes == 0:
                yield env.timeout(latency)
                return latency
            tr = self._register(t0, latency, nbytes, cap)
            try:
                while True:
                    yield tr.wake
                    if tr.done:
                        break
                    if self._lone is tr:
                        # Alone from its first byte to its last: the lone timeout was right.
                        self._lone = None
                        self._xfers.clear()
                        return latency + nbytes / cap
                    # else a stale lone timeout (others joined since): wait for the real end
            except BaseException:
                self._withdraw(tr)
                raise
        service = tr.end - t0
        # what it would have cost alone (the same expression as the lone path's)
        self.shared_us += max(0.0, service - (latency + nbytes / cap))
        return service

    def write(self, nbytes: int) -> Generator[Any, Any, float]:
        """Write ``nbytes`` durably; ``yield from`` it. Returns the service time in µs."""
        if nbytes < 0:
            raise ParameterError("nbytes", nbytes, "a byte count >= 0")
        service = yield from self._serve(self._w_lat, nbytes, self._w_bw)
        self.writes += 1
        self.bytes_written += nbytes
        self.write_us += service
        self.busy_us += service
        return service

    def read(self, nbytes: int) -> Generator[Any, Any, float]:
        """Read ``nbytes`` (cold: no cache); ``yield from`` it. Returns the service time in µs."""
        if nbytes < 0:
            raise ParameterError("nbytes", nbytes, "a byte count >= 0")
        service = yield from self._serve(self._r_lat, nbytes, self._r_bw)
        self.reads += 1
        self.bytes_read += nbytes
        self.read_us += service
        self.busy_us += service
        return service

    def file_op(self, call: str) -> Generator[Any, Any, float]:
        """One file-system ``call`` (``"open"``, ``"create"``, ... :data:`~mqlog.core.disk.fscalls.CALLS`);
        ``yield from`` it. Returns its time in µs.

        What it costs is its class on the profile's file system: one the kernel serves
        (``local``) takes ``local_call_us`` and no device slot, and does not count as the
        device's busy time; a network round trip or a durable write holds a slot for
        ``round_trip_us`` or ``write_latency_us``. None moves bytes over the channel.
        """
        try:
            service, on_device = self._calls[call]
        except KeyError:
            raise ParameterError("call", call, f"a file-system call: {', '.join(self._calls)}") from None
        env = self.env
        if on_device:
            start = env.now
            with self.resource.request() as req:
                yield req
                self.wait_us += env.now - start
                yield env.timeout(service)
            self.busy_us += service
        elif service:
            yield env.timeout(service)
        self.file_ops += 1
        self.calls[call] = self.calls.get(call, 0) + 1
        self.file_op_total_us += service
        return service

    # ------------------------------------------------------------------ the shared channel

    def _register(self, now: float, latency: float, nbytes: int, cap: float) -> _Transfer:
        """A transfer whose I/O took its slot at ``now``; bytes move after ``latency``."""
        tr = _Transfer(nbytes, cap, now + latency)
        if not self._xfers:
            # Alone: one timeout to its end, as a device without a channel would take. If
            # another I/O comes before it ends, _share takes over and this timeout goes stale.
            tr.rate = cap
            tr.wake = self.env.timeout(latency + nbytes / cap)
            tr.end = now + (latency + nbytes / cap)
            self._stamp = now
            self._lone = tr
            self._xfers.append(tr)
            return tr
        self._advance(now)
        lone = self._lone
        if lone is not None:
            self._lone = None
            if lone.end <= now:
                # Its timeout fires at this very instant: it is done, and never shared.
                lone.done = True
                self._xfers.remove(lone)
            else:
                lone.wake = self.env.event()
        tr.wake = self.env.event()
        self._xfers.append(tr)
        self._share(now)
        return tr

    def _withdraw(self, tr: _Transfer) -> None:
        """An interrupted I/O's transfer leaves the channel (if it has not finished)."""
        if tr.done or tr not in self._xfers:
            return
        if self._lone is tr:
            self._lone = None
            self._xfers.clear()
            return
        now = self.env.now
        self._advance(now)
        self._xfers.remove(tr)
        self._share(now)

    def _advance(self, now: float) -> None:
        """Bring every transfer's remaining bytes up to ``now`` at the rates since _stamp."""
        stamp = self._stamp
        for x in self._xfers:
            since = x.begin if x.begin > stamp else stamp
            if now > since:
                x.left -= x.rate * (now - since)
        self._stamp = now

    def _on_tick(self, event: Any) -> None:
        if event is not self._tick:
            return  # superseded: something started or ended since it was scheduled
        now = self.env.now
        self._advance(now)
        for x in self._due_end:
            x.left = 0.0
        for x in self._due_begin:
            x.begin = now
        self._share(now)

    def _share(self, now: float) -> None:
        """Finish what has no bytes left, divide the channel among the transfers moving
        (water-filling) and schedule the next tick."""
        xfers = self._xfers
        moving: list[_Transfer] = []
        for x in list(xfers):
            if x.begin <= now and x.left <= 0.0:
                xfers.remove(x)
                x.done = True
                x.end = now
                x.wake.succeed()
            elif x.begin <= now:
                moving.append(x)
            else:
                x.rate = 0.0
        self._tick = None
        if not xfers:
            return
        # Water-filling: the slowest caps first; each takes its cap if that is no more than
        # an equal part of what is left, otherwise every one still unserved gets that part.
        remaining = self._channel
        moving.sort(key=lambda x: x.cap)  # stable: equal caps keep registration order
        for i, x in enumerate(moving):
            part = remaining / (len(moving) - i)
            if x.cap <= part:
                x.rate = x.cap
                remaining -= x.cap
            else:
                for y in moving[i:]:
                    y.rate = part
                break
        # The next instant anything changes, and what changes then.
        soonest = float("inf")
        for x in moving:
            soonest = min(soonest, x.left / x.rate)
        for x in xfers:
            if x.begin > now:
                soonest = min(soonest, x.begin - now)
        self._due_end = [x for x in moving if x.left / x.rate <= soonest]
        self._due_begin = [x for x in xfers if x.begin > now and x.begin - now <= soonest]
        tick = self.env.timeout(soonest)
        tick.callbacks.append(self._on_tick)
        self._tick = tick

    def counters(self) -> dict[str, float]:
        """A snapshot of the counters as a plain dict (times in µs)."""
        return {
            "reads": self.reads, "writes": self.writes, "file_ops": self.file_ops,
            "bytes_read": self.bytes_read, "bytes_written": self.bytes_written,
            "read_us": self.read_us, "write_us": self.write_us,
            "file_op_total_us": self.file_op_total_us,
            "busy_us": self.busy_us, "wait_us": self.wait_us, "shared_us": self.shared_us,
        }

    def __repr__(self) -> str:
        return (f"Device({self.profile.name!r}, reads={self.reads}, writes={self.writes}, "
                f"file_ops={self.file_ops}, busy_us={self.busy_us:g})")
