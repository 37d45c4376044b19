"""A queue's lock: what MQPUT and MQGET hold while they change the queue, and what it costs
to wait for it.

IBM (Colin Paice, "Why are persistent messages out of syncpoint a bad idea?", developer.ibm.com,
2017): "whenever an application does a put or get to a queue, a lock is held on the queue for
the duration of that request. If an application puts or gets a persistent message out of
syncpoint, then the queue lock is held across the IO request." Inside syncpoint "the queue is
locked for a shorter time" (IBM, "Implicit syncpointing for persistent messages put outside
of syncpoint", 2018). amqsrua's STATQ "lock contention" is "the percentage of attempts to lock
the queue that resulted in waiting for another process to release the lock first"; IBM's mqio
paper reports 24.56% inside syncpoint and 98.98% outside.

The model: one lock a queue. An MQPUT takes it for the whole call – its path and, if
persistent, its record appended to the log buffer – as Paice describes; a persistent MQGET for
its persistent part (its record), its search for a message having run before it waited (amqsrua
counts lock contention for MQPUT only: its STATQ GET type has no such element). The lock is
taken once the call runs on a core, and released before the call waits for its log force,
inside syncpoint and outside it. That outside syncpoint the lock is *not* held across
the I/O is an assumption against Colin Paice's description (which he gives "at a hand waving
level of understanding"), made because IBM's own counters for one out-of-syncpoint putter and
one getter on a queue (CALIBRATION D1, MQ V8: TripleWrite +25% physical writes) need the two to
overlap: held across the force, the putter's next put takes the lock before the woken getter
and the pair alternates strictly, and TripleWrite then doubles the writes (1.999 against
1.252; docs/research/issue38-experiments.md). What the model therefore does not show is the
extra contention of several out-of-syncpoint putters on one queue (IBM's mqio: 98.98% against
24.56% inside syncpoint).

A caller that finds it held gives its core up and sleeps; a release wakes the oldest sleeper
but does not hand the lock over (a running thread may take it first, as with a futex-based
mutex). The woken thread is given the next free core before the callers queued for one – Linux
favours a thread that slept – pays the host's CPU to be woken (``force_wait_us``: a futex sleep
and wakeup, the same system calls as a force's – an assumption, IBM gives no figure for it)
and tries again. This is what makes CPU per round trip rise with concurrency (CALIBRATION F1:
326 µs at 20 requesters, 384 at 60, flat to 200): the locks are free while the cores are not
saturated, contended once they saturate in bursts, and the contention stops growing once the
saturated cores set the rate the locks carry. ``requests`` and ``contended`` give amqsrua's
figure.
"""

from __future__ import annotations

import collections
from typing import Any

import simpy

__all__ = ["QueueLock"]


class QueueLock:
    """One queue's lock (see the module's docstring)."""

    __slots__ = ("env", "holder", "sleepers", "requests", "contended")

    def __init__(self, env: Any):
        self.env = env
        self.holder = None  # who holds it (None: free)
        self.sleepers: collections.deque[simpy.Event] = collections.deque()
        self.requests = 0  # attempts to take it (amqsrua: lock attempts)
        self.contended = 0  # of those, attempts that found it held and had to wait

    def try_take(self, holder) -> simpy.Event | None:
        """Take the lock for ``holder``: None if it was free (now held), else an event that
        fires when a release wakes this caller, who must then try again."""
        self.requests += 1
        if self.holder is None:
            self.holder = holder
            return None
        self.contended += 1
        event = self.env.event()
        self.sleepers.append(event)
        return event

    def release(self) -> None:
        self.holder = None
        if self.sleepers:
            self.sleepers.popleft().succeed()
