"""Whether a simple command is one a `forbidden` pattern names.

A pattern is a command written as words: `git push --force`. A command matches when its
program (the last part of its path: `/usr/bin/git` is `git`) is the pattern's first word,
the pattern's other plain words appear among the command's in the same order, and each of
the pattern's options appears anywhere among the command's options, whatever their order
and form: `-rf` is `-r -f`, `--force=yes` is `--force`, and for the programs of `ALIASES`
a short option is its long name (`git push -f` is `--force`; `rm -R` is `--recursive`)
and an unambiguous start of a long option is that option (`rm --rec --for`).
A long option of the pattern also names the longer options it starts with a `-` boundary
(`--force` names `--force-with-lease` and `--force-if-includes`, which rewrite history
too): a family of options shares its first name. Paths are compared normalised: `//`,
`/.`, `/..` and a trailing `/` or `/*` are dropped (`rm -rf /*` wipes `/`), and `~/`,
`$HOME` and `${HOME}` are `~`.
For git, a `+` refspec (`+main`, `+HEAD:main`) is a forced push of that ref, read as
`--force` and the ref. Words after `--` are plain words.

"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

from .commands import SimpleCommand, Unparseable, simple_commands

# Short options that mean a long one, per program: what a person forbidding the long form
# means to forbid in the short form too.
ALIASES: dict[str, dict[str, tuple[str, ...]]] = {
    "git": {"-f": ("--force",), "-d": ("--delete",), "-D": ("--delete", "--force"),
            "-n": ("--dry-run",), "-q": ("--quiet",), "-a": ("--all",)},
    "rm": {"-r": ("--recursive",), "-R": ("--recursive",), "-f": ("--force",),
           "-i": ("--interactive",), "-d": ("--dir",), "-v": ("--verbose",)},
    "cp": {"-r": ("--recursive",), "-R": ("--recursive",), "-f": ("--force",)},
    "mv": {"-f": ("--force",)},
    "chmod": {"-R": ("--recursive",)},
    "chown": {"-R": ("--recursive",)},
    "docker": {"-f": ("--force",), "-a": ("--all",), "-v": ("--volumes",)},
    "kubectl": {"-A": ("--all-namespaces",), "-n": ("--namespace",)},
    "npm": {"-f": ("--force",), "-g": ("--global",)},
    "terraform": {},
}  # fmt: skip


_PROC_ROOT = re.compile(r"^/proc/(self|thread-self|[0-9]+)/root(?=/|$)")  # the root, `/`


@dataclass(frozen=True)
class Pattern:
    literal: str
    program: str
    plain: tuple[str, ...]
    options: frozenset[str]


def compile_pattern(literal: str) -> Pattern | None:
    """The pattern a `forbidden` literal writes; None for one that names no command."""
    try:
        commands = simple_commands(literal)
    except Unparseable:
        return None
    if not commands or commands[0].unknown or not commands[0].words:
        return None
    words = commands[0].words
    program = words[0].rsplit("/", 1)[-1]
    plain, options = plain_and_options(program, words[1:])
    return Pattern(literal, program, plain, frozenset(options))


def program_of(command: SimpleCommand) -> set[str]:
    """The programs a simple command runs or wraps (each layer's first word)."""
    return {layer[0].rsplit("/", 1)[-1] for layer in command.layers if layer}


def equal(wanted: str, word: str) -> bool:
    return wanted == word


def matches(
    pattern: Pattern, command: SimpleCommand, same: Callable[[str, str], bool] = equal
) -> bool:
    """Whether any layer of `command` is one `pattern` names, its words the pattern's when
    `same` says so (a relative path read in the directory a `cd` went to)."""
    for layer in command.layers:
        if not layer or layer[0].rsplit("/", 1)[-1] != pattern.program:
            continue
        plain, options = plain_and_options(pattern.program, layer[1:], pattern.options)
        if _covers(options, pattern.options) and _in_order(pattern.plain, plain, same):
            return True
    return False


def _covers(options: set[str], named: frozenset[str]) -> bool:
    """Whether `options` hold each of `named`, or for a long one a longer option of its
    family (`--force-with-lease` for `--force`)."""
    return all(o in options or in_family(o, options) for o in named)


def in_family(option: str, options: set[str]) -> bool:
    return option.startswith("--") and any(o.startswith(option + "-") for o in options)


def plain_and_options(
    program: str, words: tuple[str, ...], named: frozenset[str] = frozenset()
) -> tuple[tuple[str, ...], set[str]]:
    """A command's plain words in order, and its options in their long form where known.
    For the programs of `ALIASES` (GNU tools and git take any unambiguous start of a long
    option: `rm --rec --for`), a long option of 3 letters or more that starts only one of
    theirs or of the pattern's (`named`) is that one."""
    aliases = ALIASES.get(program, {})
    longs = {o for o in named if o.startswith("--")}
    if program in ALIASES:
        longs |= {o for meant in aliases.values() for o in meant}
    plain: list[str] = []
    options: set[str] = set()
    ended = False
    for word in words:
        if ended or not word.startswith("-") or word == "-":
            plain.append(word)
        elif word == "--":
            ended = True
        elif word.startswith("--"):
            options.add(_whole(word.split("=", 1)[0], longs, program in ALIASES))
        else:
            for letter in word[1:]:
                short = "-" + letter
                options.update(aliases.get(short, (short,)))
    plain = [normalised(w) for w in plain]
    if program == "git" and "push" in plain:
        refs = [w for w in plain if w.startswith("+") and len(w) > 1]
        if refs:
            options.add("--force")
            plain = [w[1:] if w in refs else w for w in plain]
            # `+HEAD:main` pushes to main: the destination is the ref a pattern names
            plain = [*plain, *(w.split(":", 1)[1] for w in refs if ":" in w)]
    return tuple(plain), options


def normalised(word: str) -> str:
    """A path as the file it names: `//`, `/.`, `/..`, a trailing `/` or `/*` (or `/?*`)
    dropped, `~/` and the home written out (`/root` for root) as `~`, `/proc/self/root` as
    `/`. Other words, and a path whose place depends on who runs it or when (`~/..`, `/` for
    root; `~-`; `~alice`: `unplaced`), are themselves."""
    if not word.startswith(("/", "~")) or unplaced(word):
        return word
    path = re.sub("/+", "/", word)
    path = re.sub("/+", "/", _PROC_ROOT.sub("/", path))
    while True:
        path = posixpath.normpath(path)
        parent, last = posixpath.split(path)
        if not parent or not last or last.strip("*?") or "*" not in last:
            return _from_home(path)
        path = parent  # `/*`, `dir/**`, `/?*`: every file in it


def _from_home(path: str) -> str:
    """`path` from the home of whoever runs the guard (the agent, for its hook) as `~`."""
    home = _home()
    if home == "/" or not (path == home or path.startswith(home + "/")):
        return path
    return "~" + path[len(home) :]


def _home() -> str:
    return posixpath.normpath(re.sub("/+", "/", os.path.expanduser("~")))


def unplaced(path: str) -> bool:
    """Whether where a path is depends on who runs it or when: above the home (`~/..`, `/` for
    root), in the previous directory (`~-`, `$OLDPWD`) or another's home (`~alice`)."""
    head = path.split("/", 1)[0]
    if head.startswith("~") and head not in ("~", "~+"):
        return True
    return head == "~" and not posixpath.normpath(path).startswith("~")


def holds_home(path: str) -> bool:
    """Whether a path is a directory the home is in: `/home`, `/Users`, or one above it."""
    if not path.startswith("/"):
        return False
    place = normalised(path)
    return place in ("/home", "/Users") or _home().startswith(place.rstrip("/") + "/")


def _whole(option: str, longs: set[str], abbreviates: bool) -> str:
    if not abbreviates or option in longs or len(option) < 5:
        return option
    started = [name for name in longs if name.startswith(option)]
    return started[0] if len(started) == 1 else option


def _in_order(
    wanted: tuple[str, ...], words: tuple[str, ...], same: Callable[[str, str], bool]
) -> bool:
    remaining = iter(words)
    return all(any(same(want, word) for word in remaining) for want in wanted)
