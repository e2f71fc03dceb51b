"""What a SQLite scrub does: fold the WAL back into the file and truncate it, so no side
file keeps the pages a forget overwrote (`secure_delete` zeroed them in the file), and
clear the marks of the forgets that finished."""

from __future__ import annotations

import sqlite3

# How long a scrub waits for other processes' readers to let go of the WAL before it
# answers "pending" (a checkpoint that truncates must wait for every reader).
SCRUB_WAIT_MS = 1_000


def scrubbed(conn: sqlite3.Connection, busy_ms: int) -> bool:
    """Checkpoint the WAL with truncation; True when it was, and every forget committed
    before it, in any workspace of the file, is then finished and its pending mark goes.
    `busy_ms`: the connection's usual busy timeout, put back after the checkpoint's."""
    newest = conn.execute("SELECT max(id) FROM scrub_pending").fetchone()[0]
    if not checkpoint(conn, busy_ms):
        return False
    if newest is not None:
        try:
            conn.execute("DELETE FROM scrub_pending WHERE id <= ?", (newest,))
        except sqlite3.OperationalError:
            return True  # busy: the marks stay, and the next scrub clears them
        checkpoint(conn, busy_ms)  # the WAL is left empty, as after any scrub
    return True


def checkpoint(conn: sqlite3.Connection, busy_ms: int) -> bool:
    conn.execute(f"PRAGMA busy_timeout = {SCRUB_WAIT_MS}")
    try:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
    return bool(busy == 0)


def pending(conn: sqlite3.Connection) -> int:
    """How many forget marks wait, store-wide, whatever the workspace."""
    return int(conn.execute("SELECT count(*) FROM scrub_pending").fetchone()[0])


def any_pending(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM scrub_pending LIMIT 1").fetchone() is not None
