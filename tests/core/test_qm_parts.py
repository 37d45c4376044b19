"""The queue manager's parts – the unit-of-work table, the checkpoint schedule, the log
reserve, the run's settings – and the narrow protocol restart works through."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest
import simpy

from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.disk.faults import FaultInjectingStorage
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.objects.queues import Queue
from mqlog.core.objects.uow import UnitOfWork
from mqlog.core.reference import reference_platform
from mqlog.core.qm.logspace import RESERVE_PER_OP, RESERVE_PER_UOW, LogReserve
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.core.qm.uowtable import UowTable
from mqlog.core.recovery.protocol import RecoveredState, RecoveryTarget

ROOT = Path(__file__).resolve().parents[2]


def _qm(storage=None, cls=QueueManager, **platform_kwargs):
    storage = storage if storage is not None else MemoryStorage()
    env = simpy.Environment()
    qm = cls(env, reference_platform(storage, **platform_kwargs), storage, Device(env, get_profile("ssd")), QmConfig())
    return env, qm


def _run(env, gen):
    return env.run(until=env.process(gen))


def _work(qm, n, *, commit=True):
    """``n`` units of work of one persistent put each, committed or left open."""
    conns = []
    for i in range(n):
        conn = qm.connect(f"app{i}")
        yield from conn.put("Q", b"x" * 100, persistent=True, syncpoint=True)
        if commit:
            yield from conn.commit()
        conns.append(conn)
    return conns


# --- the unit-of-work table ---------------------------------------------------------------

def _logged(uow_id, first, ops=1):
    uow = UnitOfWork(uow_id, "app", 0.0, first=first, last=first)
    for i in range(ops):
        uow.ops.add("put", "Q", bytes([uow_id, i]) * 12, True, first + i, 10)
    return uow


def test_the_table_keeps_logged_units_oldest_first_with_their_operations_counted():
    table = UowTable()
    a, b = _logged(1, 5000, ops=2), _logged(2, 1000, ops=3)
    for uow in (a, b):
        table.open[uow.id] = uow
        table.logged(uow)
    assert table.oldest() == (1000, 2) and table.logged_ops == 5
    table.moved(b, 9000)  # re-logged at the head (a round of shunting): a holds the tail now
    assert table.oldest() == (5000, 1) and b.first == 9000
    table.ended(a)
    assert table.oldest() == (9000, 2) and table.logged_ops == 3 and 1 not in table.open
    table.check()
    table.logged_ops += 1  # a count out of step is caught
    with pytest.raises(AssertionError, match="reserve counts 4"):
        table.check()


def test_units_are_never_numbered_back():
    table = UowTable()
    assert [table.new_id(), table.new_id()] == [1, 2]
    table.number_from(100)
    table.number_from(50)
    assert table.new_id() == 100


def test_a_unit_ends_out_of_the_age_index_and_the_queue_manager_tail_moves_on():
    env, qm = _qm()
    _run(env, qm.start())
    _run(env, qm.define_queue("Q"))
    conns = _run(env, _work(qm, 2, commit=False))
    assert qm.units.oldest() == (conns[0].uow.first, conns[0].uow.id) and len(qm.units.ages) == 2
    assert qm.tail() == min(qm.schedule.address, conns[0].uow.first)
    for conn in conns:
        _run(env, conn.commit())
    assert not qm.units.ages and not qm.uows and qm.units.logged_ops == 0
    assert qm.tail() == qm.schedule.address
    qm.check()


# --- the log reserve ----------------------------------------------------------------------

def test_the_reserve_grows_with_each_open_unit_and_operation_and_the_room_claimed():
    reserve = LogReserve()
    base = reserve.bytes(0, 0, 0)
    assert reserve.bytes(1, 0, 0) - base == RESERVE_PER_UOW + 2 * 200
    assert reserve.bytes(0, 3, 0) - base == 3 * RESERVE_PER_OP
    reserve.claim(700)
    assert reserve.bytes(0, 0, 0) - base == 700
    reserve.give_back(700)
    assert reserve.bytes(0, 0, 0) == base


def test_a_checkpoint_ends_the_log_full_episode_and_wakes_the_callers_waiting_for_space():
    env = simpy.Environment()
    reserve = LogReserve()
    reserve.full, reserve.freed = True, env.event()
    waiting = reserve.freed
    reserve.space_freed()
    assert not reserve.full and reserve.freed is None and waiting.triggered


# --- the checkpoint schedule and the run's settings ---------------------------------------

def test_a_changed_checkpoint_policy_is_the_run_s_and_the_platform_keeps_its_own():
    env, qm = _qm(checkpoint_records=10_000)
    _run(env, qm.start())
    _run(env, qm.define_queue("Q"))
    configured = qm.platform.checkpoint_policy
    qm.settings.checkpoint_policy = attrs.evolve(configured, records=10)
    before = qm.schedule.number
    _run(env, _work(qm, 20))
    assert qm.schedule.number > before  # the policy read is the run's setting
    assert qm.platform.checkpoint_policy is configured and configured.records == 10_000
    again = attrs.evolve(qm.platform, pad_grouped_tail=True)
    assert again.settings is not qm.settings and again.settings.checkpoint_policy is configured


def test_a_queue_without_a_keeper_is_not_added_as_a_kept_queue():
    env, qm = _qm()
    with pytest.raises(ValueError, match="no keeper"):
        qm.add_kept_queue(Queue("PRIVATE.Q", None))
    assert "PRIVATE.Q" not in qm.queues


# --- restart through its protocol ---------------------------------------------------------

class _Recording(QueueManager):
    states: list

    def recovered(self, state):
        self.states = [*getattr(self, "states", []), state]
        super().recovered(state)


def test_restart_hands_what_replay_recovered_to_the_queue_manager_in_one_state():
    storage = FaultInjectingStorage(MemoryStorage())
    env, qm = _qm(storage, checkpoint_records=50)
    _run(env, qm.start())
    _run(env, qm.define_queue("Q"))
    _run(env, _work(qm, 30))
    _run(env, _work(qm, 2, commit=False))  # in flight at the crash
    _run(env, _work(qm, 1))  # its commit forces them to disk too
    highest = qm.units.next_id - 1
    last = qm.schedule.number

    crashed = MemoryStorage()  # what is on disk now: nothing unforced
    for name in storage.durable.list():
        crashed.write(name, 0, storage.durable.read(name, 0, storage.durable.size(name)))
    env2, again = _qm(crashed, cls=_Recording, checkpoint_records=50)
    report = _run(env2, again.start())
    (state,) = again.states
    assert isinstance(state, RecoveredState)
    assert state.checkpoint_number == last and state.next_uow == highest + 1
    assert state.checkpoint_address != NO_ADDRESS
    assert again.recovery is report and report.uows_backed_out == 2
    assert again.schedule.number == last + 1  # restart's own checkpoint followed
    assert again.units.next_id > highest
    assert again.writer.next_address > state.log_end.end.address  # resumed there, then the backouts


def test_the_queue_manager_offers_everything_the_restart_protocol_names():
    env, qm = _qm()
    _run(env, qm.start())
    names = {n for n in RecoveryTarget.__annotations__} | {
        n for n, v in vars(RecoveryTarget).items() if callable(v) and not n.startswith("_")}
    missing = sorted(n for n in names if not hasattr(qm, n))
    assert not missing, missing


def _sources(*packages):
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text()


def test_no_module_outside_the_queue_manager_reaches_into_its_private_state():
    found = [f"{name}:{n}: {line.strip()}"
             for name, text in _sources("core", "zos", "distributed", "mqlog", "spark")
             if not name.startswith("core/qm/")
             for n, line in enumerate(text.splitlines(), 1) if re.search(r"\bqm\._[a-z]", line)]
    assert not found, found


def test_no_frozen_object_is_changed_through_object_setattr():
    """A value a run may change lives in a mutable object (the run's settings); a derived
    field of a frozen one is an attrs factory."""
    found = {name for name, text in _sources("core", "zos", "distributed", "mqlog", "spark")
             if re.search(r"^[^#]*object\.__setattr__\(", text, re.M)}
    assert not found, sorted(found)
