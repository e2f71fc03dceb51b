"""`palimpsest reindex` through the CLI, as a subprocess: vectors made anew after the
embedder changed, with a progress bar on stderr, and no event written."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

MINILM_TAG_START = "all-MiniLM-L6-v2 "


def palimpsest(
    env: dict[str, str], db: Path, *args: str, embedder: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "palimpsest", "--db", str(db), *args],
        env={**env, "PALIMPSEST_EMBEDDER": embedder},
        capture_output=True,
        text=True,
        timeout=120,
    )


def answer(env: dict[str, str], db: Path, *args: str, embedder: str) -> Any:
    done = palimpsest(env, db, *args, "--json", embedder=embedder)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def tags(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT model FROM memory_vectors")]


def event_count(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])


def test_reindex_embeds_what_was_filed_without_vectors_and_writes_no_event(
    env: dict[str, str], tmp_path: Path
) -> None:
    db = tmp_path / "p.db"
    first = answer(env, db, "remember", "-n", "pets", "-k", "fact", "The cat sat on the mat",
                   embedder="none")  # fmt: skip
    answer(env, db, "revise", first["id"], "--text", "The cat sat on the rug", embedder="none")
    answer(env, db, "remember", "-n", "ops", "-k", "fact", "Login emails are dropped",
           embedder="none")  # fmt: skip
    assert tags(db) == []
    events = event_count(db)
    told = answer(env, db, "doctor", embedder="all-MiniLM-L6-v2")  # recall would miss them
    assert told["stale_vectors"] == {"count": 3, "fix": "palimpsest reindex"}
    assert "stale_vectors" not in answer(env, db, "doctor", embedder="none")

    done = palimpsest(env, db, "reindex", "--json", embedder="all-MiniLM-L6-v2")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["stale"] == 3 and result["reindexed"] == 3
    assert result["model"].startswith(MINILM_TAG_START)
    assert "Reindexing" in done.stderr  # the progress bar goes to stderr, not into the JSON
    assert sorted(tags(db)) == [result["model"]] * 3
    assert event_count(db) == events  # derived data: the history is unchanged

    again = answer(env, db, "reindex", embedder="all-MiniLM-L6-v2")
    assert again["stale"] == 0 and again["reindexed"] == 0
    assert "stale_vectors" not in answer(env, db, "doctor", embedder="all-MiniLM-L6-v2")


def test_reindex_with_the_null_embedder_says_there_is_nothing_to_make(
    env: dict[str, str], tmp_path: Path
) -> None:
    db = tmp_path / "p.db"
    answer(env, db, "remember", "-n", "pets", "-k", "fact", "The cat sat", embedder="none")
    result = answer(env, db, "reindex", embedder="none")
    assert result["reindexed"] == 0 and "full text" in result["note"]
    shown = palimpsest(env, db, "reindex", embedder="none")
    assert shown.returncode == 0 and "no vectors" in shown.stdout  # said plainly (issue 31)


def test_reindex_help_says_no_event_and_gives_an_example(env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "palimpsest", "reindex", "--help"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0
    assert "no\n  event is written" in done.stdout or "no event" in " ".join(done.stdout.split())
    assert "palimpsest reindex" in done.stdout.split("Example:")[1]
