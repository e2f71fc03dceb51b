"""Palimpsest's own dev set of project memory, for `palimpsest bench recall --projects`.

What agents keep about software projects (decisions and why, errors and their fixes,
conventions, rules, facts about the infrastructure), in several notebooks, with the
questions teammates ask of it, mostly in words of their own, and questions whose answer
is in no memory. It ships with the package (devsets/projects/, its README says how it
was made) and is filed into a temporary store, never the user's.

Per notebook N the folder holds `N.memories.jsonl` (one memory a line, in the order it was
filed: `label`, `session`, the fields remember takes, `supersedes` naming an earlier
label) and `N.questions.jsonl` (`question`, `expected` labels, `category`, and `notebook`
unless the question is asked across the workspace; a question whose `expected` is empty
has no answer in memory: recall should return nothing).

Each session of a notebook is filed on a day of its own, a week after the one before, a
minute between its memories, as an agent working in sessions would file them.
"""

from __future__ import annotations

import shutil
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ..domain.errors import ValidationError
from ..embed import load_embedder
from ..service import Service
from ..store import open_store
from .bench import Progress, Question, compare, jsonl_rows, quiet

SHIPPED = Path(__file__).resolve().parent / "devsets" / "projects"
FIRST_DAY = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
MEMORY_FIELDS = {"label", "session", "supersedes"}  # the set's own; the rest are remember's


def read_devset(folder: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The memories (in filing order, notebook by notebook) and questions of `folder`."""
    memories_files = sorted(folder.glob("*.memories.jsonl")) if folder.is_dir() else []
    if not memories_files:
        raise ValidationError(
            "--projects must name a folder of <notebook>.memories.jsonl and "
            "<notebook>.questions.jsonl files (devsets/projects/README.md).",
            field="projects",
        )
    memories: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    for path in memories_files:
        memories += jsonl_rows(path, "projects")
        named = path.with_name(path.name.replace(".memories.", ".questions."))
        questions += jsonl_rows(named, "projects")
    return memories, questions


def file_devset(
    store_path: Path, memories: list[dict[str, Any]], embedder: str, actor: str,
    progress: Progress = quiet,
) -> tuple[Service, dict[str, list[str]]]:  # fmt: skip
    """A service over a new store at `store_path` holding `memories`, filed session by
    session on their days, and the labels of the memory ids."""
    now = [FIRST_DAY]
    service = Service(open_store(str(store_path)), actor=actor, embedder=load_embedder(embedder),
                      clock=lambda: now[0].strftime("%Y-%m-%dT%H:%M:%SZ"))  # fmt: skip
    ids: dict[str, str] = {}
    minute: dict[tuple[str, int], int] = {}
    for memory in progress("filing", memories):
        notebook, session = str(memory.get("notebook")), int(memory.get("session", 1))
        n = minute[notebook, session] = minute.get((notebook, session), -1) + 1
        now[0] = FIRST_DAY + timedelta(days=7 * (session - 1), minutes=n)
        fields = {k: v for k, v in memory.items() if k not in MEMORY_FIELDS}
        if memory.get("supersedes"):
            fields["supersedes"] = [ids[memory["supersedes"]]]
        ids[memory["label"]] = service.remember(**fields)["id"]
    now[0] = FIRST_DAY + timedelta(days=365)  # asked later, when every memory is filed
    return service, {memory_id: [label] for label, memory_id in ids.items()}


def devset_questions(rows: list[dict[str, Any]]) -> list[Question]:
    return [
        Question(
            row["question"], tuple(row["expected"]), row.get("category"), row.get("notebook"), n
        )
        for n, row in enumerate(rows, 1)
    ]


def measure_devset(
    folder: Path | None, embedder: str, actor: str, progress: Progress = quiet
) -> dict[str, Any]:
    """`bench.compare` on the dev set, filed into a temporary SQLite store."""
    memories, rows = read_devset(folder or SHIPPED)
    scratch = Path(tempfile.mkdtemp(prefix="palimpsest-bench-"))
    try:
        service, labels = file_devset(scratch / "projects.db", memories, embedder, actor,
                                      progress)  # fmt: skip
        try:
            return compare(service, devset_questions(rows), labels, progress)
        finally:
            service.store.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
