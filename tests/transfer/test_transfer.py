"""Export and import (issue 13): a workspace to a file and back, on both stores.

A round trip (export, import into a fresh store, export again) gives the same lines but
the header's export time; a second import changes nothing; into a workspace that holds
memories the file's state is filed by the importer, naming its source; a refused memory
(a secret, a conflict, a tombstone here) is reported by line and field and the rest goes in.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from palimpsest.domain.errors import Forbidden, NotFound, PalimpsestError, ValidationError
from palimpsest.service import Service
from palimpsest.service.roles import Principal
from palimpsest.store import EventFilter, Store, open_store

from ..conftest import POSTGRES_URL, own_postgres_schema
from ..memory.test_copy import picture

SECRET = "AKIA" + "Q3EGRJ7PLXK2M4NB"  # an AWS access key id's shape (made up)


def everything(service: Service) -> dict[str, str]:
    """A workspace with every kind of record: versions, a retirement, a revert, a forget
    (whole and of one version), a move, links, an open and a ruled dispute, a setting
    and a user."""
    ticks = itertools.count()
    service.clock = lambda: stamp(next(ticks))
    service.create_notebook(name="web", domain="apps", summary="the shop")
    remember = service.remember
    a = remember(notebook="web", kind="decision", text="We use Stripe", key="pay", tags=["money"])[
        "id"
    ]
    b = remember(notebook="web", kind="fact", text="Webhooks at /hooks")["id"]
    service.revise(id=a, append="for payments")
    service.revert(id=a, version=1, because="the short text was right")
    service.link(source=a, target=b, type="depends_on")
    service.revise(id=b, status="superseded", note="moved to /v2")
    gone = remember(notebook="web", kind="note", text="Ana's phone is 555 0101")["id"]
    service.forget(id=gone, because="personal data")
    service.revise(id=a, append="and refunds")
    service.forget(id=a, version=2, because="a mistake in v2")
    moved = remember(notebook="web", kind="pattern", text="Retry with backoff")["id"]
    service.revise(id=moved, move_to="ops")
    c = remember(notebook="ops", kind="fact", text="Refunds take five days")["id"]
    d = remember(notebook="ops", kind="fact", text="Refunds take ten days")["id"]
    e = remember(notebook="ops", kind="fact", text="The queue holds 100 jobs")["id"]
    f = remember(notebook="ops", kind="fact", text="The queue holds 200 jobs")["id"]
    service.dispute(action="open", ids=[c, d], reason="which is it")
    ruled = service.dispute(action="open", ids=[e, f], reason="the size")["id"]
    service.dispute(action="rule", dispute=ruled, holds=f, reason="the config says 200")
    service.change_settings(changes={"freshness_days.fact": 30}, because="facts age fast here")
    service.add_user(name="vic", role="viewer")
    return {"a": a, "b": b, "gone": gone, "moved": moved, "c": c, "e": e}


def stamp(tick: int) -> str:
    return f"2026-01-01T00:{tick // 60:02d}:{tick % 60:02d}.000000Z"


def export(service: Service, path: Path, **options: Any) -> dict[str, Any]:
    with path.open("w", encoding="utf-8") as out:
        return service.export(out, **options)


def canonical(path: Path) -> str:
    """The file's hash, export time aside (the one field a round trip changes)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0])
    del head["exported_at"], head["workspace"]  # the restored workspace keeps its own id
    return hashlib.sha256(
        "\n".join([json.dumps(head, sort_keys=True), *lines[1:]]).encode()
    ).hexdigest()


@contextmanager
def fresh_stores(tmp_path: Path) -> Iterator[list[Store]]:
    """A fresh SQLite file, and a fresh PostgreSQL schema when the tests have a server."""
    with own_postgres_schema("transfer") if POSTGRES_URL else _nothing() as schema:
        stores = [open_store(str(tmp_path / "fresh.db"))]
        if schema is not None:
            stores.append(open_store(schema.url))
        try:
            yield stores
        finally:
            for store in stores:
                store.close()


@contextmanager
def _nothing() -> Iterator[None]:
    yield None


def test_a_round_trip_through_each_store_gives_the_same_file(
    service: Service, tmp_path: Path
) -> None:
    everything(service)
    first = tmp_path / "first.jsonl"
    counts = export(service, first)["counts"]
    assert counts["memories"] == 8 and counts["disputes"] >= 2 and counts["users"] == 1
    with fresh_stores(tmp_path) as stores:
        for number, store in enumerate(stores):
            restored = Service(store, workspace=service.workspace)  # rows carry it
            answer = restored.import_file(first)
            assert answer["mode"] == "restore" and "refused" not in answer
            again = tmp_path / f"again-{number}.jsonl"
            export(restored, again)
            assert canonical(again) == canonical(first)
            # What a user sees is the same too: events with actors and times, versions,
            # tombstones, links, notebooks and a past state.
            assert picture(store, service.workspace) == picture(service.store, service.workspace)


def test_importing_the_same_file_twice_changes_nothing(service: Service, tmp_path: Path) -> None:
    everything(service)
    file = tmp_path / "w.jsonl"
    export(service, file)
    with fresh_stores(tmp_path) as stores:
        target = Service(stores[0])
        target.import_file(file)
        with stores[0].read("default") as tx:
            before = len(tx.events(EventFilter(limit=10_000)))
        answer = target.import_file(file)
        assert answer["mode"] == "merge"
        assert answer["counts"]["unchanged"] == 7  # the forgotten one is not brought back
        assert answer["counts"]["forgotten_in_source"] == 1
        assert "imported" not in answer["counts"] and "refused" not in answer
        with stores[0].read("default") as tx:
            assert len(tx.events(EventFilter(limit=10_000))) == before


def test_into_a_workspace_that_holds_memories_the_importer_files_them(
    service: Service, tmp_path: Path
) -> None:
    ids = everything(service)
    file = tmp_path / "w.jsonl"
    export(service, file)
    with fresh_stores(tmp_path) as stores:
        target = Service(stores[0], actor="user:ines")
        target.remember(notebook="mine", kind="fact", text="Already here")
        answer = target.import_file(file)
        assert answer["mode"] == "merge" and answer["counts"]["imported"] == 7
        links = [t for t in file.read_text(encoding="utf-8").splitlines() if '"record":"link"' in t]
        assert answer["counts"]["links"] == len(links) == 2  # depends_on, and the ruling's
        history = target.history(id=ids["a"])["events"]
        # No forged history: one import event by the importer, naming the file and line.
        first = history[0]
        assert (first["op"], first["actor"]) == ("import", "user:ines")
        assert first["data"]["source"]["file"] == "w.jsonl"
        assert first["data"]["source"]["where"].startswith("line ")
        shown = target.inspect(id=ids["a"])["memory"]
        assert shown["text"] == "We use Stripe and refunds" and shown["author"] == "user:local"
        assert target.inspect(id=ids["b"])["memory"]["status"] == "superseded"
        assert target.inspect(id=ids["moved"])["memory"]["notebook"] == "ops"


def test_a_conflict_and_a_tombstone_are_reported_and_the_rest_goes_in(
    service: Service, tmp_path: Path
) -> None:
    ids = everything(service)
    file = tmp_path / "w.jsonl"
    export(service, file)
    with fresh_stores(tmp_path) as stores:
        target = Service(stores[0])
        target.import_file(file)
        target.revise(id=ids["c"], append="in the EU")  # the same id, other content now
        target.forget(id=ids["e"], because="wrong")
        answer = target.import_file(file)
        conflicts = {entry["id"]: entry for entry in answer["conflicts"]}
        assert conflicts[ids["c"]]["error_class"] == "conflict"
        assert conflicts[ids["c"]]["where"].startswith("line ")
        refused = {entry["id"]: entry for entry in answer["refused"]}
        assert "forgotten" in refused[ids["e"]]["message"]
        assert target.inspect(id=ids["c"])["memory"]["text"].endswith("in the EU")
        assert target.inspect(id=ids["e"]).get("memory") is None
        assert answer["counts"]["unchanged"] == 5


def secret_in(file: Path, memory_id: str) -> Path:
    """The file with a secret pasted into the current text of `memory_id`."""
    out = file.with_name("secret.jsonl")
    lines = file.read_text(encoding="utf-8").splitlines()
    for index, text in enumerate(lines):
        record = json.loads(text)
        if record.get("memory_id") == memory_id and record.get("to_seq") is None:
            record["text"] += f" key {SECRET}"
            lines[index] = json.dumps(record)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@pytest.mark.parametrize("into", ["empty", "holding"])
def test_a_secret_refuses_its_memory_whole_and_is_never_echoed(
    service: Service, tmp_path: Path, into: str
) -> None:
    ids = everything(service)
    file = tmp_path / "w.jsonl"
    export(service, file)
    bad = secret_in(file, ids["c"])
    with fresh_stores(tmp_path) as stores:
        target = Service(stores[0])
        if into == "holding":
            target.remember(notebook="mine", kind="fact", text="Already here")
        answer = target.import_file(bad)
        assert SECRET not in json.dumps(answer)
        [refusal] = answer["refused"]
        assert (refusal["id"], refusal["field"]) == (ids["c"], "text")
        assert refusal["where"].startswith("line ")
        assert "secret" in refusal["message"]
        # Refused whole: no event, version or dispute of it; the others are here.
        with pytest.raises(NotFound):
            target.inspect(id=ids["c"])
        with stores[0].read("default") as tx:
            assert not [e for e in tx.events(EventFilter(limit=10_000)) if e.target_id == ids["c"]]
        assert target.inspect(id=ids["a"])["memory"]["text"] == "We use Stripe and refunds"
        for file_of_store in Path(stores[0].url).parent.glob("fresh.db*"):
            assert SECRET.encode() not in file_of_store.read_bytes()


def test_strict_imports_nothing_when_one_record_is_refused(
    service: Service, tmp_path: Path
) -> None:
    ids = everything(service)
    file = tmp_path / "w.jsonl"
    export(service, file)
    bad = secret_in(file, ids["c"])
    with fresh_stores(tmp_path) as stores:
        for target in (Service(stores[0]), Service(stores[0], workspace="busy")):
            if target.workspace == "busy":
                target.remember(notebook="mine", kind="fact", text="Already here")
            with stores[0].read(target.workspace) as tx:
                before = len(tx.events(EventFilter(limit=10_000)))
            with pytest.raises(ValidationError) as refused:
                target.import_file(bad, strict=True)
            assert SECRET not in refused.value.message and "strict" in refused.value.message
            with stores[0].read(target.workspace) as tx:
                assert len(tx.events(EventFilter(limit=10_000))) == before


def test_a_dry_run_says_what_would_happen_and_changes_nothing(
    service: Service, tmp_path: Path
) -> None:
    everything(service)
    file = tmp_path / "w.jsonl"
    export(service, file)
    with fresh_stores(tmp_path) as stores:
        target = Service(stores[0])
        dry = target.import_file(file, dry_run=True)
        assert dry["dry_run"] and dry["mode"] == "restore"
        with stores[0].read("default") as tx:
            assert tx.is_empty()
        done = target.import_file(file)
        assert dry["counts"] == done["counts"]
        target.remember(notebook="mine", kind="fact", text="Already here")
        merge = target.import_file(file, dry_run=True)
        assert merge["mode"] == "merge" and merge["counts"]["unchanged"] == 7


def test_a_notebook_alone_exports_its_memories_and_their_history(
    service: Service, tmp_path: Path
) -> None:
    ids = everything(service)
    file = tmp_path / "ops.jsonl"
    answer = export(service, file, notebooks=["ops"])
    assert answer["notebooks"] == ["ops"]
    records = [json.loads(t) for t in file.read_text(encoding="utf-8").splitlines()]
    memories = {r["id"] for r in records if r["record"] == "memory"}
    assert ids["c"] in memories and ids["moved"] in memories and ids["a"] not in memories
    assert not [r for r in records if r["record"] in ("user", "setting")]
    with fresh_stores(tmp_path) as stores:
        target = Service(stores[0])
        assert "refused" not in target.import_file(file)
        assert target.history(id=ids["moved"])["events"][0]["op"] == "remember"


def test_a_damaged_file_is_refused_before_anything_is_written(
    service: Service, tmp_path: Path
) -> None:
    everything(service)
    file = tmp_path / "w.jsonl"
    export(service, file)
    lines = file.read_text(encoding="utf-8").splitlines()
    cases = {
        "no header": lines[1:],
        "a future version": [lines[0].replace('"version":1', '"version":9'), *lines[1:]],
        "a line that is not JSON": [*lines[:3], "{not json", *lines[3:]],
    }
    with fresh_stores(tmp_path) as stores:
        target = Service(stores[0])
        for name, content in cases.items():
            bad = tmp_path / "bad.jsonl"
            bad.write_text("\n".join(content) + "\n", encoding="utf-8")
            with pytest.raises(ValidationError, match=r"file|Palimpsest|damaged"):
                target.import_file(bad)
            with stores[0].read("default") as tx:
                assert tx.is_empty(), name


def test_only_an_owner_exports_or_imports(service: Service, tmp_path: Path) -> None:
    everything(service)
    file = tmp_path / "w.jsonl"
    export(service, file)
    for role in ("viewer", "editor", "agent"):
        someone = service.acting_as(Principal(f"user:{role}", role))
        with pytest.raises(Forbidden):
            export(someone, tmp_path / "no.jsonl")
        with pytest.raises(Forbidden):
            someone.import_file(file)


def test_the_cli_exports_to_a_file_and_imports_it(tmp_path: Path, env: dict[str, str]) -> None:
    source, target = tmp_path / "a.db", tmp_path / "b.db"
    run = [sys.executable, "-m", "palimpsest"]

    def cli(db: Path, *args: str) -> dict[str, Any]:
        done = subprocess.run([*run, "--db", str(db), *args, "--json"], env=env,
                              capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 0, done.stderr
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    cli(source, "remember", "--notebook", "web", "--kind", "fact", "Webhooks live at /hooks")
    out = tmp_path / "w.jsonl"
    assert cli(source, "export", str(out))["counts"]["memories"] == 1
    assert (out.stat().st_mode & 0o777) == 0o600  # it holds every memory: yours alone
    assert not list(tmp_path.glob(".w.jsonl.*"))
    assert cli(target, "import", str(out), "--dry-run")["dry_run"] is True
    assert cli(target, "import", str(out))["counts"]["memories"] == 1
    assert cli(target, "recall", "webhooks")["hits"]


def test_a_file_cut_short_or_naming_what_it_lacks_is_refused(
    service: Service, tmp_path: Path
) -> None:
    ids = everything(service)
    file = tmp_path / "w.jsonl"
    export(service, file)
    lines = file.read_text(encoding="utf-8").splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[: len(lines) // 2]) + "\n", encoding="utf-8")
    with fresh_stores(tmp_path) as stores:
        target = Service(stores[0])
        with pytest.raises(ValidationError, match="cut short"):
            target.import_file(cut)
        # A version of a memory the file does not hold (its memory line swapped for another
        # memory's, so the counts still agree): that version's memory is refused, the rest
        # restored, and the store is whole.
        orphan = [t.replace(ids["c"], "m_" + "9" * 20) if '"record":"memory"' in t else t
                  for t in lines]  # fmt: skip
        bad = tmp_path / "orphan.jsonl"
        bad.write_text("\n".join(orphan) + "\n", encoding="utf-8")
        answer = target.import_file(bad)
        assert {entry.get("id") for entry in answer["refused"]} >= {ids["c"]}
        assert target.inspect(id=ids["a"])["memory"]["kind"] == "decision"
        with pytest.raises(NotFound):
            target.inspect(id=ids["c"])


def test_two_restores_at_once_land_the_file_once(service: Service, tmp_path: Path) -> None:
    everything(service)
    file = tmp_path / "w.jsonl"
    export(service, file)
    target = tmp_path / "both.db"
    open_store(str(target)).close()
    answers: list[Any] = []

    def restore() -> None:
        store = open_store(str(target))
        try:
            answers.append(Service(store).import_file(file))
        except PalimpsestError as exc:
            answers.append(exc)
        finally:
            store.close()

    workers = [threading.Thread(target=restore) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert all(isinstance(a, dict) or a.error_class == "conflict" for a in answers), answers
    again = tmp_path / "again.jsonl"
    store = open_store(str(target))
    try:
        export(Service(store), again)
    finally:
        store.close()
    assert canonical(again) == canonical(file)


def test_a_merge_killed_half_way_finishes_when_run_again(
    tmp_path: Path, env: dict[str, str]
) -> None:
    source = Service(open_store(str(tmp_path / "source.db")))
    for start in range(0, 3000, 500):
        items = [{"kind": "fact", "text": f"Service {n} answers on port {9000 + n}"}
                 for n in range(start, start + 500)]  # fmt: skip
        source.remember(items=items, notebook="ports")
    file = tmp_path / "w.jsonl"
    export(source, file)
    source.close()
    target = tmp_path / "target.db"
    mine = Service(open_store(str(target)))
    mine.remember(notebook="mine", kind="fact", text="Mine")
    mine.close()
    command = [sys.executable, "-m", "palimpsest", "--db", str(target), "import", str(file)]
    running = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    # Killed while the test holds the store's write lock, having seen a batch committed:
    # no batch can land between the look and the kill, so the kill is half way for sure
    # (a look then a kill without the lock could see the last batches land in between).
    with contextlib.closing(sqlite3.connect(target, timeout=60, isolation_level=None)) as lock:
        deadline = time.monotonic() + 60
        while True:
            lock.execute("BEGIN IMMEDIATE")  # waits while a batch is being written
            if count_imported(lock) > 0:
                break
            lock.execute("ROLLBACK")
            assert time.monotonic() < deadline, "no batch was committed within 60 s"
            time.sleep(0.02)  # the importer's turn at the lock
        running.send_signal(signal.SIGKILL)  # after a batch committed, before the last
        running.wait()
        lock.execute("ROLLBACK")
    assert 0 < imported(target) < 3000
    done = subprocess.run([*command, "--json"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["counts"]["imported"] + answer["counts"]["unchanged"] == 3000
    assert imported(target) == 3000  # each memory once


def imported(db: Path) -> int:
    """The memories an import filed in the SQLite file `db` so far."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return count_imported(conn)


def count_imported(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM events WHERE op = 'import'").fetchone()[0])
