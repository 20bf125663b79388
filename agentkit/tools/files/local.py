"""LocalFiles: the note tree in a directory on disk, safe against links and crashes.

The directory *is* ``/memories``. Every operation walks from it one name at a time with
directory file descriptors, opening each step with ``O_NOFOLLOW``, so a symbolic link
anywhere on the way is refused by the kernel at the moment of use — there is no window
between "checked" and "opened" for a swapped-in link to slip through. A regular file
with more than one hard link is refused too: its other name may be outside.

Writes go to a hidden temporary file in the same directory, are flushed to disk, and
then renamed over the target (or, for ``create``, hard-linked into place, which fails
if the name was taken meanwhile), so a crash leaves the old text or the new, never half
a note. New files are ``0o600`` and new directories ``0o700``.

Everything runs in a worker thread, one hop per operation. POSIX only.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import stat
from collections.abc import Iterator

from agentkit.tools.files.errors import PathRefused
from agentkit.tools.files.paths import MAX_DEPTH, ROOT, MemoryPath, check_name
from agentkit.tools.files.ports import FileEntry, FileUsage

__all__ = ["LocalFiles"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _refuse_symlink(path: MemoryPath, st: os.stat_result) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise PathRefused(
            str(path), "it is a symbolic link, and links may point outside /memories"
        )


def _refuse_link(path: MemoryPath, st: os.stat_result) -> None:
    """Refuse anything at ``path`` but a directory or a singly-linked regular file."""
    _refuse_symlink(path, st)
    if stat.S_ISREG(st.st_mode):
        if st.st_nlink > 1:
            raise PathRefused(
                str(path), "the file has other hard links, which may be outside /memories"
            )
    elif not stat.S_ISDIR(st.st_mode):
        raise PathRefused(str(path), "it is not a regular file or a directory")


def _remove_tree(parent: int, name: str) -> None:
    """Remove the directory ``name`` in ``parent`` and everything in it. Links inside are
    removed, never followed; a directory swapped for a link meanwhile stops the removal
    (``O_NOFOLLOW``) instead of emptying whatever it points to."""
    fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    with _Dir(fd), os.scandir(fd) as entries:
        for entry in list(entries):
            if entry.is_dir(follow_symlinks=False):
                _remove_tree(fd, entry.name)
            else:
                os.unlink(entry.name, dir_fd=fd)
    os.rmdir(name, dir_fd=parent)


class _Dir:
    """An open directory descriptor, closed on exit."""

    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __enter__(self) -> int:
        return self.fd

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


class LocalFiles:
    """A :class:`~agentkit.tools.files.Files` backend over ``directory`` (created if missing).

    Symbolic links in ``directory``'s own path are resolved once, here; everything below
    it is refused if it is a link.
    """

    __slots__ = ("directory",)

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        path = os.path.realpath(os.fspath(directory))
        os.makedirs(path, mode=0o700, exist_ok=True)
        if not os.path.isdir(path):
            raise NotADirectoryError(errno.ENOTDIR, "LocalFiles needs a directory", path)
        self.directory = path

    # -- walking ---------------------------------------------------------------------

    def _open_root(self) -> int:
        try:
            return os.open(self.directory, _DIR_FLAGS)
        except FileNotFoundError:
            # Removed from under us: start an empty tree again rather than fail every call.
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
            return os.open(self.directory, _DIR_FLAGS)

    def _open_dir(self, path: MemoryPath, *, create: bool = False) -> _Dir:
        """Open the directory ``path``, one ``O_NOFOLLOW`` step at a time from the root."""
        fd = self._open_root()
        try:
            for depth, name in enumerate(path.parts, start=1):
                here = MemoryPath(path.parts[:depth])
                while True:
                    try:
                        child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                        break
                    except FileNotFoundError:
                        if not create:
                            raise FileNotFoundError(
                                errno.ENOENT, "No such file or directory", str(here)
                            ) from None
                        with contextlib.suppress(FileExistsError):
                            os.mkdir(name, 0o700, dir_fd=fd)
                    except OSError as exc:
                        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                            raise
                        _refuse_symlink(here, os.stat(name, dir_fd=fd, follow_symlinks=False))
                        raise NotADirectoryError(
                            errno.ENOTDIR, "Not a directory", str(here)
                        ) from None
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return _Dir(fd)

    @staticmethod
    def _lstat(dir_fd: int, path: MemoryPath) -> os.stat_result | None:
        try:
            st = os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        _refuse_link(path, st)
        return st

    def _entry(self, path: MemoryPath) -> os.stat_result | None:
        """The checked ``lstat`` of ``path`` (None when absent); the root is a directory."""
        if path.is_root:
            with self._open_dir(ROOT) as fd:
                return os.fstat(fd)
        try:
            with self._open_dir(path.parent) as parent:
                return self._lstat(parent, path)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def _walk(self, fd: int, path: MemoryPath) -> Iterator[FileEntry]:
        """Every entry below the open directory ``fd``. Links, special files, hidden and
        unaddressable names are skipped: the model could not use them anyway."""
        if len(path.parts) >= MAX_DEPTH:
            return
        found: list[tuple[str, os.DirEntry[str]]] = []
        with os.scandir(fd) as entries:
            for entry in entries:
                try:
                    name = check_name(entry.name, f"{path}/{entry.name}")
                except PathRefused:
                    continue
                if name == entry.name:
                    found.append((name, entry))
        for name, entry in sorted(found, key=lambda pair: pair[0]):
            child = MemoryPath((*path.parts, name))
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # removed since the scan
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                yield FileEntry(child, "file", st.st_size)
            elif stat.S_ISDIR(st.st_mode):
                try:
                    sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    continue  # swapped for a link or removed since the scan
                with _Dir(sub):
                    below = list(self._walk(sub, child))
                yield FileEntry(child, "directory", sum(e.size for e in below if e.kind == "file"))
                yield from below

    def _tree(self, path: MemoryPath, depth: int | None) -> tuple[FileEntry, ...]:
        """Entries below the directory ``path`` within ``depth`` levels; the directory
        sizes still count every level."""
        with self._open_dir(path) as fd:
            return tuple(
                e for e in self._walk(fd, path)
                if depth is None or len(e.path.parts) - len(path.parts) <= depth
            )

    # -- blocking implementations ------------------------------------------------------

    def _stat(self, path: MemoryPath) -> FileEntry | None:
        st = self._entry(path)
        if st is None:
            return None
        if stat.S_ISREG(st.st_mode):
            return FileEntry(path, "file", st.st_size)
        size = sum(e.size for e in self._tree(path, None) if e.kind == "file")
        return FileEntry(path, "directory", size)

    def _read(self, path: MemoryPath) -> str:
        if path.is_root:
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        with self._open_dir(path.parent) as parent:
            try:
                fd = os.open(path.name, _READ_FLAGS, dir_fd=parent)
            except FileNotFoundError:
                raise FileNotFoundError(
                    errno.ENOENT, "No such file or directory", str(path)
                ) from None
            except OSError:
                # A link (ELOOP), a socket (ENXIO) ...: say which, else report as is.
                _refuse_link(path, os.stat(path.name, dir_fd=parent, follow_symlinks=False))
                raise
        with open(fd, "rb") as file:
            # Judge what was opened, not what a path pointed to a moment earlier.
            st = os.fstat(file.fileno())
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
            _refuse_link(path, st)
            data = file.read()
        return data.decode("utf-8")

    def _write(self, path: MemoryPath, text: str, exclusive: bool) -> None:
        if path.is_root:
            if exclusive:
                raise FileExistsError(errno.EEXIST, "File exists", str(path))
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        data = text.encode("utf-8")
        with self._open_dir(path.parent, create=True) as parent:
            st = self._lstat(parent, path)
            if st is not None:
                if exclusive:
                    raise FileExistsError(errno.EEXIST, "File exists", str(path))
                if stat.S_ISDIR(st.st_mode):
                    raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
            temp = f".tmp-{os.getpid()}-{os.urandom(8).hex()}"
            fd = os.open(temp, _TEMP_FLAGS, 0o600, dir_fd=parent)
            try:
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view):]
                    os.fsync(fd)
                finally:
                    os.close(fd)
                if exclusive:
                    try:
                        os.link(temp, path.name, src_dir_fd=parent, dst_dir_fd=parent,
                                follow_symlinks=False)
                    except FileExistsError:
                        raise FileExistsError(errno.EEXIST, "File exists", str(path)) from None
                    os.unlink(temp, dir_fd=parent)
                else:
                    os.replace(temp, path.name, src_dir_fd=parent, dst_dir_fd=parent)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=parent)
                raise
            os.fsync(parent)

    def _delete(self, path: MemoryPath) -> None:
        with self._open_dir(path.parent) as parent:
            st = self._lstat(parent, path)
            if st is None:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
            if stat.S_ISDIR(st.st_mode):
                _remove_tree(parent, path.name)
            else:
                os.unlink(path.name, dir_fd=parent)
            os.fsync(parent)

    def _rename(self, old: MemoryPath, new: MemoryPath) -> None:
        with self._open_dir(old.parent) as old_parent:
            st = self._lstat(old_parent, old)
            if st is None:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(old))
            with self._open_dir(new.parent, create=True) as new_parent:
                if self._lstat(new_parent, new) is not None:
                    raise FileExistsError(errno.EEXIST, "File exists", str(new))
                if stat.S_ISDIR(st.st_mode):
                    os.rename(old.name, new.name, src_dir_fd=old_parent, dst_dir_fd=new_parent)
                else:
                    # link-then-unlink never replaces a file that appeared meanwhile.
                    try:
                        os.link(old.name, new.name, src_dir_fd=old_parent,
                                dst_dir_fd=new_parent, follow_symlinks=False)
                    except FileExistsError:
                        raise FileExistsError(errno.EEXIST, "File exists", str(new)) from None
                    os.unlink(old.name, dir_fd=old_parent)
                os.fsync(new_parent)
            os.fsync(old_parent)

    def _usage(self) -> FileUsage:
        files = [e for e in self._tree(ROOT, None) if e.kind == "file"]
        return FileUsage(len(files), sum(e.size for e in files))

    # -- the Files protocol ------------------------------------------------------------

    async def stat(self, path: MemoryPath) -> FileEntry | None:
        """The entry at ``path``, or None."""
        return await asyncio.to_thread(self._stat, path)

    async def listing(self, path: MemoryPath, depth: int | None) -> tuple[FileEntry, ...]:
        """Entries below ``path``, depth-first, names sorted."""
        return await asyncio.to_thread(self._tree, path, depth)

    async def read(self, path: MemoryPath) -> str:
        """The UTF-8 text of the file at ``path``."""
        return await asyncio.to_thread(self._read, path)

    async def write(self, path: MemoryPath, text: str, *, exclusive: bool = False) -> None:
        """Atomically put ``text`` at ``path``."""
        await asyncio.to_thread(self._write, path, text, exclusive)

    async def delete(self, path: MemoryPath) -> None:
        """Remove ``path`` and everything below it."""
        await asyncio.to_thread(self._delete, path)

    async def rename(self, old: MemoryPath, new: MemoryPath) -> None:
        """Move ``old`` to ``new``."""
        await asyncio.to_thread(self._rename, old, new)

    async def usage(self) -> FileUsage:
        """Files held and their total size."""
        return await asyncio.to_thread(self._usage)

    def __repr__(self) -> str:
        return f"LocalFiles({self.directory!r})"
