"""The SQLite store's files: made private to their owner, and never another's taken over.

The store file holds every workspace's text, users and key hashes; SQLite gives its -wal
and -shm files the mode of the store file.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from contextlib import suppress
from pathlib import Path

from ..domain.errors import ValidationError


def made_private(path: Path) -> None:
    """Create the store's directory (0700) and file (0600) where missing, and take back a
    store file others could read: it holds every workspace's text, users and key hashes.
    SQLite gives its -wal and -shm files the mode of the store file."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    if not hasattr(os, "getuid"):
        return  # Windows: files are private to their owner by the profile's ACLs
    try:
        real = path.resolve()  # SQLite follows a link to the store, and keeps -wal beside it
    except (OSError, RuntimeError):  # a loop of links (RuntimeError before Python 3.13)
        return  # SQLite's own error says more
    for file in (real, real.with_name(real.name + "-wal"), real.with_name(real.name + "-shm")):
        _tighten(file)


def _tighten(file: Path) -> None:
    """Make `file` 600 if it is a regular file of ours, reading and changing one inode: a
    link planted in a shared folder (`x.db-wal` to your home) is not followed, and a folder
    or device (`--db /dev/null` as root) is left as it is. Another user's file that anyone
    may write (planted in /tmp before the store was first used) is refused: SQLite would
    write this memory into it. (Another's file closed to others is a shared store's.)"""
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return  # missing, a link, or not ours to open: SQLite's own error says more
    try:
        status = os.fstat(fd)
        regular, ours = stat.S_ISREG(status.st_mode), status.st_uid == os.getuid()
        if regular and ours and status.st_mode & 0o077:
            os.fchmod(fd, 0o600)
        elif regular and not ours and status.st_mode & 0o002:
            raise ValidationError(
                f"{file} belongs to another user and anyone may write to it: Palimpsest "
                "keeps no memory in it. Remove it, or pass --db a path of your own."
            )
    except OSError:
        pass
    finally:
        os.close(fd)


def refuse_foreign(conn: sqlite3.Connection, path: Path) -> None:
    """A database with tables but no schema version belongs to another program."""
    if conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None:
        raise ValidationError(
            f"{path} is a SQLite database of another program (it has tables, but no "
            "Palimpsest schema), and was left as it was; pass --db a new file or a "
            "Palimpsest store."
        )
