"""A fault-injecting :class:`~mqlog.core.disk.storage.Storage` wrapper: the model's power supply.

Neither storage backend loses anything on its own, so durability is modelled here, the
same way over either backend. :class:`FaultInjectingStorage` holds every ``write`` in a
volatile per-file overlay (the OS page cache) until ``sync`` applies it to the wrapped
storage, which therefore always holds exactly what would be on disk after a power loss
(:attr:`FaultInjectingStorage.durable`). Metadata operations (``create``, ``replace``,
``truncate``, ``delete``) are durable at once; ``replace`` is atomic.

A :class:`FaultPlan` says which physical write fails and how: a crash before the write
(nothing of it lands), a torn write (some of its 512-byte sectors land, then the crash),
or an injected I/O error the caller can survive. A writer that has several writes on the
device at once says so (:meth:`FaultInjectingStorage.begin_write` as each goes to the
device): the power loss that tears one tears every other write still in flight with it,
each its own seeded subset of sectors (z/OS dual logging's two copies, an archive copy
beside the log). Every random choice comes from
``random.Random(plan.seed)``, so a plan and a call sequence always give the same bytes.
After a crash every I/O call raises :class:`~mqlog.core.errors.SimulatedCrash`; a restart
reopens :attr:`~FaultInjectingStorage.durable` (usually in a fresh wrapper).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import NamedTuple

import attrs

from mqlog.core.errors import ParameterError, SimulatedCrash, StorageError, StorageFullError
from mqlog.core.disk.storage import Data, Storage

__all__ = ["SECTOR_SIZE", "FaultPlan", "WriteRecord", "FaultInjectingStorage", "SURVIVE", "DETECT", "NOTHING",
           "FileRoles"]

#: The unit of atomicity of a physical write: a torn write lands whole sectors only. The
#: log reader tells a tear from damage by it (``mqlog.core.format.pages.SECTOR_SIZE``, the
#: same size: core's disk and format layers may not import each other).
SECTOR_SIZE = 512

#: What a log configuration claims against a class of fault (a platform says so for its own
#: logs; a fault campaign holds it to it): nothing acknowledged is lost; loss only where
#: restart detects and reports it; nothing
SURVIVE, DETECT, NOTHING = "survive", "detect", "nothing"


@attrs.frozen
class FileRoles:
    """What each of a platform's files is to its restart, by name: what damage made on purpose
    (a fault campaign) may aim at, and what a second copy saves. Queue files (``.mqq``) are
    every platform's and are not asked about."""

    #: a control file (the log control file, the BSDS)
    control: Callable[[str], bool]
    #: an active log file that is not a control file (an extent; a z/OS active data set or archive)
    log: Callable[[str], bool]
    #: a file restart may need besides control and queue files (the log's, a spare-page file)
    needed: Callable[[str], bool]
    #: every copy of log file ``name`` (just ``name`` where the log has one copy)
    copies: Callable[[str], tuple] = lambda name: (name,)
    #: the setting that gives the log (effective values) one copy, in its own words, or None
    #: when it has two (a damaged last page then cannot be told from a torn last write)
    single_copy: Callable[[dict], str | None] = lambda values: "one copy"


TEAR_MODES = ("prefix", "random")


def _optional_int(minimum: int):
    def check(_instance: object, attribute: attrs.Attribute, value: object) -> None:
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ParameterError(attribute.name, value, f"None or an integer >= {minimum}")

    return check


def _check_atomic(_instance: object, attribute: attrs.Attribute, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < SECTOR_SIZE or value & (value - 1):
        raise ParameterError(attribute.name, value, f"a power of two of at least {SECTOR_SIZE} bytes")


def _check_tear_mode(_instance: object, attribute: attrs.Attribute, value: object) -> None:
    if value not in TEAR_MODES:
        raise ParameterError(attribute.name, value, " or ".join(repr(m) for m in TEAR_MODES))


def _check_seed(_instance: object, attribute: attrs.Attribute, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ParameterError(attribute.name, value, "an integer >= 0")


def _check_misdirect(_instance: object, attribute: attrs.Attribute, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value == 0 or abs(value) > 1024:
        raise ParameterError(attribute.name, value, "a non-zero integer from -1024 to 1024")


#: the unit a misdirected write is off by (a page of the log, a 4 KiB block of a file)
MISDIRECT_UNIT = 4096


@attrs.frozen
class FaultPlan:
    """Which physical write (``write`` or ``replace`` call, counted from 1) goes wrong.

    * ``crash_after_writes=N``: writes 1..N complete; the (N+1)-th raises SimulatedCrash
      without applying anything (N=0: the first write crashes).
    * ``tear_write=N``: the N-th write is torn -- some of its sectors land durably --
      then the crash happens. ``tear_mode`` "prefix" lands the first k of its sectors
      (0 < k < sectors), "random" a non-empty proper subset; a one-sector write lands
      nothing. A ``replace`` cannot tear: chosen as the torn write, it just crashes.
      Every other write in flight at that moment (begun, not yet written: see
      :meth:`FaultInjectingStorage.begin_write`) is torn the same way, in the order they
      began, each with the sectors of its own draw (any number of them, none or all
      included: it was anywhere on its way).
    * ``write_error_at=N``: the N-th write raises StorageError and changes nothing.
    * ``lose_write=N``: the N-th write is acknowledged, and its ``sync`` returns, but it never
      reaches the media (a cache that lies): reads see it until a crash, the durable image
      never does.
    * ``misdirect_write=N``: the N-th write is acknowledged but lands ``misdirect_pages``
      pages (of 4 KiB; negative: before) away from where it was aimed, in the same file; the
      place it was aimed at keeps its old bytes. Reads see the write where it was aimed until
      a crash.
    * ``sync_error_at=N``: the N-th ``sync`` call fails with EIO, and the file's unsynced
      writes are dropped as Linux drops them (the pages are marked clean): a later sync
      "succeeds" without them ("fsyncgate").
    * ``enospc_at=N``: the N-th allocation – a ``create`` of a non-empty file (formatting an
      extent or data set), a write that extends a file or a ``replace`` that makes a file
      larger – fails with ENOSPC (StorageFullError) and changes nothing: the file system is
      full.

    The default plan injects nothing.
    """

    crash_after_writes: int | None = attrs.field(default=None, validator=_optional_int(0))
    tear_write: int | None = attrs.field(default=None, validator=_optional_int(1))
    tear_mode: str = attrs.field(default="prefix", validator=_check_tear_mode)
    write_error_at: int | None = attrs.field(default=None, validator=_optional_int(1))
    seed: int = attrs.field(default=0, validator=_check_seed)
    lose_write: int | None = attrs.field(default=None, validator=_optional_int(1))
    misdirect_write: int | None = attrs.field(default=None, validator=_optional_int(1))
    misdirect_pages: int = attrs.field(default=1, validator=_check_misdirect)
    sync_error_at: int | None = attrs.field(default=None, validator=_optional_int(1))
    enospc_at: int | None = attrs.field(default=None, validator=_optional_int(1))
    #: the aligned block a tear never splits, bytes (a sector; the device's
    #: ``atomic_write_bytes``, which a run sets from its device profile)
    atomic_bytes: int = attrs.field(default=SECTOR_SIZE, validator=_check_atomic)


class WriteRecord(NamedTuple):
    """One attempted physical write, as recorded in ``write_log``."""

    number: int  #: 1-based count of physical writes
    name: str
    offset: int
    length: int  #: total bytes (all buffers of a vectored write)
    vectored: bool  #: a sequence of buffers written as one call
    kind: str = "write"  #: "write" or "replace"


class FaultInjectingStorage:
    """A :class:`Storage` over ``inner`` that loses unsynced writes on a (simulated) crash.

    ``inner`` is the durable image and is exposed as :attr:`durable`; it is never closed
    or damaged by a crash, so a restart can run on it directly. ``keep_write_log=False``
    skips recording :attr:`write_log` (for very long runs).
    """

    def __init__(self, inner: Storage, plan: FaultPlan = FaultPlan(), *,
                 keep_write_log: bool = True) -> None:
        if not isinstance(plan, FaultPlan):
            raise ParameterError("plan", plan, "a FaultPlan")
        self.durable: Storage = inner
        self.plan = plan
        self.description: str = inner.description
        #: Count of write() and replace() calls attempted (including a failing one).
        self.physical_writes = 0
        #: Every attempted physical write, in order (empty if keep_write_log is False).
        self.write_log: list[WriteRecord] = []
        self.crashed = False
        #: The physical write at which the crash happened (None: no crash or a manual one).
        self.crash_write: int | None = None
        self._keep_log = keep_write_log
        self._rng = random.Random(plan.seed)
        self._crash_at = plan.crash_after_writes
        self._tear_at = plan.tear_write
        self._error_at = plan.write_error_at
        # Volatile overlay: per file, the unsynced writes in order, and the end of the
        # furthest one (so size() is O(1)). A file has an entry only if it exists durably.
        self._pending: dict[str, list[tuple[int, bytes]]] = {}
        self._pending_end: dict[str, int] = {}
        #: Count of sync() calls, and of allocations (non-empty creates, extending writes:
        #: counted only under a plan with ``enospc_at``).
        self.syncs = 0
        self.allocations = 0
        #: The write the plan lost or misdirected: its number, file, offset and bytes, once it
        #: has been made (None until then)
        self.lied: tuple[int, str, int, bytes] | None = None
        #: Writes the cache holds that the media never will (a lost or misdirected write):
        #: per file, (offset, bytes) that reads see until a crash, overlaid on the durable
        #: image and trimmed wherever a later write reaches the media
        self._ghosts: dict[str, list[tuple[int, bytes]]] = {}
        #: Writes on their way to the device (begun, not yet written), by (file, offset), in
        #: the order they began: what a power loss tears besides the write it hits
        self._in_flight: dict[tuple[str, int], Data] = {}
        #: The writes a torn write's power loss tore beside it, as (file, offset) in the order
        #: they began (empty until then)
        self.torn_beside: tuple[tuple[str, int], ...] = ()

    def __repr__(self) -> str:
        state = "crashed" if self.crashed else f"{self.physical_writes} writes"
        return f"FaultInjectingStorage({self.durable!r}, {self.plan!r}, {state})"

    # -- crash machinery -------------------------------------------------------

    def _dead(self) -> SimulatedCrash:
        where = f" at physical write {self.crash_write}" if self.crash_write is not None else ""
        return SimulatedCrash(
            f"{self.description}: storage has crashed (simulated power loss{where}); "
            "restart from its durable image"
        )

    def crash(self) -> None:
        """Power loss now: every unsynced write is dropped; later I/O raises SimulatedCrash."""
        self.crashed = True
        self._pending.clear()
        self._pending_end.clear()
        self._ghosts.clear()
        self._in_flight = {}

    def power_loss(self) -> int:
        """Power loss now, between writes (a crash at a virtual time, or when the last call
        returned): as :meth:`crash`, and every write in flight is torn (a seeded subset of
        its sectors, none to all, lands). How many writes were in flight."""
        flying = self._in_flight
        self.crash()
        return self._tear_in_flight(flying)

    def begin_write(self, name: str, offset: int, data: Data) -> None:
        """A write of ``data`` at ``offset`` of ``name`` goes to the device now; its
        :meth:`write` comes when the device has finished it. Until then it is in flight:
        a torn write's power loss (``tear_write``) tears it too. A write never begun is in
        flight with nothing (queue files' writes, synchronous in the model)."""
        if self.crashed:
            raise self._dead()
        self._in_flight[(name, offset)] = data

    def _tear_in_flight(self, flying: dict) -> int:
        """Tear every write of ``flying`` (in flight when the power failed); how many."""
        for (name, offset), data in flying.items():
            self.tear_flying(name, offset, data)
        self.torn_beside = tuple(flying)
        return len(flying)

    def tear_flying(self, name: str, offset: int, data: Data) -> None:
        """Land a seeded subset – none to all – of a write that was in flight beside a torn
        one (to a file not yet on disk: nothing)."""
        if self.durable.exists(name):
            self.tear(name, offset, data if isinstance(data, bytes) else b"".join(data), whole_allowed=True)

    def kill(self) -> None:
        """The queue manager's processes are killed, the machine keeps running (``endmqm -p``,
        a z/OS CANCEL): every write the OS accepted – synced or not – is in its page cache and
        reaches the disk whole (no torn sector, unlike :meth:`crash`); what the queue manager
        had not yet written (its log buffer) went with its memory. Later I/O raises
        SimulatedCrash: nothing of the dead queue manager writes any more."""
        for name in list(self._pending):
            pending = self._pending[name]
            for off, buf in pending:
                self.durable.write(name, off, buf)
                if name in self._ghosts:
                    self._trim_ghosts(name, off, off + len(buf))
            self._drop(name)
        self.crashed = True

    def _attempt(self, name: str, offset: int, length: int, vectored: bool, kind: str) -> int:
        """Count one physical write and apply the plan's crash and error; return its number."""
        if self.crashed:
            raise self._dead()
        crash_now = self.physical_writes == self._crash_at
        n = self.physical_writes = self.physical_writes + 1
        if self._keep_log:
            self.write_log.append(WriteRecord(n, name, offset, length, vectored, kind))
        if crash_now:
            self.crash_write = n
            self.crash()
            raise SimulatedCrash(
                f"{self.description}: {name}: simulated power loss at physical write {n} "
                f"({kind} of {length} bytes at offset {offset}); nothing of it landed"
            )
        if n == self._error_at:
            raise StorageError(
                f"{self.description}: {name}: {kind} failed: I/O error (injected) "
                f"at physical write {n}"
            )
        return n

    # -- Storage: reads and metadata -------------------------------------------

    def exists(self, name: str) -> bool:
        if self.crashed:
            raise self._dead()
        return self.durable.exists(name)

    def size(self, name: str) -> int:
        if self.crashed:
            raise self._dead()
        size = self.durable.size(name)
        end = self._pending_end.get(name)
        if name in self._ghosts:
            size = max([size] + [off + len(buf) for off, buf in self._ghosts[name]])
        return end if end is not None and end > size else size

    def list(self, prefix: str = "") -> list[str]:
        if self.crashed:
            raise self._dead()
        return self.durable.list(prefix)

    def create(self, name: str, size: int = 0) -> None:
        if self.crashed:
            raise self._dead()
        if size and self.plan.enospc_at is not None:
            self._allocate(name, f"create of {size} bytes")
        self.durable.create(name, size)

    def _allocate(self, name: str, what: str) -> None:
        """Count an allocation; the plan's ENOSPC fails it."""
        self.allocations += 1
        if self.allocations == self.plan.enospc_at:
            raise StorageFullError(f"{self.description}: {name}: {what} failed: no space left on device (ENOSPC, "
                               f"injected at allocation {self.allocations})")

    def read(self, name: str, offset: int, length: int) -> bytes:
        if self.crashed:
            raise self._dead()
        pending = self._pending.get(name)
        ghosts = self._ghosts.get(name)
        if ghosts:
            # Lies first, then the unsynced writes: right for every write made after the lie.
            # (One still unsynced from before it and overlapping it would show over it: the
            # model's writers sync a file before they write its bytes again.)
            pending = ghosts + (pending or [])
        if not pending:
            return self.durable.read(name, offset, length)
        if offset < 0 or length < 0:
            raise StorageError(f"{self.description}: {name}: negative offset or length "
                               f"({offset}, {length})")
        view_size = self.size(name)
        end = min(offset + length, view_size)
        if end <= offset:
            return b""
        out = bytearray(self.durable.read(name, offset, end - offset))
        if len(out) < end - offset:
            out.extend(bytes(end - offset - len(out)))
        for off, buf in pending:
            bend = off + len(buf)
            if bend <= offset or off >= end:
                continue
            lo = off if off > offset else offset
            hi = bend if bend < end else end
            out[lo - offset:hi - offset] = memoryview(buf)[lo - off:hi - off]
        return bytes(out)

    def truncate(self, name: str, size: int) -> None:
        if self.crashed:
            raise self._dead()
        self.durable.truncate(name, size)
        if name in self._ghosts:
            self._trim_ghosts(name, size, 1 << 62)
        pending = self._pending.get(name)
        if pending:
            clipped = [(off, buf if off + len(buf) <= size else buf[:size - off])
                       for off, buf in pending if off < size]
            if clipped:
                self._pending[name] = clipped
                self._pending_end[name] = max(off + len(buf) for off, buf in clipped)
            else:
                self._drop(name)

    def delete(self, name: str) -> None:
        if self.crashed:
            raise self._dead()
        self.durable.delete(name)
        self._drop(name)
        self._ghosts.pop(name, None)

    def close(self) -> None:
        """Release the inner storage's OS resources. Never raises SimulatedCrash.

        Unsynced writes stay volatile (closing is not syncing).
        """
        self.durable.close()

    def _drop(self, name: str) -> None:
        self._pending.pop(name, None)
        self._pending_end.pop(name, None)

    # -- Storage: writes -------------------------------------------------------

    def write(self, name: str, offset: int, data: Data) -> None:
        if isinstance(data, bytes):
            buf, vectored = data, False
        elif isinstance(data, (bytearray, memoryview)):
            buf, vectored = bytes(data), False
        else:
            buf, vectored = b"".join(data), True
        if offset < 0:
            if self.crashed:
                raise self._dead()
            raise StorageError(f"{self.description}: {name}: negative offset {offset}")
        if self.plan.enospc_at is not None and not self.crashed and buf and (
                not self.exists(name) or offset + len(buf) > self.size(name)):
            self._allocate(name, f"write of {len(buf)} bytes at offset {offset}")
        if self._in_flight:
            self._in_flight.pop((name, offset), None)
        n = self._attempt(name, offset, len(buf), vectored, "write")
        if n in (self.plan.lose_write, self.plan.misdirect_write):
            if not self.durable.exists(name):
                self.durable.create(name, 0)
            self.lied = (n, name, offset, buf)
            self._ghost(name, offset, buf)  # the cache has it; the media never will (here)
            if n == self.plan.misdirect_write:
                wrong = max(0, offset + self.plan.misdirect_pages * MISDIRECT_UNIT)
                self._land(name, wrong, buf)
            return
        if n == self._tear_at:
            flying = self._in_flight
            self.crash()  # unsynced data of every file is gone ...
            self.crash_write = n
            self.tear(name, offset, buf)  # ... and part of this write landed
            others = self._tear_in_flight(flying)  # ... and of every other write in flight
            also = f", and {others} other write{'s' if others > 1 else ''} in flight with it" if others else ""
            raise SimulatedCrash(
                f"{self.description}: {name}: simulated power loss during physical write {n} "
                f"({len(buf)} bytes at offset {offset}); the write is torn{also}"
            )
        pending = self._pending.get(name)
        if pending is None:
            if not self.durable.exists(name):
                # Creating the file is a metadata operation: durable at once (the file
                # survives a crash, empty); its data is not.
                self.durable.create(name, 0)
            if not buf:
                return
            self._pending[name] = [(offset, buf)]
            self._pending_end[name] = offset + len(buf)
            return
        if not buf:
            return
        pending.append((offset, buf))
        end = offset + len(buf)
        if end > self._pending_end[name]:
            self._pending_end[name] = end

    def _ghost(self, name: str, offset: int, buf: bytes) -> None:
        ghosts = self._ghosts.setdefault(name, [])
        self._trim_ghosts(name, offset, offset + len(buf))
        ghosts.append((offset, buf))

    def _trim_ghosts(self, name: str, lo: int, hi: int) -> None:
        """A write reached the media over [lo, hi): no cached lie shows there any more."""
        ghosts = self._ghosts.get(name)
        if not ghosts:
            return
        kept = []
        for off, buf in ghosts:
            end = off + len(buf)
            if end <= lo or off >= hi:
                kept.append((off, buf))
                continue
            if off < lo:
                kept.append((off, buf[:lo - off]))
            if end > hi:
                kept.append((hi, buf[hi - off:]))
        if kept:
            self._ghosts[name] = kept
        else:
            del self._ghosts[name]

    def _land(self, name: str, offset: int, buf: bytes) -> None:
        """Bytes reach the media at once (a misdirected write, through the cache to the wrong
        place): durable, and visible unless a cached lie covers them."""
        self.durable.write(name, offset, buf)
        self.durable.sync(name)

    def sync(self, name: str) -> None:
        if self.crashed:
            raise self._dead()
        self.syncs += 1
        if self.syncs == self.plan.sync_error_at:
            self._drop(name)  # the kernel marks the failed pages clean: they are gone
            raise StorageError(f"{self.description}: {name}: fsync failed: input/output error (EIO, injected "
                               f"at sync {self.syncs}); its unsynced writes are lost")
        pending = self._pending.get(name)
        if pending:
            inner = self.durable
            i, count = 0, len(pending)
            while i < count:
                off, buf = pending[i]
                end = off + len(buf)
                j = i + 1
                while j < count and pending[j][0] == end:
                    end += len(pending[j][1])
                    j += 1
                if j == i + 1:
                    inner.write(name, off, buf)
                else:  # contiguous run: one vectored write
                    inner.write(name, off, [b for _, b in pending[i:j]])
                if name in self._ghosts:
                    self._trim_ghosts(name, off, end)
                i = j
            self._drop(name)
        self.durable.sync(name)

    def replace(self, name: str, data: bytes) -> None:
        if self.plan.enospc_at is not None and not self.crashed and (
                not self.exists(name) or len(data) > self.size(name)):
            self._allocate(name, f"replace with {len(data)} bytes")
        n = self._attempt(name, 0, len(data), False, "replace")
        if n == self._tear_at:
            # A replace is atomic (temp file + rename): a crash during it leaves the old file.
            self.crash_write = n
            self.crash()
            raise SimulatedCrash(
                f"{self.description}: {name}: simulated power loss during replace "
                f"(physical write {n}); the old file is intact"
            )
        self.durable.replace(name, data)
        self._drop(name)
        self._ghosts.pop(name, None)

    # -- deterministic damage (allowed after a crash: it acts on the durable image) --

    def tear(self, name: str, offset: int, new: bytes, *, whole_allowed: bool = False) -> None:
        """Apply a seeded torn version of writing ``new`` at ``offset`` to the durable image.

        The write's sectors are the aligned blocks of the file it touches, of the plan's
        ``atomic_bytes`` (512 unless the device never splits larger ones; partial first
        and last blocks are units). Per ``plan.tear_mode`` a prefix or a random non-empty
        proper subset of them gets the new bytes; the others keep the old durable bytes
        (beyond the old end of file: nothing, or zeros where a later sector landed). A
        write within one block lands nothing. ``whole_allowed`` (a write in flight beside
        the torn one): any number of its blocks land, from none to all.
        """
        data = new if isinstance(new, bytes) else bytes(new)
        if not data:
            return
        unit = self.plan.atomic_bytes
        end = offset + len(data)
        first = offset // unit
        count = (end - 1) // unit - first + 1
        low, high = (0, count) if whole_allowed else (1, count - 1)
        if high < low or high == 0:
            return
        rng = self._rng
        if self.plan.tear_mode == "prefix":
            landed = list(range(rng.randint(low, high)))
        else:
            landed = sorted(rng.sample(range(count), rng.randint(low, high)))
        if not landed:
            return
        view = memoryview(data)
        i = 0
        while i < len(landed):
            j = i
            while j + 1 < len(landed) and landed[j + 1] == landed[j] + 1:
                j += 1
            lo = max(offset, (first + landed[i]) * unit)
            hi = min(end, (first + landed[j] + 1) * unit)
            self.durable.write(name, lo, view[lo - offset:hi - offset])
            i = j + 1
        self.durable.sync(name)

    def flip_bit(self, name: str, offset: int, bit: int) -> None:
        """Flip bit ``bit`` (0 = least significant) of byte ``offset`` of the durable file.

        The same bit is flipped in any unsynced write covering that byte, so the damage
        shows in reads now and survives a later sync.
        """
        if isinstance(bit, bool) or not isinstance(bit, int) or not 0 <= bit <= 7:
            raise ParameterError("bit", bit, "an integer 0..7")
        size = self.durable.size(name)
        if not isinstance(offset, int) or not 0 <= offset < size:
            raise StorageError(f"{self.description}: {name}: cannot flip a bit at offset "
                               f"{offset}: the durable file has {size} bytes")
        mask = 1 << bit
        old = self.durable.read(name, offset, 1)[0]
        self.durable.write(name, offset, bytes((old ^ mask,)))
        self.durable.sync(name)
        pending = self._pending.get(name)
        if pending:
            for k, (off, buf) in enumerate(pending):
                if off <= offset < off + len(buf):
                    changed = bytearray(buf)
                    changed[offset - off] ^= mask
                    pending[k] = (off, bytes(changed))
