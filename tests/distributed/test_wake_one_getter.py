"""One message wakes one waiting MQGET (issue 38's mechanism 3): the others sleep on, rather
than all waking to find the message taken – a burst that would cost every sleeper a core."""

from __future__ import annotations

from mqlog.core.disk.storage import MemoryStorage

from .qmkit import make_qm, run


def _waiting_getters(getters: int, messages: int):
    env, _, qm = make_qm(MemoryStorage())
    run(env, qm.start())
    run(env, qm.define_queue("Q"))
    got = []

    def getter(i):
        conn = qm.connect(f"GETTER{i}")
        got.append((yield from conn.get("Q", syncpoint=True, wait_us=10_000_000.0)))

    for i in range(getters):
        env.process(getter(i))
    env.run(until=env.now + 100)  # every getter is waiting on the empty queue
    queue = qm.queues["Q"]
    asleep = [event for event, _ in queue.getters]
    assert len(asleep) == getters and not any(e.triggered for e in asleep)

    def putter():
        conn = qm.connect("PUTTER")
        for k in range(messages):
            yield from conn.put("Q", b"m%d" % k + bytes(100))
        yield from conn.commit()

    run(env, putter())
    env.run(until=env.now + 1_000)  # the woken getters take their messages
    return asleep, got, queue


def test_one_committed_message_wakes_one_getter():
    asleep, got, queue = _waiting_getters(10, 1)
    assert sum(e.triggered for e in asleep) == 1  # the other nine were never woken
    assert len(got) == 1 and len(queue.getters) == 9


def test_three_messages_wake_the_three_oldest_getters():
    asleep, got, queue = _waiting_getters(10, 3)
    assert [e.triggered for e in asleep] == [True] * 3 + [False] * 7
    assert len(got) == 3 and len(queue.getters) == 7
