"""The storage interface under all of mqlog's I/O, and its two backends.

Every byte the model reads or writes -- log extents, control files, queue files -- goes
through one small interface, :class:`Storage`: named flat files addressed by byte offset,
with positional writes (a sequence of buffers is one vectored write), an explicit
``sync`` per file, and an atomic whole-file ``replace`` for control files.

Two backends implement it:

* :class:`MemoryStorage` keeps each file as a ``bytearray``. It is what parameter sweeps
  and benchmarks run on, so every operation is a slice operation, never a per-byte loop.
* :class:`DirectoryStorage` keeps real files in one directory, using positional
  ``os.pwrite``/``os.pwritev``/``os.pread`` on cached file descriptors.

Neither backend models what a power failure does to unsynced data: in memory nothing is
ever lost, and on a real file system the page cache makes loss unobservable without
actually pulling the plug. Durability semantics (which writes survive a crash, torn
sector writes, injected I/O errors) therefore live in one place above both backends,
the fault-injecting wrapper in :mod:`mqlog.core.disk.faults`, so that crash behaviour is the
same, and deterministic, whichever backend holds the bytes.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from typing import Protocol, Union, runtime_checkable

from mqlog.core.errors import StorageError, StorageFullError

__all__ = ["Storage", "MemoryStorage", "DirectoryStorage", "Data", "check_name", "sync_directory"]

#: What ``write`` accepts: one buffer, or a sequence of buffers written contiguously.
Data = Union[bytes, bytearray, memoryview, Sequence[Union[bytes, bytearray, memoryview]]]

_BUFFER_TYPES = (bytes, bytearray, memoryview)
#: MemoryStorage.read copies a slice up to this many bytes (one copy too many, but quicker
#: than a memoryview for a page or two: 4 KiB 360 -> 235 ns); longer reads go through a
#: memoryview, one copy (1 MiB: 31 us, against 620 us for the slice)
_SMALL_READ = 8192


@runtime_checkable
class Storage(Protocol):
    """Named flat files addressed by byte offset.

    Writes are not durable until ``sync(name)``; ``create``, ``replace``, ``truncate``
    and ``delete`` are metadata operations, durable on return. Failures raise
    :class:`~mqlog.core.errors.StorageError` with a message naming the file.
    """

    #: ``"memory"`` or the directory path; used in error messages.
    description: str

    def exists(self, name: str) -> bool:
        """Whether the file exists."""
        ...

    def size(self, name: str) -> int:
        """The file's size in bytes; StorageError if it does not exist."""
        ...

    def list(self, prefix: str = "") -> list[str]:
        """Sorted names of the files whose names start with ``prefix``."""
        ...

    def create(self, name: str, size: int = 0) -> None:
        """Create a new file of ``size`` zero bytes; StorageError if it already exists."""
        ...

    def read(self, name: str, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes from ``offset`` (short at end of file); StorageError if absent."""
        ...

    def write(self, name: str, offset: int, data: Data) -> None:
        """One physical write of ``data`` (a sequence of buffers is one vectored write).

        Creates the file if absent and extends it, zero-filling any gap. Not durable
        until ``sync(name)``.
        """
        ...

    def begin_write(self, name: str, offset: int, data: Data) -> None:
        """A write of ``data`` at ``offset`` goes to the device now; its ``write`` comes when
        the device has finished it. Only a storage that models power loss does anything
        with it (``FaultInjectingStorage`` tears the writes still in flight when a torn
        write's power fails); the others ignore it."""
        ...

    def sync(self, name: str) -> None:
        """Make every earlier write to ``name`` durable."""
        ...

    def replace(self, name: str, data: bytes) -> None:
        """Atomically replace the whole file with ``data``; durable on return."""
        ...

    def truncate(self, name: str, size: int) -> None:
        """Cut the file to ``size`` bytes (or extend it with zeros); StorageError if absent."""
        ...

    def delete(self, name: str) -> None:
        """Remove the file; StorageError if absent."""
        ...

    def close(self) -> None:
        """Release OS resources. The stored files are kept."""
        ...


def check_name(description: str, name: str) -> str:
    """Return ``name`` if it is a plain file name, else raise StorageError naming it.

    Both backends apply the same rule, so a run that works in memory also works on disk:
    no path separators, not ``.`` or ``..``, not empty, not absolute. (A name such as
    ``a..log`` is fine: without separators it cannot leave the directory.)
    """
    if (
        not isinstance(name, str)
        or not name
        or name in (".", "..")
        or "/" in name
        or "\\" in name
        or "\0" in name
        or os.path.isabs(name)
    ):
        raise StorageError(
            f"{description}: invalid file name {name!r}: names must be plain file names "
            "(no '/', no '..', not absolute) so they cannot escape the storage"
        )
    return name


def _check_offset(description: str, name: str, what: str, value: int) -> None:
    if value < 0:
        raise StorageError(f"{description}: {name}: negative {what} {value}")


def _nbytes(buf: bytes | bytearray | memoryview) -> int:
    return buf.nbytes if isinstance(buf, memoryview) else len(buf)


class MemoryStorage:
    """Files held in memory as ``bytearray`` objects; nothing is ever lost."""

    description = "memory"

    def __init__(self) -> None:
        self._files: dict[str, bytearray] = {}

    def __repr__(self) -> str:
        return f"MemoryStorage({len(self._files)} files)"

    def _get(self, name: str) -> bytearray:
        buf = self._files.get(name)
        if buf is None:
            check_name(self.description, name)
            raise StorageError(f"{self.description}: {name}: no such file")
        return buf

    def exists(self, name: str) -> bool:
        if name in self._files:
            return True
        check_name(self.description, name)
        return False

    def size(self, name: str) -> int:
        return len(self._get(name))

    def list(self, prefix: str = "") -> list[str]:
        return sorted(n for n in self._files if n.startswith(prefix))

    def create(self, name: str, size: int = 0) -> None:
        check_name(self.description, name)
        _check_offset(self.description, name, "size", size)
        if name in self._files:
            raise StorageError(f"{self.description}: {name}: cannot create, file exists")
        self._files[name] = bytearray(size)

    def read(self, name: str, offset: int, length: int) -> bytes:
        buf = self._get(name)
        if offset < 0 or length < 0:
            _check_offset(self.description, name, "offset", offset)
            _check_offset(self.description, name, "length", length)
        if length <= _SMALL_READ:
            return bytes(buf[offset:offset + length])  # (two copies, but quicker for a page or two)
        with memoryview(buf) as view:
            return view[offset:offset + length].tobytes()

    def write(self, name: str, offset: int, data: Data) -> None:
        if offset < 0:
            _check_offset(self.description, name, "offset", offset)
        buf = self._files.get(name)
        if buf is None:
            check_name(self.description, name)
            buf = self._files[name] = bytearray()
        if isinstance(data, _BUFFER_TYPES):
            pieces: Sequence = (data,)
        else:
            pieces = data
        pos = offset
        for piece in pieces:
            n = _nbytes(piece)
            if not n:
                continue
            cur = len(buf)
            if pos > cur:
                buf.extend(bytes(pos - cur))
            if isinstance(piece, memoryview) and piece.format != "B":
                piece = piece.cast("B")
            buf[pos:pos + n] = piece
            pos += n

    def begin_write(self, name: str, offset: int, data: Data) -> None:
        """Nothing: memory has no power to lose (FaultInjectingStorage over it does)."""

    def sync(self, name: str) -> None:
        if name not in self._files:
            self._get(name)

    def replace(self, name: str, data: bytes) -> None:
        check_name(self.description, name)
        self._files[name] = bytearray(data)

    def truncate(self, name: str, size: int) -> None:
        buf = self._get(name)
        _check_offset(self.description, name, "size", size)
        cur = len(buf)
        if size < cur:
            del buf[size:]
        elif size > cur:
            buf.extend(bytes(size - cur))

    def delete(self, name: str) -> None:
        self._get(name)
        del self._files[name]

    def close(self) -> None:
        """Nothing to release; the files stay readable (a restart may reopen them)."""


_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
#: files are opened without following a symbolic link: a link planted among a queue
#: manager's files must not make it read or write a file elsewhere
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
try:
    _IOV_MAX = os.sysconf("SC_IOV_MAX")
    if _IOV_MAX <= 0:
        _IOV_MAX = 16
except (AttributeError, OSError, ValueError):
    _IOV_MAX = 16


class DirectoryStorage:
    """Real files in one directory (created if missing).

    ``fsync=True`` makes ``sync`` and ``replace`` call ``os.fsync``; with the default
    ``False`` they skip it, since crashes are simulated above this layer and a real
    fsync would only slow sweeps down. File descriptors are kept open in a small cache;
    ``close()`` closes them (the storage may still be used afterwards, reopening files
    as needed).
    """

    #: How many file descriptors are kept open at once.
    max_open_files = 64

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = os.fspath(path)
        self.description = self.path
        self.fsync = fsync
        self._fds: dict[str, int] = {}
        self._paths: dict[str, str] = {}
        try:
            os.makedirs(self.path, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"{self.path}: cannot create storage directory: {exc.strerror or exc}") from exc
        self.list()  # (a symbolic link among the files is refused now, before anything is read or written)

    def __repr__(self) -> str:
        return f"DirectoryStorage({self.path!r}, fsync={self.fsync})"

    # -- helpers ---------------------------------------------------------------

    def _path(self, name: str) -> str:
        p = self._paths.get(name)
        if p is None:
            check_name(self.description, name)
            p = os.path.join(self.path, name)
            if len(self._paths) > 4096:
                self._paths.clear()
            self._paths[name] = p
        return p

    def _link(self, name: str) -> StorageError:
        return StorageError(f"{self.description}: {name} is a symbolic link: refused (a queue manager's files are "
                            f"opened without following links, so that nothing outside its directory is read or "
                            f"written through one)")

    def _lstat(self, name: str):
        """The file's own status (None if there is none); a symbolic link is refused."""
        try:
            st = os.lstat(self._path(name))
        except OSError:
            return None
        if stat.S_ISLNK(st.st_mode):
            raise self._link(name)
        return st

    def _error(self, name: str, action: str, exc: OSError) -> StorageError:
        if exc.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(self._path(name)):
            return self._link(name)  # (O_NOFOLLOW met a link: ELOOP on Linux, EMLINK on FreeBSD)
        if isinstance(exc, FileNotFoundError):
            return StorageError(f"{self.description}: {name}: no such file")
        reason = exc.strerror or str(exc)
        kind = StorageFullError if exc.errno in (errno.ENOSPC, errno.EDQUOT) else StorageError
        return kind(f"{self.description}: {name}: {action} failed: {reason}")

    def _fd(self, name: str, create: bool) -> int:
        fd = self._fds.get(name)
        if fd is not None:
            return fd
        path = self._path(name)
        flags = os.O_RDWR | _O_CLOEXEC | _O_BINARY | _O_NOFOLLOW | (os.O_CREAT if create else 0)
        try:
            fd = os.open(path, flags, 0o666)
        except PermissionError as exc:
            if create:
                raise self._error(name, "open", exc) from exc
            # A file we may only read (a log being examined): reading is all that is asked
            # for now; a later write to it fails with the OS's own error.
            try:
                fd = os.open(path, os.O_RDONLY | _O_CLOEXEC | _O_BINARY | _O_NOFOLLOW)
            except OSError as exc2:
                raise self._error(name, "open", exc2) from exc2
        except OSError as exc:
            raise self._error(name, "open", exc) from exc
        if len(self._fds) >= self.max_open_files:
            oldest = next(iter(self._fds))
            self._forget(oldest)
        self._fds[name] = fd
        return fd

    def _forget(self, name: str) -> None:
        fd = self._fds.pop(name, None)
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                # Not swallowed damage: what must survive was fsynced, and a failed fsync
                # raised, before; the descriptor is gone either way (close is not retried).
                pass

    @staticmethod
    def _pwrite_all(fd: int, data: bytes | bytearray | memoryview, offset: int) -> None:
        view = memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data)
        with view:
            done = 0
            total = view.nbytes
            while done < total:
                n = os.pwrite(fd, view[done:], offset + done)
                if n <= 0:
                    raise OSError(0, "short write")
                done += n

    # -- Storage ---------------------------------------------------------------

    def exists(self, name: str) -> bool:
        if name in self._fds:
            return True
        st = self._lstat(name)
        return st is not None and stat.S_ISREG(st.st_mode)

    def size(self, name: str) -> int:
        try:
            fd = self._fds.get(name)
            if fd is not None:
                return os.fstat(fd).st_size
            st = self._lstat(name)
            return st.st_size if st is not None else os.stat(self._path(name)).st_size
        except OSError as exc:
            raise self._error(name, "stat", exc) from exc

    def list(self, prefix: str = "") -> list[str]:
        try:
            with os.scandir(self.path) as it:
                names = []
                for e in it:
                    if e.name.startswith(prefix):
                        if e.is_symlink():
                            raise self._link(e.name)
                        if e.is_file():
                            names.append(e.name)
                return sorted(names)
        except OSError as exc:
            raise StorageError(f"{self.description}: cannot list files: {exc.strerror or exc}") from exc

    def create(self, name: str, size: int = 0) -> None:
        path = self._path(name)
        _check_offset(self.description, name, "size", size)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | _O_CLOEXEC | _O_BINARY | _O_NOFOLLOW, 0o666)
        except FileExistsError as exc:
            raise StorageError(f"{self.description}: {name}: cannot create, file exists") from exc
        except OSError as exc:
            raise self._error(name, "create", exc) from exc
        try:
            if size:
                os.ftruncate(fd, size)
        except OSError as exc:
            os.close(fd)
            raise self._error(name, "create", exc) from exc
        self._forget(name)
        if len(self._fds) >= self.max_open_files:
            self._forget(next(iter(self._fds)))
        self._fds[name] = fd

    def read(self, name: str, offset: int, length: int) -> bytes:
        fd = self._fd(name, create=False)
        if offset < 0 or length < 0:
            _check_offset(self.description, name, "offset", offset)
            _check_offset(self.description, name, "length", length)
        try:
            data = os.pread(fd, length, offset)
            if len(data) < length and data:
                # Regular files return short reads only at end of file; make sure.
                parts = [data]
                got = len(data)
                while got < length:
                    more = os.pread(fd, length - got, offset + got)
                    if not more:
                        break
                    parts.append(more)
                    got += len(more)
                data = b"".join(parts)
            return data
        except OSError as exc:
            raise self._error(name, "read", exc) from exc

    def write(self, name: str, offset: int, data: Data) -> None:
        _check_offset(self.description, name, "offset", offset)
        fd = self._fd(name, create=True)
        try:
            if isinstance(data, _BUFFER_TYPES):
                self._pwrite_all(fd, data, offset)
                return
            buffers = list(data)
            total = sum(_nbytes(b) for b in buffers)
            if not total:
                return
            pwritev = getattr(os, "pwritev", None)
            if pwritev is not None and len(buffers) <= _IOV_MAX:
                n = pwritev(fd, buffers, offset)
                if n == total:
                    return
                # Short vectored write: finish the rest as one plain write.
                rest = memoryview(b"".join(buffers))[n:]
                self._pwrite_all(fd, rest, offset + n)
            else:
                self._pwrite_all(fd, b"".join(buffers), offset)
        except OSError as exc:
            raise self._error(name, "write", exc) from exc

    def begin_write(self, name: str, offset: int, data: Data) -> None:
        """Nothing: a real file system's power is not this model's to cut (FaultInjectingStorage over it is)."""

    def sync(self, name: str) -> None:
        if self.fsync:
            fd = self._fd(name, create=False)
            try:
                os.fsync(fd)
            except OSError as exc:
                raise self._error(name, "fsync", exc) from exc
        elif name not in self._fds and not os.path.isfile(self._path(name)):
            raise StorageError(f"{self.description}: {name}: no such file")

    def _sync_directory(self) -> None:
        sync_directory(self.path)

    def replace(self, name: str, data: bytes) -> None:
        path = self._path(name)
        tmp = path + ".tmp"
        self._lstat(name)  # (a link in its place is refused, not replaced)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _O_CLOEXEC | _O_BINARY | _O_NOFOLLOW, 0o666)
            try:
                self._pwrite_all(fd, data, 0)
                if self.fsync:
                    os.fsync(fd)
            finally:
                os.close(fd)
            self._forget(name)  # the cached descriptor would point at the old file
            os.replace(tmp, path)
        except OSError as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise self._error(name, "replace", exc) from exc
        if self.fsync:
            self._sync_directory()

    def truncate(self, name: str, size: int) -> None:
        fd = self._fd(name, create=False)
        _check_offset(self.description, name, "size", size)
        try:
            os.ftruncate(fd, size)
        except OSError as exc:
            raise self._error(name, "truncate", exc) from exc

    def delete(self, name: str) -> None:
        path = self._path(name)
        self._forget(name)
        try:
            os.unlink(path)
        except OSError as exc:
            raise self._error(name, "delete", exc) from exc

    def close(self) -> None:
        for name in list(self._fds):
            self._forget(name)


def sync_directory(path) -> None:
    """``fsync`` the directory ``path``, so that a rename (or a new file) in it survives a
    crash; a failure is a :class:`StorageError` naming the directory, since what the rename
    promised may then be lost.

    Two cases are not failures. Windows cannot open a directory at all (and NTFS journals
    renames itself). A file system that does not support fsync of a directory says EINVAL
    (some FUSE and network file systems): POSIX offers no other call to make a rename
    durable there, so refusing would only make such a directory unusable."""
    if os.name == "nt":
        return
    try:
        dfd = os.open(path, os.O_RDONLY | _O_CLOEXEC)
    except OSError as exc:
        raise StorageError(f"{path}: cannot open the directory to sync it: {exc.strerror or exc}") from exc
    try:
        os.fsync(dfd)
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise StorageError(f"{path}: fsync of the directory failed: {exc.strerror or exc}") from exc
    finally:
        os.close(dfd)
