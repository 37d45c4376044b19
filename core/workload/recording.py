"""Record a run once, then materialise the disk it leaves at any crash or tear point.

The fault campaign (``mqlog torture``) asks the same question thousands of times: what is
on disk, and what were the applications told, if the power failed just before physical
write *k+1*? Re-running the workload for every *k* answers it, slowly. Runs are
deterministic, so instead the workload runs **once** over a :class:`RecordingStorage` and a
:class:`RecordingJournal`, which keep:

* every call the model made that changes files – ``write`` (with its bytes), ``sync``,
  ``create``, ``replace``, ``truncate``, ``delete`` – tagged with the physical-write count
  at the time (a write or replace with its own number);
* every journal event, tagged the same way: what had been acknowledged before write *k+1*
  was attempted is the events tagged ``<= k``.

A :class:`Recording` then materialises a scenario's disk by **replaying those calls through
a real** :class:`~mqlog.core.disk.faults.FaultInjectingStorage` – the power supply's own code, so
what is durable, what is lost and how a write tears cannot drift from what a re-run would
do (this is how SQLite's crash tests and ALICE work: record the stream of writes once,
construct the crash states from it). :class:`ImageCursor` replays in increasing *k* and
hands out copy-on-write views (:class:`CowStorage`) of the durable image, so a scenario
costs the calls between two crash points plus the pages its restart touches, never a copy
of the (pre-allocated, tens of MB) log files.

Fault models beyond "crash after *k*" and "tear *k*" plug in at the same place: a cursor
takes an ``edit`` hook that rewrites the recorded calls as they are replayed (drop write
*k* from the durable image – a lost write –, apply it at another offset – a misdirected
write –), and :meth:`Recording.replay` runs the stream through a storage with any
:class:`~mqlog.core.disk.faults.FaultPlan`. Faults the model itself sees and reacts to (an
``fsync`` error, a full disk) change the run after them and cannot come from a recording
of a run without them: those need a run of their own.

Views are only as good as what they are over: a :class:`CowStorage` reads through to its
base for every page it has not written, so a view handed out by a cursor is valid until the
cursor moves on (take the next view, or materialise afresh, after that).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable

from mqlog.core.errors import ParameterError, SimulatedCrash, StorageError
from mqlog.core.disk.faults import SECTOR_SIZE, FaultInjectingStorage, FaultPlan, WriteRecord
from mqlog.core.workload.journal import Journal
from mqlog.core.disk.storage import Data, MemoryStorage, Storage, check_name

__all__ = ["CowStorage", "RecordingStorage", "RecordingJournal", "Recorder", "Recording", "ImageCursor",
           "JournalCursor", "JOURNAL_EVENTS"]

#: copy-on-write granularity: a log page, so a restart's page writes copy one page each
COW_PAGE = 4096
_SHIFT = COW_PAGE.bit_length() - 1
_BASE = object()  # a file the view has not touched: read it from the base


class _CowFile:
    """A file of a :class:`CowStorage` that has been written: its size, how much of it still
    reads from the base (``limit``: 0 for a file created or replaced in the view), and the
    pages it has written (whole ``COW_PAGE`` buffers, zero beyond ``size``)."""

    __slots__ = ("name", "size", "limit", "pages")

    def __init__(self, name: str, size: int, limit: int) -> None:
        self.name = name
        self.size = size
        self.limit = limit
        self.pages: dict[int, bytearray] = {}


class CowStorage:
    """A copy-on-write view of ``base``: reads see ``base`` until the view writes, and writes
    never reach ``base``. Behaves as :class:`~mqlog.core.disk.storage.MemoryStorage` does (same
    errors, same messages, same zero-filling), so a restart on a view does what it would do
    on a copy."""

    def __init__(self, base: Storage) -> None:
        self._base = base
        self.description = base.description
        self._files: dict[str, _CowFile | None] = {}  # None: deleted in the view

    def __repr__(self) -> str:
        return f"CowStorage({self._base!r}, {len(self._files)} files touched)"

    # -- helpers ---------------------------------------------------------------

    def _missing(self, name: str) -> StorageError:
        check_name(self.description, name)
        return StorageError(f"{self.description}: {name}: no such file")

    def _file(self, name: str) -> _CowFile:
        """The view's own state of ``name`` (forked from the base on first touch)."""
        f = self._files.get(name, _BASE)
        if f is _BASE:
            if not self._base.exists(name):
                raise self._missing(name)
            size = self._base.size(name)
            f = self._files[name] = _CowFile(name, size, size)
        elif f is None:
            raise self._missing(name)
        return f

    def _from_base(self, f: _CowFile, lo: int, hi: int) -> bytes:
        """Bytes ``lo..hi`` of ``f`` where the view has no page: the base's up to its limit,
        zeros after."""
        if hi <= f.limit:
            return self._base.read(f.name, lo, hi - lo)
        if lo >= f.limit:
            return bytes(hi - lo)
        head = self._base.read(f.name, lo, f.limit - lo)
        return head + bytes(hi - lo - len(head))

    def _page(self, f: _CowFile, p: int) -> bytearray:
        page = f.pages.get(p)
        if page is None:
            lo = p << _SHIFT
            page = bytearray(COW_PAGE)
            if lo < f.limit:
                data = self._base.read(f.name, lo, min(f.limit, lo + COW_PAGE) - lo)
                page[:len(data)] = data
            f.pages[p] = page
        return page

    # -- Storage: reads and metadata -------------------------------------------

    def exists(self, name: str) -> bool:
        f = self._files.get(name, _BASE)
        if f is _BASE:
            return self._base.exists(name)
        return f is not None

    def size(self, name: str) -> int:
        f = self._files.get(name, _BASE)
        if f is _BASE:
            return self._base.size(name)
        if f is None:
            raise self._missing(name)
        return f.size

    def list(self, prefix: str = "") -> list[str]:
        names = {n for n in self._base.list(prefix) if self._files.get(n, _BASE) is not None}
        names.update(n for n, f in self._files.items() if f is not None and n.startswith(prefix))
        return sorted(names)

    def read(self, name: str, offset: int, length: int) -> bytes:
        f = self._files.get(name, _BASE)
        if f is _BASE:
            return self._base.read(name, offset, length)
        if f is None:
            raise self._missing(name)
        if offset < 0 or length < 0:
            raise StorageError(f"{self.description}: {name}: negative offset or length ({offset}, {length})")
        end = min(offset + length, f.size)
        if end <= offset:
            return b""
        pages = f.pages
        if not pages:
            return self._from_base(f, offset, end)
        first, last = offset >> _SHIFT, (end - 1) >> _SHIFT
        if first == last:  # the common case: a page, or part of one
            page = pages.get(first)
            if page is None:
                return self._from_base(f, offset, end)
            lo = offset - (first << _SHIFT)
            return bytes(page[lo:lo + end - offset])
        out = bytearray()
        for p in range(first, last + 1):
            base = p << _SHIFT
            lo = offset if offset > base else base
            hi = end if end < base + COW_PAGE else base + COW_PAGE
            page = pages.get(p)
            out += page[lo - base:hi - base] if page is not None else self._from_base(f, lo, hi)
        return bytes(out)

    # -- Storage: changes (the view's own) -------------------------------------

    def create(self, name: str, size: int = 0) -> None:
        check_name(self.description, name)
        if size < 0:
            raise StorageError(f"{self.description}: {name}: negative size {size}")
        if self.exists(name):
            raise StorageError(f"{self.description}: {name}: cannot create, file exists")
        self._files[name] = _CowFile(name, size, 0)

    def write(self, name: str, offset: int, data: Data) -> None:
        if offset < 0:
            raise StorageError(f"{self.description}: {name}: negative offset {offset}")
        if isinstance(data, bytes):
            buf = data
        elif isinstance(data, (bytearray, memoryview)):
            buf = bytes(data)
        else:
            buf = b"".join(data)
        f = self._files.get(name, _BASE)
        if f is None or (f is _BASE and not self._base.exists(name)):
            check_name(self.description, name)  # writing creates the file, as MemoryStorage does
            f = self._files[name] = _CowFile(name, 0, 0)
        elif f is _BASE:
            f = self._file(name)
        self._put(f, offset, buf)

    def _put(self, f: _CowFile, offset: int, buf: bytes) -> None:
        n = len(buf)
        if not n:
            return
        end = offset + n
        pos = offset
        while pos < end:
            p = pos >> _SHIFT
            base = p << _SHIFT
            hi = end if end < base + COW_PAGE else base + COW_PAGE
            self._page(f, p)[pos - base:hi - base] = buf[pos - offset:hi - offset]
            pos = hi
        if end > f.size:
            f.size = end

    def begin_write(self, name: str, offset: int, data: Data) -> None:
        """Nothing: a view of an image is written whole or not at all (a crash image's restart)."""

    def sync(self, name: str) -> None:
        if not self.exists(name):
            raise self._missing(name)

    def replace(self, name: str, data: bytes) -> None:
        check_name(self.description, name)
        f = self._files[name] = _CowFile(name, 0, 0)
        self._put(f, 0, bytes(data))

    def truncate(self, name: str, size: int) -> None:
        f = self._file(name)
        if size < 0:
            raise StorageError(f"{self.description}: {name}: negative size {size}")
        if size < f.size:
            # Pages beyond the new end go; the new last page is zeroed past it, and nothing
            # beyond it reads from the base any more (a later extension reads zeros).
            f.pages = {p: page for p, page in f.pages.items() if p << _SHIFT < size}
            tail = f.pages.get(size >> _SHIFT)
            if tail is not None:
                cut = size & (COW_PAGE - 1)
                tail[cut:] = bytes(COW_PAGE - cut)
            if f.limit > size:
                f.limit = size
        f.size = size

    def delete(self, name: str) -> None:
        self._file(name)
        self._files[name] = None

    def close(self) -> None:
        """Nothing to release; the view stays readable."""

    def touched(self) -> list[str]:
        """The names the view has changed (written, created, replaced, truncated, deleted)."""
        return sorted(self._files)


def files_of(storage: Storage) -> dict[str, bytes]:
    """Every file of ``storage`` and its bytes (for comparing two images)."""
    return {name: storage.read(name, 0, storage.size(name)) for name in storage.list()}


# -- recording a run -------------------------------------------------------------------------

class RecordingStorage(FaultInjectingStorage):
    """A :class:`~mqlog.core.disk.faults.FaultInjectingStorage` that also keeps :attr:`ops`: every
    call that changes files, as ``(tag, method, args)`` with ``tag`` the physical-write
    count once the call returned (a write's or replace's own number)."""

    def __init__(self, inner: Storage, plan: FaultPlan = FaultPlan(), *, keep_write_log: bool = True) -> None:
        super().__init__(inner, plan, keep_write_log=keep_write_log)
        self.ops: list[tuple[int, str, tuple]] = []

    def write(self, name: str, offset: int, data: Data) -> None:
        if isinstance(data, bytes):
            buf = data
        elif isinstance(data, (bytearray, memoryview)):
            buf = bytes(data)
        else:  # (the call itself gets the buffers, so the write log still says "vectored")
            data = list(data)
            buf = b"".join(data)
        super().write(name, offset, data)
        self.ops.append((self.physical_writes, "write", (name, offset, buf)))

    def begin_write(self, name: str, offset: int, data: Data) -> None:
        super().begin_write(name, offset, data)
        # (the bytes are the write's, recorded with it: Recording pairs the two)
        self.ops.append((self.physical_writes, "begin_write", (name, offset)))

    def sync(self, name: str) -> None:
        super().sync(name)
        self.ops.append((self.physical_writes, "sync", (name,)))

    def create(self, name: str, size: int = 0) -> None:
        super().create(name, size)
        self.ops.append((self.physical_writes, "create", (name, size)))

    def replace(self, name: str, data: bytes) -> None:
        data = bytes(data)
        super().replace(name, data)
        self.ops.append((self.physical_writes, "replace", (name, data)))

    def truncate(self, name: str, size: int) -> None:
        super().truncate(name, size)
        self.ops.append((self.physical_writes, "truncate", (name, size)))

    def delete(self, name: str) -> None:
        super().delete(name)
        self.ops.append((self.physical_writes, "delete", (name,)))

    def crash(self) -> None:
        super().crash()
        self.ops.append((self.physical_writes, "crash", ()))


#: the journal's methods that change what it knows (the rest only read it)
JOURNAL_EVENTS = ("put", "get_asked", "got", "get_failed", "commit_asked", "backout_asked", "prepare_asked",
                  "ended", "refused", "prepared", "crash", "settle", "learn")


class RecordingJournal(Journal):
    """A :class:`~mqlog.core.workload.journal.Journal` that keeps :attr:`events`: every call that
    changes it, as ``(tag, method, args, kwargs)`` with ``tag`` = ``clock()`` (the storage's
    physical-write count) when it was made."""

    def __init__(self, clock: Callable[[], int]) -> None:
        super().__init__()
        self._clock = clock
        self.events: list[tuple[int, str, tuple, dict]] = []


def _recorded(name: str):
    plain = getattr(Journal, name)

    def method(self, *args, **kwargs):
        self.events.append((self._clock(), name, args, kwargs))
        return plain(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = plain.__doc__
    return method


for _name in JOURNAL_EVENTS:
    setattr(RecordingJournal, _name, _recorded(_name))


class Recorder:
    """What :func:`~mqlog.core.workload.run.run_workload` records a run with (its ``recorder=``):
    it hands the run a :class:`RecordingStorage` and a :class:`RecordingJournal` on that
    storage's clock; :meth:`recording` afterwards."""

    def __init__(self) -> None:
        self.fs: RecordingStorage | None = None
        self.journal_: RecordingJournal | None = None

    def storage(self, inner: Storage, plan: FaultPlan, *, keep_write_log: bool) -> RecordingStorage:
        self.fs = RecordingStorage(inner, plan, keep_write_log=keep_write_log)
        return self.fs

    def journal(self) -> RecordingJournal:
        fs = self.fs
        if fs is None:
            raise ParameterError("recorder", self, "a storage made before the journal")
        self.journal_ = RecordingJournal(lambda: fs.physical_writes)
        return self.journal_

    def recording(self) -> "Recording":
        if self.fs is None:
            raise ParameterError("recorder", self, "a recorder a run has used")
        return Recording(self.fs.ops, self.journal_.events if self.journal_ is not None else [],
                         self.fs.physical_writes, atomic_bytes=self.fs.plan.atomic_bytes)


# -- materialising -----------------------------------------------------------------------

class Recording:
    """One run's calls and journal events, and the disks and journals they imply.

    ``base``: the storage the run started on (a restart's recording starts on a crash
    image); ``None`` for an empty one."""

    def __init__(self, ops: list, events: list, physical_writes: int, base: Storage | None = None, *,
                 atomic_bytes: int = SECTOR_SIZE) -> None:
        self.ops = ops
        #: the block a tear of the run's device never splits (its ``atomic_write_bytes``)
        self.atomic_bytes = atomic_bytes
        self.events = events
        self.physical_writes = physical_writes
        self.base = base
        self._op_tags = [op[0] for op in ops]
        self._event_tags = [e[0] for e in events]
        self._writes: dict[int, int] = {}  # physical write number -> its op's index
        #: physical write number -> the writes in flight beside it when it was made (begun,
        #: written later), as (file, offset, bytes) in the order they began: what a power
        #: loss tearing it tears too. Only writes that had company are here.
        self.in_flight_at: dict[int, tuple] = {}
        flying: dict[tuple[str, int], int] = {}  # (file, offset) -> its begin_write op's index
        company: dict[int, tuple[int, ...]] = {}
        for i, (tag, method, args) in enumerate(ops):
            if method == "begin_write":
                flying[(args[0], args[1])] = i
            elif method in ("write", "replace"):
                self._writes[tag] = i
                if method == "write" and flying:
                    begun = flying.pop((args[0], args[1]), None)
                    if begun is not None:
                        # the begin op replays with the write's bytes (a torn replay needs them)
                        ops[begun] = (ops[begun][0], "begin_write", args)
                    if flying:
                        company[tag] = tuple(flying.values())
        for tag, begins in company.items():
            # (a write begun and never made – the recording ended under it – has no bytes)
            self.in_flight_at[tag] = tuple(ops[j][2] for j in begins if len(ops[j][2]) == 3)

    def write(self, n: int) -> tuple[str, str, int, bytes]:
        """Physical write ``n``: (``"write"`` or ``"replace"``, file, offset, bytes)."""
        i = self._writes.get(n)
        if i is None:
            raise ParameterError("n", n, f"a physical write of the run, 1..{self.physical_writes}")
        _, method, args = self.ops[i]
        return (method, args[0], args[1], args[2]) if method == "write" else (method, args[0], 0, args[1])

    def write_log(self) -> list[WriteRecord]:
        """The run's physical writes as :attr:`FaultInjectingStorage.write_log` keeps them."""
        out = []
        for n in sorted(self._writes):
            kind, name, offset, data = self.write(n)
            # (a vectored write is recorded joined: whether it was does not change the image)
            out.append(WriteRecord(n, name, offset, len(data), False, kind))
        return out

    def calls_upto(self, k: int) -> int:
        """How many recorded calls happened before physical write ``k+1`` was attempted."""
        return bisect.bisect_right(self._op_tags, k)

    def images(self, *, edit: Callable | None = None) -> "ImageCursor":
        return ImageCursor(self, edit=edit)

    def journals(self) -> "JournalCursor":
        return JournalCursor(self)

    def materialise(self, k: int) -> CowStorage:
        """The durable image after a crash after physical write ``k`` (``k`` = the run's
        physical writes: its end), as a view of its own."""
        return self.images().image(k)

    def materialise_torn(self, k: int, seed: int, mode: str = "random") -> CowStorage:
        """The durable image after physical write ``k`` is torn (then the crash), byte for
        byte as ``FaultPlan(tear_write=k, tear_mode=mode, seed=seed)`` leaves it."""
        return self.images().torn(k, seed, mode)

    def journal_at(self, k: int) -> Journal:
        """What applications had been told before physical write ``k+1`` was attempted,
        with the crash applied (in-flight calls frozen)."""
        return self.journals().at(k)

    def replay(self, plan: FaultPlan = FaultPlan(), *, upto: int | None = None,
               edit: Callable | None = None) -> FaultInjectingStorage:
        """Replay every call (with ``edit``, up to physical write ``upto``) through a fresh
        storage with ``plan``, up to the plan's crash; the storage, its durable image in
        :attr:`~FaultInjectingStorage.durable`. The general, slower path (every call from
        the start) for fault models a cursor does not do."""
        fs = FaultInjectingStorage(CowStorage(self.base) if self.base is not None else MemoryStorage(), plan,
                                   keep_write_log=False)
        stop = len(self.ops) if upto is None else self.calls_upto(upto)
        try:
            for op in _edited(self.ops[:stop], edit):
                _apply(fs, op)
        except SimulatedCrash:
            pass
        return fs


def _edited(ops: Iterable, edit: Callable | None) -> Iterable:
    if edit is None:
        return ops
    return (new for op in ops for new in edit(op))


def _apply(fs: FaultInjectingStorage, op: tuple) -> None:
    _, method, args = op
    if method == "begin_write" and len(args) < 3:
        return  # begun, never written (the recording ended under it): no bytes to put in flight
    getattr(fs, method)(*args)


class ImageCursor:
    """Durable images of a recording in increasing crash points: ``image(k)`` replays the
    calls up to physical write ``k`` into one running storage (no fault plan: an unsynced
    write is pending, a synced one durable, exactly as in the run) and returns a
    copy-on-write view of its durable image – the disk a crash after write ``k`` leaves.
    A view is valid until the cursor moves on.

    ``edit(op)`` returns the calls to replay for a recorded one (``[op]`` unchanged, ``[]``
    to drop it, a changed copy): how a fault model that changes the stream is materialised."""

    def __init__(self, recording: Recording, *, edit: Callable | None = None) -> None:
        self.recording = recording
        base = recording.base
        self._fs = FaultInjectingStorage(CowStorage(base) if base is not None else MemoryStorage(),
                                         keep_write_log=False)
        self._next = 0
        self._edit = edit
        self.at = 0  # the crash point the durable image stands at

    def advance(self, k: int) -> None:
        if k < self.at:
            raise ParameterError("k", k, f"a crash point at or after {self.at} (a cursor only moves forward)")
        stop = self.recording.calls_upto(k)
        ops = self.recording.ops
        fs, edit = self._fs, self._edit
        for i in range(self._next, stop):
            if edit is None:
                _apply(fs, ops[i])
            else:
                for op in edit(ops[i]):
                    _apply(fs, op)
        self._next = max(self._next, stop)
        self.at = k

    def image(self, k: int) -> CowStorage:
        """The disk a crash after physical write ``k`` leaves."""
        self.advance(k)
        return CowStorage(self._fs.durable)

    def torn(self, k: int, seed: int, mode: str = "random") -> CowStorage:
        """The disk physical write ``k`` torn leaves: the image before it, with the seeded
        subset of its sectors landed by :meth:`FaultInjectingStorage.tear` itself, and of
        every write in flight beside it (a replace cannot tear: the image before it)."""
        plan = FaultPlan(tear_write=k, tear_mode=mode, seed=seed,  # (checks the mode and seed)
                         atomic_bytes=self.recording.atomic_bytes)
        kind, name, offset, data = self.recording.write(k)
        view = self.image(k - 1)
        if kind == "write":
            fs = FaultInjectingStorage(view, plan, keep_write_log=False)
            fs.tear(name, offset, data)
            for other, at, written in self.recording.in_flight_at.get(k, ()):
                fs.tear_flying(other, at, written)
        return view


class JournalCursor:
    """Journals of a recording in increasing crash points: ``at(k)`` is an independent
    journal of what applications had been told before write ``k+1``, crash applied."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self._journal = Journal()
        self._next = 0
        self.at_ = 0

    def at(self, k: int) -> Journal:
        if k < self.at_:
            raise ParameterError("k", k, f"a crash point at or after {self.at_} (a cursor only moves forward)")
        events = self.recording.events
        stop = bisect.bisect_right(self.recording._event_tags, k)
        journal = self._journal
        for i in range(self._next, stop):
            _, method, args, kwargs = events[i]
            getattr(journal, method)(*args, **kwargs)
        self._next = max(self._next, stop)
        self.at_ = k
        out = journal.copy()
        out.crash()
        return out
