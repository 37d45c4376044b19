"""What a file handed to ``mqlog scan`` is, and how to read it on its own.

``scan`` takes one file, not a queue manager: it cannot ask a control file or a BSDS which log
addresses the file holds. A log file of any platform says so itself: every page's header names
the page's own log address (docs/FORMAT.md §2), so the first page gives the address the file
starts at – 0 for the reference log, the extent's first LSN for a distributed extent
(``S0000003.LOG`` of a linear log starts at LSN 3 × LogFilePages × 4096), the data set's first
RBA for a z/OS active or archive data set – and the file is read from there, at the first
record that starts in it (a record continued from the previous extent is not this file's to
show). A page of an earlier use of the space further on (a reused extent or data set the
current use has not yet overwritten) is still stale, and ends the walk as it ends a log.

Every other file of a run directory starts with a marker of its own; :func:`identify` names
it, so that scan can say "not a log file" and what the file is, instead of reading a BSDS or a
queue file as a damaged log.
"""

from __future__ import annotations

import re

import attrs

from mqlog.core.format.pages import NO_FIRST_RECORD, PAGE_HEADER_SIZE, PAGE_MAGIC, PAGE_SIZE, check_page
from mqlog.core.format.records import NO_ADDRESS
from mqlog.platforms import PLATFORMS

#: the markers the core's own files start with, and what each file is (each platform's
#: descriptor adds those of its files: ``file_markers``)
_MARKERS = {
    b"MQQH": "a queue file (a queue's messages and their index, MQQH header): restart reads it, it holds no log",
}


def _markers() -> dict[bytes, str]:
    """What a file starting with each marker is: the core's files and every platform's."""
    out = dict(_MARKERS)
    for descriptor in PLATFORMS.values():
        out.update(descriptor.file_markers)
    return out


def _page_files() -> dict[str, str]:
    """The platforms' files of log pages that hold no stretch of log (a spare page), by name."""
    return {name: what for descriptor in PLATFORMS.values() for name, what in descriptor.page_files.items()}


def _named() -> tuple[tuple[re.Pattern, str, str], ...]:
    """What a page-format file is, by its name (the platforms' naming, from their
    descriptors: the pages do not say): (pattern, platform, words)."""
    return tuple((re.compile(pattern), descriptor.name, words)
                 for descriptor in PLATFORMS.values() for pattern, words in descriptor.file_names)


@attrs.frozen
class FileKind:
    #: "log" (read it), "unwritten" (a log file formatted and never written), "damaged" (a log
    #: file whose first page is bad: no address to read it from), or "other"
    kind: str
    #: what the file is, in words
    what: str
    #: for a log: the platform its name says (a registry name) or None, and the address of its first page
    platform: str | None = None
    base: int = 0


def identify(name: str, head: bytes, size: int) -> FileKind:
    """What a file is, from its name, its first page ``head`` and its size."""
    if size == 0:
        return FileKind("other", "an empty file")
    marker = head[:4]
    markers = _markers()
    if marker in markers:
        return FileKind("other", markers[marker])
    if marker == PAGE_MAGIC and name in _page_files():
        return FileKind("other", _page_files()[name])
    platform, what = None, "a log file"
    for pattern, plat, words in _named():
        if pattern.fullmatch(name):
            platform, what = plat, words
    if marker == PAGE_MAGIC:
        header, problem = check_page(head, NO_ADDRESS)  # a good page reports its own address
        if header is not None:
            return FileKind("log", what, platform, header.address - header.address % PAGE_SIZE)
        return FileKind("damaged", f"{what} whose first page is {problem}: scan cannot tell which log "
                                   f"addresses it holds", platform)
    if not head.strip(b"\0"):
        if platform is not None or name.endswith(".log"):
            return FileKind("unwritten", f"{what}, formatted and never written (its first page is zeros)", platform)
        return FileKind("other", "a file of zeros")
    if _looks_like_text(head[:512]):
        return FileKind("other", "a text file (the queue manager's error log, a run's JSON, or other text)")
    return FileKind("other", f"a file with none of mqlog's markers (it starts {head[:8].hex(' ')})")


def _looks_like_text(head: bytes) -> bool:
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # (not just a character cut off at the end of the sample)
            return False
        text = head[:exc.start].decode("utf-8")
    return all(c.isprintable() or c in "\t\r\n" for c in text)


class FileFromBase:
    """A :class:`~mqlog.core.log.reader.PageSource` over one file that holds log from ``base``:
    the page at address ``a`` is at offset ``a - base``."""

    def __init__(self, storage, name: str, base: int):
        self.storage, self.name, self.base = storage, name, base

    def read_page(self, address: int) -> tuple[bytes, str, int]:
        offset = address - self.base
        if offset < 0:
            return b"", self.name, 0
        return self.storage.read(self.name, offset, PAGE_SIZE), self.name, offset


def first_record(source: FileFromBase, size: int) -> int | None:
    """The address of the first record that starts in the file (None: none does), by the
    pages' first-record offsets."""
    for offset in range(0, size, PAGE_SIZE):
        address = source.base + offset
        header, problem = check_page(source.read_page(address)[0], address)
        if problem is not None:
            return address  # the reader reports what is wrong with it
        if header.first_record != NO_FIRST_RECORD:
            return address + PAGE_HEADER_SIZE + header.first_record
    return None
