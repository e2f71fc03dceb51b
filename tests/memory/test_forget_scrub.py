"""Forget leaves no trace: DESIGN section 2, "forget", checked on the bytes of the files.

A distinctive word goes into a memory (in two versions), is shown to be on disk, and after
`forget` must be found nowhere: not in the database file, not in its WAL or shared-memory
side files, not in any other file of the folder, and not in the full-text vocabulary.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from palimpsest.domain.errors import NotFound
from palimpsest.service import Service
from palimpsest.store import Store, open_store

from ..mcp_helpers import versions_whole


def secret_word() -> str:
    # Lowercase letters and digits ending in a digit: the porter stemmer leaves it whole,
    # so the word is its own term in the FTS vocabulary. Short enough not to look like a
    # credential to a secret detector.
    return f"zqxj{uuid.uuid4().hex[:10]}7"


def files_holding(folder: Path, needle: bytes) -> list[str]:
    """Every file of `folder` (the db, -wal, -shm, anything else) that contains `needle`."""
    return sorted(p.name for p in folder.iterdir() if p.is_file() and needle in p.read_bytes())


def table_files_holding(url: str, table: str, word: str) -> list[str]:
    """The files of PostgreSQL's `table` (heap, TOAST, indexes) that hold `word`."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        row = conn.execute(
            "SELECT current_setting('data_directory'), pg_relation_filepath(%s)", (table,)
        ).fetchone()
        assert row is not None
    base = Path(row[0]) / row[1]
    return [p.name for p in base.parent.glob(base.name + "*") if word.encode() in p.read_bytes()]


def on_disk(folder: Path, word: str) -> list[str]:
    """Files holding the word, or its tail (a prefix-compressed FTS term keeps only that)."""
    found = set(files_holding(folder, word.encode()))
    found |= set(files_holding(folder, word[4:].encode()))
    return sorted(found)


def in_vocabulary(db_path: Path, word: str) -> bool:
    """Whether the FTS index still lists `word` as a term, read through a second connection."""
    conn = sqlite3.connect(db_path)
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, memory_fts, 'row')")
        row = conn.execute("SELECT doc, cnt FROM temp.v WHERE term = ?", (word,)).fetchone()
        return row is not None
    finally:
        conn.close()


def search_hits(service: Service, word: str) -> list[str]:
    hits = service.recall(query=word, include_retired=True, limit=50)["hits"]
    return [hit["id"] for hit in hits]


def fill(service: Service, count: int = 120, start: int = 0) -> list[str]:
    """Ordinary memories around the secret, so it shares pages and FTS segments with them."""
    ids = []
    for n in range(start, start + count):
        text = f"Deploy step {n} runs the migration for service shard{n % 7} before traffic"
        ids.append(
            service.remember(notebook=f"nb{n % 3}", kind="fact", text=text, tags=["ops"])["id"]
        )
    return ids


def assert_no_text_in_history(service: Service, memory_id: str, *words: str) -> None:
    events = service.history(id=memory_id)["events"]
    assert events, "the history of a forgotten memory keeps its events"
    for event in events:
        dumped = repr(event)
        for word in words:
            assert word not in dumped, event


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    """SQLite only: these tests read the database file's bytes and SQLite's FTS5 vocabulary."""
    opened = open_store(str(db_path))
    yield opened
    opened.close()


@pytest.fixture
def folder(db_path: Path) -> Path:
    return db_path.parent


@pytest.mark.parametrize("checkpointed", [False, True], ids=["in-wal", "in-db-file"])
def test_forget_removes_the_word_from_every_file_and_the_index(
    service: Service, db_path: Path, folder: Path, checkpointed: bool
) -> None:
    word = secret_word()
    before = fill(service)
    # The word in every indexed field: text and title (FTS), tags (FTS), key (b-tree indexes).
    mid = service.remember(
        notebook="nb1",
        kind="note",
        text=f"The staging password hint was {word} until rotation",
        title=f"Staging hint {word}",
        why=f"so that {word} can be found again",
        tags=["ops", word],
        key=f"hint-{word}",
    )["id"]
    service.revise(id=mid, append=f" (hint {word} repeated in runbook)")
    after = fill(service, 40, start=1000)
    if checkpointed:
        # Fold the WAL into the main file, so the word sits in the database file's pages.
        assert service.store.scrub()
        assert files_holding(folder, word.encode()) == [db_path.name]

    # The test can fail: the word is on disk and indexed before the forget.
    assert on_disk(folder, word), "the secret should be on disk before forget"
    assert in_vocabulary(db_path, word)
    assert search_hits(service, word) == [mid]
    inspected = service.inspect(id=mid)
    assert [v["version"] for v in inspected["versions"]] == [1, 2]
    assert all(word in v["text"] for v in versions_whole(inspected).values() if v)

    answer = service.forget(id=mid, because="a credential hint pasted by mistake")
    assert answer["results"][0]["forgotten"] is True
    assert answer["scrub_pending"] is False

    assert on_disk(folder, word) == []
    assert not in_vocabulary(db_path, word)
    assert search_hits(service, word) == []
    # Only the tombstone remains; the history keeps its events without the text.
    tombstone = service.inspect(id=mid)["tombstone"]
    assert tombstone["id"] == mid
    assert tombstone["reason"] == "a credential hint pasted by mistake"
    assert_no_text_in_history(service, mid, word, "staging password", "Staging hint")
    ops = [e["op"] for e in service.history(id=mid)["events"]]
    assert ops == ["remember", "revise", "forget"]
    with pytest.raises(NotFound):
        service.revise(id=mid, append=" again")
    # The neighbours are untouched and still searchable.
    assert len(service.recall(query="migration", limit=200)["hits"]) == len(before + after)


def test_forget_one_version_removes_only_that_version(
    service: Service, db_path: Path, folder: Path
) -> None:
    word = secret_word()
    fill(service)
    mid = service.remember(
        notebook="nb2", kind="fact", text="The cache warms from the replica at startup"
    )["id"]
    service.revise(id=mid, append=f" using token {word} for the replica login")
    service.revise(id=mid, remove=f" using token {word} for the replica login")
    fill(service, 40, start=1000)

    versions = versions_whole(service.inspect(id=mid))
    assert [word in (v or {})["text"] for v in versions.values()] == [False, True, False]
    assert on_disk(folder, word), "the secret should be on disk before forget"
    assert in_vocabulary(db_path, word)

    answer = service.forget(id=mid, version=2, because="a token pasted into version 2")
    assert answer["scrub_pending"] is False

    assert on_disk(folder, word) == []
    assert not in_vocabulary(db_path, word)
    assert search_hits(service, word) == []
    view: dict[str, Any] = service.inspect(id=mid)
    assert view["memory"]["text"] == "The cache warms from the replica at startup"
    assert view["memory"]["version"] == 3
    by_version = {v["version"]: v for v in view["versions"]}
    whole = versions_whole(view)
    assert whole[1] and whole[1]["text"] == "The cache warms from the replica at startup"
    assert by_version[2].get("scrubbed") is True and "changed" not in by_version[2]
    assert whole[3] and whole[3]["text"] == "The cache warms from the replica at startup"
    assert "text" not in by_version[3]["changed"]  # the same text as version 1: not repeated
    assert_no_text_in_history(service, mid, word)
    # The memory itself lives on: found by its other words, revisable.
    assert mid in search_hits(service, "cache replica startup")
    service.revise(id=mid, append=" and logs it")


def test_idempotent_answers_keep_no_copy_of_forgotten_text(service: Service, folder: Path) -> None:
    word = secret_word()
    text = f"Ana's phone is {word}"
    a = service.remember(notebook="n", kind="fact", text=text)["id"]
    b = service.remember(notebook="n", kind="note", text=text)["id"]
    # Two memories share the text, so it comes back in `unmatched`: the stored answer
    # for the idempotency key must not keep it.
    answer = service.revise(texts=[text], notebook="n", tags=["x"], idempotency_key="k")
    assert answer["unmatched"]
    service.forget(ids=[a, b], because="personal data")
    assert on_disk(folder, word) == []


def test_forget_in_another_workspace_leaves_the_word_in_no_file(
    service: Service, folder: Path
) -> None:
    """Each workspace has a full-text table of its own: a forget scrubs that one too."""
    lab = service.in_workspace(service.create_workspace(name="lab")["workspace"]["id"])
    word = secret_word()
    fill(lab)
    mid = lab.remember(notebook="nb1", kind="note", text=f"The hint was {word} once")["id"]
    fill(lab, 40, start=1000)
    assert on_disk(folder, word) and search_hits(lab, word) == [mid]
    assert search_hits(service, word) == []  # and only there
    assert lab.forget(id=mid, because="a hint pasted by mistake")["scrub_pending"] is False
    assert on_disk(folder, word) == [] and search_hits(lab, word) == []
