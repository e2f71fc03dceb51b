"""Property: whatever memories hold and whatever a session asks for, the served record
holds ids, versions, scores and the request, never a memory's text."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.service import Service
from palimpsest.store import open_store

# Words no query below uses, so that a text found in the record came from a memory.
WORD = st.text(alphabet="bcdfghjklmnpqrstvwxz", min_size=6, max_size=12).map(lambda w: "q" + w)
TEXTS = st.lists(st.lists(WORD, min_size=2, max_size=6).map(" ".join), min_size=1, max_size=6,
                 unique=True)  # fmt: skip


@settings(max_examples=25, deadline=None)
@given(texts=TEXTS, kinds=st.lists(st.sampled_from(["fact", "issue", "debt", "note"]),
                                   min_size=6, max_size=6))  # fmt: skip
def test_the_record_never_holds_a_memory_s_text(texts: list[str], kinds: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "p.db"
        store = open_store(str(db))
        try:
            service = Service(store)
            ids = [service.remember(notebook="shop", kind=kind, text=text)["id"]
                   for text, kind in zip(texts, kinds, strict=False)]  # fmt: skip
            agent = service.in_session("prop")
            agent.recall(query="", notebook="shop")  # listed by the filters: every memory
            agent.recall(query=ids[0])  # by id
            agent.orient(notebook="shop")
            agent.inspect(id=ids[-1])
            agent.revise(id=ids[0], append=" and more")
            agent.session_start(session_id="prop-hook", notebook="shop")
            agent.session_end(session_id="prop-hook", notebook="shop")
        finally:
            store.close()
        with sqlite3.connect(db) as raw:
            rows = raw.execute("SELECT * FROM served").fetchall()
        raw.close()
        assert len(rows) == 7
        kept = repr(rows)
        assert all(memory_id in kept for memory_id in ids)
        for text in texts:
            assert all(word not in kept for word in text.split()), text
