"""A real PgBouncer (the Debian package ``pgbouncer``) in front of the test server, on a free loopback
port: ``pgbouncer_in_front(pg, pool_mode="transaction")``. ``make test`` installs the package
(``make pgbouncer``); where it is missing the tests that need it are skipped, naming the package."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

PGBOUNCER = shutil.which("pgbouncer") or ("/usr/sbin/pgbouncer" if Path("/usr/sbin/pgbouncer").exists() else None)
needs_pgbouncer = pytest.mark.skipif(PGBOUNCER is None, reason="needs PgBouncer: apt-get install -y pgbouncer "
                                                               "(make pgbouncer)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _backend(url: str) -> tuple[str, str, str, str]:
    """(host or socket dir, port, database, user) of the test server's URL."""
    parts = urlsplit(url)
    host = parse_qs(parts.query).get("host", [parts.hostname or "127.0.0.1"])[0]
    return host, str(parts.port or 5432), parts.path.lstrip("/") or "postgres", parts.username or "postgres"


@contextlib.contextmanager
def pgbouncer_in_front(url: str, *, pool_mode: str = "transaction", pool_size: int = 4) -> Iterator[str]:
    """PgBouncer forwarding to the server at ``url`` (trust authentication); yields its URL."""
    assert PGBOUNCER is not None
    host, port, db, user = _backend(url)
    root = Path(tempfile.mkdtemp(prefix="openclaw-memory-pgbouncer-"))
    listen = _free_port()
    (root / "users.txt").write_text(f'"{user}" ""\n')
    (root / "pgbouncer.ini").write_text(
        f"[databases]\n{db} = host={host} port={port} dbname={db} user={user}\n\n"
        f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {listen}\nunix_socket_dir =\n"
        f"auth_type = trust\nauth_file = {root / 'users.txt'}\npool_mode = {pool_mode}\n"
        f"default_pool_size = {pool_size}\nmax_client_conn = 200\nlogfile = {root / 'pgbouncer.log'}\n"
        f"pidfile = {root / 'pgbouncer.pid'}\n")
    command = [PGBOUNCER, "-q"]
    if os.geteuid() == 0:  # PgBouncer refuses to run as root: as the owner of the server's socket directory
        owner = pwd.getpwuid(Path(host).stat().st_uid).pw_name if Path(host).is_dir() else "nobody"
        shutil.chown(root, owner)
        for child in root.iterdir():
            shutil.chown(child, owner)
        command += ["-u", owner]
    proc = subprocess.Popen([*command, str(root / "pgbouncer.ini")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", listen), timeout=0.2):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
                log = (root / "pgbouncer.log").read_text() if (root / "pgbouncer.log").exists() else ""
                raise RuntimeError(f"PgBouncer did not start: {out}{log}")
            time.sleep(0.05)
        yield f"postgresql://{user}@127.0.0.1:{listen}/{db}"
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)
        if proc.poll() is None:
            proc.kill()
        shutil.rmtree(root, ignore_errors=True)
