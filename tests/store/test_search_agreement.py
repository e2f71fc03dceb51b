"""SQLite and PostgreSQL find the same memories for the same words (issue 9).

Each case is a query and the memories it must find, asserted on both stores with the same
expectation: one table for both is what makes them agree. The cases are the classes where
SQLite's Porter tokenizer and PostgreSQL's English configuration disagreed: stems
(`deploy`/`deploi`), stopwords (PostgreSQL dropped them from its index), accents, case of
non-Latin letters, e-mail addresses and paths (PostgreSQL kept them whole), scripts whose
vowels are marks, numbers, ligatures.
"""

from __future__ import annotations

import shutil
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.service import Service
from palimpsest.store import Store, open_store
from palimpsest.store.migrations import migrations, statements
from palimpsest.store.terms import MAX_TERM, index_terms, unicode_words, words

from ..conftest import POSTGRES_URL, needs_postgres, own_postgres_schema

CORPUS = {
    "deploy": "We deploy on Fridays",
    "deploying": "deploying the app took an hour",
    "deployment": "The deployment failed at noon",
    "deployed": "We deployed twice",
    "café": "Lunch at the café on the corner",
    "cafe": "The cafe closes early",
    "naïve": "A naïve retry loop",
    "studies": "Three studies agree",
    "study": "One study disagrees",
    "fly": "A fly in the server room",
    "e-mail": "Send an e-mail to the team",
    "address": "Write to ops@example.com",
    "path": "Binaries live in /usr/local/bin",
    "snake": "Use snake_case names",
    "straße": "Die Straße ist lang",
    "cyrillic": "Москва большая",
    "devanagari": "हिन्दी भाषा सीखो",
    "stopwords": "It was there all along",
    "year": "Released in 2023",
    "version": "Version 3.5 shipped",
    "ligature": "ﬁle systems",
    "skies": "The skies are clear",
}

# query -> the CORPUS entries it finds, whichever store holds them.
CASES = {
    "deployment": {"deploy", "deploying", "deployment", "deployed"},
    "deploy": {"deploy", "deploying", "deployment", "deployed"},
    "Deploys": {"deploy", "deploying", "deployment", "deployed"},
    "café": {"café", "cafe"},
    "cafe": {"café", "cafe"},
    "naive": {"naïve"},
    "study": {"studies", "study"},
    "flies": {"fly"},
    "sky": {"skies"},
    "mail": {"e-mail"},
    "e-mail": {"e-mail"},
    "example": {"address"},
    "ops@example.com": {"address"},
    "bin": {"path"},
    "snake": {"snake"},
    "strasse": {"straße"},
    "Straße": {"straße"},
    "МОСКВА": {"cyrillic"},
    "москва": {"cyrillic"},
    "भाषा": {"devanagari"},
    "it was": {"stopwords"},  # only stopwords: then they count
    "2023": {"year"},
    "3.5": {"version"},
    "file": {"ligature"},
    "depl": set(),  # a word is found whole or by its stem, never by a prefix
}


@pytest.fixture
def filed(service: Service) -> dict[str, str]:
    """The corpus filed in one notebook: memory id -> corpus entry."""
    ids = {}
    for name, text in CORPUS.items():
        ids[service.remember(notebook="words", kind="note", text=text)["id"]] = name
    return ids


@pytest.mark.parametrize("query", CASES)
def test_a_query_finds_the_same_memories_on_every_store(
    service: Service, filed: dict[str, str], query: str
) -> None:
    hits = service.recall(query=query, notebook="words", limit=50)["hits"]
    assert {filed[hit["id"]] for hit in hits} == CASES[query]


def test_words_in_the_text_rank_above_the_title_above_why_and_tags(service: Service) -> None:
    def remember(**fields: object) -> str:
        answer = service.remember(notebook="birds", kind="note", **fields)
        return str(answer["id"])

    in_why = remember(text="A bird over the moor", why="kestrels hunt here")
    in_tags = remember(text="A bird over the hill", tags=["kestrels"])
    in_title = remember(text="A bird over the field", title="kestrels")
    in_text = remember(text="A kestrel over the marsh")
    ranked = [hit["id"] for hit in service.recall(query="kestrel", notebook="birds")["hits"]]
    assert ranked[:2] == [in_text, in_title]
    assert set(ranked[2:]) == {in_why, in_tags}


def test_a_long_memory_saying_a_word_twice_outranks_a_short_one_saying_it_once(
    service: Service,
) -> None:
    """Full text's best are re-ranked with BM25's b at 0.2 (store/bm25.py): FTS5's 0.75
    ranked the short memory first for its length alone."""
    for n in range(6):
        service.remember(notebook="birds", kind="note", text=f"filler words number {n}")
    service.remember(notebook="birds", kind="note", text="A kestrel overhead")
    long = service.remember(
        notebook="birds",
        kind="note",
        text="The kestrel we ringed last spring came back to the old barn by the river, and "
        "this morning the kestrel hovered for a long minute over the wet meadow below the "
        "ridge before it dropped",
    )["id"]
    hits = service.recall(query="kestrel", notebook="birds")["hits"]
    assert len(hits) == 2 and hits[0]["id"] == long


def test_a_tag_filter_narrows_a_search_by_stemmed_words(service: Service) -> None:
    tagged = service.remember(
        notebook="ops", kind="note", text="Roll back first", tags=["deploying-tips"]
    )["id"]
    service.remember(notebook="ops", kind="note", text="Roll back the deploy", tags=["other"])
    hits = service.recall(query="rolled", notebook="ops", tags=["deploying-tips"])["hits"]
    assert [hit["id"] for hit in hits] == [tagged]


# -- a store written by the previous release is indexed anew ------------------------------

FIXTURE = Path(__file__).parents[1] / "fixtures" / "store_before_003.db"
# Each finds its memory by the new rules only: SQLite's Porter index held `deploi`,
# PostgreSQL's English index no stopwords.
PREVIOUS = {
    "deploy": ("We deploy on Fridays", "deployment"),
    "cafe": ("Lunch at the café", "cafe"),
    "stopwords": ("It was there all along", "it was"),
}


def write_previous_rows(conn: Any, mark: str) -> None:
    """The rows of PREVIOUS as the release before migration 005 wrote them."""
    at = "2026-11-30T10:00:00.000000Z"
    run = lambda sql, args=(): conn.execute(sql.replace("?", mark), args)  # noqa: E731
    run("INSERT INTO workspaces VALUES ('default', ?)", (at,))
    run("INSERT INTO notebooks(id, workspace, name, created_at) VALUES ('nb_1', 'default', "
        "'cafe', ?)", (at,))  # fmt: skip
    for name, (text, _) in PREVIOUS.items():
        memory = f"m_{name}"
        seq = run(
            "INSERT INTO events(workspace, op_id, at, actor, op, target_type, target_id, "
            "notebook_id, version, fields) VALUES ('default', 'op_1', ?, 'user:local', "
            "'remember', 'memory', ?, 'nb_1', 1, '[\"created\"]') RETURNING seq",
            (at, memory),
        ).fetchone()[0]
        run("INSERT INTO memories(id, workspace) VALUES (?, 'default')", (memory,))
        run(
            "INSERT INTO memory_versions(memory_id, version, workspace, from_seq, notebook_id, "
            "kind, status, text, norm_text, tags, tags_text, recorded_at, owner, author, "
            "anchors) VALUES (?, 1, 'default', ?, 'nb_1', 'fact', 'active', ?, ?, '[]', '', ?, "
            "'user:local', 'user:local', '[]')",
            (memory, seq, text, text.casefold(), at),
        )


def apply_migrations_before(conn: Any, backend: str, number: int) -> None:
    for found, script in migrations(backend):
        if found < number:
            for statement in statements(script):
                conn.execute(statement if backend == "sqlite" else statement.encode())
            if backend == "sqlite":
                conn.execute(f"PRAGMA user_version = {found}")
            else:
                conn.execute("INSERT INTO palimpsest_schema VALUES (%s)", (found,))


def found_by_new_rules(url: str) -> Service:
    """Open the store (which migrates it) and check each memory is found by the new rules;
    then forget one, which must find the terms the migration indexed."""
    service = Service(open_store(url), workspace="default")
    for name, (_, query) in PREVIOUS.items():
        hits = service.recall(query=query, notebook="cafe")["hits"]
        assert [hit["id"] for hit in hits] == [f"m_{name}"], query
    service.forget(id="m_deploy", because="a test of the index after migration")
    assert service.recall(query="deploy", notebook="cafe")["hits"] == []
    return service


def test_a_sqlite_store_of_the_previous_release_is_indexed_by_the_new_rules(
    db_path: Path,
) -> None:
    with sqlite3.connect(db_path, isolation_level=None) as raw:
        apply_migrations_before(raw, "sqlite", 5)
        write_previous_rows(raw, "?")
        raw.execute("INSERT INTO memory_fts(memory_fts) VALUES ('rebuild')")  # as it indexed
    raw.close()
    service = found_by_new_rules(str(db_path))
    service.store.close()
    with sqlite3.connect(db_path) as raw:
        raw.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, memory_fts, 'row')")
        terms = {row[0] for row in raw.execute("SELECT term FROM temp.v")}
    raw.close()
    # The forgotten memory's terms left the index: its delete named the indexed terms.
    assert terms == {"lunch", "at", "the", "cafe", "it", "was", "there", "all", "along", "nb", "1"}


def test_the_release_before_003_store_is_indexed_by_the_new_rules(tmp_path: Path) -> None:
    db = tmp_path / "before.db"
    shutil.copy(FIXTURE, db)
    store = open_store(str(db))
    try:
        # Porter indexed `abbey` as `abbei`; the Snowball stem is `abbey`.
        hits = Service(store).recall(query="abbeys")["hits"]
        assert [hit["text"] for hit in hits] == ["The abbey was founded"]
    finally:
        store.close()


@pytest.fixture
def previous_postgres_url() -> Iterator[str]:
    """A PostgreSQL schema of this test's own, at the schema before 006, with past rows."""
    with own_postgres_schema("before006") as schema:
        with psycopg.connect(schema.url) as conn:
            conn.execute("CREATE TABLE palimpsest_schema (version INTEGER NOT NULL)")
            apply_migrations_before(conn, "postgres", 6)
            write_previous_rows(conn, "%s")
        yield schema.url


@needs_postgres
def test_a_postgres_store_of_the_previous_release_is_indexed_by_the_new_rules(
    previous_postgres_url: str,
) -> None:
    service = found_by_new_rules(previous_postgres_url)
    service.store.close()
    with psycopg.connect(previous_postgres_url) as conn:
        rows = {
            row[0]: row[1:]
            for row in conn.execute(
                "SELECT memory_id, search::text, search_counts, search_length FROM memory_versions"
            )
        }
    # Forget emptied the columns the store now writes: they hold the memory's words.
    assert rows["m_deploy"] == (None, None, None)
    assert rows["m_stopwords"] == (
        "'all':4A 'along':5A 'it':1A 'there':3A 'was':2A",
        {"it": 1.0, "was": 1.0, "there": 1.0, "all": 1.0, "along": 1.0},
        7,  # five words, and the notebook id's two (nb, 1) as SQLite counts them
    )


RANKED = [
    "Caroline: I went to the LGBTQ support group yesterday",
    "Caroline: the support group meets on Tuesdays",
    "Melanie: I painted a sunrise over the lake",
    "Melanie: we went camping with the kids at the lake",
    "Caroline: I am researching adoption agencies",
    "Melanie: the kids loved the pottery class",
    "Caroline: my friends gave me a lot of support when I transitioned",
    "Melanie: running helps me clear my head",
    "Caroline: I want to become a counselor to support trans youth",
    "Melanie: painting and running are my ways to relax",
]
QUESTIONS = [
    "When did Caroline go to the LGBTQ support group?",
    "What did Melanie paint?",
    "Where did Melanie go camping with the kids?",
    "What career does Caroline want to pursue?",
    "How does Melanie relax?",
]


@needs_postgres
def test_both_stores_rank_the_same_memories_in_the_same_order(db_path: Path) -> None:
    """Both rank by BM25 with the same statistics: the same hits come in the same order."""
    assert POSTGRES_URL
    answers = []
    for store in (open_store(str(db_path)), open_store(POSTGRES_URL)):
        service = Service(store, workspace=f"rank-{uuid.uuid4().hex[:12]}")
        ids = {service.remember(notebook="talk", kind="note", text=t)["id"]: t for t in RANKED}
        answers.append(
            [[ids[hit["id"]] for hit in service.recall(query=q)["hits"]] for q in QUESTIONS]
        )
        store.close()
    assert answers[0] == answers[1]


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_plain_ascii_text_makes_the_same_words_by_the_short_way(text: str) -> None:
    assert words(text) == unicode_words(text)


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=20))
def test_a_word_ending_in_a_digit_is_indexed_as_the_stemmer_would_make_it(word: str) -> None:
    from snowballstemmer.english_stemmer import EnglishStemmer  # type: ignore[import-untyped]

    assert index_terms(word + "7") == [EnglishStemmer().stemWord(word + "7")[:MAX_TERM]]


@needs_postgres
def test_postgres_keeps_its_search_statistics_through_every_write(postgres_store: Store) -> None:
    """The counts BM25 ranks by follow remember, revise, and forget of a version and of a
    memory: what the writers keep equals a count of the rows."""
    workspace = f"stats-{uuid.uuid4().hex[:12]}"
    service = Service(postgres_store, workspace=workspace)
    kept = service.remember(notebook="n", kind="fact", text="The pool holds twenty")["id"]
    gone = service.remember(notebook="n", kind="fact", text="The cache is cold", title="cache")
    service.revise(id=kept, text="The pool holds thirty connections")
    service.revise(id=kept, append=" at most")
    service.forget(id=kept, version=2, because="a test of the statistics")
    service.forget(id=gone["id"], because="a test of the statistics")
    with psycopg.connect(postgres_store.url) as conn:
        kept_stats = conn.execute(
            "SELECT versions, terms FROM search_stats WHERE workspace = %s", (workspace,)
        ).fetchone()
        counted = conn.execute(
            "SELECT count(*), sum(search_length) FROM memory_versions "
            "WHERE workspace = %s AND scrubbed = 0",
            (workspace,),
        ).fetchone()
    assert kept_stats == counted
    assert counted is not None and counted[0] == 2  # versions 1 and 3 of the kept memory
