"""A throwaway PostgreSQL server for tests: initdb + pg_ctl in a temp dir on a free loopback port.

As root the server runs as ``nobody`` (PostgreSQL refuses to run as root), through ``runuser``.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import psycopg

SERVER_USER = "nobody"


def find_bin_dir() -> Path | None:
    """Debian keeps the server binaries in /usr/lib/postgresql/<version>/bin, off PATH."""
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgServer:
    bin_dir: Path
    root: Path
    port: int

    @property
    def data(self) -> Path:
        return self.root / "data"

    def dsn(self, dbname: str = "postgres") -> str:
        return f"postgresql://pegboard@127.0.0.1:{self.port}/{dbname}"

    def _as_server_user(self, argv: list[str]) -> list[str]:
        if os.geteuid() == 0:
            return ["runuser", "-u", SERVER_USER, "--", *argv]
        return argv

    def _run(self, argv: list[str]) -> None:
        done = subprocess.run(self._as_server_user(argv), capture_output=True, text=True, timeout=120, cwd=self.root)
        if done.returncode != 0:
            log = (self.root / "server.log").read_text() if (self.root / "server.log").exists() else ""
            raise RuntimeError(f"{argv[0]} failed: {done.stdout}{done.stderr}{log}")

    def start(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.root, SERVER_USER)
        self._run([str(self.bin_dir / "initdb"), "-D", str(self.data), "-U", "pegboard", "-A", "trust",
                   "-E", "UTF8", "--no-instructions", "--no-sync"])
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300")
        self._run([str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"),
                   "-o", options, "-w", "-t", "60", "start"])

    def stop(self) -> None:
        try:
            self._run([str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"])
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def fresh_database(self, key: str) -> str:
        """The DSN of a database named after ``key``, created when first asked for."""
        name = "t_" + hashlib.sha1(key.encode()).hexdigest()[:20]
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
                conn.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)


def start_server() -> PgServer:
    """A running server, or ``RuntimeError`` saying why there can be none."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL's initdb is not installed (Debian package postgresql)")
    root = Path(tempfile.mkdtemp(prefix="pegboard-pg-"))
    os.chmod(root, 0o700)
    server = PgServer(bin_dir, root, free_port())
    server.start()
    return server
