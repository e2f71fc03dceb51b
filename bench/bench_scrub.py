"""How long `palimpsest scrub` locks each table on PostgreSQL, at a given number of memories.

Run on demand, not by pytest, against a server where a scratch database may be created:

    .venv/bin/python bench/bench_scrub.py --postgres postgresql://u:p@host/db --memories 100000

It creates a scratch database next to the one named, fills it with SQL (two versions and
two events per memory, ~150-character texts whose words are mostly unique, which makes the
full-text index large), forgets one memory through the service, and runs the rewrite
while a reader inspects a memory and a writer files new ones in a loop. It prints the
seconds each table was held under an exclusive lock, the longest a read waited
meanwhile, whether any write made meanwhile was lost, then drops the scratch database.
"""

from __future__ import annotations

import argparse
import threading
import time
from urllib.parse import urlsplit, urlunsplit

import psycopg

from palimpsest.service import Service
from palimpsest.store import open_store

FILL = [
    "INSERT INTO workspaces VALUES ('bench', '2026-01-01T00:00:00.000000Z')",
    "INSERT INTO notebooks(id, workspace, name, created_at) SELECT 'nb_' || g, 'bench', "
    "'nb' || g, '2026-01-01T00:00:00.000000Z' FROM generate_series(1, 50) g",
    "INSERT INTO memories(id, workspace) SELECT 'm_' || g, 'bench' "
    "FROM generate_series(1, %(n)s) g",
    "INSERT INTO events(workspace, op_id, at, actor, op, target_type, target_id, notebook_id, "
    "version, fields, data) SELECT 'bench', 'op_' || g, '2026-01-01T00:00:00.000000Z', "
    "'agent:bench', CASE WHEN g %% 2 = 0 THEN 'remember' ELSE 'revise' END, 'memory', "
    "'m_' || (g / 2), 'nb_' || (g %% 50 + 1), 2 - g %% 2, '[\"text\"]', '{}' "
    "FROM generate_series(2, 2 * %(n)s + 1) g",
    "INSERT INTO memory_versions(memory_id, version, workspace, from_seq, to_seq, notebook_id, "
    "kind, status, text, norm_text, tags, tags_text, recorded_at, author, anchors) "
    "SELECT 'm_' || g, v, 'bench', 2 * g + v, CASE WHEN v = 1 THEN 2 * g + 2 END, "
    "'nb_' || (g %% 50 + 1), 'fact', 'active', t, lower(t), '[\"ops\"]', 'ops', "
    "'2026-01-01T00:00:00.000000Z', 'agent:bench', '[]' FROM generate_series(1, %(n)s) g, "
    "generate_series(1, 2) v, LATERAL (SELECT 'Deploy step ' || g || ' runs the migration ' "
    "|| md5(g::text) || ' for shard ' || (g %% 7) || ' before traffic, version ' || v || ' '"
    " || md5((g * 7 + v)::text)) AS x(t)",
    "SELECT setval('events_seq_seq', (SELECT max(seq) FROM events))",
    "SELECT setval('memory_versions_rowid_seq', (SELECT max(rowid) FROM memory_versions))",
    "ANALYZE",
]


def scratch_url(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))


def reader(service: Service, stop: threading.Event, waits: list[float]) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        service.inspect(id="m_2")  # a cheap read: its wait is the rewrite's locks
        waits.append(time.perf_counter() - started)
        time.sleep(0.01)


def writer(service: Service, stop: threading.Event, written: list[str]) -> None:
    """Writes go on during the rewrite; each acknowledged one must be there afterwards."""
    n = 0
    while not stop.is_set():
        n += 1
        filed = service.remember(notebook="nb1", kind="note", text=f"written meanwhile {n}")
        written.append(filed["id"])
        time.sleep(0.005)


def run(url: str, memories: int) -> dict[str, object]:
    name = f"palimpsest_scrub_bench_{memories}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    target = scratch_url(url, name)
    try:
        store = open_store(target)
        with psycopg.connect(target, autocommit=True) as conn:
            for statement in FILL:
                conn.execute(statement.encode(), {"n": memories})
            size = conn.execute("SELECT pg_size_pretty(pg_database_size(current_database()))")
            row = size.fetchone()
        service = Service(store, workspace="bench")
        service.forget(id="m_1", because="bench")
        stop, waits, written = threading.Event(), [0.0], list[str]()
        threads = [
            threading.Thread(target=reader, args=(service, stop, waits)),
            threading.Thread(target=writer, args=(service, stop, written)),
        ]
        for thread in threads:
            thread.start()
        time.sleep(0.3)
        started = time.perf_counter()
        done = store.rewrite()
        total = time.perf_counter() - started
        stop.set()
        for thread in threads:
            thread.join()
        lost = [m for m in written if service.inspect(id=m).get("memory") is None]
        store.close()
        return {
            "memories": memories,
            "database": row[0] if row else "?",
            "locked_seconds": done.locked_seconds,
            "rewrite_seconds": round(total, 2),
            "longest_read_wait": round(max(waits), 3),
            "pending_after": done.pending,
            "written_meanwhile": len(written),
            "lost": len(lost),
        }
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", required=True, help="a server URL (a scratch db is made)")
    parser.add_argument("--memories", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    for count in args.memories:
        print(run(args.postgres, count), flush=True)


if __name__ == "__main__":
    main()
