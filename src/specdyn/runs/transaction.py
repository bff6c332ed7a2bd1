"""One writer and an atomic replacement for a result folder: its lock and its transaction.

A run writes into a fresh temporary folder beside its target and replaces the
target only when it finished, in one rename (``renameat2(RENAME_EXCHANGE)``
on Linux; elsewhere two renames, which the next run completes if a kill falls
between them). So a failed or killed rerun leaves the previous finished result
whole, never a mix of old and new files. While it writes, the folder is locked:
a second writer gets :class:`FolderBusyError` at once, naming the holder's PID.
The folders' layout (what a run and a sweep write where) is
:mod:`specdyn.runs.store`'s.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import socket
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from specdyn import io

__all__ = ["FAILED_SUFFIX", "FolderBusyError", "failed_record_path", "lock", "lock_path",
           "record_failure", "remove_leftovers", "transaction"]

#: Suffix of a failed attempt's record beside its target: ``NAME.failed.json``.
FAILED_SUFFIX = ".failed.json"


class FolderBusyError(ValueError):
    """Another process is writing the folder (a ``ValueError``: the CLI prints one line)."""


def lock_path(folder: str | os.PathLike[str]) -> Path:
    """The lock file of ``folder``: ``.NAME.lock`` beside it (the folder may not exist yet)."""
    f = Path(folder)
    return f.parent / f".{f.name}.lock"


@contextlib.contextmanager
def lock(folder: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the write lock of ``folder``, or raise :class:`FolderBusyError` at once.

    An OS lock (``flock``; ``msvcrt.locking`` on Windows) on ``.NAME.lock``
    beside the folder: the kernel releases it when the holder dies, so a
    killed run never leaves the folder locked. The holder writes its PID
    and host into the file for the refusal message.
    """
    path = lock_path(folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        if not _try_lock(fd):
            holder = _holder(fd)
            os.close(fd)
            raise FolderBusyError(f"{str(Path(folder))!r} is being written by {holder}; "
                                  "wait for it to finish or choose another folder")
        try:  # the holder before us may have unlinked this file: lock the one at `path`
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {socket.gethostname()}\n".encode())
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()  # before the release: a waiter then retries on a fresh file
        os.close(fd)


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":  # pragma: no cover - not tested on Windows here
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        if err.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return False
        raise
    return True


def _holder(fd: int) -> str:
    # the holder writes its PID right after locking: give it a moment
    for _ in range(50):
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 200).decode(errors="replace").split()
        if text:
            return f"process {text[0]}" + (f" on {text[1]}" if len(text) > 1 else "")
        time.sleep(0.02)
    return "another process"



def failed_record_path(target: str | os.PathLike[str]) -> Path:
    """Where a failed attempt at ``target`` is recorded: ``NAME.failed.json`` beside it."""
    t = Path(target)
    return t.parent / f"{t.name}{FAILED_SUFFIX}"


def _leftovers(target: Path) -> list[Path]:
    return sorted(target.parent.glob(f".{target.name}.*.tmp"))


def remove_leftovers(target: Path) -> None:
    """Remove what an interrupted run left beside ``target`` (call with the lock held).

    If a kill fell between the two renames of the fallback replace, the target
    is missing and its old version waits as ``.NAME.*.old.tmp``: put it back.
    """
    if not target.exists():
        old = [p for p in _leftovers(target) if p.name.endswith(".old.tmp") and p.is_dir()]
        if old:
            os.rename(max(old, key=lambda p: p.stat().st_mtime_ns), target)
    for p in _leftovers(target):
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)


@contextlib.contextmanager
def transaction(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Lock ``target``, yield a fresh temporary folder beside it, and commit it on success.

    On a normal exit the temporary folder replaces ``target`` in one step and
    ``NAME.failed.json`` is removed; on an exception it is deleted and
    ``target`` is untouched. Leftovers of earlier interrupted runs are removed
    first.
    """
    dest = Path(target)
    if dest.parent.exists() and not dest.parent.is_dir():
        raise ValueError(f"output folder {str(dest.parent)!r} is a file, not a folder")
    if dest.exists() and not dest.is_dir():
        raise ValueError(f"output path {str(dest)!r} is a file, not a folder")
    with lock(dest):
        remove_leftovers(dest)
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent))
        os.chmod(tmp, 0o777 & ~io.UMASK)  # mkdtemp makes 0700; results are for sharing
        try:
            yield tmp
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        _replace_dir(tmp, dest)
        failed_record_path(dest).unlink(missing_ok=True)


def record_failure(target: str | os.PathLike[str], record: dict[str, Any]) -> Path:
    """Write a failed attempt's record beside ``target`` (which is left untouched)."""
    return io.write_json(record, failed_record_path(target))


def _replace_dir(new: Path, dest: Path) -> None:
    if not dest.exists():
        os.rename(new, dest)
        return
    if _exchange(new, dest):
        shutil.rmtree(new, ignore_errors=True)  # `new` now holds the old result
        return
    old = dest.with_name(f".{dest.name}.{uuid.uuid4().hex[:8]}.old.tmp")
    os.rename(dest, old)  # a kill here: the next run's remove_leftovers puts `old` back
    os.rename(new, dest)
    shutil.rmtree(old, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False if unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    fn = getattr(libc, "renameat2", None)
    if fn is None:  # glibc < 2.28, musl
        return False
    at_fdcwd, rename_exchange = -100, 2
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):  # a file system without it
        return False
    raise OSError(err, os.strerror(err), str(b))
