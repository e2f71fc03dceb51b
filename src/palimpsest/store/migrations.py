"""The numbered plain-SQL migrations of each backend: the schema lives in these files only."""

from __future__ import annotations

from importlib import resources

from ..domain.errors import ValidationError


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


def refuse_newer(backend: str, found: int) -> None:
    """Refuse a store whose schema is newer than this code knows: opening it could lose data."""
    known = max(number for number, _ in migrations(backend))
    if found > known:
        raise ValidationError(
            f"This store has schema version {found}, written by a newer Palimpsest; this one "
            f"knows versions up to {known}. Upgrade Palimpsest to open it; nothing was changed."
        )
