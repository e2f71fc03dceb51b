"""Erasing forgotten bytes on PostgreSQL: copy each table into new files, then swap.

A forget sets the content to NULL at once, but the old row versions keep their bytes in
the table, TOAST and index files; VACUUM marks that space free without erasing it. Only a
copy into new files erases them, and VACUUM FULL holds an exclusive lock for the whole
copy (seconds at 100,000 memories). So the large tables are copied online, the way
pg_repack does it: a trigger notes the keys of rows written meanwhile, the copy and its
indexes are built while the table stays in use, and the exclusive lock is held only to
bring the noted rows across and swap the new table in under the old name. Small tables
get VACUUM FULL. Every lock is asked for with a short timeout and retried, so a rewrite
never keeps live queries queued behind it for long.

Only forgets that no open snapshot can still see are finished: a copy keeps whatever
some transaction may still read, so the rewrite first waits (a bounded time) for older
snapshots to end.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from ..domain.errors import Retryable

# Large tables copied online, by their key column; the small ones get VACUUM FULL.
# memory_vectors: a forgotten version's vector stays in the heap and in the HNSW index's
# pages (pgvector keeps deleted vectors there until the index is rebuilt) until this copy.
ONLINE = {"memory_versions": "rowid", "events": "seq", "memory_vectors": "version_rowid"}
# search_terms names each word some version holds: a forget deletes the row of a word only
# forgotten memories held, and the row's bytes stay in the files until a rewrite.
SMALL = ("notebooks", "idempotency", "idempotency_targets", "dispute_versions", "search_terms",
         "seen_commands", "served")  # fmt: skip
REWRITTEN = (*ONLINE, *SMALL)
LOCK_WAIT = "1s"  # how long a lock request may hold up the queries queued behind it
LOCK_ATTEMPTS = 20
HORIZON_WAIT_SECONDS = 30
MEMORY = "256MB"  # for the index builds of this session
REWRITE_LOCK = 7_305_302  # any constant: one rewrite at a time across processes

# Marks whose forget no other snapshot can still see: the transaction that forgot is older
# than every other backend's oldest snapshot (and any replication slot's horizon).
_SAFE_MARKS = """
SELECT m.id FROM scrub_pending m
WHERE NOT EXISTS (
    SELECT 1 FROM pg_stat_activity a
    WHERE a.pid <> pg_backend_pid()
      AND (a.datname = current_database() OR a.backend_type = 'walsender')
      AND (age(a.backend_xmin) >= age(m.xid::xid) OR age(a.backend_xid) >= age(m.xid::xid)))
  AND NOT EXISTS (
    SELECT 1 FROM pg_replication_slots s WHERE age(s.xmin) >= age(m.xid::xid))
"""

_LOG_FUNCTION = """
CREATE OR REPLACE FUNCTION palimpsest_rewrite_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('INSERT INTO %I VALUES ($1)', TG_ARGV[0]) USING
        (to_jsonb(CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END) ->> TG_ARGV[1])::bigint;
    RETURN NULL;
END $$
"""

Connection = psycopg.Connection[Any]


def rewrite(conn: Connection) -> tuple[dict[str, float], list[int]]:
    """Rewrite every table that may hold forgotten bytes; the seconds each was locked
    exclusively, and the marks this finished (the caller deletes them)."""
    # A second rewrite would take the first one's trigger and copy for leftovers and drop
    # them mid-way: it waits its turn (the lock goes with this session, even if killed).
    conn.execute("SELECT pg_advisory_lock(%s)", (REWRITE_LOCK,))
    ready = wait_for_horizon(conn)
    if not ready:
        return {}, []
    conn.execute(f"SET lock_timeout = '{LOCK_WAIT}'")
    conn.execute(f"SET maintenance_work_mem = '{MEMORY}'")
    # As the tables' owner (a superuser may run this for the server's role): the copies,
    # their log and trigger must belong to, and be writable by, the role that uses them.
    conn.execute(f"SET ROLE {_table_owner(conn)}".encode())
    locked = {table: copy_online(conn, table, key) for table, key in ONLINE.items()}
    locked |= {table: with_lock(conn, f"VACUUM FULL {table}", table) for table in SMALL}
    for table in REWRITTEN:  # statistics keep sampled values: renew them
        with_lock(conn, f"ANALYZE {table}", table)
    conn.execute("RESET ROLE")
    if not may_rewrite_catalog(conn):
        return locked, []  # sampled values may stay in pg_statistic: nothing is finished
    locked["pg_statistic"] = with_lock(conn, "VACUUM FULL pg_statistic", "pg_statistic")
    return locked, ready


def _table_owner(conn: Connection) -> str:
    row = conn.execute(
        "SELECT quote_ident(pg_get_userbyid(relowner)) FROM pg_class "
        "WHERE oid = 'memory_versions'::regclass"
    ).fetchone()
    assert row is not None
    return str(row[0])


def wait_for_horizon(conn: Connection) -> list[int]:
    """The marks a rewrite now would finish: all of them, once older snapshots are gone."""
    deadline = time.monotonic() + HORIZON_WAIT_SECONDS
    while True:
        safe = [row[0] for row in conn.execute(_SAFE_MARKS).fetchall()]
        if len(safe) == count_pending(conn) or time.monotonic() > deadline:
            return safe
        time.sleep(0.2)


def count_pending(conn: Connection) -> int:
    row = conn.execute("SELECT count(*) FROM scrub_pending").fetchone()
    return int(row[0]) if row else 0


def with_lock(conn: Connection, statement: str, table: str) -> float:
    """Run `statement`, asking for its lock with a short timeout and retrying; its seconds."""

    def run() -> float:
        started = time.monotonic()
        conn.execute(statement.encode())
        return round(time.monotonic() - started, 4)

    return _retrying_lock(table, run)


def _retrying_lock(table: str, step: Callable[[], float]) -> float:
    """`step`, tried again while its lock on `table` times out, a bounded number of times."""
    for attempt in range(LOCK_ATTEMPTS):
        try:
            return step()
        except pg_errors.LockNotAvailable:
            if attempt == LOCK_ATTEMPTS - 1:
                raise Retryable(
                    f"The table {table} stayed busy; run the scrub again at a quieter moment."
                ) from None
            time.sleep(0.5)
    raise AssertionError("unreachable")


def copy_online(conn: Connection, table: str, key: str) -> float:
    """Copy `table` into new files while it stays in use; the seconds of exclusive lock."""
    new, log, old = f"{table}__rewrite", f"{table}__changes", f"{table}__retired"
    _drop_leftovers(conn, table, new, log, old)
    columns = ", ".join(_stored_columns(conn, table))
    indexes = _index_plans(conn, table, new)
    conn.execute(f"CREATE UNLOGGED TABLE {log} (key bigint NOT NULL)".encode())
    if not _exists_function(conn):  # only its owner may replace it, and it never changes
        conn.execute(_LOG_FUNCTION.encode())
    with_lock(
        conn,
        f"CREATE TRIGGER palimpsest_rewrite AFTER INSERT OR UPDATE OR DELETE ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION palimpsest_rewrite_log('{log}', '{key}')",
        table,
    )
    conn.execute(
        f"CREATE TABLE {new} (LIKE {table} INCLUDING DEFAULTS INCLUDING GENERATED "
        "INCLUDING STORAGE INCLUDING CONSTRAINTS)".encode()
    )
    # One statement, one snapshot: rows written after it are in the log.
    conn.execute(f"INSERT INTO {new} ({columns}) SELECT {columns} FROM {table}".encode())
    for create, _, _ in indexes:
        conn.execute(create.encode())
    # Everything that locks other tables (references) happens before the swap, which then
    # locks only `table`: a swap waiting on a second table could deadlock with a reader.
    for statement in _constraints(conn, table, new) + _grants(conn, table, new):
        with_lock(conn, statement, table)
    conn.execute(f"ANALYZE {new}".encode())
    seconds = _swap(conn, table, new, log, old, key, columns, indexes)
    with_lock(conn, f"DROP TABLE {old}", table)
    conn.execute(f"DROP TABLE {log}".encode())
    for name in _unvalidated(conn, table):
        conn.execute(f"ALTER TABLE {table} VALIDATE CONSTRAINT {name}".encode())
    return seconds


def _swap(
    conn: Connection,
    table: str,
    new: str,
    log: str,
    old: str,
    key: str,
    columns: str,
    indexes: list[tuple[str, str, str]],
) -> float:
    """Under a brief exclusive lock on `table` alone: bring the logged rows across, and
    give the copy the table's name and its indexes' names."""

    def swap() -> float:
        with conn.transaction():
            conn.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE".encode())
            locked_at = time.monotonic()  # held from here to the commit
            changed = f"SELECT DISTINCT key FROM {log}"
            conn.execute(f"DELETE FROM {new} WHERE {key} IN ({changed})".encode())
            conn.execute(
                f"INSERT INTO {new} ({columns}) SELECT {columns} FROM {table} "
                f"WHERE {key} IN ({changed})".encode()
            )
            conn.execute(f"DROP TRIGGER palimpsest_rewrite ON {table}".encode())
            # Here, not before: a copy that owned the sequence and was then left behind
            # by a killed scrub could not be dropped while the table's default uses it.
            for sequence, column in _owned_sequences(conn, table):
                conn.execute(f"ALTER SEQUENCE {sequence} OWNED BY {new}.{column}".encode())
            conn.execute(f"ALTER TABLE {table} RENAME TO {old}".encode())
            for _, _, name in indexes:  # an index renamed renames its constraint too
                conn.execute(f"ALTER INDEX {name} RENAME TO {name}__retired".encode())
            conn.execute(f"ALTER TABLE {new} RENAME TO {table}".encode())
            for _, temporary, name in indexes:
                conn.execute(f"ALTER INDEX {temporary} RENAME TO {name}".encode())
        return round(time.monotonic() - locked_at, 4)

    return _retrying_lock(table, swap)


def _drop_leftovers(conn: Connection, table: str, new: str, log: str, old: str) -> None:
    """What an interrupted rewrite left: its trigger, half-built copy, log, retired table."""
    conn.execute(f"DROP TRIGGER IF EXISTS palimpsest_rewrite ON {table}".encode())
    # A scrub before this one took the sequence away from the table before its swap.
    if _exists(conn, new):
        for sequence, column in _owned_sequences(conn, new):
            conn.execute(f"ALTER SEQUENCE {sequence} OWNED BY {table}.{column}".encode())
    conn.execute(f"DROP TABLE IF EXISTS {new}, {log}, {old}".encode())


def _exists_function(conn: Connection) -> bool:
    row = conn.execute("SELECT to_regproc('palimpsest_rewrite_log') IS NOT NULL").fetchone()
    return bool(row and row[0])


def _exists(conn: Connection, table: str) -> bool:
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()
    return bool(row and row[0])


def _stored_columns(conn: Connection, table: str) -> list[str]:
    """The columns to copy: all but the generated ones (the new table computes those)."""
    rows = conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
        "AND NOT attisdropped AND attgenerated = '' ORDER BY attnum",
        (table,),
    ).fetchall()
    return [str(row[0]) for row in rows]


def _index_plans(conn: Connection, table: str, new: str) -> list[tuple[str, str, str]]:
    """Each index of `table` as (CREATE on the copy under a temporary name, that name, name)."""
    rows = conn.execute(
        "SELECT c.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i "
        "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = %s::regclass",
        (table,),
    ).fetchall()
    plans = []
    for name, definition in rows:
        temporary = f"{name}__rewrite"[:63]
        head, tail = definition.split(" ON ", 1)
        create = head.replace(f" INDEX {name}", f" INDEX {temporary}", 1)
        tail = tail.replace(f"public.{table} ", f"public.{new} ", 1)
        plans.append((f"{create} ON {tail}", temporary, str(name)))
    return plans


def _constraints(conn: Connection, table: str, new: str) -> list[str]:
    """Statements giving the copy the table's keys (on its indexes) and references."""
    rows = conn.execute(
        "SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE conrelid = %s::regclass AND contype IN ('p', 'u', 'f')",
        (table,),
    ).fetchall()
    statements = []
    for name, kind, definition in rows:
        if kind == "f":  # the same name is free on another table; checked after the swap
            statements.append(f"ALTER TABLE {new} ADD CONSTRAINT {name} {definition} NOT VALID")
        else:
            using, index = ("PRIMARY KEY" if kind == "p" else "UNIQUE"), f"{name}__rewrite"[:63]
            statements.append(
                f"ALTER TABLE {new} ADD CONSTRAINT {index} {using} USING INDEX {index}"
            )
    return statements


def _grants(conn: Connection, table: str, new: str) -> list[str]:
    """The privileges other roles hold on `table`, to give them on the copy as well."""
    rows = conn.execute(
        "SELECT format('GRANT %%s ON %%I TO %%s', a.privilege_type, %s::text, "
        "CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END) "
        "FROM pg_class c, aclexplode(c.relacl) a WHERE c.oid = %s::regclass "
        "AND a.grantee <> c.relowner",
        (new, table),
    ).fetchall()
    return [str(row[0]) for row in rows]


def _owned_sequences(conn: Connection, table: str) -> list[tuple[str, str]]:
    rows = conn.execute(
        "SELECT s.relname, a.attname FROM pg_depend d "
        "JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S' "
        "JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid "
        "WHERE d.refobjid = %s::regclass AND d.deptype = 'a'",
        (table,),
    ).fetchall()
    return [(str(sequence), str(column)) for sequence, column in rows]


def _unvalidated(conn: Connection, table: str) -> list[str]:
    rows = conn.execute(
        "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND NOT convalidated",
        (table,),
    ).fetchall()
    return [str(row[0]) for row in rows]


CATALOG_WARNING = (
    "The tables were rewritten, but ANALYZE may have copied forgotten values into the "
    "pg_statistic catalog, which this role may not rewrite: run `palimpsest scrub` as a "
    "superuser, or GRANT pg_maintain to this role (PostgreSQL 17 and later) and run it again."
)


def may_rewrite_catalog(conn: Connection) -> bool:
    """Whether this role may VACUUM FULL pg_statistic (a superuser, or pg_maintain)."""
    row = conn.execute(
        "SELECT r.rolsuper OR coalesce(pg_has_role(r.oid, m.oid, 'MEMBER'), false) "
        "FROM pg_roles r LEFT JOIN pg_roles m ON m.rolname = 'pg_maintain' "
        "WHERE r.rolname = current_user"
    ).fetchone()
    return bool(row and row[0])
