"""Forget must finish, everywhere: notebooks' fields, idempotency records, PostgreSQL's files.

DESIGN section 2, "forget". A notebook's summary or name can hold personal data: forget
erases every value it had from the notebook's history (and an empty notebook whole,
leaving a tombstone). The idempotency records of a forgotten memory go with it. On
PostgreSQL the old row versions keep the bytes in the table and index files until
`palimpsest scrub` rewrites them, so a forget says `scrub_pending` until then; the test
reads those files' bytes (the test server runs locally, as the same user).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from mcp import Client

from palimpsest.domain.ids import new_id
from palimpsest.domain.model import Event, Notebook
from palimpsest.domain.views import command_for
from palimpsest.service import Service
from palimpsest.store import EventFilter, Store, open_store

from ..conftest import POSTGRES_URL, needs_postgres
from ..mcp_helpers import call, refuse
from .test_forget_crash import files_holding, forms

pytestmark = pytest.mark.anyio


def secret_word() -> str:
    # Lowercase letters and digits ending in a digit: its own term for both stemmers.
    return f"zqxj{uuid.uuid4().hex[:10]}7"


def token() -> str:
    """A credential shape the secret detector knows (a GitHub token), new each time."""
    return "ghp_" + uuid.uuid4().hex + uuid.uuid4().hex[:4]


def is_sqlite(store: Store) -> bool:
    return store.url.endswith(".db")


def stored_events(service: Service, notebook_id: str) -> str:
    """Every event of the notebook as the store holds it, dumped for a substring search."""
    with service.store.read(service.workspace) as tx:
        events = tx.events(EventFilter(notebook_id=notebook_id, limit=1000))
    return repr(events)


# -- notebooks ------------------------------------------------------------------------------


async def test_forgetting_a_summary_erases_every_value_it_ever_had(
    client: Client, service: Service, db_path: Path
) -> None:
    word = secret_word()
    made = await call(client, "notebook", action="create", name="clients",
                      summary=f"Ana Lopez, phone {word}")  # fmt: skip
    nb = made["notebook"]["id"]
    await call(client, "notebook", action="edit", notebook=nb, summary=f"Ana ({word}) moved")
    await call(client, "notebook", action="edit", notebook=nb, clear=["summary"])
    # Clearing is not erasing: the history still holds both values (the bug this fixes).
    assert word in json.dumps(await call(client, "history", notebook=nb))

    gone = await call(client, "forget", notebook=nb, field="summary", because="personal data")
    assert gone["results"][0]["notebook"] == nb and gone["results"][0]["forgotten"] is True
    assert gone["scrub_pending"] is not is_sqlite(service.store)
    history = await call(client, "history", notebook=nb)
    assert word not in json.dumps(history)
    assert history["events"][-1]["op"] == "forget_field"
    assert history["events"][-1]["note"] == "personal data"
    assert word not in stored_events(service, nb)
    if is_sqlite(service.store):
        assert files_holding(db_path.parent, word) == []


async def test_forgetting_a_summary_clears_the_current_one_too(
    client: Client, service: Service, db_path: Path
) -> None:
    word = secret_word()
    made = await call(client, "notebook", action="create", name="hr", summary=f"Ana {word}")
    nb = made["notebook"]["id"]
    await call(client, "forget", notebook="hr", field="summary", because="personal data")
    shown = await call(client, "inspect", notebook=nb)
    assert "summary" not in shown["notebook"] and shown["notebook"]["name"] == "hr"
    assert word not in json.dumps(await call(client, "history", notebook=nb))
    if is_sqlite(service.store):
        assert files_holding(db_path.parent, word) == []


def test_forgetting_a_summary_that_never_was_changes_nothing(service: Service) -> None:
    """No value to erase: the answer says so and the history gains no event to explain."""
    nb = service.create_notebook(name="plain")["notebook"]["id"]
    before = service.history(notebook=nb)["events"]
    answer = service.forget(notebook="plain", field="summary", because="personal data")
    assert answer["results"] == [
        {"notebook": nb, "field": "summary", "forgotten": False, "unchanged": True}
    ]
    assert service.history(notebook=nb)["events"] == before
    assert service.pending_scrubs() == []


async def test_forgetting_a_name_erases_the_past_names(
    client: Client, service: Service, db_path: Path
) -> None:
    word = secret_word()
    made = await call(client, "notebook", action="create", name=f"ana-{word}")
    nb = made["notebook"]["id"]
    await call(client, "remember", notebook=nb, kind="fact", text="Prefers email")
    await call(client, "notebook", action="edit", notebook=nb, name="client-a")
    assert word in json.dumps(await call(client, "history", notebook=nb))

    await call(client, "forget", notebook=nb, field="name", because="personal data")
    assert word not in json.dumps(await call(client, "history", notebook=nb))
    assert word not in stored_events(service, nb)
    assert (await call(client, "inspect", notebook=nb))["notebook"]["name"] == "client-a"
    if is_sqlite(service.store):
        assert files_holding(db_path.parent, word) == []


async def test_an_empty_notebook_is_forgotten_whole_leaving_a_tombstone(
    client: Client, service: Service
) -> None:
    word = secret_word()
    made = await call(client, "notebook", action="create", name=f"case-{word}",
                      summary=f"about {word}")  # fmt: skip
    nb = made["notebook"]["id"]
    memory = await call(client, "remember", notebook=nb, kind="fact", text="Filed in May")
    held = await refuse(client, "forget", notebook=nb, because="personal data")
    assert held["error_class"] == "validation" and held["field"] == "notebook"
    await call(client, "forget", id=memory["id"], because="personal data")

    await call(client, "forget", notebook=nb, because="personal data")
    tombstone = (await call(client, "inspect", notebook=nb))["tombstone"]
    assert (tombstone["id"], tombstone["forgotten"]) == (nb, True)
    assert (tombstone["actor"], tombstone["reason"]) == (service.actor, "personal data")
    listed = await call(client, "notebook", action="list")
    assert nb not in [n["id"] for n in listed.get("notebooks", [])]
    assert word not in stored_events(service, nb)
    assert (await refuse(client, "forget", notebook=nb, because="again"))["error_class"] == (
        "not_found"
    )
    # A notebook goes alone, and a field only with its notebook.
    for arguments, name in (
        ({"notebook": "x", "id": "m_1"}, "notebook"),
        ({"field": "name"}, "field"),
    ):
        body = await refuse(client, "forget", because="why", **arguments)
        assert (body["error_class"], body["field"]) == ("validation", name)


def _notebook_past_the_gate(service: Service, summary: str) -> str:
    """A notebook whose summary got in before the gate (an old version, an import)."""
    with service.store.write(service.workspace) as tx:
        nb = Notebook(new_id("nb"), service.workspace, "deploys", "2026-01-01T00:00:00.000000Z",
                      summary=summary)  # fmt: skip
        tx.put_notebook(nb)
        tx.append_event(Event(0, new_id("op"), nb.created_at, "user:old", "notebook.create",
                              "notebook", nb.id, nb.id, None, (), None, nb.to_dict()))  # fmt: skip
    return nb.id


def test_doctor_finds_a_notebook_secret_under_a_thousand_later_edits(service: Service) -> None:
    """Doctor reads every event of a notebook, not only the newest thousand."""
    nb = _notebook_past_the_gate(service, f"deploy with {token()}")
    with service.store.write(service.workspace) as tx:
        notebook = tx.get_notebook(nb)
        assert notebook is not None
        tx.put_notebook(notebook.replace(summary=None))  # the secret is only in the history now
        for n in range(1000):  # later edits, written directly: the gate is not what is tested
            tx.append_event(Event(0, new_id("op"), "2026-01-02T00:00:00.000000Z", "user:old",
                                  "notebook.edit", "notebook", nb, nb, None, (), None,
                                  {"tags": [[], [f"t{n}"]]}))  # fmt: skip
    [finding] = service.doctor()["secrets"]
    assert finding["notebook"] == nb and list(finding["fields"]) == ["summary"]


def test_doctor_advice_for_a_notebook_secret_erases_every_copy(
    db_path: Path, env: dict[str, str]
) -> None:
    """Through the CLI: run the fix doctor gives, and the secret is nowhere on disk."""
    secret = token()

    def cli(*args: str) -> Any:
        args = (sys.executable, "-m", "palimpsest", "--db", str(db_path), *args, "--json")
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout)

    cli("remember", "-n", "other", "-k", "fact", "Deploys run at noon")
    store = open_store(str(db_path))
    nb = _notebook_past_the_gate(Service(store), f"deploy with {secret}")
    store.close()
    report = cli("doctor")
    [finding] = report["secrets"]
    assert finding["notebook"] == nb and list(finding["fields"]) == ["summary"]
    assert secret not in json.dumps(report)
    assert finding["fix"]["tool"] == "forget"  # the tool call an agent makes
    fix = shlex.split(command_for(finding["fix"]))  # and the command a person types
    assert fix[:2] == ["palimpsest", "forget"]
    cli(*fix[1:])
    assert cli("doctor")["secrets"] == []
    assert files_holding(db_path.parent, secret) == []


# -- idempotency records ----------------------------------------------------------------------


async def test_idempotency_records_of_a_forgotten_memory_go_with_it(
    client: Client, service: Service
) -> None:
    word = secret_word()
    filed = await call(client, "remember", notebook="n", kind="fact",
                       text=f"Ana's phone is {word}", idempotency_key="file-ana")  # fmt: skip
    await call(client, "revise", id=filed["id"], append=" (mobile)", idempotency_key="fix-ana")
    kept = await call(client, "remember", notebook="n", kind="fact", text="Bob likes tea",
                      idempotency_key="file-bob")  # fmt: skip

    def record(op: str, key: str) -> object:
        with service.store.read(service.workspace) as tx:
            return tx.stored_response(service.actor, op, key)

    assert record("remember", "file-ana") is not None and record("revise", "fix-ana") is not None
    await call(client, "forget", id=filed["id"], because="personal data")
    assert record("remember", "file-ana") is None
    assert record("revise", "fix-ana") is None
    assert record("remember", "file-bob") is not None  # another memory's record stays
    again = await call(client, "remember", notebook="n", kind="fact", text="Bob likes tea",
                       idempotency_key="file-bob")  # fmt: skip
    assert again["replayed"] is True and again["id"] == kept["id"]


# -- PostgreSQL: pending until the rewrite ----------------------------------------------------

REWRITTEN = (
    "memory_versions", "events", "notebooks", "idempotency", "idempotency_targets",
    "search_terms",  # each term's document count: a forgotten word's row, until rewritten
)  # fmt: skip


def relation_files(url: str) -> list[Path]:
    """The files of the tables that held the text, their TOAST tables and every index."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")  # what is in shared buffers reaches the files
        row = conn.execute("SHOW data_directory").fetchone()
        assert row is not None
        data = Path(row[0])
        rows = conn.execute(
            """
            WITH t AS (SELECT oid, reltoastrelid FROM pg_class
                       WHERE relname = ANY(%s) AND relnamespace = 'public'::regnamespace),
                 r AS (SELECT oid FROM t UNION SELECT reltoastrelid FROM t WHERE reltoastrelid <> 0)
            SELECT pg_relation_filepath(oid) FROM r
            UNION SELECT pg_relation_filepath(indexrelid) FROM pg_index WHERE indrelid IN (SELECT oid FROM r)
            """,  # noqa: E501
            (list(REWRITTEN),),
        ).fetchall()
    found = []
    for (relative,) in rows:
        base = data / relative
        found += [p for p in base.parent.glob(base.name + "*") if p.is_file()]
    return found


def files_with(url: str, word: str) -> list[str]:
    patterns = forms(word)
    return sorted(p.name for p in relation_files(url) if any(x in p.read_bytes() for x in patterns))


@needs_postgres
def test_postgres_forget_is_pending_until_scrub_rewrites_the_files(env: dict[str, str]) -> None:
    """Through the CLI on the test server's default workspace (serve has no workspace option)."""
    assert POSTGRES_URL
    word = secret_word()

    def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        assert POSTGRES_URL
        command = (sys.executable, "-m", "palimpsest", "--db", POSTGRES_URL, *args)
        return subprocess.run(
            command, env=env, input=stdin, capture_output=True, text=True, timeout=120
        )

    def answer(*args: str) -> Any:
        done = cli(*args, "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout)

    memory = answer("remember", "-n", "people", "-k", "note", f"Ana's number is {word}",
                    "--title", f"Ana {word}", "--idempotency-key", f"k-{word}")["id"]  # fmt: skip
    answer("revise", memory, "--append", f" (also {word} at work)")
    assert files_with(POSTGRES_URL, word), "the text should be in the files before the forget"

    gone = answer("forget", memory, "--because", "personal data")
    assert gone["scrub_pending"] is True  # not erased yet, and the answer says so
    assert files_with(POSTGRES_URL, word), "VACUUM-able row versions still hold the bytes"
    report = answer("doctor")
    assert report["scrub_pending"] is True and memory in [p["id"] for p in report["pending_scrubs"]]
    started = cli("serve")  # stdin closed at once: it starts, reports, and ends
    assert "palimpsest scrub" in started.stderr
    retried = cli("forget", memory, "--because", "personal data", "--json")
    assert json.loads(retried.stdout)["error_class"] == "not_found"

    done = answer("scrub")
    assert set(REWRITTEN) <= set(done["locked_seconds"])
    assert all(seconds < 30 for seconds in done["locked_seconds"].values())
    assert files_with(POSTGRES_URL, word) == []
    report = answer("doctor")
    assert report["scrub_pending"] is False and report["pending_scrubs"] == []
    assert "palimpsest scrub" not in cli("serve").stderr


@needs_postgres
def test_postgres_scrub_keeps_every_write_made_while_it_runs(postgres_store: Store) -> None:
    """The rewrite copies tables while they stay in use: nothing written meanwhile is lost."""
    service = Service(postgres_store, workspace=f"test-{uuid.uuid4().hex[:12]}")
    word = secret_word()
    gone = service.remember(notebook="n", kind="note", text=f"Ana {word}")["id"]
    base = [service.remember(notebook="n", kind="fact", text=f"base {n}")["id"] for n in range(20)]
    service.forget(id=gone, because="personal data")
    stop = threading.Event()
    written: list[tuple[str, int, str]] = []

    def write() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            text = f"written meanwhile {n}"
            if n % 2:
                filed = service.remember(notebook="n", kind="fact", text=text)
                written.append((filed["id"], filed["version"], text))
            else:
                memory = base[n % len(base)]
                [result] = service.revise(id=memory, text=text)["results"]
                written.append((memory, result["version"], text))

    writer = threading.Thread(target=write)
    writer.start()
    try:
        done = postgres_store.rewrite()
    finally:
        stop.set()
        writer.join()
    assert written, "the writer should have written during the rewrite"
    assert max(done.locked_seconds.values()) < 5
    with postgres_store.read(service.workspace) as tx:
        for memory_id, version, text in written:
            versions = {v.version: v.memory for v in tx.memory_versions(memory_id)}
            kept = versions.get(version)
            assert kept is not None and kept.text == text, (memory_id, version)
    assert service.doctor()["pending_scrubs"] == []
    assert files_with(postgres_store.url, word) == []
