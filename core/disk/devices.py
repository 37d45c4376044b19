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

import functools
import math
import os
import types
from collections.abc import Generator, Mapping
from importlib import resources
from typing import Any

import attrs
import simpy

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from mqlog.core.errors import DeviceProfileError, ParameterError

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

_PACKAGED_FILE = "devices.toml"


# --------------------------------------------------------------------------- profiles


def _as_float(value: Any) -> Any:
    """Turn an exact ``int`` into ``float``; leave anything else for the validator."""
    return float(value) if type(value) is int else value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _fmt(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() else f"{x:g}"


def _check_range(lo: float, hi: float, unit: str = "", *, lo_open: bool = False,
                 integer: bool = False):
    """An attrs validator raising :class:`ParameterError` named ``device.<field>``."""
    left = "(" if lo_open else "["
    kind = "an integer" if integer else "a number"
    allowed = f"{kind} in {left}{_fmt(lo)}, {_fmt(hi)}]{unit}"

    def validate(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        if integer:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = _is_number(value) and not math.isnan(value)
        if ok:
            ok = (lo < value if lo_open else lo <= value) and value <= hi
        if not ok:
            raise ParameterError(f"device.{attribute.name}", value, allowed)

    return validate


def _check_name(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ParameterError("device.name", value, "a non-empty string")


def _check_str(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, str):
        raise ParameterError(f"device.{attribute.name}", value, "a string")


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
    read_latency_us: float = attrs.field(converter=_as_float, validator=_latency)
    write_latency_us: float = attrs.field(converter=_as_float, validator=_latency)
    read_bandwidth_mb_s: float = attrs.field(converter=_as_float, validator=_bandwidth)
    write_bandwidth_mb_s: float = attrs.field(converter=_as_float, validator=_bandwidth)
    file_op_us: float = attrs.field(converter=_as_float, validator=_latency)
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
_FLOAT_FIELDS = frozenset(PROFILE_FIELDS) - {"description", "queue_depth"}
_ALLOWED_KEYS = ("base",) + PROFILE_FIELDS


# --------------------------------------------------------------------------- loading


def _parse_table(data: Mapping[str, Any], source: str,
                 inherit: Mapping[str, DeviceProfile]) -> dict[str, DeviceProfile]:
    """Profiles from a parsed TOML document; ``inherit`` are the bases besides earlier ones."""
    if not data:
        raise DeviceProfileError(f"{source}: no device profiles (expected tables like [mydisk])")
    out: dict[str, DeviceProfile] = {}
    for name, table in data.items():
        where = f"{source}: profile [{name}]"
        if not isinstance(table, dict):
            raise DeviceProfileError(
                f"{source}: top-level key {name!r} is not a profile table; "
                f"write it as a [{name}] section with the fields {', '.join(PROFILE_FIELDS)}")
        unknown = [k for k in table if k not in _ALLOWED_KEYS]
        if unknown:
            raise DeviceProfileError(
                f"{where}: unknown field {unknown[0]!r}; allowed: {', '.join(_ALLOWED_KEYS)}")
        for key, value in table.items():
            if key in ("base", "description"):
                ok, want = isinstance(value, str), "a string"
            elif key == "queue_depth":
                ok, want = isinstance(value, int) and not isinstance(value, bool), "an integer"
            else:
                ok, want = _is_number(value), "a number"
            if not ok:
                raise DeviceProfileError(
                    f"{where}: field {key!r} must be {want}, got {type(value).__name__} {value!r}")

        fields: dict[str, Any]
        if "base" in table:
            base_name = table["base"]
            base = out.get(base_name) or inherit.get(base_name)
            if base is None:
                known = sorted(set(inherit) | set(out))
                raise DeviceProfileError(
                    f"{where}: field 'base': unknown profile {base_name!r}; a base must be a "
                    f"built-in profile or one defined earlier in the file: {', '.join(known)}")
            fields = attrs.asdict(base)
            fields.update((k, v) for k, v in table.items() if k != "base")
        else:
            missing = [f for f in PROFILE_FIELDS if f not in table]
            if missing:
                raise DeviceProfileError(
                    f"{where}: missing field{'s' if len(missing) > 1 else ''} "
                    f"{', '.join(repr(m) for m in missing)} (or say base = \"<profile>\" "
                    f"to inherit them)")
            fields = dict(table)
        fields["name"] = name
        try:
            out[name] = DeviceProfile(**fields)
        except ParameterError as exc:
            raise DeviceProfileError(f"{where}: field {exc.name.removeprefix('device.')!r}: {exc}") from exc
    return out


def _parse_bytes(raw: bytes, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise DeviceProfileError(f"{source}: not UTF-8 text: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise DeviceProfileError(f"{source}: not valid TOML: {exc}") from exc


@functools.lru_cache(maxsize=1)
def _builtin_profiles() -> Mapping[str, DeviceProfile]:
    package = __package__ or "mqlog.core"
    try:
        raw = resources.files(package).joinpath(_PACKAGED_FILE).read_bytes()
    except (ImportError, OSError, TypeError, ValueError):  # pragma: no cover - not installed
        with open(os.path.join(os.path.dirname(__file__), _PACKAGED_FILE), "rb") as f:
            raw = f.read()
    source = f"{package}/{_PACKAGED_FILE} (built-in)"
    return types.MappingProxyType(_parse_table(_parse_bytes(raw, source), source, {}))


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
    if path is None:
        return dict(_builtin_profiles())
    source = os.fspath(path)
    try:
        with open(source, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise DeviceProfileError(
            f"{source}: cannot read device profile file: {exc.strerror or exc}") from exc
    return _parse_table(_parse_bytes(raw, source), source, _builtin_profiles())


def get_profile(spec: str | DeviceProfile) -> DeviceProfile:
    """Select a device profile by name or file.

    ``spec`` is a built-in name (``ssd``, ``san``, ``nfs1``, ``nfs2``, ``nfs3``, ``ram``;
    case-insensitive), ``path/to/file.toml`` (that file's only profile) or
    ``path/to/file.toml:name``. A :class:`DeviceProfile` is returned unchanged.
    Raises :class:`~mqlog.core.errors.DeviceProfileError` for an unknown name (listing
    the known ones) or a bad file.
    """
    if isinstance(spec, DeviceProfile):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise DeviceProfileError(
            f"device profile must be a name or a file.toml[:name], got {spec!r}")
    builtins = _builtin_profiles()
    key = spec.strip()
    if key in builtins:
        return builtins[key]
    if key.lower() in builtins:
        return builtins[key.lower()]

    file, name = key, None
    if not key.lower().endswith(".toml"):
        head, sep, tail = key.rpartition(":")
        if sep and head.lower().endswith(".toml"):
            file, name = head, tail
        else:
            raise DeviceProfileError(
                f"unknown device profile {spec!r}; known profiles: {', '.join(builtins)} "
                f"(or give a file: file.toml or file.toml:name)")
    profiles = load_profiles(file)
    if name is None:
        if len(profiles) == 1:
            return next(iter(profiles.values()))
        raise DeviceProfileError(
            f"{file}: defines {len(profiles)} profiles ({', '.join(profiles)}); "
            f"choose one with {file}:<name>")
    if name not in profiles:
        raise DeviceProfileError(
            f"{file}: no profile {name!r}; it defines: {', '.join(profiles)}")
    return profiles[name]


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
