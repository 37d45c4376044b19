"""Storage device profiles and the simulated device the log's I/O is charged to.

What this models: the *storage device*, not the host. Every I/O costs a fixed latency
plus its size over the device's bandwidth, taken from a :class:`DeviceProfile`::

    service_us = latency_us + nbytes / bandwidth_mb_s

(bandwidth is in MB/s with MB = 10**6 bytes, which is numerically bytes per
microsecond). Reads and writes are both charged, each with its own latency and
bandwidth; file-system metadata calls (open, create, rename, stat) cost
``file_op_us`` each. A :class:`Device` serves at most ``queue_depth`` I/Os at once;
the rest wait in a FIFO queue, and that wait counts toward the caller's elapsed time
but not toward the device's service (busy) time.

What it does not model: any cache (page cache, read-ahead, write-back -- every read is
cold, as in IBM's restart measurements, which drop the file-system cache first, and
every write is synchronous and durable), host CPU time, system-call overhead,
alignment or I/O-size effects beyond the linear size term, contention between
devices, and variance (service times are deterministic).

Time is virtual and in **microseconds** everywhere, like the SimPy environment's
``now`` throughout mqlog.

Profiles are data: the built-in table is ``devices.toml`` in this package (``ssd``,
``san``, ``nfs1``, ``nfs2``, ``nfs3`` and an idealised ``ram``), and a user can write
their own TOML file in the same shape, optionally inheriting from a built-in with
``base = "san"``. :func:`get_profile` selects one by name or by ``file.toml[:name]``.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import attrs
import simpy

from mqlog.core.errors import DeviceProfileError, ParameterError
from mqlog.core.profiles import ProfileCatalogue, as_float, check_range, check_text

__all__ = [
    "DeviceProfile",
    "Device",
    "load_profiles",
    "get_profile",
    "PROFILE_FIELDS",
    "MAX_LATENCY_US",
    "MAX_BANDWIDTH_MB_S",
    "MAX_QUEUE_DEPTH",
]

#: Upper bound on any latency or file-operation cost: 10 seconds, in µs.
MAX_LATENCY_US = 10_000_000.0
#: Upper bound on a bandwidth, in MB/s (10**6 MB/s = 1 TB/s).
MAX_BANDWIDTH_MB_S = 1_000_000.0
#: Upper bound on a device's queue depth.
MAX_QUEUE_DEPTH = 1024



# --------------------------------------------------------------------------- profiles


def _check_range(lo: float, hi: float, unit: str = "", *, lo_open: bool = False, integer: bool = False):
    """An attrs validator raising :class:`ParameterError` named ``device.<field>``."""
    return check_range("device.", lo, hi, unit, lo_open=lo_open, integer=integer)


_check_name = _check_str = check_text("device.")
_latency = _check_range(0.0, MAX_LATENCY_US, " µs (up to 10 s)")
_bandwidth = _check_range(0.0, MAX_BANDWIDTH_MB_S, " MB/s", lo_open=True)


@attrs.frozen
class DeviceProfile:
    """The cost model of one storage device. All times are in microseconds (µs).

    One read of ``n`` bytes costs ``read_latency_us + n / read_bandwidth_mb_s`` µs of
    device service time, a write likewise with the write figures, and a file-system
    metadata call (open/create/rename/stat) ``file_op_us``. Bandwidths are in MB/s with
    MB = 10**6 bytes, i.e. bytes per µs. ``queue_depth`` is how many I/Os the device
    serves at once.

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
    file_op_us: float = attrs.field(converter=as_float, validator=_latency)
    queue_depth: int = attrs.field(validator=_check_range(1, MAX_QUEUE_DEPTH, integer=True))

    def read_time_us(self, nbytes: int) -> float:
        """Device service time, in µs, of one read of ``nbytes`` bytes (no queueing)."""
        if nbytes < 0:
            raise ParameterError("nbytes", nbytes, "a byte count >= 0")
        return self.read_latency_us + nbytes / self.read_bandwidth_mb_s

    def write_time_us(self, nbytes: int) -> float:
        """Device service time, in µs, of one durable write of ``nbytes`` bytes (no queueing)."""
        if nbytes < 0:
            raise ParameterError("nbytes", nbytes, "a byte count >= 0")
        return self.write_latency_us + nbytes / self.write_bandwidth_mb_s


#: The fields a profile table in a TOML file may (and, without ``base``, must) set.
PROFILE_FIELDS: tuple[str, ...] = tuple(
    a.name for a in attrs.fields(DeviceProfile) if a.name != "name"
)
#: how device profile files are read and one profile chosen (:mod:`mqlog.core.profiles`)
CATALOGUE = ProfileCatalogue(cls=DeviceProfile, error=DeviceProfileError, noun="profile",
                             plural="device profiles", example="mydisk", option="",
                             package=__package__ or "mqlog.core.disk", filename="devices.toml",
                             here=os.path.dirname(__file__), int_fields=frozenset({"queue_depth"}),
                             param_prefix="device.")


def load_profiles(path: str | os.PathLike[str] | None = None) -> dict[str, DeviceProfile]:
    """Load device profiles: the built-in table, or the profiles in a user's TOML file.

    With no ``path``, returns the packaged table (``ssd``, ``san``, ``nfs1``, ``nfs2``,
    ``nfs3``, ``ram``). With a path, returns only the profiles that file defines, in
    file order. The file has one table per profile::

        [mydisk]
        base = "san"              # optional: built-in or earlier profile to start from
        write_latency_us = 120    # override some fields

    Without ``base`` every field in :data:`PROFILE_FIELDS` is required. The file is
    parsed as TOML data only; nothing in it is evaluated. An unreadable or malformed
    file, an unknown key, a value of the wrong type or out of range, a missing field or
    an unknown base raises :class:`~mqlog.core.errors.DeviceProfileError` naming the
    file, the profile and the field.
    """
    return CATALOGUE.load(path)


def get_profile(spec: str | DeviceProfile) -> DeviceProfile:
    """Select a device profile by name or file.

    ``spec`` is a built-in name (``ssd``, ``san``, ``nfs1``, ``nfs2``, ``nfs3``, ``ram``;
    case-insensitive), ``path/to/file.toml`` (that file's only profile) or
    ``path/to/file.toml:name``. A :class:`DeviceProfile` is returned unchanged.
    Raises :class:`~mqlog.core.errors.DeviceProfileError` for an unknown name (listing
    the known ones) or a bad file.
    """
    return CATALOGUE.get(spec)


# --------------------------------------------------------------------------- simulation


class Device:
    """A storage device in a SimPy simulation; virtual time (``env.now``) is in µs.

    Use from a SimPy process::

        svc_us = yield from device.write(4096)
        svc_us = yield from device.read(1 << 20)
        svc_us = yield from device.file_op()

    Each call waits for one of ``profile.queue_depth`` slots of :attr:`resource` (a
    FIFO ``simpy.Resource``), holds it for the profile's service time, releases it and
    returns that service time in µs. The caller's elapsed time is queueing wait plus
    service; only service counts toward :attr:`busy_us`.

    Counters, updated when an operation completes (an operation interrupted while
    queued or in service is not counted):

    ``reads``, ``writes``, ``file_ops``
        operations completed;
    ``bytes_read``, ``bytes_written``
        bytes transferred;
    ``read_us``, ``write_us``, ``file_op_total_us``
        service time of each kind, µs;
    ``busy_us``
        their sum, µs (with ``queue_depth`` > 1 it can exceed elapsed time);
    ``wait_us``
        time callers spent queued for a slot, µs.
    """

    __slots__ = (
        "env", "profile", "resource",
        "_r_lat", "_r_bw", "_w_lat", "_w_bw", "_f_us",
        "reads", "writes", "file_ops", "bytes_read", "bytes_written",
        "read_us", "write_us", "file_op_total_us", "busy_us", "wait_us",
    )

    def __init__(self, env: Any, profile: DeviceProfile | str):
        profile = get_profile(profile)
        self.env = env
        self.profile = profile
        self.resource = simpy.Resource(env, capacity=profile.queue_depth)
        self._r_lat = profile.read_latency_us
        self._r_bw = profile.read_bandwidth_mb_s
        self._w_lat = profile.write_latency_us
        self._w_bw = profile.write_bandwidth_mb_s
        self._f_us = profile.file_op_us
        self.reset_counters()

    def reset_counters(self) -> None:
        """Zero every counter (e.g. after setting up, before the measured phase)."""
        self.reads = self.writes = self.file_ops = 0
        self.bytes_read = self.bytes_written = 0
        self.read_us = self.write_us = self.file_op_total_us = 0.0
        self.busy_us = self.wait_us = 0.0

    def _serve(self, service: float) -> Generator[Any, Any, None]:
        """Queue for a free slot, then take ``service`` µs; the queueing counts as wait."""
        env = self.env
        start = env.now
        with self.resource.request() as req:
            yield req
            self.wait_us += env.now - start
            yield env.timeout(service)

    def write(self, nbytes: int) -> Generator[Any, Any, float]:
        """Write ``nbytes`` durably; ``yield from`` it. Returns the service time in µs."""
        if nbytes < 0:
            raise ParameterError("nbytes", nbytes, "a byte count >= 0")
        service = self._w_lat + nbytes / self._w_bw
        yield from self._serve(service)
        self.writes += 1
        self.bytes_written += nbytes
        self.write_us += service
        self.busy_us += service
        return service

    def read(self, nbytes: int) -> Generator[Any, Any, float]:
        """Read ``nbytes`` (cold: no cache); ``yield from`` it. Returns the service time in µs."""
        if nbytes < 0:
            raise ParameterError("nbytes", nbytes, "a byte count >= 0")
        service = self._r_lat + nbytes / self._r_bw
        yield from self._serve(service)
        self.reads += 1
        self.bytes_read += nbytes
        self.read_us += service
        self.busy_us += service
        return service

    def file_op(self) -> Generator[Any, Any, float]:
        """One file-system metadata call (open/create/rename/stat); ``yield from`` it.

        Returns the service time in µs.
        """
        service = self._f_us
        env = self.env
        start = env.now
        with self.resource.request() as req:
            yield req
            self.wait_us += env.now - start
            yield env.timeout(service)
        self.file_ops += 1
        self.file_op_total_us += service
        self.busy_us += service
        return service

    def counters(self) -> dict[str, float]:
        """A snapshot of the counters as a plain dict (times in µs)."""
        return {
            "reads": self.reads, "writes": self.writes, "file_ops": self.file_ops,
            "bytes_read": self.bytes_read, "bytes_written": self.bytes_written,
            "read_us": self.read_us, "write_us": self.write_us,
            "file_op_total_us": self.file_op_total_us,
            "busy_us": self.busy_us, "wait_us": self.wait_us,
        }

    def __repr__(self) -> str:
        return (f"Device({self.profile.name!r}, reads={self.reads}, writes={self.writes}, "
                f"file_ops={self.file_ops}, busy_us={self.busy_us:g})")
