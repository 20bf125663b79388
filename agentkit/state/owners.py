"""Owner ids: who holds a claim or runs a run, precisely enough to tell when it is gone.

A PID alone is not an identity: a restarted container runs its worker as PID 1 again,
and PIDs are reused. An owner id is ``host|pid|boot id|process start time|instance``,
where the instance is random per process (renewed in a forked child). Another process
on the same machine can then tell a live owner from a dead one even when the PID
matches its own or was reused.
"""

from __future__ import annotations

import os
import socket

__all__ = ["owner_alive", "this_owner"]

_HOST = socket.gethostname()


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii") as f:
            return f.read().strip()
    except (OSError, ValueError):
        return ""


def _boot_id() -> str:
    return _read("/proc/sys/kernel/random/boot_id")


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (Linux), or ""."""
    stat = _read(f"/proc/{pid}/stat")
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else ""


_BOOT = _boot_id()
_owner = ""


def _renew() -> None:
    global _owner
    pid = os.getpid()
    _owner = f"{_HOST}|{pid}|{_BOOT}|{_start_time(pid)}|{os.urandom(16).hex()}"


_renew()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew)


def this_owner() -> str:
    """This process's owner id."""
    return _owner


def owner_alive(owner: str) -> bool | None:
    """Whether the process ``owner`` names still runs: True or False when this machine
    can tell, None when it cannot (another host, or an id of another form). Text after
    the five fields (``|``-separated) is the owner's own, and ignored here."""
    parts = owner.split("|")
    if len(parts) < 5 or not parts[1].isdigit():
        return None
    host, pid_text, boot, started, instance = parts[:5]
    if instance == _owner.rpartition("|")[2]:
        return True  # this very process
    if host != _HOST or os.name != "posix":
        return None
    if boot and _BOOT and boot != _BOOT:
        return False  # the machine rebooted since: every process of then is gone
    pid = int(pid_text)
    if pid == os.getpid():
        return False  # our PID, but not us: a restarted container's earlier life
    try:
        os.kill(pid, 0)  # signal 0: an existence check, nothing is delivered
    except ProcessLookupError:
        return False
    except OSError:
        pass  # it exists, owned by another user
    if started and boot == _BOOT:
        now = _start_time(pid)
        if now and now != started:
            return False  # the PID was reused by a later process
    return True
