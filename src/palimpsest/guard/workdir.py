"""Where a line's commands run: the directories its `cd`, `pushd`, `popd`, `env -C` and
`sudo -D` move to.

A relative path names a file in the directory its command runs in: after `cd /`, `rm -rf *`
wipes `/`. The guard follows a move to a path written out as absolute (`cd /`, `cd
/tmp/..`), to the home (`cd`, `cd ~`, `cd "$HOME"`, `cd ~/build`), and one relative to such
a directory (`cd ~/src && cd ..`). A relative path (`~+` is `.`) is then read in each
directory the line may move to, whatever their order (a function defined first may run
after the `cd`, a `$(...)` is read before its line, a subshell's `cd` ends with it but is
followed past it: the guard errs toward refusing), and in the one it starts in, as written.

The line starts in the agent's project, below any path a rule names: a relative `cd` from
there (`cd build`) is not followed. Where a move goes only when it runs (`cd $X`, `cd
"$(...)"`, `cd -`, `popd`, `pushd +1`, `~alice`, `..` above the project or the home, any
`cd NAME` under `shopt -s cdable_vars`, a relative `cd` in a line that makes a link with
`ln`: `ln -s / r && cd r`), a relative path of a command a rule's program names
is asked about when it could be the rule's path from some directory (`.`, `..`, a glob, or
the end of that path: `dist` is never `/`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from fnmatch import fnmatchcase

from .commands import SimpleCommand
from .lexer import Word
from .patterns import holds_home, normalised, unplaced
from .wrappers import WRAPPERS

_GLOB = re.compile(r"[*?[]")
UNKNOWN = "?"  # a directory only known when the line runs
MOVERS = frozenset({"cd", "pushd", "popd"})
CHDIR_OPTIONS = {"env": ("C", "--chdir"), "sudo": ("D", "--chdir")}  # run it in DIR
MAX_DIRS = 32  # more directories than a line typed by hand moves through: unknown


def workdirs(commands: Iterable[SimpleCommand]) -> frozenset[str]:
    """The directories a line's commands may run in besides where it starts: absolute paths,
    `~` and paths in it, and `UNKNOWN` when a move is only known at run time."""
    known: set[str] = set()
    steps: list[str] = []  # relative moves, in the order written
    linked = False  # the line makes a link: a relative `cd` may enter it
    for command in commands:
        for layer in filter(None, command.argv):
            program = layer[0].text.rsplit("/", 1)[-1]
            if program == "shopt" and any(w.text == "cdable_vars" for w in layer):
                known.add(UNKNOWN)  # `cd name` may go where the variable `name` says
            linked = linked or program == "ln"
            target = _moves_to(layer)
            if target is None or target == ".":
                continue
            if target.startswith(("/", "~")) or target == UNKNOWN:
                known.add(target)
            else:
                steps.append(target)
    distinct = set(steps)
    for _ in steps:  # `cd ~ && cd a && cd a`: each relative move from each directory
        found = {resolved(step, d) for d in known - {UNKNOWN} for step in distinct} - known
        if len(known) + len(found) > MAX_DIRS:
            known.add(UNKNOWN)  # more than a line typed by hand moves through
            break
        if not found:
            break
        known |= found
    if any(step == ".." or step.startswith("../") for step in steps) or (linked and steps):
        known.add(UNKNOWN)  # `cd ..` from the project: above it; `ln -s / r && cd r`
    return frozenset(known)


def _moves_to(layer: tuple[Word, ...]) -> str | None:
    """Where one layer moves: a path, `.` for nowhere new, `UNKNOWN`, or None for no move."""
    program = layer[0].text.rsplit("/", 1)[-1]
    if program in CHDIR_OPTIONS:  # `env -C / rm ...`, `sudo -D / rm ...`
        value = _option_value(program, layer[1:])
        return None if value is None else _place(value)
    if program not in MOVERS:
        return None
    words = [w for w in layer[1:] if w.text not in ("-L", "-P", "-e", "-@", "-n", "--")]
    if program == "popd" or (program == "pushd" and not words):
        return UNKNOWN  # back to a directory of the stack, which may be older than the line
    return _place(words[0]) if words else "~"  # `cd` alone goes home


def _option_value(program: str, words: tuple[Word, ...]) -> Word | None:
    """The directory a wrapper's `-C DIR`, `-CDIR`, `--chdir=DIR` (env) or `-D DIR` (sudo)
    names among the options before its command, others' values skipped (`sudo -u root`)."""
    letter, long = CHDIR_OPTIONS[program]
    takes = WRAPPERS[program].values
    index = 0
    while index < len(words):
        text = words[index].text
        if text == "--" or not text.startswith("-"):
            return None  # the command it runs starts here
        following = words[index + 1] if index + 1 < len(words) else None
        name, equals, value = text.partition("=")
        if text.startswith("--"):
            if name == long:
                return _part(words[index], value) if equals else following
            index += 2 if name in takes and not equals else 1
            continue
        cluster = text[1:]
        for at, char in enumerate(cluster):
            rest = cluster[at + 1 :]
            if char == letter:
                return _part(words[index], rest) if rest else following
            if char in takes:
                index += 0 if rest else 1  # its value is the next word
                break
        index += 1
    return None


def _part(word: Word, text: str) -> Word:
    return Word(text, word.quoted, word.dynamic, word.many, home=word.home, more=word.more)


def _place(word: Word) -> str:
    """The directory a written word names: a path, `~` or a path in it, a path relative to
    where it runs, or `UNKNOWN` (an expansion, `-`, `~alice`, `..` above the home)."""
    text = word.text
    if not (word.home and not word.many and not word.more) and (
        word.dynamic or text.startswith(("-", "+"))
    ):
        return UNKNOWN  # `cd $X`, `cd -`, `pushd +1`; `cd "$HOME"` is the home
    if text == "~" or text.startswith("~/"):
        return resolved(text[2:] or ".", "~")
    if text.startswith("~"):
        return UNKNOWN  # `~alice`, `~+`, `~-`: another home, the stack
    return normalised(text) if text.startswith("/") else posixpath.normpath(text)


def resolved(path: str, workdir: str) -> str:
    """`path`, relative, as the file it names in `workdir`; `UNKNOWN` when that climbs above
    the home (`~/..` may be `/`, the home of root being `/root`) or `workdir` is unknown."""
    whole = f"{workdir}/{path}"
    return UNKNOWN if workdir == UNKNOWN or unplaced(whole) else normalised(whole)


def relative(word: str) -> str | None:
    """A word as a path relative to where its command runs (`~+`, the working directory,
    as `.`), or None for a word that is not one."""
    if word == "~+" or word.startswith("~+/"):
        return "." + word[2:]
    return None if word.startswith(("/", "~", "-")) or not word else word


def in_workdir(workdir: str) -> Callable[[str, str], bool]:
    """Whether a command's word names a pattern's word, relative paths read in `workdir`."""

    def same(wanted: str, word: str) -> bool:
        if wanted == word:
            return True
        path = relative(word)
        return (
            wanted.startswith(("/", "~")) and path is not None and resolved(path, workdir) == wanted
        )

    return same


def anywhere(workdir: str) -> Callable[[str, str], bool]:
    """Whether a command's word could name a pattern's path, once known: a relative path in
    an unknown directory, or one climbing above the home, may be any path; a glob, any
    path that fits it there (`cd ~ && rm -rf .s*` may be `~/.ssh`)."""

    def same(wanted: str, word: str) -> bool:
        if wanted == word:
            return True
        path = relative(word)
        if not wanted.startswith(("/", "~")) or path is None:
            return False
        where = resolved(path, workdir)
        if where == UNKNOWN:
            return _may_end(path, wanted)
        if wanted.startswith("~") and holds_home(where):
            return True  # `cd /home && rm -rf *`: the home is among them
        return _GLOB.search(path) is not None and fnmatchcase(wanted, where)

    return same


def _may_end(path: str, wanted: str) -> bool:
    """Whether a relative path in a directory not known may be `wanted`: one that climbs
    (`.`, `..`) or a glob may be any; another only the end of it (`etc` of `/etc`, never of
    `/`: `cd "$X" && rm -rf dist` is allowed under `rm -rf /`)."""
    tail = posixpath.normpath(path)
    climbs = tail in (".", "..") or tail.startswith("../")
    return climbs or _GLOB.search(path) is not None or wanted.endswith("/" + tail)
