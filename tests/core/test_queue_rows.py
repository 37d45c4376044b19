"""A queue's messages held in columns, a row a message, rows reused (issue 35's memory per
message): a message read from the queue is a snapshot that no later message can change, and
the queue behaves as the mapping of message objects it was before, however rows are reused."""

from __future__ import annotations

import random

import pytest

from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.objects.queuefile import MessageState
from mqlog.core.objects.queues import Message, Queue
from mqlog.core.objects.uow import Op, Ops

C, P, G = MessageState.COMMITTED, MessageState.PUT_UNCOMMITTED, MessageState.GOT_UNCOMMITTED


def _id(i: int) -> bytes:
    return b"AMQ QM1     " + i.to_bytes(12, "big")


def test_a_message_a_getter_holds_never_turns_into_the_one_that_reuses_its_row():
    queue = Queue("Q", None)
    queue.add(Message(_id(1), queue.next_seq(), False, 5, b"first", C))
    held = queue.take_first()
    queue.remove(held)  # an MQGET outside syncpoint removes its message, then reads it
    queue.add(Message(_id(2), queue.next_seq(), True, 6, b"second", P, uow=9, put_address=300))
    assert (held.msg_id, held.data, held.length, held.persistent, held.state) == (_id(1), b"first", 5, False, C)
    assert queue.read(held)[0] == b"first"
    assert list(queue.messages) == [_id(2)] and _id(1) not in queue.messages
    again = queue.messages[_id(2)]
    assert (again.data, again.state, again.uow, again.put_address) == (b"second", P, 9, 300)


def test_changing_a_message_read_from_the_queue_changes_only_the_copy():
    queue = Queue("Q", None)
    queue.add(Message(_id(1), queue.next_seq(), True, 3, b"abc", P, uow=4, put_address=10))
    copy = queue.messages[_id(1)]
    copy.state, copy.uow, copy.data = C, 0, None
    message = queue.messages[_id(1)]
    assert (message.state, message.uow, message.data) == (P, 4, b"abc")
    assert not queue.available  # only the queue's methods make a message available


def test_a_queue_emptied_and_filled_again_reuses_its_rows():
    queue = Queue("Q", None)
    for _ in range(3):
        for i in range(100):
            queue.add(Message(_id(i), queue.next_seq(), False, 1, b"x", C))
        while (message := queue.take_first()) is not None:
            queue.remove(message)
        assert queue.depth == 0
    assert len(queue._ids) < 100 + 16  # (the columns grow a chunk of rows at a time)


def test_a_deep_queue_finds_every_message_and_settles_each_by_its_unit():
    # Deep enough that rows are filed by chunk as well as by their own number.
    queue = Queue("Q", None, max_depth=10**6)
    n = 9000
    for i in range(n):
        queue.put(_id(i), queue.next_seq(), True, i, b"%d" % i, P, uow=1 + i % 3, put_address=10 * i)
    for i in range(0, n, 2):  # of the even ones, unit 1's puts commit, unit 2's back out, 3's stay
        queue.settle(_id(i), i % 3 == 0, 1 + i % 3 if i % 3 < 2 else 99)  # (unit 99 holds none)
    queue.check()
    kept = {i for i in range(n) if i % 2 or i % 3 != 1}
    assert sorted(queue.messages) == sorted(_id(i) for i in kept)
    for i in kept:
        m = queue.messages[_id(i)]
        committed = i % 2 == 0 and i % 3 == 0
        assert (m.seq, m.length, m.data, m.put_address) == (i + 1, i, b"%d" % i, 10 * i)
        assert (m.state, m.uow) == ((C, 0) if committed else (P, 1 + i % 3))
    assert [queue.take_first().msg_id for _ in range(3)] == [_id(0), _id(6), _id(12)]
    assert queue.apply_get(_id(18), 7, 555) and not queue.apply_get(_id(1), 7, 556)  # (_id(1): not committed)
    assert (queue.messages[_id(18)].state, queue.messages[_id(18)].get_address) == (G, 555)
    queue.check()


@pytest.mark.parametrize("seed", range(6))
def test_the_columns_behave_as_a_mapping_of_message_objects(seed):
    # A model: the dict of message objects the queue held before its columns, changed as
    # the queue's methods changed those objects. Ids share long prefixes (as MQ's do), and
    # the run goes through many chunks of rows, freeing and reusing them out of order.
    rng = random.Random(seed)
    queue = Queue("Q", None)
    model: dict[bytes, Message] = {}
    next_id = 0
    for _ in range(3000):
        action = rng.random()
        if action < 0.45 or not model:
            next_id += 1
            state = rng.choice((C, P))
            m = Message(_id(next_id), queue.next_seq(), rng.random() < 0.7, rng.randrange(0, 5000),
                        rng.choice((None, b"d%d" % next_id)), state, 0 if state is C else rng.randrange(1, 2**60),
                        rng.choice((NO_ADDRESS, rng.randrange(0, 2**63))))
            queue.add(m)
            model[m.msg_id] = Message(m.msg_id, m.seq, m.persistent, m.length, m.data, m.state, m.uow,
                                      m.put_address)
        elif action < 0.6:
            taken = queue.take_first(taker=rng.choice((0, 3)))
            if taken is not None:
                m = model[taken.msg_id]
                m.busy, m.busy_by = True, taken.busy_by
        else:
            m = model[rng.choice(list(model))]
            what = rng.random()
            if what < 0.4:
                queue.remove(queue.messages[m.msg_id])
                del model[m.msg_id]
            elif what < 0.7:
                uow, address = rng.randrange(1, 2**63), rng.randrange(2**63)
                queue.lock(queue.messages[m.msg_id], uow=uow, get_address=address)
                m.state, m.uow, m.get_address, m.busy, m.busy_by = G, uow, address, False, 0
            else:
                queue.make_available(queue.messages[m.msg_id])
                m.state, m.uow, m.busy, m.busy_by, m.get_address = C, 0, False, 0, NO_ADDRESS
        assert list(queue.messages) == list(model)
        queue.check()
    assert queue.depth == len(model)
    for msg_id, m in model.items():
        got = queue.messages[msg_id]
        assert (got.msg_id, got.seq, got.persistent, got.length, got.data, got.state, got.uow, got.put_address,
                got.busy, got.busy_by) == (m.msg_id, m.seq, m.persistent, m.length, m.data, m.state, m.uow,
                                           m.put_address, m.busy, m.busy_by)
        if m.state is G:
            assert got.get_address == m.get_address
    committed = {m.seq: m.msg_id for m in model.values() if m.state is C and not m.busy}
    assert dict(queue.available) == committed


def test_a_unit_of_works_operations_keep_their_addresses_lengths_and_chain():
    ops = [Op("put", "A", _id(1), True, 2**64 - 2, NO_ADDRESS, 512),
           Op("get", "B", _id(2), False, NO_ADDRESS, 2**64 - 2, 0),
           Op("put", "A", _id(3), True, 700, 5, 2**31)]  # (a prev that is not the one before's)
    held = Ops(ops)
    assert list(held) == ops and held[-1] == ops[-1] and list(reversed(held)) == ops[::-1]
    assert held.persistent == 2 and held.queues == ["A", "B", "A"]
    assert list(held.targets(newest_first=True)) == [(True, "A", _id(3)), (False, "B", _id(2)), (True, "A", _id(1))]
