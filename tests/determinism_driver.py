"""The child process of tests/test_determinism.py: runs mqlog commands in one process whose heap
has been disturbed first, so that two children differ in their ``id()`` values as well as in
their string-hash seed (``PYTHONHASHSEED``, which the parent sets).

    python determinism_driver.py COMMANDS.json

COMMANDS.json is a list of argument lists, each given to ``mqlog.cli.main`` in turn; after each,
a line ``=== exit N`` goes to stdout, so stdout is every command's output in order. Reads
``MQLOG_TEST_HEAP_SEED`` (only here, never in the product): the seed of how many of the
model's objects are made and kept before the commands run. The first line on stderr says what
the layout came to (a string's hash, a new queue's address), so the parent can check that
its two children did differ.

It also adds the workload ``fan-out`` for the commands to name: no built-in has one unit of
work wake getters on several queues (their units of work put to one queue, or nobody waits
on the queues they fill), and that is where wake order once followed memory addresses.
"""

from __future__ import annotations

import json
import os
import random
import sys


def disturb_heap(seed: int) -> list:
    """A seeded-random number of queues, messages, units of work and records, made and kept
    alive (every third one let go, leaving holes): later allocations land elsewhere."""
    from mqlog.core.objects.queues import Message, Queue
    from mqlog.core.format.records import Commit
    from mqlog.core.objects.uow import UnitOfWork

    rng = random.Random(seed)
    kept = []
    for i in range(rng.randrange(500, 5000)):
        kind = rng.randrange(4)
        if kind == 0:
            obj = Queue(f"HEAP.{i}", None)
        elif kind == 1:
            obj = Message(b"%24d" % i, i, True, 8, b"x" * rng.randrange(1, 200))
        elif kind == 2:
            obj = UnitOfWork(i, "HEAP", 0.0)
        else:
            obj = Commit(i, uow=i)
        kept.append(obj)
    del kept[::3]
    return kept


def add_fan_out() -> None:
    """The ``fan-out`` workload: a getter waits on each of ``queues`` queues; one putter puts
    a message on every queue (in a seeded order) and commits, ``rounds`` times."""
    from mqlog.core.workload.spec import _PAYLOAD, BUILTINS, Param, WorkloadDef, _message_size
    from mqlog.core.workload.workloads import RUNNERS

    BUILTINS["fan-out"] = WorkloadDef(
        "fan-out", "one commit wakes a getter on each of several queues (tests only)",
        (Param("queues", 8, int, "queues, each with its getter", low=1, high=100),
         Param("rounds", 20, int, "units of work, each putting to every queue", low=1, high=10_000),
         _message_size(512), _PAYLOAD))

    def fan_out(ctx):
        p = ctx.spec.get
        queues = [f"FAN.{i:02d}" for i in range(p("queues"))]
        for name in queues:
            yield from ctx.qm.define_queue(name)
        rounds, size = p("rounds"), p("message_size")

        def getter(queue):
            app = ctx.app(f"GETTER.{queue}")
            for _ in range(rounds):
                got = yield from app.get(queue, wait_us=60e6)
                if got is None:
                    return
                yield from app.commit()

        def putter():
            app = ctx.app("PUTTER")
            for _ in range(rounds):
                order = list(queues)
                app.rng.shuffle(order)
                for queue in order:
                    yield from app.put(queue, app.payload(size))
                yield from app.commit()

        procs = [ctx.start(getter(q)) for q in queues] + [ctx.start(putter())]
        yield ctx.env.all_of(procs)

    RUNNERS["fan-out"] = fan_out


def main() -> int:
    kept = disturb_heap(int(os.environ.get("MQLOG_TEST_HEAP_SEED", "0")))
    add_fan_out()
    from mqlog.cli import main as mqlog_main
    from mqlog.core.objects.queues import Queue

    print(f"layout: hash {hash('mqlog')} queue at {id(Queue('PROBE', None))} after {len(kept)} objects",
          file=sys.stderr, flush=True)
    with open(sys.argv[1], encoding="utf-8") as f:
        commands = json.load(f)
    for argv in commands:
        code = mqlog_main(argv)
        print(f"=== exit {code}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
