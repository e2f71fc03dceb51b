"""Words only known when a command runs, and whether they could make it one a pattern names.

`could_match` says whether a command the pattern does not name as written could still be
one when it runs: its program is the pattern's, its subcommand (for git, npm...) is not
written out as another, and words only known then could supply what is missing. An unquoted
`$x`, `$(...)`, `"$@"`, a brace list and the words xargs adds may become any words; a quoted
`"$x"` is one word its written characters fit; a glob yields names that fit it. Or it is an
interpreter's inline code that could run a program (`could_run`).
"""

from __future__ import annotations

import os
import re

from .commands import SimpleCommand
from .lexer import Word
from .patterns import (
    ALIASES,
    Pattern,
    holds_home,
    in_family,
    normalised,
    plain_and_options,
    unplaced,
)
from .scripts import AWKS
from .wrappers import RUNS_PROGRAMS, interpreter

# Options whose value is the next word, per program: a word there is that value, never a
# word of the pattern (`git commit -m "$(cat msg)"` is a message).
VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "git": frozenset({"-m", "-F", "-C", "-c", "-b", "-B", "-X", "-s", "--message", "--file",
                      "--author", "--date", "--template", "--strategy", "--strategy-option",
                      "--git-dir", "--work-tree", "--namespace", "--config-env"}),
}  # fmt: skip
# Where homes are: the home a glob may yield (`/home/*`), whoever runs it.
HOMES = ("/home/user", "/Users/user", "/root")
# Programs whose first plain word is the subcommand they run: once it is written out and is
# not the pattern's, no word known later makes the command the pattern's (`git log -n $N`
# never pushes, whatever N holds).
SUBCOMMANDS = frozenset({"git", "docker", "podman", "kubectl", "helm", "npm", "yarn", "pnpm",
                         "terraform", "tofu", "gh", "cargo", "go", "pip", "pip3", "systemctl",
                         "apt", "apt-get", "brew", "dotnet", "gcloud", "az", "aws"})  # fmt: skip


def could_match(pattern: Pattern, command: SimpleCommand) -> bool:
    """Whether `command`, which `pattern` does not name as written, could be one it names
    when it runs: see the module's docstring."""
    if command.code is not None:
        return could_run(command)
    for layer in command.argv:
        if not layer or _program(layer[0].text) != pattern.program:
            continue
        known, holes = _known_and_holes(pattern.program, layer[1:])
        if not holes or _other_subcommand(pattern, layer[1:]):
            continue
        plain, options = plain_and_options(pattern.program, known, pattern.options)
        missing = [[w] for w in pattern.plain if w not in plain]
        aliases = ALIASES.get(pattern.program, {})
        for option in sorted(pattern.options):
            if option not in options and not in_family(option, options):
                shorts = [short for short, meant in aliases.items() if option in meant]
                missing.append([option, *shorts])
        if _supplied(missing, holes):
            return True
    return False


def could_run(command: SimpleCommand) -> bool:
    """Whether an interpreter's inline code could run a program (`os.system`, backticks,
    `subprocess`, awk's `| "cmd"`): what it would run is not read here."""
    code = command.code
    if code is None:
        return False
    if code.dynamic:
        return True
    name = interpreter(_program(command.words[0])) if command.words else None
    return bool(RUNS_PROGRAMS.search(code.text)) or (name in AWKS and "|" in code.text)


def _program(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _other_subcommand(pattern: Pattern, words: tuple[Word, ...]) -> bool:
    """Whether the command's subcommand is written out and is not the pattern's."""
    if pattern.program not in SUBCOMMANDS or not pattern.plain:
        return False
    takes_value = VALUE_OPTIONS.get(pattern.program, frozenset())
    value = False
    for word in words:
        if value:  # `git -C "$dir" log`: the value of an option, whatever it holds
            value = False
        elif word.dynamic:
            return False  # the subcommand itself is only known at run time
        elif word.text.startswith("-"):
            value = word.text in takes_value
        else:
            return word.text != pattern.plain[0]
    return False


def _known_and_holes(program: str, words: tuple[Word, ...]) -> tuple[tuple[str, ...], list[Word]]:
    """The words written out, and those only known at run time (values of options that take
    one left out)."""
    takes_value = VALUE_OPTIONS.get(program, frozenset())
    known: list[str] = []
    holes: list[Word] = []
    after_value_option = False
    for word in words:
        if unplaced(word.text) and not after_value_option:
            holes.append(Word("", dynamic=True))  # `~/..` is `/` for root, `/home` for others
        elif holds_home(word.text) and not word.dynamic and not after_value_option:
            holes.append(Word("~", dynamic=True))  # `/home` holds the home: a rule's `~...`
        elif word.dynamic and not after_value_option:
            holes.append(word)
        elif not word.dynamic:
            known.append(word.text)
        after_value_option = not word.dynamic and word.text in takes_value
    return tuple(known), holes


def _supplied(missing: list[list[str]], holes: list[Word]) -> bool:
    """Whether the words only known at run time could be all the missing ones: a word that
    may become several may be any of them; one that stays a single word, one (and only a
    word its written characters fit: `"fix: $x"` is never `--force`)."""
    if not missing:
        return True  # written out, the pattern matches but for a word it holds: no less
    single = [h for h in holes if not h.many]
    spread = [h for h in holes if h.many]
    left = []
    for wanted in missing:
        if any(_yields(hole, target) for hole in spread for target in wanted):
            continue
        left.append(wanted)
    used: set[int] = set()
    for wanted in left:
        fits = [i for i, hole in enumerate(single) if i not in used
                and any(_yields(hole, target) for target in wanted)]  # fmt: skip
        if not fits:
            return False
        used.add(fits[0])
    return True


def _yields(hole: Word, target: str) -> bool:
    """Whether a word only known at run time could be `target` (or an option of its family,
    or a path that is `target` normalised)."""
    if hole.glob is not None:  # a glob yields names that fit it
        return any(re.fullmatch(hole.glob, t) for t in _globbed(hole, target))
    if hole.many:
        return True  # split at run time into any words
    return _fits(hole.fixed, target) or _fits(normalised(hole.fixed), target)


def _globbed(hole: Word, target: str) -> tuple[str, ...]:
    """`target` as a glob would yield it: an option with a value or of its family; a path in
    the home as a path under any home (`/home/*` holds `~`), or as written for a glob written
    from `~/`. A file a glob names `~` is never the home."""
    if not target.startswith("~"):
        return (target, f"{target}-x", f"{target}=x")
    homes = (*HOMES, os.path.expanduser("~"))
    written = (target,) if hole.text.startswith("~") else ()
    return (*written, *(home + target[1:] + end for home in homes for end in ("", "/")))


def _fits(fixed: str, target: str) -> bool:
    """Whether a word holding the characters `fixed` (in order, more around them) could be
    `target`; for an option, also one with a value or of its family (`--$x`, `-$x`)."""
    remaining = iter(target)
    if all(any(c == char for c in remaining) for char in fixed):
        return True
    return target.startswith("-") and fixed.startswith("-")
