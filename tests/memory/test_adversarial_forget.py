"""Forget must finish, attacked: a scrub killed at its worst moment, two scrubs at once, and
the paths by which a forgotten text could come back (DESIGN section 2, "forget").

The PostgreSQL tests that kill `palimpsest scrub` run in a database of their own, created
for the test and dropped after it: a scrub cut off half-way leaves the tables in a state
other tests sharing the server must never see. Only `palimpsest` processes this file
started are ever killed, never the server.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from palimpsest.service import Service

from ..conftest import POSTGRES_URL, needs_postgres, own_postgres_database


def secret_word() -> str:
    # Lowercase letters and digits ending in a digit: its own term for both stemmers.
    return f"zqxj{uuid.uuid4().hex[:10]}7"


# -- PostgreSQL: a database of the test's own --------------------------------------------------


@pytest.fixture
def private_postgres() -> Iterator[str]:
    """The URL of a new, empty database on the test server, dropped when the test ends."""
    with own_postgres_database("adv_forget") as url:
        yield url


def cli_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}


def run(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = (sys.executable, "-m", "palimpsest", "--db", url, *args, "--json")
    return subprocess.run(command, env=cli_env(), capture_output=True, text=True, timeout=180)


def answer(url: str, *args: str) -> Any:
    done = run(url, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def start_scrub(url: str) -> subprocess.Popen[str]:
    command = (sys.executable, "-m", "palimpsest", "--db", url, "scrub", "--json")
    return subprocess.Popen(
        command, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def sequence_owner(conn: psycopg.Connection[Any], sequence: str) -> str | None:
    row = conn.execute(
        "SELECT t.relname FROM pg_depend d JOIN pg_class s ON s.oid = d.objid "
        "JOIN pg_class t ON t.oid = d.refobjid WHERE s.relname = %s AND d.deptype = 'a'",
        (sequence,),
    ).fetchone()
    return str(row[0]) if row else None


def wait_until(check: Any, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "the scrub never reached the moment to cut it off"
        time.sleep(0.02)


def forget_one(url: str, word: str) -> str:
    memory = answer(url, "remember", "-n", "people", "-k", "note", f"Ana's number is {word}")
    assert answer(url, "forget", memory["id"], "--because", "personal data")["scrub_pending"]
    return str(memory["id"])


def live_tables_work(url: str) -> None:
    """Writes land with fresh sequence numbers, and the key is still unique among actives."""
    key = f"pool-{uuid.uuid4().hex[:6]}"
    first = answer(url, "remember", "-n", "ops", "-k", "fact", f"Pool {key} is 20", "--key", key)
    second = answer(url, "remember", "-n", "ops", "-k", "fact", f"Port {key} is 5432")
    with psycopg.connect(url) as conn:  # the events' sequence still counts up
        seqs = [conn.execute("SELECT seq FROM events WHERE target_id = %s", (m["id"],)).fetchone()
                for m in (first, second)]  # fmt: skip
    assert seqs[0] is not None and seqs[1] is not None and seqs[1][0] > seqs[0][0]
    taken = run(url, "remember", "-n", "ops", "-k", "fact", f"Pool {key} is 30", "--key", key)
    assert json.loads(taken.stdout)["error_class"] == "validation", taken.stdout
    assert answer(url, "inspect", first["id"])["memory"]["text"] == f"Pool {key} is 20"


def waiting_to_swap(conn: psycopg.Connection[Any], table: str) -> bool:
    """Whether a scrub has built its copy of `table` and now waits for the swap's lock."""
    row = conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query = %s",
        (f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE",),
    ).fetchone()
    return bool(row and row[0])


@needs_postgres
def test_scrub_killed_just_before_the_swap_lets_the_next_scrub_finish(
    private_postgres: str,
) -> None:
    """Cut off after the copy of `events` was built, while it waits for the swap's lock: the
    live table must keep working, and the next scrub must clean up and finish."""
    url = private_postgres
    forget_one(url, secret_word())
    with psycopg.connect(url, autocommit=True) as watcher, psycopg.connect(url) as reader:
        reader.execute("SELECT count(*) FROM events").fetchone()  # holds the swap back
        scrub = start_scrub(url)
        try:
            wait_until(lambda: waiting_to_swap(watcher, "events"))
        finally:
            scrub.send_signal(signal.SIGKILL)
            scrub.communicate()
        reader.rollback()
        assert sequence_owner(watcher, "events_seq_seq") == "events"
        # What the same kill left before this fix: the half-built copy owning the sequence.
        watcher.execute("ALTER SEQUENCE events_seq_seq OWNED BY events__rewrite.seq")

    live_tables_work(url)
    done = answer(url, "scrub")
    assert done["scrub_pending"] is False and done["pending_scrubs"] == []
    live_tables_work(url)
    with psycopg.connect(url, autocommit=True) as conn:
        assert sequence_owner(conn, "events_seq_seq") == "events"
        left = conn.execute("SELECT relname FROM pg_class WHERE relname LIKE '%%\\_\\_%%'")
        assert left.fetchall() == []


def row_counts(url: str) -> tuple[int, int, int]:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM memory_versions), "
            "(SELECT count(DISTINCT rowid) FROM memory_versions)"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


def lock_waiters(conn: psycopg.Connection[Any]) -> int:
    """How many sessions wait for a lock: a table's or the rewrite's advisory one."""
    row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
    counted = row.fetchone()
    return int(counted[0]) if counted else 0


@needs_postgres
def test_two_scrubs_at_once_both_finish_and_lose_nothing(private_postgres: str) -> None:
    """A second scrub started while the first waits to swap must not tear down the first
    one's trigger and copy: it waits its turn, and both answer without an error."""
    url = private_postgres
    forget_one(url, secret_word())
    before = row_counts(url)
    with psycopg.connect(url, autocommit=True) as watcher, psycopg.connect(url) as reader:
        reader.execute("SELECT count(*) FROM events").fetchone()  # holds the first swap back
        first = start_scrub(url)
        wait_until(lambda: waiting_to_swap(watcher, "events"))
        second = start_scrub(url)
        # Released only once the second is blocked too (or done): a fixed sleep let a slow
        # start reach the tables after the release, and the test passed without the race.
        wait_until(lambda: lock_waiters(watcher) >= 2 or second.poll() is not None)
        reader.rollback()
        answers = [scrub.communicate(timeout=180) for scrub in (first, second)]
    for scrub, (out, err) in zip((first, second), answers, strict=True):
        assert scrub.returncode == 0, out + err
        assert json.loads(out)["scrub_pending"] is False
    assert row_counts(url) == before
    live_tables_work(url)


def waiting_for_a_lock(conn: psycopg.Connection[Any], scrub: subprocess.Popen[str]) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
        "AND query LIKE 'LOCK TABLE %%' AND application_name <> 'watcher'"
    ).fetchone()
    return bool(row and row[0]) or scrub.poll() is not None


@needs_postgres
def test_a_read_under_way_when_a_scrub_swaps_a_table_still_sees_every_row(
    private_postgres: str,
) -> None:
    """A copy (or any read) that began before the swap and reaches `memory_versions` after
    it must not find the new, swapped-in table empty: the copy would lose every version."""
    from palimpsest.store import open_store

    url = private_postgres
    forget_one(url, secret_word())
    store = open_store(url)
    try:
        service = Service(store, workspace="default")
        for n in range(5):
            service.remember(notebook="ops", kind="fact", text=f"Shard {n} runs migrations")
        with store.read("default") as tx:
            expected = sum(1 for table, _ in tx.dump() if table == "memory_versions")
        assert expected >= 6
        with psycopg.connect(url, autocommit=True, application_name="watcher") as watcher:
            with store.read("default") as tx:
                dumped = tx.dump()
                table, _ = next(dumped)  # the copy has begun: its snapshot is taken
                assert table == "notebooks"
                scrub = start_scrub(url)
                wait_until(lambda: waiting_for_a_lock(watcher, scrub))
                rows = [table for table, _ in dumped]
            out, err = scrub.communicate(timeout=180)
        assert rows.count("memory_versions") == expected
        assert scrub.returncode == 0, out + err
    finally:
        store.close()


def database_files_with(url: str, word: str) -> list[str]:
    """Every file of the database's folder holding the word (UTF-8, UTF-16, any case)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")  # what is in shared buffers reaches the files
        row = conn.execute(
            "SELECT current_setting('data_directory') || '/base/' || oid FROM pg_database "
            "WHERE datname = current_database()"
        ).fetchone()
    assert row is not None
    forms = {f.encode(enc) for f in (word, word.upper()) for enc in ("utf-8", "utf-16-le")}
    folder = Path(str(row[0]))
    return sorted(
        p.name for p in folder.iterdir() if p.is_file() and any(f in p.read_bytes() for f in forms)
    )


def has_trigger(conn: psycopg.Connection[Any], table: str) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM pg_trigger WHERE tgname = 'palimpsest_rewrite' "
        "AND tgrelid = to_regclass(%s)",
        (table,),
    ).fetchone()
    return bool(row and row[0])


@needs_postgres
def test_scrub_killed_during_the_copy_loses_no_write_and_the_next_scrub_erases(
    private_postgres: str,
) -> None:
    url = private_postgres
    word = secret_word()
    forget_one(url, word)
    assert database_files_with(url, word), "the bytes are on disk before the scrub"
    with psycopg.connect(url, autocommit=True) as watcher, psycopg.connect(url) as reader:
        # Holds the swap back, so the copy's trigger stays until the kill: polled alone, a
        # quick scrub could build and swap its copy between two looks, and the wait failed.
        reader.execute("SELECT count(*) FROM memory_versions").fetchone()
        scrub = start_scrub(url)
        try:
            wait_until(lambda: has_trigger(watcher, "memory_versions"))
        finally:
            scrub.send_signal(signal.SIGKILL)
            scrub.communicate()
        reader.rollback()
    written = [
        answer(url, "remember", "-n", "ops", "-k", "fact", f"Written after the kill {n}")
        for n in range(3)
    ]
    done = answer(url, "scrub")
    assert done["scrub_pending"] is False
    for filed in written:
        assert answer(url, "inspect", filed["id"])["memory"]["version"] == 1
    live_tables_work(url)
    assert database_files_with(url, word) == []
    with psycopg.connect(url, autocommit=True) as conn:
        assert not has_trigger(conn, "memory_versions")
        left = conn.execute("SELECT relname FROM pg_class WHERE relname LIKE '%%\\_\\_%%'")
        assert left.fetchall() == []


# -- Notebook names: no past name kept anywhere -------------------------------------------------


def workspace_holds(service: Service, word: str) -> list[str]:
    """The tables of the workspace with a row holding `word` (the idempotency records too)."""
    with service.store.read(service.workspace) as tx:
        return sorted({table for table, row in tx.dump() if word in json.dumps(row, default=str)})


def test_a_forgotten_past_name_leaves_no_idempotent_answer_holding_it(
    service: Service, tmp_path: Path
) -> None:
    """A remember's stored answer names its notebook by name: once the notebook was renamed
    and its past names forgotten, no record may keep the old one."""
    word = secret_word()
    filed = service.remember(notebook=f"ana-{word}", kind="fact", text="Pool size is 20",
                             idempotency_key="file-pool")  # fmt: skip
    notebook = service.inspect(id=filed["id"])["memory"]["notebook_id"]
    service.edit_notebook(notebook=notebook, name="clients")
    service.forget(notebook=notebook, field="name", because="personal data")
    assert workspace_holds(service, word) == []
    if service.store.url.endswith(".db"):
        assert database_bytes_holding(Path(service.store.url).parent, word) == []


def test_a_notebook_forgotten_whole_leaves_no_idempotent_answer_naming_it(
    service: Service,
) -> None:
    word = secret_word()
    filed = service.remember(notebook=f"bob-{word}", kind="fact", text="Port is 5432",
                             idempotency_key="file-port")  # fmt: skip
    notebook = service.inspect(id=filed["id"])["memory"]["notebook_id"]
    service.revise(id=filed["id"], move_to="ops")
    service.forget(notebook=notebook, because="personal data")
    assert workspace_holds(service, word) == []


def database_bytes_holding(folder: Path, word: str) -> list[str]:
    """SQLite's db, -wal and -shm files holding the word, in UTF-8 or UTF-16, in any case."""
    forms = {f.encode(enc) for f in (word, word.upper()) for enc in ("utf-8", "utf-16-le")}
    return sorted(
        p.name for p in folder.iterdir() if p.is_file() and any(f in p.read_bytes() for f in forms)
    )


def test_reverting_a_notebook_never_moves_a_memory_into_a_forgotten_notebook(
    service: Service,
) -> None:
    """A memory moved out of a notebook that was then forgotten whole: reverting its new
    notebook to before the move must not put it back into the tombstone, where no notebook
    lists it any more."""
    moved = service.remember(notebook="ana-private", kind="fact", text="Pool size is 20")["id"]
    before_move = service.history(id=moved)["events"][-1]["at"]
    time.sleep(0.002)
    service.revise(id=moved, move_to="ops")
    service.forget(notebook="ana-private", because="personal data")

    reverted = service.revert(notebook="ops", as_of=before_move)

    assert reverted["results"] == []
    assert [s["id"] for s in reverted["skipped"]] == [moved]
    assert "forgotten" in reverted["skipped"][0]["reason"]
    listed = service.inspect(notebook="ops")["memories"]
    assert [m["id"] for m in listed] == [moved]


@needs_postgres
def test_readers_and_writers_during_a_scrub_get_whole_answers(private_postgres: str) -> None:
    """While `palimpsest scrub` rewrites the tables, every read answers in full (never an
    internal error, never a memory missing), and every write lands."""
    import threading

    from palimpsest.domain.errors import PalimpsestError
    from palimpsest.store import open_store

    url = private_postgres
    store = open_store(url)
    service = Service(store, workspace="default")
    try:
        kept = [service.remember(notebook="ops", kind="fact", text=f"Shard {n} migrates first")
                for n in range(40)]  # fmt: skip
        forget_one(url, secret_word())
        stop = threading.Event()
        failures: list[str] = []
        written: list[str] = []

        def read() -> None:
            while not stop.is_set():
                try:
                    hits = service.recall(query="shard migrates", limit=100)["hits"]
                    if len(hits) < len(kept):
                        failures.append(f"recall found {len(hits)} of {len(kept)}")
                    service.inspect(id=kept[len(failures) % len(kept)]["id"])
                except PalimpsestError as exc:
                    failures.append(f"{exc.error_class}: {exc.message}")

        def write() -> None:
            n = 0
            while not stop.is_set():
                n += 1
                try:
                    text = f"Written during the scrub {n}"
                    written.append(service.remember(notebook="ops", kind="fact", text=text)["id"])
                except PalimpsestError as exc:
                    failures.append(f"{exc.error_class}: {exc.message}")

        threads = [threading.Thread(target=read), threading.Thread(target=read),
                   threading.Thread(target=write)]  # fmt: skip
        for thread in threads:
            thread.start()
        try:
            scrub = start_scrub(url)
            out, err = scrub.communicate(timeout=180)
        finally:
            stop.set()
            for thread in threads:
                thread.join()
        assert scrub.returncode == 0, out + err
        assert failures == []
        assert written
        for memory_id in written:
            assert service.inspect(id=memory_id)["memory"]["version"] == 1
    finally:
        store.close()


def waiting_on(conn: psycopg.Connection[Any], query: str) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query = %s",
        (query,),
    ).fetchone()
    return bool(row and row[0])


@needs_postgres
def test_scrub_killed_just_after_the_swap_leaves_working_tables_and_the_next_one_erases(
    private_postgres: str,
) -> None:
    """Cut off after `memory_versions` was swapped, before the old table (which may hold
    the bytes) was dropped: the forget stays pending, and the next scrub finishes it."""
    url = private_postgres
    word = secret_word()
    forget_one(url, word)
    with (
        psycopg.connect(url, autocommit=True) as watcher,
        psycopg.connect(url) as reader,
        psycopg.connect(url) as writer,
    ):
        reader.execute("SELECT count(*) FROM memory_versions").fetchone()  # holds the swap
        scrub = start_scrub(url)
        try:
            wait_until(lambda: waiting_to_swap(watcher, "memory_versions"))
            # Dropping the old table drops its reference to `memories`: hold that back.
            writer.execute("LOCK TABLE memories IN ROW EXCLUSIVE MODE")
            reader.rollback()
            wait_until(lambda: waiting_on(watcher, "DROP TABLE memory_versions__retired"))
        finally:
            scrub.send_signal(signal.SIGKILL)
            scrub.communicate()
        # The server would still finish the statement the killed scrub sent: cancel it, as
        # a scrub killed a moment earlier would not have sent it.
        watcher.execute(
            "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query = %s",
            ("DROP TABLE memory_versions__retired",),
        )
        writer.rollback()

    live_tables_work(url)
    assert answer(url, "doctor")["scrub_pending"] is True
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT to_regclass('memory_versions__retired')").fetchone()
        assert row is not None and row[0] is not None, "the old table was left behind"
    done = answer(url, "scrub")
    assert done["scrub_pending"] is False
    live_tables_work(url)
    assert database_files_with(url, word) == []
    with psycopg.connect(url, autocommit=True) as conn:
        left = conn.execute("SELECT relname FROM pg_class WHERE relname LIKE '%%\\_\\_%%'")
        assert left.fetchall() == []
        unchecked = conn.execute("SELECT conname FROM pg_constraint WHERE NOT convalidated")
        assert unchecked.fetchall() == []


@pytest.fixture
def postgres_as_owner() -> Iterator[str]:
    """A database owned by an ordinary role (no superuser), as a team deploys it."""
    assert POSTGRES_URL
    tag = uuid.uuid4().hex[:10]
    role, name = f"adv_forget_app_{tag}", f"adv_forget_own_{tag}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'app'".encode())
        admin.execute(f"CREATE DATABASE {name} OWNER {role}".encode())
    server = POSTGRES_URL.split("@", 1)[1].rsplit("/", 1)[0]
    # pgvector is not a trusted extension: a superuser installs it, as a team's admin would.
    admin_url = POSTGRES_URL.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute("CREATE EXTENSION vector")
    try:
        yield f"postgresql://{role}:app@{server}/{name}"
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)".encode())
            admin.execute(f"DROP ROLE IF EXISTS {role}".encode())


@needs_postgres
def test_a_scrub_that_cannot_erase_the_statistics_says_so_and_a_superuser_can(
    postgres_as_owner: str,
) -> None:
    """ANALYZE (autovacuum runs it) copies sampled values into pg_statistic, which only a
    superuser or pg_maintain may rewrite: an ordinary owner's scrub must not claim done,
    and a superuser's scrub must finish it, leaving the tables to the owner."""
    url = postgres_as_owner
    word = secret_word()
    for n in range(10):
        answer(url, "remember", "-n", "ops", "-k", "fact", f"Shard {n} migrates first")
    memory = answer(url, "remember", "-n", "people", "-k", "note", f"Ana's number is {word}")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")  # what autovacuum does on its own
    answer(url, "forget", memory["id"], "--because", "personal data")

    done = answer(url, "scrub")

    assert POSTGRES_URL
    admin_url = POSTGRES_URL.rpartition("/")[0] + "/" + url.rpartition("/")[2]
    left = database_files_with(admin_url, word)
    assert not left or done["scrub_pending"] is True, f"claimed done, bytes left in {left}"
    if done["scrub_pending"]:
        assert memory["id"] in [p["id"] for p in done["pending_scrubs"]]
        assert "pg_maintain" in done["warning"]
        assert answer(url, "doctor")["scrub_pending"] is True
    finished = answer(admin_url, "scrub")  # a superuser can finish it
    assert finished["scrub_pending"] is False
    assert database_files_with(admin_url, word) == []
    assert answer(url, "doctor")["scrub_pending"] is False
    # The tables still belong to the server's role, which reads, writes and scrubs them.
    live_tables_work(url)
    forget_one(url, secret_word())
    assert "pg_maintain" in answer(url, "scrub")["warning"]
    with psycopg.connect(url, autocommit=True) as conn:
        owners = conn.execute(
            "SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
    assert owners == [(url.split("//")[1].split(":")[0],)]
