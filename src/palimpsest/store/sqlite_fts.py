"""SQLite's full-text tables: a contentless FTS5 table per workspace, of store/terms.py's
terms, and the match expressions that query it.

Each workspace has a table of its own, so that BM25's counts (how many versions hold a
word, how long they are) are its own: a shared table would let a score tell how common a
word is in other workspaces. `default`'s is memory_fts, made by migrations; another's is
made by its first write.
"""

from __future__ import annotations

import hashlib
import sqlite3

from .terms import index_text
from .values import SearchQuery

# As 005_search_terms.sql makes memory_fts, `default`'s.
FTS_SCHEMA = "text, title, why, tags_text, notebook_id, content = '', tokenize = 'ascii'"
RANK = "bm25(1.0, 0.6, 0.4, 0.4, 0.0)"


def fts_table(workspace: str) -> str:
    """The full-text table of `workspace` (a name SQL can take, whatever the id holds)."""
    if workspace == "default":
        return "memory_fts"
    return "memory_fts_" + hashlib.sha256(workspace.encode()).hexdigest()[:16]


def has_table(conn: sqlite3.Connection, table: str) -> bool:
    return (
        conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone() is not None
    )


def make_fts_table(conn: sqlite3.Connection, table: str) -> None:
    """Make `table` unless it exists (in the caller's transaction: a rollback undoes it)."""
    if has_table(conn, table):
        return
    conn.execute(f"CREATE VIRTUAL TABLE {table} USING fts5({FTS_SCHEMA})")
    # Rank by BM25 weighting the text over title, why and tags; the notebook id counts nothing.
    conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('rank', '{RANK}')")


def fts_tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
        " AND (name = 'memory_fts' OR name LIKE 'memory\\_fts\\_%' ESCAPE '\\')"
    ).fetchall()
    return [row[0] for row in rows]


SEARCHED = ("text", "title", "why", "tags_text")  # indexed as terms, weighted in that order
FTS_COLUMNS = (*SEARCHED, "notebook_id")  # the notebook id as it is, to filter by


def match_expression(words: str, query: SearchQuery) -> str:
    """An FTS5 query: the words in the content columns, narrowed by notebook and tags.

    The SQL filters still check notebook and tags exactly; here they only shrink the set
    of matches to rank (a tag `deploying-tips` is the phrase "deploy tip" in the index; a
    tag with no terms, `++`, cannot shrink it).
    """
    parts = [f"{{text title why tags_text}} : ({words})"]
    if query.notebook_ids:
        parts.append("notebook_id : (" + " OR ".join(_phrase(n) for n in query.notebook_ids) + ")")
    tag_terms = (index_text(tag) for tag in query.tags)
    parts += [f"tags_text : {_phrase(terms)}" for terms in tag_terms if terms]
    return " AND ".join(parts)


def _phrase(value: str) -> str:
    return '"' + value.replace('"', '""') + '"'
