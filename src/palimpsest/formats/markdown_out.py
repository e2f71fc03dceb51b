"""Palimpsest's markdown export: a folder that people read, diff and keep in git.

    DIR/README.md                  the index: per notebook, its memories by title
    DIR/NOTEBOOK_ID/MEMORY_ID.md   one memory: YAML front matter for its fields, then its text

Names come from ids, never from text: no name or title can make a path, and a retitled
memory or renamed notebook changes a line of a file, not its name. The body is the
memory's text and nothing else; every other field, its notebook's name and the links it
makes (`links: [{type, to}]`) are in the front matter, so `palimpsest import DIR --from
markdown` reads the folder back (formats/markdown_notes.py).

The same memories always give the same bytes. Exporting again into the folder rewrites only
the files whose bytes change and removes only stale files of its own (a `MEMORY_ID.md` whose
front matter opens with that id); anything else in the folder is left alone. Each file is
written beside its name and renamed, so an interrupted export leaves whole files only.

Nothing is written through a symbolic link: a DIR that is one, or lies under one as given
(`DIR` a link, `links/DIR`, a dangling link), is refused before anything is written, and
so is a link where a notebook's folder or the index goes; a link where a file goes is
replaced, never followed.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

from ..domain.errors import ValidationError
from ..domain.model import Link, Memory, Notebook, to_json

INDEX = "README.md"
INDEX_MARK = {"palimpsest": "markdown export"}  # the reader skips the index by this mark
_FIELDS = (
    "kind", "title", "status", "tags", "key", "why", "occurred_at", "expires_at", "source",
    "severity", "falsifier", "scope", "anchors", "check", "bindings", "status_note",
    "superseded_by", "verified_at", "author", "owner", "version", "recorded_at",
)  # fmt: skip


def write_markdown(
    directory: Path,
    notebooks: list[Notebook],
    memories: list[Memory],
    links: Callable[[str], list[Link]],
) -> dict[str, int]:
    """Write `memories` under `directory`; `links(id)` gives a memory's links. Answers the
    counts of notebooks and memories, and of files written, unchanged and removed."""
    _refuse_links(directory)
    if directory.exists() and not directory.is_dir():
        raise ValidationError(
            f"{directory} is a file: give --markdown a folder (it is made if missing).",
            field="markdown",
        )
    for nb in notebooks:  # a link there would take the files out of the folder
        if (directory / nb.id).is_symlink() or (
            (directory / nb.id).exists() and not (directory / nb.id).is_dir()
        ):
            raise ValidationError(
                f"{directory / nb.id} is a symbolic link or a file where the export writes "
                "a notebook's folder; nothing was written: remove it and export again.",
                field="markdown",
            )
    index = directory / INDEX
    if index.is_symlink() or (index.exists() and not _our_index(index)):
        raise ValidationError(
            f"{index} is not the index of a markdown export (your own README?); nothing was "
            "written: export into a folder of its own, such as memory/.",
            field="markdown",
        )
    names = {nb.id: nb.name for nb in notebooks}
    wanted: dict[Path, str] = {}
    listed: dict[str, list[Memory]] = {nb.id: [] for nb in notebooks}
    for memory in sorted(memories, key=lambda m: m.id):
        made = [link for link in links(memory.id) if link.source_id == memory.id]
        path = Path(memory.notebook_id, f"{memory.id}.md")
        wanted[path] = _memory_file(memory, names[memory.notebook_id], made)
        listed[memory.notebook_id].append(memory)
    wanted[Path(INDEX)] = _index(notebooks, listed)
    counts = {"notebooks": len(notebooks), "memories": len(memories), "written": 0,
              "unchanged": 0, "removed": 0}  # fmt: skip
    for path, text in wanted.items():
        changed = _write(directory / path, text)
        counts["written" if changed else "unchanged"] += 1
    counts["removed"] = _remove_stale(directory, set(wanted))
    return counts


def _refuse_links(directory: Path) -> None:
    """Refuse a folder that is, or lies under, a symbolic link, as given: the link (one
    left by anyone who could write where it is, or checked out of a repository) would take
    the files wherever it points. The real path, given instead, is written to."""
    for part in (directory, *directory.parents):
        if not part.is_symlink():
            continue
        real = os.path.realpath(directory) if directory.parent.exists() else None
        hint = f"give its real path ({real}) if that is the folder meant, or " if real else ""
        raise ValidationError(
            f"{part} is a symbolic link, and an export never writes through one; nothing was "
            f"written: {hint}give a folder that is not reached through a link.",
            field="markdown",
        )


def _memory_file(memory: Memory, notebook: str, links: list[Link]) -> str:
    meta: dict[str, Any] = {"id": memory.id, "notebook": notebook}
    for name in _FIELDS:
        value = to_json(getattr(memory, name))
        if value is not None and value != []:
            meta[name] = value
    if links:
        ordered = sorted(links, key=lambda link: (link.type, link.target_id))
        meta["links"] = [{"type": link.type, "to": link.target_id} for link in ordered]
    return f"---\n{_yaml(meta)}---\n\n{memory.text}\n"


def _index(notebooks: list[Notebook], listed: dict[str, list[Memory]]) -> str:
    lines = [f"---\n{_yaml(INDEX_MARK)}---\n", "# Memory", ""]
    lines.append("Written by `palimpsest export --markdown`: a file per memory, a folder per "
                 "notebook. Edits here are not read back until imported.")  # fmt: skip
    for nb in sorted(notebooks, key=lambda nb: nb.name):
        shown = listed[nb.id]
        lines += ["", f"## {_escaped(nb.name)} ({len(shown)}, in {nb.id}/)", ""]
        lines += [f"- {_entry(m)}" for m in _by_title(shown)]
    return "\n".join(lines) + "\n"


def _by_title(memories: Iterable[Memory]) -> list[Memory]:
    return sorted(memories, key=lambda m: (m.status != "active", _title(m).casefold(), m.id))


def _entry(memory: Memory) -> str:
    link = f"[{_escaped(_title(memory))}]({memory.notebook_id}/{memory.id}.md)"
    if memory.status != "active":
        return f"~~{link}~~ — {memory.kind}, {memory.status}"
    return f"{link} — {memory.kind}"


def _title(memory: Memory) -> str:
    if memory.title:
        return memory.title
    first = " ".join(memory.text.split())
    return first if len(first) <= 60 else first[:59].rstrip() + "…"


def _escaped(text: str) -> str:
    """Text that markdown shows as it is, on one line."""
    flat = " ".join(text.split())
    return re.sub(r"([\\`*_\[\]<>#|~])", r"\\\1", flat)


def _yaml(value: dict[str, Any]) -> str:
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True, width=1_000_000)


def _write(path: Path, text: str) -> bool:
    """Write `text` to `path` unless it holds those bytes already; whether it wrote."""
    data = text.encode("utf-8")
    try:
        if path.is_file() and not path.is_symlink() and path.read_bytes() == data:
            return False
    except OSError:
        pass  # unreadable: written anew below, or the error says why
    path.parent.mkdir(parents=True, exist_ok=True)
    # A new file of a name no one chose (O_EXCL): a link left where a fixed temporary
    # name would be is never written through.
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                         suffix=".partial")  # fmt: skip
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, 0o666 & ~_umask())  # the mode a plain write gives
        os.replace(temporary, path)  # replaces a link at `path`, never writes through it
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return True


def _umask() -> int:
    """The process's umask (read by setting it: only the CLI exports markdown, in one
    thread, so no other file is made in between)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _remove_stale(directory: Path, wanted: set[Path]) -> int:
    """Remove memory files of ours that `wanted` no longer holds, and folders they leave
    empty."""
    removed = 0
    for folder in sorted(p for p in directory.iterdir() if p.is_dir() and not p.is_symlink()):
        stale = [path for path in sorted(folder.glob("*.md"))
                 if path.relative_to(directory) not in wanted and _ours(path)]  # fmt: skip
        for path in stale:
            path.unlink()
        removed += len(stale)
        if stale and not any(folder.iterdir()):
            folder.rmdir()
    return removed


def _our_index(path: Path) -> bool:
    """Whether `path` is an index this module wrote: it opens with its mark."""
    if not path.is_file():
        return False
    with path.open("rb") as opened:
        start = opened.read(64)
    return start.startswith(f"---\n{_yaml(INDEX_MARK)}---\n".encode())


def _ours(path: Path) -> bool:
    """Whether `path` is a memory file this module wrote: it opens with its own id."""
    if path.is_symlink() or not path.is_file():
        return False
    with path.open("rb") as opened:
        start = opened.read(64)
    return start.startswith(f"---\nid: {path.stem}\n".encode())
