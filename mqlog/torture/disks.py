"""The disks and journals a campaign's scenarios run on: the workload's run recorded once
(:class:`Engine`), its crash points, torn writes and restarts materialised in increasing order
(:class:`Cursor`), the scenario a plan fixes (:class:`Scenario`), and the small operations on
a disk that the fault classes use (which files are control files or needed by restart, a bit
flipped, the writes a tear can damage beyond themselves).
"""

from __future__ import annotations

import attrs

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.format.pages import PAGE_SIZE
from mqlog.core.workload.recording import CowStorage, Recorder, Recording, RecordingStorage
from mqlog.core.workload.run import run_workload
from mqlog.platforms import choose


@attrs.frozen
class Scenario:
    """One fault, fixed at planning: its place in the report (``index``), its class and
    label, the crash point of the recorded run it starts from (``at``: the order scenarios
    run in) and what :meth:`Campaign.execute` needs to inject it (``None``: nothing to
    inject on this disk, not a scenario)."""

    index: int
    fault: str
    label: str
    at: int
    args: tuple | None
    #: what went wrong while the scenario was chosen (the tool failing: an error outcome)
    error: str | None = None


class Engine:
    """A campaign's recorded run: the workload run once, its physical writes and the
    :class:`~mqlog.core.workload.recording.Recording` that materialises its crash points."""

    def __init__(self, campaign) -> None:  # a Campaign
        self.campaign = campaign
        recorder = Recorder()
        base = run_workload(campaign._config(keep_write_log=True), MemoryStorage(), recorder=recorder)
        self.writes = base.storage.write_log
        self.recording = recorder.recording()

    def record_restart(self, image) -> Recording:
        """The restart on ``image`` (a crash point's), run once and recorded: its own writes
        materialise every crash during it. Raises what the restart raised."""
        probe = RecordingStorage(CowStorage(image), keep_write_log=False)
        self.campaign._restart(probe)
        return Recording(probe.ops, [], probe.physical_writes, base=image,
                         atomic_bytes=self.recording.atomic_bytes)

    def cursor(self) -> "Cursor":
        return Cursor(self)


class Cursor:
    """Disks and journals of the recorded run in increasing crash points (one replay for a
    batch of scenarios sorted by the point they start from); each disk a view of its own."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.images = engine.recording.images()
        self.journals = engine.recording.journals()
        self._journal: tuple[int, object] | None = None
        self._restart: tuple[int, Recording] | None = None

    def image(self, k: int) -> CowStorage:
        return self.images.image(k)

    def torn(self, k: int, seed: int) -> CowStorage:
        return self.images.torn(k, seed, "random")

    def journal(self, k: int):
        if self._journal is None or self._journal[0] != k:
            self._journal = (k, self.journals.at(k))
        return self._journal[1]

    def restart_image(self, k: int, j: int) -> CowStorage:
        if self._restart is None or self._restart[0] != k:
            self._restart = (k, self.engine.record_restart(self.images.image(k)))
        return self._restart[1].images().image(j)


def clone(storage) -> MemoryStorage:
    """A copy of every file of ``storage``."""
    out = MemoryStorage()
    for name in storage.list():
        out.write(name, 0, storage.read(name, 0, storage.size(name)))
    return out


def is_control(platform: str, name: str) -> bool:
    """Whether ``name`` is one of the platform's control files (log control, BSDS)."""
    return choose(platform).file_roles().control(name)


def needed_file(platform: str, name: str) -> bool:
    """Whether ``name`` is a file the platform's restart may need: log extents, data sets
    and archives, control files (the log control file, the BSDS, TripleWrite's spare page),
    queue files. Copies of the BSDS kept beside archives are not."""
    roles = choose(platform).file_roles()
    return name.endswith(".mqq") or roles.control(name) or roles.needed(name)


def log_file(platform: str, name: str) -> bool:
    """Whether ``name`` is an active log file (a distributed extent; a z/OS active data set,
    copy 1: :func:`copies_of` gives its copies): what stale damage swaps, zeroes, restores."""
    return choose(platform).file_roles().log(name)


def copies_of(platform: str, name: str) -> tuple:
    """Every copy of log file ``name`` (z/OS: copy 1 and copy 2; those absent are skipped
    when the damage is made)."""
    return choose(platform).file_roles().copies(name)


def flip(storage, name: str, offset: int, bit: int) -> None:
    """Flip one bit of ``name`` at ``offset`` in ``storage``."""
    byte = storage.read(name, offset, 1)[0]
    storage.write(name, offset, bytes([byte ^ (1 << bit)]))


def in_place_writes(writes) -> list:
    """The physical writes that rewrite a page already written (at 4 KiB granularity):
    the ones a torn write can damage beyond the write itself."""
    seen: dict[str, set] = {}
    out = []
    for w in writes:
        if w.kind != "write":
            continue  # replace is atomic: it cannot tear
        pages = seen.setdefault(w.name, set())
        first, last = w.offset // PAGE_SIZE, (w.offset + max(w.length, 1) - 1) // PAGE_SIZE
        if any(p in pages for p in range(first, last + 1)):
            out.append(w)
        pages.update(range(first, last + 1))
    return out
