"""`scripts/postgres`, the PostgreSQL a user starts to try the team store, run as a user would.

The script runs as a real process, and `palimpsest` as another, against the URL it printed.
PostgreSQL will not run as root, and neither does the script; so as root (CI) it runs as
`nobody`, with a home of its own, from a copy of what it reads of a clone (itself and the
.venv's wheel, pgvector already made portable): `nobody` may not be able to read the clone
or run its interpreter (here it lives under /root). As any other user it runs from this
clone itself. Nothing here touches a server the script did not make in the test's folder.
"""

from __future__ import annotations

import json
import os
import platform
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from .. import portable_pgvector
from ..conftest import POSTGRES_ABSENT
from ..local_postgres import installed_binaries

REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path("scripts") / "postgres"
WHERE_IT_RUNS = sys.platform == "linux" and platform.machine() == "x86_64"


@dataclass
class User:
    """Who runs the script, from which clone, with which home."""

    clone: Path
    home: Path
    account: pwd.struct_passwd | None  # None: the test's own user

    @property
    def folder(self) -> Path:
        return self.home / ".local" / "share" / "palimpsest" / "postgres"

    def script(self, command: str) -> subprocess.CompletedProcess[str]:
        account = self.account
        return subprocess.run(
            [str(self.clone / SCRIPT), command],
            env={"PATH": os.environ["PATH"], "HOME": str(self.home), "LANG": "C.UTF-8"},
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=300,
            user=account.pw_uid if account else None,
            group=account.pw_gid if account else None,
            extra_groups=[] if account else None,
        )

    def ok(self, command: str) -> str:
        done = self.script(command)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def postmaster(self) -> int | None:
        pid_file = self.folder / "data" / "postmaster.pid"
        return int(pid_file.read_text().split()[0]) if pid_file.exists() else None


@pytest.fixture
def user() -> Iterator[User]:
    root = Path(tempfile.mkdtemp(prefix="palimpsest-pgtry-"))
    root.chmod(0o755)
    home = root / "home"
    home.mkdir()
    account = pwd.getpwnam("nobody") if os.geteuid() == 0 else None
    if account is not None:
        os.chown(home, account.pw_uid, account.pw_gid)
    clone = REPO if account is None else copy_of_clone(root / "clone")
    someone = User(clone, home, account)
    try:
        yield someone
    finally:
        if someone.folder.exists():
            someone.script("remove")  # stops the server, unless the folder is not the script's
        shutil.rmtree(root, ignore_errors=True)


def copy_of_clone(clone: Path) -> Path:
    """What the script reads of a clone whose .venv holds the tests' wheel."""
    binaries = installed_binaries()
    if binaries is None:
        pytest.skip(POSTGRES_ABSENT)
    install = binaries.parent
    site = install.parent.parent
    venv_site = clone / ".venv" / "lib" / site.parent.name / "site-packages"
    shutil.copytree(install, venv_site / "pgserver" / "pginstall", symlinks=True)
    for libs in site.glob("pgserver*.libs"):
        shutil.copytree(libs, venv_site / libs.name, symlinks=True)
    (clone / "scripts").mkdir()
    shutil.copy2(REPO / SCRIPT, clone / SCRIPT)
    return clone


def palimpsest(env: dict[str, str], url: str, *args: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "palimpsest", "--db", url, *args, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_a_user_starts_it_keeps_memories_in_it_and_removes_it(
    user: User, env: dict[str, str]
) -> None:
    if not WHERE_IT_RUNS:
        done = user.script("start")
        assert done.returncode == 1 and "docs/postgres.md" in done.stderr
        assert not user.folder.exists()
        return
    binaries = installed_binaries()
    if binaries is None:
        pytest.skip(POSTGRES_ABSENT)
    # Built once per .venv, as the tests' own server has it: the copy, or the clone, has it then.
    portable_pgvector.ensure(binaries.parent)

    said = user.ok("start")
    assert said.startswith("Made and started PostgreSQL 18")
    url = user.ok("url").strip()
    assert url in said
    passwords = [line.rsplit(":", 1)[1] for line in (user.folder / "pgpass").read_text().split()]
    assert len(passwords) == 2 and not any(p in said or p in url for p in passwords)
    assert (user.folder / "pgpass").stat().st_mode & 0o077 == 0

    # Recall by meaning goes through pgvector, which the wheel built for AVX-512 alone.
    meaning = {**env, "PALIMPSEST_EMBEDDER": "all-MiniLM-L6-v2"}
    filed = palimpsest(meaning, url, "remember", "-n", "ops", "-k", "fact",
                       "The staging database allows 40 connections at most")  # fmt: skip
    found = palimpsest(meaning, url, "recall", "how many clients may connect to staging")
    assert [hit["id"] for hit in found["hits"]][:1] == [filed["id"]]
    assert found["hits"][0]["matched"] in ("meaning", "both")
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
    assert row == ("palimpsest", False)  # the schema was made by the database's owner

    # A forget on PostgreSQL waits for `scrub`, which the owner may run (pg_maintain).
    secret = palimpsest(env, url, "remember", "-n", "ops", "-k", "fact", "Ana's phone is 555-0100")
    palimpsest(env, url, "forget", secret["id"], "--because", "personal data")
    assert palimpsest(env, url, "doctor")["scrub_pending"] is True
    scrubbed = palimpsest(env, url, "scrub")
    assert scrubbed["scrub_pending"] is False, scrubbed
    assert palimpsest(env, url, "doctor")["scrub_pending"] is False

    server = user.postmaster()
    again = user.ok("start")
    assert again.startswith("Already running") and url in again
    assert user.postmaster() == server

    assert user.ok("stop").startswith("Stopped")
    assert user.postmaster() is None
    assert user.script("status").returncode == 3
    assert user.ok("stop").startswith("Not running")

    assert user.ok("start").startswith("Started")
    assert user.ok("url").strip() == url
    found = palimpsest(meaning, url, "recall", "how many clients may connect to staging")
    assert [hit["id"] for hit in found["hits"]][:1] == [filed["id"]]

    assert user.ok("remove").startswith("Removed")
    assert not user.folder.exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url.split("?")[0] + "?password=x", connect_timeout=5).close()


def test_it_leaves_a_folder_it_did_not_make(user: User) -> None:
    user.folder.mkdir(parents=True)
    (user.folder / "notes.txt").write_text("mine\n")
    if user.account is not None:
        for path in (user.folder, *user.folder.parents):
            if path == user.home:
                break
            os.chown(path, user.account.pw_uid, user.account.pw_gid)
    for command in ("start", "remove"):
        done = user.script(command)
        assert done.returncode == 1 and "not made by this script" in done.stderr, done.stderr
    assert [p.name for p in user.folder.iterdir()] == ["notes.txt"]


def test_it_will_not_run_as_root(user: User) -> None:
    as_root = [] if os.geteuid() == 0 else ["fakeroot"]
    done = subprocess.run(
        [*as_root, str(REPO / SCRIPT), "start"],
        env={"PATH": os.environ["PATH"], "HOME": str(user.home)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "runuser -u USER" in done.stderr
    assert not user.folder.exists()
