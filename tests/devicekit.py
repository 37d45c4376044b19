"""What the device tests share: a device profile with round figures (100 µs, 100 MB/s, one I/O
at a time) and any field overridden, and a SimPy run of timed I/Os on a device."""

from __future__ import annotations

import simpy
from mqlog.core.disk.devices import Device, DeviceProfile


def profile(**overrides) -> DeviceProfile:
    fields = dict(name="t", description="test", read_latency_us=100.0, write_latency_us=100.0,
                  read_bandwidth_mb_s=100.0, write_bandwidth_mb_s=100.0,
                  queue_depth=1)
    fields.update(overrides)
    return DeviceProfile(**fields)


def schedule(profile: DeviceProfile, ios):
    """Run ``ios`` -- (start_us, "read"|"write", nbytes) -- each in its own process;
    returns the device, each I/O's finish time and the service time each call returned."""
    env = simpy.Environment()
    device = Device(env, profile)
    finished = [None] * len(ios)
    returned = [None] * len(ios)

    def io(i, start, kind, nbytes):
        yield env.timeout(start)
        returned[i] = yield from getattr(device, kind)(nbytes)
        finished[i] = env.now

    for i, (start, kind, nbytes) in enumerate(ios):
        env.process(io(i, start, kind, nbytes))
    env.run()
    return device, finished, returned
