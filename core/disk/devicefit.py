"""A device profile fitted to a storage measurement (mqldt's rows), and how well it reproduces
each measured row.

What it fits, and from what (:func:`fit_profile`). A row's *time per write* is taken from its
average rate, ``qm * blocksize / Avg bytes/sec`` (each of ``qm`` writers keeps one write
outstanding), not from mqldt's ``Avg latency of write (ns)``: that is a running mean kept in
integer nanoseconds (``avg_time = ((avg_time * (check_count - 1)) + duration) /
check_count``, ``src/util.h``), and each division truncates, so when latencies vary it reads
low by up to about writes / 4 ns. mqldt README's own sample shows it: 46,790 writes in 20 s
are 427.4 µs each, its average rate gives 427.3 µs, its average latency says 415.7 µs (that
mean over 46,790 writes drawn from a normal distribution of mean 427.4 µs and standard
deviation 50 µs, seed 1, comes out at 415.7 µs). The rate is a mean of about one value a
second, with no such drift. The table shows both, each against the fit.

- ``write_latency_us`` and ``write_bandwidth_mb_s`` from the rows of one queue manager
  (``--qm 1``: one write outstanding, so a row's time per write is one write's time alone on
  the device, ``latency + blocksize / bandwidth``): a least-squares line of time per write
  against block size, weighted by 1/latency², so that it minimises the *relative* error and
  small writes -- the ones MQ's log makes most -- count as much as large ones. The intercept
  is the latency and the slope's inverse the bandwidth (bytes per µs = MB/s). A line that
  falls with size (the measurement cannot see the transfer) gives a constant latency and the
  largest bandwidth a profile may have; one that would cross zero below the smallest block
  is drawn through the origin (no fixed latency). With a single block size latency and
  bandwidth cannot be told apart: the whole average time is taken as latency (right for that
  size, pessimistic for smaller writes, optimistic for larger) and the user is told so.
- ``queue_depth`` and ``channel_mb_s`` from rows of several queue managers (``--qm N``),
  where the model's N writers, all started together, run in lock step: ``k = min(N,
  queue_depth)`` of them hold slots at once, their transfers divide the channel, and each
  write takes ``(N / k) * (latency + blocksize / min(bandwidth, channel / k))`` -- the
  device's rule (:class:`~mqlog.core.disk.devices.Device`) for that pattern, which
  :func:`predict_us` computes and ``mqlog mqldt``'s replay confirms. The pair that minimises
  the squared relative errors of those rows is chosen; where the rows cannot tell (no
  contention seen) the largest queue depth and the smallest channel consistent with them
  are kept (the channel then the most the writers were seen to move at once: a lower bound).
  Without such rows, ``queue_depth`` is 32 (the usual per-LUN default of FC HBA drivers, as
  the built-in ``san``) and ``channel_mb_s`` is left out (the bandwidth: two concurrent
  transfers share it) -- assumptions the output names.
- What mqldt does not measure is assumed and said: reads cost as writes
  (``read_latency_us``, ``read_bandwidth_mb_s``), and the file system is a local one
  (``fs_calls`` as on the built-in ``ssd`` and ``san``: what is made durable costs a small
  synchronous write, the rest is served by the kernel; a log on NFS wants the NFS profiles'
  table and ``round_trip_us``, which mqldt does not measure).

The fitted profile is a :class:`~mqlog.core.disk.devices.DeviceProfile`, validated as any
other, and :func:`profile_toml` writes it in the built-ins' TOML shape, so it loads through
the same path as every user profile (``--device FILE.toml``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import attrs

from mqlog.core.disk.devices import (CATALOGUE, MAX_BANDWIDTH_MB_S, MAX_LATENCY_US, MAX_QUEUE_DEPTH,
                                     DeviceProfile)
from mqlog.core.disk.mqldt import MqldtRow
from mqlog.core.errors import MeasurementFileError

__all__ = ["FittedRow", "DeviceFit", "fit_profile", "predict_us", "time_per_write_us", "profile_toml", "DEFAULT_QUEUE_DEPTH"]

#: the queue depth assumed when no run of several queue managers bounds it (as ``san``, ``nfs1``)
DEFAULT_QUEUE_DEPTH = 32


def predict_us(profile: DeviceProfile, blocksize: int, qm: int) -> float:
    """The model's time, µs, of each write of ``blocksize`` bytes when ``qm`` writers each keep
    one write outstanding on ``profile``'s device, all started together."""
    k = min(qm, profile.queue_depth)
    rate = min(profile.write_bandwidth_mb_s, profile.channel / k)
    return qm / k * (profile.write_latency_us + blocksize / rate)


def time_per_write_us(row: MqldtRow) -> float:
    """The time, µs, each write of ``row`` took, from its average rate: ``row.qm`` writers, each
    with one write outstanding, move ``qm * blocksize`` bytes in that time."""
    return row.qm * row.blocksize * 1e6 / row.avg_bytes_sec


@attrs.frozen
class FittedRow:
    """One measured row beside what the fitted profile predicts for it."""

    row: MqldtRow
    latency_us: float           # predicted time per write
    mb_s: float                 # predicted rate, all queue managers together

    @property
    def measured_latency_us(self) -> float:
        return self.row.avg_latency_ns / 1000.0

    @property
    def measured_mb_s(self) -> float:
        return self.row.avg_bytes_sec / 1e6

    @property
    def latency_error(self) -> float:
        return self.latency_us / self.measured_latency_us - 1.0

    @property
    def mb_s_error(self) -> float:
        measured = self.measured_mb_s
        return self.mb_s / measured - 1.0 if measured > 0 else math.inf

    @property
    def worst_error(self) -> float:
        return max(abs(self.latency_error), abs(self.mb_s_error))


@attrs.frozen
class DeviceFit:
    """A fitted profile, each row with its prediction, and the assumptions made (sentences)."""

    profile: DeviceProfile
    rows: tuple[FittedRow, ...]
    assumptions: tuple[str, ...]

    @property
    def worst(self) -> FittedRow:
        return max(self.rows, key=lambda r: r.worst_error)


def _line_fit(points: Sequence[tuple[float, float]]) -> tuple[float, float, list[str]]:
    """(intercept µs, slope µs/byte, notes) of latency against size, weighted by 1/latency²."""
    notes: list[str] = []
    w = [1.0 / (t * t) for _, t in points]
    sw = sum(w)
    sx = sum(wi * b for wi, (b, _) in zip(w, points))
    sy = sum(wi * t for wi, (_, t) in zip(w, points))
    sxx = sum(wi * b * b for wi, (b, _) in zip(w, points))
    sxy = sum(wi * b * t for wi, (b, t) in zip(w, points))
    det = sw * sxx - sx * sx
    slope = (sw * sxy - sx * sy) / det
    intercept = (sy - slope * sx) / sw
    if slope <= 0:
        notes.append("the average latency does not grow with the block size, so the transfer cannot be seen: "
                     f"write_bandwidth_mb_s is the largest a profile may have ({MAX_BANDWIDTH_MB_S:g}) and the "
                     "latency the (weighted) mean")
        return sy / sw, 0.0, notes
    if intercept < 0:
        notes.append("the latency grows faster than the block size would explain with a fixed cost: the line is "
                     "drawn through the origin (write_latency_us = 0)")
        return 0.0, sxy / sxx, notes
    return intercept, slope, notes


def _channel_fit(rows: Sequence[MqldtRow], latency: float, bandwidth: float) -> tuple[int, float, list[str]]:
    """(queue depth, channel MB/s, notes) that best reproduce the rows of several queue managers."""
    most = max(r.qm for r in rows)

    def error(qd: int, channel: float) -> float:
        total = 0.0
        for r in rows:
            k = min(r.qm, qd)
            t = r.qm / k * (latency + r.blocksize / min(bandwidth, channel / k))
            total += (t / time_per_write_us(r) - 1.0) ** 2
        return total

    best: dict[int, tuple[float, float, float]] = {}
    for qd in range(1, most + 1):
        # A channel below the bandwidth would slow one writer alone, against the rows of one
        # queue manager; beyond ``flat`` no row's transfers are slowed by it: the error is flat.
        bottom = bandwidth
        flat = min(min(qd, most) * bandwidth, MAX_BANDWIDTH_MB_S)
        grid = [bottom * (flat / bottom) ** (i / 400) for i in range(401)]
        errs = [error(qd, c) for c in grid]
        i = min(range(len(grid)), key=lambda j: (errs[j], j))  # the smallest channel of the best
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
        for _ in range(60):  # golden-section search between the neighbours
            a, b = hi - (hi - lo) / 1.618033988749895, lo + (hi - lo) / 1.618033988749895
            if error(qd, a) <= error(qd, b):
                hi = b
            else:
                lo = a
        channel = (lo + hi) / 2
        best[qd] = (error(qd, channel), channel, flat)
    least = min(e for e, _, _ in best.values())
    qd = max(q for q, (e, _, _) in best.items() if e <= least * (1 + 1e-6) + 1e-12)
    _, channel, flat = best[qd]
    notes: list[str] = []
    if channel >= flat * (1 - 1e-6):
        channel = flat
        notes.append(f"no run of up to {most} queue managers was slowed by a shared channel: channel_mb_s is the "
                     f"most they moved at once ({min(qd, most)} x the bandwidth), a lower bound")
    if qd == most:
        qd = max(most, DEFAULT_QUEUE_DEPTH)
        notes.append(f"no run of up to {most} queue managers waited for a slot: queue_depth is at least {most}; "
                     f"{qd} is kept")
    return qd, channel, notes


def _figure(value: float) -> float:
    """A fitted figure as the profile keeps it: four significant digits are beyond any
    measurement's precision and keep the file readable."""
    return float(f"{value:.4g}")


def fit_profile(rows: Sequence[MqldtRow], name: str, source: str) -> DeviceFit:
    """A device profile named ``name`` fitted to mqldt's ``rows`` (read from ``source``).

    Raises :class:`~mqlog.core.errors.MeasurementFileError` naming ``source`` when the rows
    cannot give a profile (no run of one queue manager; a fitted figure out of a profile's
    range).
    """
    single = [r for r in rows if r.qm == 1]
    if not single:
        raise MeasurementFileError("no result of one queue manager (--qm 1): the latency and bandwidth of one "
                                   "writer are fitted from those", source=source)
    assumptions: list[str] = []
    points = [(float(r.blocksize), time_per_write_us(r)) for r in single]
    assumptions.append("each row's time per write is taken from its Avg bytes/sec (queue managers x blocksize / "
                       "rate): mqldt's Avg latency is a running mean in whole nanoseconds that reads low by up to "
                       "writes/4 ns when latencies vary")
    if len({b for b, _ in points}) == 1:
        latency, slope = sum(t for _, t in points) / len(points), 0.0
        assumptions.append(f"only one block size ({int(points[0][0])} bytes): latency and bandwidth cannot be told "
                           "apart, so the whole average write time is taken as latency (right for that size, "
                           "pessimistic for smaller writes, optimistic for larger); run mqldt with several --bsize "
                           "values (e.g. 4K,16K,64K,128K,256K) to separate them")
    else:
        latency, slope, notes = _line_fit(points)
        assumptions += notes
    bandwidth = min(1.0 / slope, MAX_BANDWIDTH_MB_S) if slope > 0 else MAX_BANDWIDTH_MB_S
    latency, bandwidth = _figure(latency), _figure(bandwidth)
    if latency > MAX_LATENCY_US:
        raise MeasurementFileError(f"the fitted write latency, {latency:g} µs, is beyond a profile's "
                                   f"{MAX_LATENCY_US:g} µs", source=source)
    several = [r for r in rows if r.qm > 1]
    if several:
        queue_depth, channel, notes = _channel_fit(several, latency, bandwidth)
        channel = _figure(channel)
        assumptions += notes
    else:
        queue_depth, channel = DEFAULT_QUEUE_DEPTH, None
        assumptions.append(f"no run of several queue managers (--qm N): queue_depth is {DEFAULT_QUEUE_DEPTH} (the "
                           "usual per-LUN default, as san) and channel_mb_s is left out (the bandwidth: two "
                           "transfers at once share it)")
    assumptions.append("mqldt measures only writes: reads are assumed to cost as writes (read_latency_us = "
                       "write_latency_us, read_bandwidth_mb_s = write_bandwidth_mb_s)")
    assumptions.append("the file system is assumed local (fs_calls as on ssd and san: fsync, create, rename and "
                       "unlink a synchronous write each, the other calls the kernel's); on NFS set fs_calls and "
                       "round_trip_us as the nfs profiles do")
    profile = DeviceProfile(
        name=name, description=f"fitted by mqlog from mqldt output {os.path.basename(source)}; reads assumed to "
                               "cost as writes, the file system local",
        read_latency_us=latency, write_latency_us=latency, read_bandwidth_mb_s=bandwidth,
        write_bandwidth_mb_s=bandwidth, queue_depth=min(queue_depth, MAX_QUEUE_DEPTH),
        channel_mb_s=channel)
    fitted = tuple(FittedRow(r, predict_us(profile, r.blocksize, r.qm),
                             r.qm * r.blocksize / predict_us(profile, r.blocksize, r.qm)) for r in rows)
    return DeviceFit(profile, fitted, tuple(assumptions))


def profile_toml(fit: DeviceFit, source: str) -> str:
    """The fitted profile as a device profile file, its assumptions as comments."""
    head = [f"# Device profile fitted by 'mqlog devices --from-mqldt {source}' (mqlog.core.disk.devicefit).",
            "# How, and what is assumed (mqldt measures only synchronous writes):"]
    head += [f"#   - {a}" for a in fit.assumptions]
    return CATALOGUE.dump([fit.profile], head)
