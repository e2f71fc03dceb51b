"""A memory's check, and its anchors, against a project directory: what holds, what fails.

No store here: only files are read. The kinds (DESIGN section 2, check and guard):

- `path_exists`: the path (a file or a folder) exists.
- `contains` / `absent`: the file, or every regular file directly inside the folder (never
  below), holds / does not hold the literal.
- `requires` / `absent_all`: the same, for all of several literals / none of them.
- `forbidden` is a command pattern, the guard's: it has no path and is not run here.

Paths are relative to the project root. Symlinks are followed, and whatever resolves
outside the project fails as "leaves the project": a check never reads beyond it. A path
that does not exist fails every kind (an `absent` on a file renamed away would otherwise
hold forever, unnoticed). Literals are matched as UTF-8 bytes, so binary files are read
like any other; a file over `MAX_BYTES` is not read at all and fails as too large, since
a bounded read could miss a literal past the bound and say `absent` holds when it does not.
"""

from __future__ import annotations

import functools
import hashlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .model import Anchor, Check

MAX_BYTES = 16 * 1024 * 1024
FILE_CHECKS = ("path_exists", "contains", "absent", "absent_all", "requires")

LEAVES = "leaves the project"
MISSING = "does not exist"
LOOP = "is a loop of symbolic links"
TOO_LARGE = f"is over {MAX_BYTES // (1024 * 1024)} MiB: too large to check"


@dataclass(frozen=True)
class Failure:
    """One way a check fails: the file (relative to the root), the literal, and why."""

    file: str
    reason: str
    literal: str | None = None
    line: int | None = None  # where a literal that must be absent was found

    def said(self) -> str:
        literal = f" {self.literal!r}" if self.literal is not None else ""
        where = f" (line {self.line})" if self.line is not None else ""
        return f"{self.file}{where}: {self.reason}{literal}"


@dataclass(frozen=True)
class Outcome:
    check: Check
    files: int  # regular files read
    failures: tuple[Failure, ...]

    @property
    def holds(self) -> bool:
        return not self.failures


def runnable(check: Check | None) -> bool:
    """Whether `check` reads the project's files (a `forbidden` one is the guard's)."""
    return check is not None and check.kind in FILE_CHECKS and check.path is not None


def run_check(check: Check, root: Path) -> Outcome:
    """Run one file check against the project at `root`."""
    assert runnable(check), check
    assert check.path is not None
    base = root.resolve()
    target, failure = _inside(base, check.path)
    if failure is not None:
        return Outcome(check, 0, (failure,))
    assert target is not None
    if check.kind == "path_exists":
        return Outcome(check, 0, ())
    failures: list[Failure] = []
    files = 0
    for shown, path in _files(base, check.path, target, failures):
        files += 1
        failures += _literal_failures(check, shown, path)
    return Outcome(check, files, tuple(failures))


def _inside(base: Path, relative: str) -> tuple[Path | None, Failure | None]:
    """`relative` resolved under `base`, or why it cannot be read."""
    target = _resolved(base / relative)
    if target is None:
        return None, Failure(relative, LOOP)
    if not target.is_relative_to(base):
        return None, Failure(relative, LEAVES)
    if not target.exists():
        return None, Failure(relative, MISSING)
    return target, None


def _resolved(path: Path) -> Path | None:
    """`path` with its links followed; None for a loop of links (a repository may hold
    `a -> a`), which Python before 3.13 raises as RuntimeError."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def _files(
    base: Path, shown: str, target: Path, failures: list[Failure]
) -> Iterator[tuple[str, Path]]:
    """The regular files a content check reads: `target` itself, or those directly in it."""
    if target.is_file():
        yield shown, target
        return
    if not target.is_dir():
        failures.append(Failure(shown, "is neither a regular file nor a folder"))
        return
    with os.scandir(target) as listing:
        entries = sorted(listing, key=lambda e: e.name)
    for entry in entries:
        name = f"{shown.rstrip('/')}/{entry.name}"
        if not entry.is_symlink():  # in a resolved folder inside the project: inside too
            if entry.is_file(follow_symlinks=False):
                yield name, Path(entry.path)
            continue
        resolved = _resolved(Path(entry.path))
        if resolved is None:
            failures.append(Failure(name, LOOP))
        elif not resolved.is_relative_to(base):
            failures.append(Failure(name, LEAVES))
        elif resolved.is_file():  # folders and broken links are not files "directly inside"
            yield name, resolved


def _literal_failures(check: Check, shown: str, path: Path) -> list[Failure]:
    data, failure = _read(shown, path)
    if failure is not None:
        return [failure]
    literals = (check.literal,) if check.literal is not None else check.literals
    wanted = check.kind in ("contains", "requires")
    found = []
    for literal in literals:
        assert literal is not None
        at = data.find(literal.encode("utf-8"))
        if wanted and at < 0:
            found.append(Failure(shown, "lacks", literal))
        elif not wanted and at >= 0:
            found.append(Failure(shown, "holds", literal, data.count(b"\n", 0, at) + 1))
    return found


def _read(shown: str, path: Path) -> tuple[bytes, Failure | None]:
    try:
        if path.stat().st_size > MAX_BYTES:
            return b"", Failure(shown, TOO_LARGE)
        return path.read_bytes(), None
    except OSError as error:
        return b"", Failure(shown, f"cannot be read ({error.strerror})")


# -- anchors -----------------------------------------------------------------------------


def file_hash(root: Path, relative: str) -> str | None:
    """The content hash of an anchored file (`sha256:` and hex), or None when it is not a
    regular file inside the project, or is over `MAX_BYTES` (reading it would hold the
    write for seconds: such a file, like a folder, is anchored by its path alone)."""
    base = root.resolve()
    target, failure = _inside(base, relative)
    if failure is not None or target is None or not target.is_file():
        return None
    try:
        seen = target.stat()
        if seen.st_size > MAX_BYTES:
            return None
        if time.time_ns() - seen.st_mtime_ns < SETTLED_NS:
            return _digest.__wrapped__(target, 0, 0, 0)
        return _digest(target, seen.st_ino, seen.st_size, seen.st_mtime_ns)
    except OSError:
        return None


# Recall and inspect compare anchors on every call: a file not touched since (same inode,
# size and modification time) is not read and hashed again. Modification times are coarse
# (a few milliseconds), so a file changed in the last seconds is always read ("racy git").
SETTLED_NS = 3_000_000_000


@functools.lru_cache(maxsize=1024)
def _digest(path: Path, _inode: int, _size: int, _mtime_ns: int) -> str:
    with path.open("rb") as opened:
        return "sha256:" + hashlib.file_digest(opened, "sha256").hexdigest()


def anchor_reasons(anchor: Anchor, root: Path) -> list[str]:
    """Why an anchored file no longer backs its memory: gone, or changed since its hash."""
    base = root.resolve()
    target, failure = _inside(base, anchor.path)
    if failure is not None:
        return [f"anchored file {anchor.path} {failure.reason}"]
    assert target is not None
    if not target.is_file():
        return [f"anchored path {anchor.path} is not a regular file"]
    if anchor.hash is not None and file_hash(base, anchor.path) != anchor.hash:
        return [f"anchored file {anchor.path} changed since it was last verified"]
    return []


def with_hashes(anchors: tuple[Anchor, ...], root: Path, *, refresh: bool) -> tuple[Anchor, ...]:
    """`anchors` with each file's hash as it is now: those without one, or all (`refresh`)."""
    return tuple(
        Anchor(a.path, file_hash(root, a.path)) if refresh or a.hash is None else a for a in anchors
    )


def check_said(check: Check) -> str:
    """A check in a few words, for a reason: `contains 'pool = 20' in config.toml`."""
    literals = (check.literal,) if check.literal is not None else check.literals
    shown = ", ".join(repr(x) for x in literals)
    return f"{check.kind} {shown} in {check.path}" if shown else f"{check.kind} {check.path}"
