"""LocalFiles: the note tree in a directory on disk, safe against links, races and crashes.

The directory *is* ``/memories``. It is opened once, at construction, and the descriptor
is kept: every operation starts from that descriptor, never from the directory's path,
so renaming the directory or any of its ancestors, or swapping one of them for a
symbolic link, cannot redirect anything afterwards. Below it every operation walks one
name at a time with directory descriptors, opening each step with ``O_NOFOLLOW |
O_DIRECTORY``, so a symbolic link anywhere on the way is refused by the kernel at the
moment of use — there is no window between "checked" and "opened" for a swapped-in link
to slip through. A regular file with more than one hard link is refused too: its other
name may be outside.

Writers of one tree take turns through an ``flock`` on the hidden file ``.lock`` in the
directory (:meth:`LocalFiles.exclusive`, see :mod:`agentkit.tools.files._write_lock`),
which holds across objects, threads and processes, and is released by the kernel if its
holder dies.

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
import threading
import weakref
from collections.abc import AsyncIterator, Iterator

from agentkit.tools.files._write_lock import write_lock
from agentkit.tools.files.errors import PathRefused
from agentkit.tools.files.paths import ROOT, MemoryPath, check_name
from agentkit.tools.files.ports import FileEntry, Files, FileUsage

__all__ = ["LocalFiles"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
def _close_all(held: list[int]) -> None:
    for fd in held:
        if fd >= 0:
            os.close(fd)
    held.clear()


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


def _children(fd: int, path: MemoryPath) -> Iterator[tuple[MemoryPath, os.stat_result]]:
    """The entries of the open directory ``fd``, names sorted, with their ``lstat``.
    Hidden and unaddressable names are skipped: the model could not use them anyway."""
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
        try:
            yield MemoryPath((*path.parts, name)), entry.stat(follow_symlinks=False)
        except OSError:
            continue  # removed since the scan


def _scan(top: int, path: MemoryPath) -> list[FileEntry]:
    """Every file and directory below the open directory ``top``, however deep,
    depth-first with each directory before its contents and sized by all of them.
    Links, special files and files with other hard links are skipped.

    Iterative, so no depth exhausts the interpreter's stack; it holds one descriptor
    per level it is inside.
    """
    found: list[tuple[MemoryPath, bool, int]] = []  # (path, is_file, size)
    stack: list[tuple[int, Iterator[tuple[MemoryPath, os.stat_result]]]] = [
        (top, _children(top, path))
    ]
    try:
        while stack:
            fd, children = stack[-1]
            for child, st in children:
                if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                    found.append((child, True, st.st_size))
                elif stat.S_ISDIR(st.st_mode):
                    try:
                        sub = os.open(child.name, _DIR_FLAGS, dir_fd=fd)
                    except OSError:
                        continue  # swapped for a link or removed since the scan
                    found.append((child, False, 0))
                    stack.append((sub, _children(sub, child)))
                    break
            else:
                stack.pop()
                if fd != top:
                    os.close(fd)
    finally:
        for fd, _ in stack:
            if fd != top:
                os.close(fd)
    sizes: dict[MemoryPath, int] = {}
    for child, is_file, size in found:
        if is_file:
            for cut in range(len(path.parts) + 1, len(child.parts)):
                parent = MemoryPath(child.parts[:cut])
                sizes[parent] = sizes.get(parent, 0) + size
    return [
        FileEntry(child, "file", size) if is_file
        else FileEntry(child, "directory", sizes.get(child, 0))
        for child, is_file, size in found
    ]


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

    Symbolic links in ``directory``'s own path are resolved once, here, and the directory
    is opened and kept open from then on (with its parent, so a directory removed from
    under the tool can be made again in the same place); everything below it is refused
    if it is a link. :meth:`close` releases the two descriptors (so does garbage
    collection).
    """

    __slots__ = ("__weakref__", "_finalizer", "_held", "_key", "_name", "_reopen", "directory")

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        path = os.path.realpath(os.fspath(directory))
        os.makedirs(path, mode=0o700, exist_ok=True)
        if not os.path.isdir(path):
            raise NotADirectoryError(errno.ENOTDIR, "LocalFiles needs a directory", path)
        self.directory = path
        parent_path, self._name = os.path.split(path)
        held: list[int] = []
        try:
            if self._name:
                parent = os.open(parent_path, _DIR_FLAGS)
                held.append(parent)
                root = os.open(self._name, _DIR_FLAGS, dir_fd=parent)
            else:  # the file-system root: there is no parent to make it again in
                parent, root = -1, os.open(path, _DIR_FLAGS)
        except BaseException:
            _close_all(held)
            raise
        self._held = [root, parent]
        st = os.fstat(root)
        self._key = (st.st_dev, st.st_ino)
        self._reopen = threading.Lock()
        self._finalizer = weakref.finalize(self, _close_all, self._held)

    def close(self) -> None:
        """Close the directory descriptors; later calls raise :class:`RuntimeError`."""
        self._finalizer()

    # -- walking ---------------------------------------------------------------------

    def _open_root(self) -> int:
        """A new descriptor of the directory opened at construction."""
        with self._reopen:
            if not self._held:
                raise RuntimeError(f"{self!r} is closed")
            root, parent = self._held
            if os.fstat(root).st_nlink == 0 and parent >= 0:
                # Removed from under us: start an empty tree again, in the same parent,
                # which was also held open since construction.
                with contextlib.suppress(FileExistsError):
                    os.mkdir(self._name, 0o700, dir_fd=parent)
                try:
                    fresh = os.open(self._name, _DIR_FLAGS, dir_fd=parent)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        raise PathRefused(
                            str(ROOT), f"the removed memory directory {self.directory} "
                            "was replaced by something that is not a directory"
                        ) from None
                    raise
                os.close(root)
                self._held[0] = root = fresh
            # A new open file (not a dup), so concurrent scans keep their own position.
            return os.open(".", _DIR_FLAGS, dir_fd=root)

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

    @contextlib.asynccontextmanager
    async def exclusive(self) -> AsyncIterator[Files]:
        """Hold the tree's write lock (``flock`` on ``.lock``) for the block."""
        async with write_lock(self._open_root, self._key):
            yield self

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

    def _tree(self, path: MemoryPath, depth: int | None) -> tuple[FileEntry, ...]:
        """Entries below the directory ``path`` within ``depth`` levels; the directory
        sizes still count every level."""
        with self._open_dir(path) as fd:
            return tuple(
                e for e in _scan(fd, path)
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
