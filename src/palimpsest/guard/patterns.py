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

`could_match` says whether a command the pattern does not name could still be one when
it runs: its program is the pattern's, and words only known then (`$x`, `$(...)`, a glob
that could yield a missing word, the words xargs adds) could supply what is missing; or it
is an interpreter's inline code that could run a program.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from .commands import SimpleCommand, Unparseable, simple_commands
from .lexer import Word
from .scripts import AWKS
from .wrappers import RUNS_PROGRAMS, interpreter

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
    plain, options = _read(program, words[1:])
    return Pattern(literal, program, plain, frozenset(options))


def program_of(command: SimpleCommand) -> set[str]:
    """The programs a simple command runs or wraps (each layer's first word)."""
    return {layer[0].rsplit("/", 1)[-1] for layer in command.layers if layer}


def matches(pattern: Pattern, command: SimpleCommand) -> bool:
    """Whether any layer of `command` is one `pattern` names."""
    for layer in command.layers:
        if not layer or layer[0].rsplit("/", 1)[-1] != pattern.program:
            continue
        plain, options = _read(pattern.program, layer[1:], pattern.options)
        if _covers(options, pattern.options) and _in_order(pattern.plain, plain):
            return True
    return False


def _covers(options: set[str], named: frozenset[str]) -> bool:
    """Whether `options` hold each of `named`, or for a long one a longer option of its
    family (`--force-with-lease` for `--force`)."""
    return all(o in options or _in_family(o, options) for o in named)


def _in_family(option: str, options: set[str]) -> bool:
    return option.startswith("--") and any(o.startswith(option + "-") for o in options)


def _read(
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
    """A path as the file it names: `//`, `/.`, `/..`, a trailing `/` or `/*` dropped, `~/`
    as `~`. Other words are themselves."""
    if not word.startswith(("/", "~")):
        return word
    path = re.sub("/+", "/", word)
    while True:
        path = posixpath.normpath(path)
        parent, last = posixpath.split(path)
        if not parent or not last or last.strip("*"):
            return path
        path = parent  # `/*`, `dir/**`: every file in it


def _whole(option: str, longs: set[str], abbreviates: bool) -> str:
    if not abbreviates or option in longs or len(option) < 5:
        return option
    started = [name for name in longs if name.startswith(option)]
    return started[0] if len(started) == 1 else option


def _in_order(wanted: tuple[str, ...], words: tuple[str, ...]) -> bool:
    remaining = iter(words)
    return all(any(word == want for word in remaining) for want in wanted)


# Options whose value is the next word, per program: a word there is that value, never a
# word of the pattern (`git commit -m "$(cat msg)"` is a message).
VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "git": frozenset({"-m", "-F", "-C", "-c", "-b", "-B", "-X", "-s", "--message", "--file",
                      "--author", "--date", "--template", "--strategy", "--strategy-option",
                      "--git-dir", "--work-tree", "--namespace", "--config-env"}),
}  # fmt: skip
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
        plain, options = _read(pattern.program, known, pattern.options)
        missing = [[w] for w in pattern.plain if w not in plain]
        aliases = ALIASES.get(pattern.program, {})
        for option in sorted(pattern.options):
            if option not in options and not _in_family(option, options):
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
        if word.dynamic and not after_value_option:
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
        return any(re.fullmatch(hole.glob, t) for t in (target, target + "-x", target + "=x"))
    if hole.many:
        return True  # split at run time into any words
    return _fits(hole.fixed, target) or _fits(normalised(hole.fixed), target)


def _fits(fixed: str, target: str) -> bool:
    """Whether a word holding the characters `fixed` (in order, more around them) could be
    `target`; for an option, also one with a value or of its family (`--$x`, `-$x`)."""
    remaining = iter(target)
    if all(any(c == char for c in remaining) for char in fixed):
        return True
    return target.startswith("-") and fixed.startswith("-")
