"""z/OS commands and queue-sharing groups change the run's settings
(:class:`mqlog.core.platform.RuntimeSettings`), never the frozen platform bundle, and shared
queues join a member through its public method."""

from __future__ import annotations

import simpy

from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.disk.faults import FaultInjectingStorage
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.zos.commands import set_system
from mqlog.zos.platform import zos_platform
from mqlog.zos.qsg import QueueSharingGroup, attach_shared_queues


def _member(env, name="QMA", number=1, lrsn=True):
    storage = FaultInjectingStorage(MemoryStorage())
    platform = zos_platform(storage, data_sets=4, cis=64, logload=500, lrsn=lrsn, qm_name=name)
    return QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig(name=name, member=number))


def test_set_system_logload_changes_the_run_s_checkpoint_policy_not_the_platform_s():
    env = simpy.Environment()
    qm = _member(env, lrsn=False)
    env.run(until=env.process(qm.start()))
    configured = qm.platform.checkpoint_policy
    assert set_system(qm, LOGLOAD=1000) == 1000
    assert qm.settings.checkpoint_policy.records == 1000 and qm.platform.settings is qm.settings
    assert qm.platform.checkpoint_policy is configured and configured.records == 500


def test_members_draw_lrsns_from_the_group_s_clock_through_their_settings():
    env = simpy.Environment()
    qsg = QueueSharingGroup()
    a, b = _member(env, "QMA", 1), _member(env, "QMB", 2)
    own = a.platform.addressing
    qsg.join(a)
    qsg.join(b)
    assert a.settings.addressing.clock is qsg.clock is b.settings.addressing.clock
    assert a.platform.addressing is own and own.clock is not qsg.clock  # the bundle as configured
    for qm in (a, b):
        env.run(until=env.process(qm.start()))
    assert a.writer.addressing.clock is qsg.clock  # the writer stamps from the group's clock


def test_attach_registers_the_shared_queues_with_their_keeper():
    env = simpy.Environment()
    qm = _member(env)
    attach_shared_queues(("SHARED.A", "SHARED.B"))(qm)
    assert sorted(qm.queues) == ["SHARED.A", "SHARED.B"]
    assert all(q.keeper is not None for q in qm.queues.values())
