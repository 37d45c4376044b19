"""The application journal: what each simulated application was told, and the check of a
recovered queue manager against it.

A crash can strike while a call is in flight, so the journal keeps three kinds of
knowledge about each persistent message: what was *acknowledged* (the application saw the
call return), what was *attempted* (a commit was asked for but never returned), and what
is *in doubt* (prepared, awaiting the coordinator). The verdict after restart:

* **committed_missing** – a message whose put was acknowledged as committed, not consumed
  by an acknowledged or attempted get, is not on its queue;
* **uncommitted_present** – a message whose put never committed (nor was attempted, nor is
  in doubt), or whose get was acknowledged as committed, is still there; non-persistent
  messages must all be gone too;
* **duplicates** – a message on its queue more than once;
* **indoubt** – messages of units of work left in doubt (present, not yet committed).

Gets outside syncpoint in flight at the crash may have consumed a message the application
never learned the id of; each such get excuses one missing message on its queue.
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

import attrs

from mqlog.core.objects.queuefile import MessageState


class _Msg(NamedTuple):
    """What the journal knows of one message: a value, shared by every message that has the
    same (:meth:`Journal._state` interns them), so that a message costs the journal its dict
    slot, not an object: a log-fill holds a million."""

    queue: str
    persistent: bool
    put: str = "pending"  # pending -> committed | maybe | maybe_indoubt | backed_out | indoubt
    got: str = ""  # "" | pending | committed | maybe | maybe_indoubt | backed_out | indoubt



@attrs.define
class Verdict:
    committed_missing: int = 0
    uncommitted_present: int = 0
    duplicates: int = 0
    indoubt: int = 0
    nonpersistent_present: int = 0
    excused_missing: int = 0  # allowed by gets outside syncpoint in flight at the crash
    #: committed messages missing from queues restart marked damaged (and said so): excused,
    #: since the queue is unusable until re-created and the loss was reported, not silent
    damaged_missing: int = 0
    details: list = attrs.field(factory=list)

    @property
    def ok(self) -> bool:
        return not (self.committed_missing or self.uncommitted_present or self.duplicates
                    or self.nonpersistent_present)

    def as_dict(self) -> dict:
        return {"committed_missing": self.committed_missing, "uncommitted_present": self.uncommitted_present,
                "duplicates": self.duplicates, "indoubt": self.indoubt,
                "nonpersistent_present": self.nonpersistent_present, "excused_missing": self.excused_missing,
                **({"damaged_missing": self.damaged_missing} if self.damaged_missing else {})}


class Journal:
    """Record what applications were told; call the methods right after each call returns
    (or, for ``commit_asked``/``get_asked``, right before)."""

    def __init__(self):
        self.messages: dict[bytes, _Msg] = {}
        #: uow key -> the message ids its puts, and its gets, journalled while it is open (an
        #: operation's outcome sets its message's put or got state alone, so the two lists
        #: need no order between them)
        self._puts: dict[object, list[bytes]] = {}
        self._gets: dict[object, list[bytes]] = {}
        self._states: dict[_Msg, _Msg] = {}  # every distinct value of ``messages``, once
        self._asked: dict[object, str] = {}  # uow key -> "commit" | "backout" while in flight
        self._prepared: dict[object, int] = {}  # uow key -> uow id
        self._gets_in_flight: Counter[str] = Counter()  # queue -> gets outside syncpoint in flight

    def _state(self, m: _Msg) -> _Msg:
        """The one instance of the value ``m``."""
        return self._states.setdefault(m, m)

    # The hot paths below look a state up by a plain tuple of its fields – equal to the _Msg
    # of the same fields, and of the same hash, so it finds it – and build a _Msg (a Python
    # call: namedtuple's __new__) only for a state not seen before: a few dozen a run.

    def _new_state(self, fields: tuple) -> _Msg:
        """The one instance of the state ``fields`` (queue, persistent, put, got), not yet interned."""
        m = _Msg(*fields)
        self._states[m] = m
        return m

    # -- puts and gets --

    def put(self, key, msg_id: bytes, queue: str, persistent: bool, syncpoint: bool) -> None:
        earlier = self.messages.get(msg_id)
        # (an earlier entry: got before its put returned – an out-of-syncpoint put is visible
        # while its call finishes a spill: keep what the getter was told)
        fields = (queue, persistent, "pending" if syncpoint else "committed", earlier.got if earlier is not None else "")
        self.messages[msg_id] = self._states.get(fields) or self._new_state(fields)
        if syncpoint:
            self._puts.setdefault(key, []).append(msg_id)

    def get_asked(self, queue: str, syncpoint: bool) -> None:
        if not syncpoint:
            self._gets_in_flight[queue] += 1

    def got(self, key, msg_id: bytes, queue: str, syncpoint: bool, persistent: bool = True) -> None:
        if not syncpoint:
            self._gets_in_flight[queue] -= 1
        m = self.messages.get(msg_id)
        got = "pending" if syncpoint else "committed"
        if m is None:
            # Its put has not returned yet; that it could be got means it was committed.
            fields = (queue, persistent, "committed", got)
        else:
            fields = (m.queue, m.persistent, m.put, got)
        self.messages[msg_id] = self._states.get(fields) or self._new_state(fields)
        if syncpoint:
            self._gets.setdefault(key, []).append(msg_id)

    def get_failed(self, queue: str, syncpoint: bool) -> None:
        if not syncpoint:
            self._gets_in_flight[queue] -= 1

    # -- syncpoints --

    def commit_asked(self, key) -> None:
        self._asked[key] = "commit"

    def backout_asked(self, key) -> None:
        self._asked[key] = "backout"

    def prepare_asked(self, key) -> None:
        """MQ's prepare was called: if it never returns, the unit may be in doubt or backed out."""
        self._asked[key] = "prepare"

    def ended(self, key, committed: bool) -> None:
        """The unit of work ended and the application was told how (MQCMIT returned, MQBACK
        returned, or a call failed with MQRC_BACKED_OUT)."""
        self._asked.pop(key, None)
        self._prepared.pop(key, None)
        outcome = "committed" if committed else "backed_out"
        # (a unit seldom both puts and gets: no call for the side it has none of)
        puts = self._puts.pop(key, None)
        if puts is not None:
            self._settle(puts, outcome, None)
        gets = self._gets.pop(key, None)
        if gets is not None:
            self._settle(gets, None, outcome)

    def _settle(self, ids, put: str | None, got: str | None) -> None:
        """Set the put state (``put``) or the got state (``got``; None: unchanged) of each message of ``ids``."""
        messages, states = self.messages, self._states
        before = after = None  # the state of the message before, and its state after
        for msg_id in ids:
            m = messages[msg_id]
            if m is not before:  # (states are interned: messages in the same state share one object)
                before = m
                fields = (m.queue, m.persistent, m.put if put is None else put, m.got if got is None else got)
                after = states.get(fields) or self._new_state(fields)
            messages[msg_id] = after

    def refused(self, key) -> None:
        """A commit, backout or prepare was refused at its entry (MQRC_Q_MGR_STOPPING: an
        immediate shutdown refuses calls before they do anything): nothing was asked of the
        unit, which stays in flight – backed out at the stop or by the next restart."""
        self._asked.pop(key, None)

    def prepared(self, key, uow_id: int) -> None:
        self._prepared[key] = uow_id

    def in_doubt_keys(self) -> dict:
        return dict(self._prepared)

    def copy(self) -> "Journal":
        """An independent copy (the fault campaign freezes a copy at each crash point of a
        recorded run, while the original goes on taking the run's later events)."""
        out = Journal()
        out.messages = dict(self.messages)  # (its values are shared, never changed)
        out._states = dict(self._states)
        out._puts = {k: list(ids) for k, ids in self._puts.items()}
        out._gets = {k: list(ids) for k, ids in self._gets.items()}
        out._asked = dict(self._asked)
        out._prepared = dict(self._prepared)
        out._gets_in_flight = Counter(self._gets_in_flight)
        return out

    # -- after the crash --

    def crash(self) -> None:
        """Freeze what was in flight: attempted commits may or may not have happened."""
        for key in dict.fromkeys([*self._puts, *self._gets]):
            asked = self._asked.get(key)
            if key in self._prepared and asked is None:
                state = "indoubt"
            elif key in self._prepared or asked == "prepare":
                # the coordinator's decision, or the prepare itself, was on its way:
                # done (committed or backed out), or in doubt
                state = "maybe_indoubt"
            elif asked == "commit":
                state = "maybe"
            else:
                state = "backed_out"
            self._settle(self._puts.get(key, ()), state, None)
            self._settle(self._gets.get(key, ()), None, state)
        self._puts.clear()
        self._gets.clear()
        self._asked.clear()

    def settlement(self, qm) -> dict:
        """After a restart :meth:`verify` passed, what the recovered queues say of what the
        crash left open – a commit that may or may not have happened, a get outside syncpoint
        whose message the application never saw: ``{msg_id: (put, got)}`` for each message whose
        fate the restart decided, for :meth:`settle`. Messages in doubt stay so: the
        coordinator, not the restart, resolves them."""
        state = {msg_id: message.state for queue in qm.queues.values() for msg_id, message in queue.messages.items()}
        undecided = ("indoubt", "maybe_indoubt")
        decided = {}
        for msg_id, m in self.messages.items():
            if not m.persistent or m.put in undecided or m.got in undecided:
                continue  # (non-persistent ones are gone at every restart: verify keeps checking that)
            if state.get(msg_id) is MessageState.COMMITTED:
                decided[msg_id] = ("committed", "")
            elif msg_id not in state:
                # consumed (by a get that committed, or one in flight the crash excused), or never put
                decided[msg_id] = ("committed", "committed") if m.put == "committed" else ("backed_out", m.got)
        return decided

    def settle(self, decided: dict) -> None:
        """Learn what a restart decided (:meth:`settlement`), so that a workload carried on after
        it (``mqlog run --in``) extends a journal whose every message is known: a later verify
        then checks each old message exactly (there, or gone) instead of tolerating it as maybe.
        Takes data, not the queue manager, so that a recording journal can record it."""
        Journal.learn(self, decided)  # (not a second event of a recording journal)
        self._gets_in_flight.clear()  # the messages they may have taken are settled now

    def coordination(self, qm, queues) -> dict:
        """After a coordinator (a channel's sending agent, as it resynchronises at a restart)
        resolved the units in doubt on ``queues`` of ``qm``, each undecided message's fate there
        from what the queue manager now holds – still on its queue and committed: its get backed
        out (or its put committed); gone: its get committed (or its put backed out) – as
        ``{msg_id: (put, got)}`` for :meth:`learn`."""
        from mqlog.core.objects.queuefile import MessageState

        undecided = ("indoubt", "maybe_indoubt")
        held = {name: {msg_id: m.state for msg_id, m in qm.queues[name].messages.items()} if name in qm.queues
                else {} for name in queues}
        decided = {}
        for msg_id, m in self.messages.items():  # (one pass, whatever the number of queues)
            if m.queue in held and (m.put in undecided or m.got in undecided):
                there = held[m.queue].get(msg_id) is MessageState.COMMITTED
                got = ("backed_out" if there else "committed") if m.got in undecided else m.got
                put = ("committed" if there or got == "committed" else "backed_out") if m.put in undecided else m.put
                decided[msg_id] = (put, got)
        return decided

    def learn(self, decided: dict) -> None:
        """Take each message's (put, got) of ``decided`` as known (data, so that a recording
        journal can record it)."""
        for msg_id, (put, got) in decided.items():
            self.messages[msg_id] = self._state(self.messages[msg_id]._replace(put=put, got=got))

    def to_json(self) -> dict:
        """The journal as JSON-able data (after :meth:`crash`: nothing is in flight)."""
        return {
            "version": 1,
            "messages": {msg_id.hex(): [m.queue, m.persistent, m.put, m.got] for msg_id, m in self.messages.items()},
            "gets_in_flight": {q: n for q, n in sorted(self._gets_in_flight.items()) if n},
        }

    @classmethod
    def from_json(cls, data: dict, *, source: str = "journal") -> "Journal":
        """Read :meth:`to_json`'s output back; a malformed journal is a JournalError naming the field."""
        from mqlog.core.errors import JournalError

        journal = cls()
        if not isinstance(data, dict) or data.get("version") != 1:
            raise JournalError(f"{source}: not an mqlog application journal (version 1)")
        states = {"pending", "committed", "maybe", "maybe_indoubt", "backed_out", "indoubt", ""}
        messages = data.get("messages")
        if not isinstance(messages, dict):
            raise JournalError(f"{source}: messages: expected a table")
        for key, row in messages.items():
            try:
                msg_id = bytes.fromhex(key)
                queue, persistent, put, got = row
            except (ValueError, TypeError):
                raise JournalError(f"{source}: messages.{key}: expected [queue, persistent, put, got]") from None
            if (len(msg_id) != 24 or not isinstance(queue, str) or not isinstance(persistent, bool)
                    or not isinstance(put, str) or not isinstance(got, str) or put not in states
                    or got not in states):
                raise JournalError(f"{source}: messages.{key}: malformed entry {row!r}")
            journal.messages[msg_id] = journal._state(_Msg(queue, persistent, put, got))
        gets = data.get("gets_in_flight", {})
        if not isinstance(gets, dict) or not all(isinstance(q, str) and type(n) is int and n >= 0
                                                 for q, n in gets.items()):
            raise JournalError(f"{source}: gets_in_flight: expected queue names with counts")
        journal._gets_in_flight.update(gets)
        return journal

    def verify(self, qm) -> Verdict:
        """Check a restarted queue manager's queues against what applications were told."""
        v = Verdict()
        seen: Counter[bytes] = Counter()
        where: dict[bytes, tuple] = {}
        for queue in qm.queues.values():
            for msg_id, message in queue.messages.items():
                seen[msg_id] += 1
                where[msg_id] = (queue.name, message)
        v.duplicates = sum(n - 1 for n in seen.values() if n > 1)
        missing_by_queue: Counter[str] = Counter()
        for msg_id, m in self.messages.items():
            present = msg_id in seen
            if not m.persistent:
                if present:
                    v.nonpersistent_present += 1
                    v.details.append(("nonpersistent_present", msg_id))
                continue
            state = where[msg_id][1].state if present else None
            if m.put == "indoubt":
                # A prepared put survives, held: on its queue but not yet committed.
                if state is MessageState.PUT_UNCOMMITTED:
                    v.indoubt += 1
                else:
                    v.committed_missing += 1
                    v.details.append(("indoubt_put_not_held", msg_id, state))
                continue
            if m.got == "indoubt" and m.put == "committed":
                if state is MessageState.GOT_UNCOMMITTED:
                    v.indoubt += 1
                else:
                    v.committed_missing += 1
                    v.details.append(("indoubt_get_not_held", msg_id, state))
                continue
            if (m.put == "maybe_indoubt" and state is MessageState.PUT_UNCOMMITTED) or (
                    m.got == "maybe_indoubt" and state is MessageState.GOT_UNCOMMITTED):
                v.indoubt += 1  # the coordinator's decision had not reached the log
                continue
            # Visible to applications: committed (a get in doubt was handled above).
            visible = state is MessageState.COMMITTED
            must_be_there = m.put == "committed" and m.got in ("", "backed_out")
            must_be_gone = m.put in ("pending", "backed_out") or m.got == "committed"
            if must_be_there and not visible:
                if present:
                    v.committed_missing += 1  # there, but held as if uncommitted: nobody can get it
                    v.details.append(("committed_not_visible", msg_id, state))
                else:
                    missing_by_queue[m.queue] += 1
                    v.details.append(("committed_missing", msg_id))
            elif must_be_gone and present:
                v.uncommitted_present += 1
                v.details.append(("uncommitted_present", msg_id, state))
            elif present and not visible and not must_be_there:
                # a "maybe" outcome must still have been resolved one way or the other
                v.uncommitted_present += 1
                v.details.append(("unresolved", msg_id, state))
        damaged = qm.damaged
        for queue, missing in missing_by_queue.items():
            if queue in damaged:  # restart said so (a damaged queue file): reported, not silent
                v.damaged_missing += missing
                continue
            excused = min(missing, max(0, self._gets_in_flight[queue]))
            v.excused_missing += excused
            v.committed_missing += missing - excused
        return v
