"""Projects: a directory bound to a notebook by a small file at its root.

`.palimpsest.toml` names the notebook (`notebook = "name"`) and, when `palimpsest project
bind` wrote it, records its id too (`notebook_id = "nb_..."`): a notebook renamed later is
still found by its id, and a file copied to a store where that id is unknown (a teammate's
own) is found by its name. It is found by walking up from a working directory, the way git
finds `.git`, so `check`, `guard` and `orient` know which notebook's rules apply wherever
an agent works inside the project.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from .errors import ValidationError

PROJECT_FILE = ".palimpsest.toml"


@dataclass(frozen=True)
class Project:
    root: Path  # resolved: symlinks followed, absolute
    notebook: str  # the name written at binding time (the notebook may be renamed since)
    notebook_id: str | None = None  # None: a file written by hand, or before ids were kept

    @property
    def refs(self) -> tuple[str, ...]:
        """How to look the notebook up, the surest first: its id, then its name."""
        return (self.notebook_id, self.notebook) if self.notebook_id else (self.notebook,)

    def ask_reason(self) -> str:
        """Why the guard asks about a command it would allow: this binding names no notebook,
        and a notebook's rule (which may be the project's own) refuses the command."""
        return self.unknown_notebook() + " (a forbidden rule of a notebook refuses this command)"

    def unknown_notebook(self) -> str:
        """Why nothing of this binding applies: it names no notebook of the workspace."""
        return (
            f"{_path(self.root / PROJECT_FILE)} names the notebook {shown(self.notebook)}, "
            "which this workspace does not hold (not made yet, renamed or deleted before its "
            "id was recorded, or bound in another store): its rules cannot be told. Bind the "
            f"project again: palimpsest project bind {_path(self.root)} --notebook NAME"
        )


def find_project(start: Path) -> Project | None:
    """The project holding `start` (a directory or a file in one), or None outside any."""
    here = start.resolve()
    for directory in (here, *here.parents):
        if (directory / PROJECT_FILE).is_file():
            return read_project(directory)
    return None


def read_project(root: Path) -> Project:
    path = root / PROJECT_FILE
    try:
        body = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ValidationError(
            f'{_path(path)} cannot be read ({error}); it should hold one line: notebook = "name"'
        ) from None
    notebook = body.get("notebook")
    if not isinstance(notebook, str) or not notebook.strip():
        raise ValidationError(f'{_path(path)} names no notebook; write one line: notebook = "name"')
    notebook_id = body.get("notebook_id")
    if notebook_id is not None and (not isinstance(notebook_id, str) or not notebook_id.strip()):
        raise ValidationError(
            f"{_path(path)}: `notebook_id` must be a notebook's id; remove the line, or bind the "
            "project again (palimpsest project bind)"
        )
    return Project(root.resolve(), notebook.strip(), notebook_id.strip() if notebook_id else None)


def bind_project(root: Path, notebook: str, notebook_id: str | None = None) -> Project:
    """Write the project file at `root`, naming `notebook` and recording its id (replacing
    an earlier binding)."""
    if not root.is_dir():
        raise ValidationError(f"{root} is not a directory; bind an existing project directory")
    lines = [f"notebook = {_toml_string(notebook)}"]
    if notebook_id is not None:
        lines.append(f"notebook_id = {_toml_string(notebook_id)}")
    (root / PROJECT_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return read_project(root)


def _toml_string(text: str) -> str:
    # A JSON string is a TOML basic string (quotes, backslashes and controls escaped),
    # but for DEL, which TOML also wants escaped.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _path(path: Path) -> str:
    """A path for a message read by an agent: quoted with its escapes shown when a line
    break or a control character in it (a cloned repository's folder) would start a line."""
    text = str(path)
    return text if text.isprintable() else repr(text)


def shown(name: str) -> str:
    """A name from a file, quoted on one line and bounded, for a message."""
    flat = " ".join(name.split())
    return repr(flat if len(flat) <= 80 else flat[:79] + "…")


@dataclass(frozen=True)
class Places:
    """The directories a process may read for checks and anchors.

    The CLI and a stdio server know their working directory and may read any directory
    their user names (`allowed` None); an HTTP server knows none and reads only those its
    owner configured (`check_dirs`), and the directories below them: each belongs to one
    workspace (`owners`), and a request reads only its own workspace's (`within`).
    """

    working_dir: Path | None = None
    allowed: tuple[Path, ...] | None = ()
    owners: tuple[tuple[Path, str], ...] | None = None  # a server's: (directory, workspace id)

    def __post_init__(self) -> None:
        # Resolved once, when configured: a directory swapped for a symlink later (to
        # another workspace's) does not move what is permitted. A server's were resolved
        # by `served`, and each request's `within` takes them as they are.
        if self.allowed is not None and self.owners is None:
            object.__setattr__(self, "allowed", tuple(p.resolve() for p in self.allowed))

    @classmethod
    def served(cls, owners: Mapping[Path, str], workspace: str) -> Places:
        """An HTTP server's: no working directory, `owners`' directories, acting in
        `workspace` until a request moves it (`within`). Refused when a directory lies
        inside another workspace's: one of them could read the other's files."""
        pairs = tuple((path.resolve(), owner) for path, owner in owners.items())
        for inner, first in pairs:
            for outer, second in pairs:
                if first != second and inner.is_relative_to(outer):
                    raise ValidationError(
                        f"`http.check_dirs`: {inner} lies inside {outer}, which belongs to "
                        "another workspace: give each workspace directories apart.",
                        field="http.check_dirs",
                    )
        return cls(working_dir=None, owners=pairs).within(workspace)

    def within(self, workspace: str) -> Places:
        """What a service acting in `workspace` may read: on a server, only that
        workspace's directories (a directory of another is not even said to exist)."""
        if self.owners is None:
            return self
        return replace(self, allowed=tuple(path for path, w in self.owners if w == workspace))

    def permits(self, directory: Path) -> bool:
        if self.allowed is None:
            return True
        resolved = directory.resolve()
        return any(resolved.is_relative_to(place) for place in self.allowed)


NO_PLACES = Places()  # a program's service reads no directory until it is given some


def local_places() -> Places:
    """What the CLI and a stdio server may read: any directory their user names, and the
    working directory by default (none when it was deleted under the process)."""
    try:
        return Places(working_dir=Path.cwd().resolve(), allowed=None)
    except OSError:
        return Places(working_dir=None, allowed=None)
