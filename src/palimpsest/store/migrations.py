"""The numbered plain-SQL migrations of each backend: the schema lives in these files only."""

from __future__ import annotations

from importlib import resources


def migrations(backend: str) -> list[tuple[int, str]]:
    """The numbered SQL files of `backend` (sqlite, postgres), in order: (number, script)."""
    folder = resources.files("palimpsest.store") / "sql" / backend
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            found.append((int(entry.name.split("_", 1)[0]), entry.read_text("utf-8")))
    return sorted(found)


def statements(script: str) -> list[str]:
    """Split a migration into statements (ours hold no semicolons inside literals)."""
    without_comments = "\n".join(
        line for line in script.splitlines() if not line.lstrip().startswith("--")
    )
    return [part.strip() for part in without_comments.split(";") if part.strip()]
