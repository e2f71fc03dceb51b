"""Projects: a directory bound to a notebook by a small file at its root.

`.palimpsest.toml` holds one line, `notebook = "name"`. It is found by walking up from a
working directory, the way git finds `.git`, so `check`, `guard` and `orient` know which
notebook's rules apply wherever an agent works inside the project.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from .errors import ValidationError

PROJECT_FILE = ".palimpsest.toml"


@dataclass(frozen=True)
class Project:
    root: Path  # resolved: symlinks followed, absolute
    notebook: str


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
            f'{path} cannot be read ({error}); it should hold one line: notebook = "name"'
        ) from None
    notebook = body.get("notebook")
    if not isinstance(notebook, str) or not notebook.strip():
        raise ValidationError(f'{path} names no notebook; write one line: notebook = "name"')
    return Project(root=root.resolve(), notebook=notebook.strip())


def bind_project(root: Path, notebook: str) -> Project:
    """Write the project file at `root`, naming `notebook` (replacing an earlier binding)."""
    if not root.is_dir():
        raise ValidationError(f"{root} is not a directory; bind an existing project directory")
    quoted = notebook.replace("\\", "\\\\").replace('"', '\\"')
    (root / PROJECT_FILE).write_text(f'notebook = "{quoted}"\n', encoding="utf-8")
    return read_project(root)


@dataclass(frozen=True)
class Places:
    """The directories a process may read for checks and anchors.

    The CLI and a stdio server know their working directory and may read any directory
    their user names (`allowed` None); an HTTP server knows none and reads only those its
    owner configured (`check_dirs`), and the directories below them.
    """

    working_dir: Path | None = None
    allowed: tuple[Path, ...] | None = ()

    def permits(self, directory: Path) -> bool:
        if self.allowed is None:
            return True
        resolved = directory.resolve()
        return any(resolved.is_relative_to(place.resolve()) for place in self.allowed)


NO_PLACES = Places()  # a program's service reads no directory until it is given some


def local_places() -> Places:
    """What the CLI and a stdio server may read: any directory their user names, and the
    working directory by default (none when it was deleted under the process)."""
    try:
        return Places(working_dir=Path.cwd().resolve(), allowed=None)
    except OSError:
        return Places(working_dir=None, allowed=None)
