"""From a command line to the simple commands it would run, wrappers and shells seen through.

Each simple command is kept as its layers, outermost first: `sudo -u ci git push` is
`sudo -u ci git push` and `git push`, so a pattern may name the wrapper or the program.
Leading `VAR=value` assignments and reserved words (`if`, `then`, `do`, `{`, `!`...) are
dropped; the script of `bash -c`, `sh -c`, `eval`, `$(...)`, backticks, a here-document
or here-string fed to a shell, and `find -exec` are read the same way, to a bounded depth.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .lexer import SEPARATOR, Lexed, Unparseable, Word, lex

MAX_DEPTH = 8
MAX_LAYERS = 16  # wrappers around one command: more is no command typed by hand
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash"})
COMMAND_TAKERS = frozenset({"su", "script"})  # run `-c CMD` or `--command CMD`
STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
# Shell options followed by a value (`bash -o pipefail -c '...'`), which is no script.
SHELL_VALUES = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until",
                      "!", "{", "}", "esac", "in", "function", "coproc"})  # fmt: skip
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")


@dataclass(frozen=True)
class Wrapper:
    """How a command that runs another takes its options: those followed by a value, and
    how many words (a duration...) come before the command it runs."""

    values: frozenset[str] = frozenset()  # short letters and long names taking a value
    positionals: int = 0
    dash: bool = False  # a lone `-` is one of its options (env's), not a program


WRAPPERS = {
    "env": Wrapper(frozenset({"u", "C", "--unset", "--chdir"}), dash=True),
    "sudo": Wrapper(
        frozenset(
            {
                "u",
                "g",
                "C",
                "D",
                "h",
                "p",
                "r",
                "t",
                "U",
                "T",
                "--user",
                "--group",
                "--chdir",
                "--host",
                "--prompt",
                "--role",
                "--type",
                "--other-user",
                "--command-timeout",
            }
        )
    ),
    "doas": Wrapper(frozenset({"u"})),
    "busybox": Wrapper(),  # `busybox sh -c '...'`: the applet is the program
    "setsid": Wrapper(),
    "unbuffer": Wrapper(),
    "ionice": Wrapper(frozenset({"c", "n", "--class", "--classdata"})),
    "chrt": Wrapper(positionals=1),  # its priority
    "taskset": Wrapper(positionals=1),  # its mask or list of processors
    "flock": Wrapper(frozenset({"w", "E", "--timeout", "--conflict-exit-code"}), positionals=1),
    "chroot": Wrapper(frozenset({"--userspec", "--groups"}), positionals=1),
    "runuser": Wrapper(frozenset({"u", "g", "G", "--user", "--group", "--supp-group"})),
    "watch": Wrapper(frozenset({"n", "--interval"})),
    "nohup": Wrapper(),
    "time": Wrapper(frozenset({"f", "o", "--format", "--output"})),
    "command": Wrapper(),
    "builtin": Wrapper(),
    "exec": Wrapper(frozenset({"a"})),
    "nice": Wrapper(frozenset({"n", "--adjustment"})),
    "stdbuf": Wrapper(frozenset({"i", "o", "e", "--input", "--output", "--error"})),
    "timeout": Wrapper(frozenset({"s", "k", "--signal", "--kill-after"}), positionals=1),
    "xargs": Wrapper(
        frozenset(
            {
                "I",
                "n",
                "P",
                "d",
                "E",
                "L",
                "s",
                "a",
                "--arg-file",
                "--delimiter",
                "--max-args",
                "--max-procs",
                "--replace",
                "--max-lines",
                "--max-chars",
                "--eof",
            }
        )
    ),
}


@dataclass(frozen=True)
class SimpleCommand:
    """One command that would run. `unknown` says its program or script is not known
    here (`$CMD ...`, `eval "$x"`): only what is written can be matched."""

    layers: tuple[tuple[str, ...], ...]  # outermost first; the last is what finally runs
    unknown: bool = False

    @property
    def words(self) -> tuple[str, ...]:
        return self.layers[-1] if self.layers else ()


def simple_commands(text: str, depth: int = 0) -> list[SimpleCommand]:
    """Every simple command `text` would run, nested ones included; `Unparseable` when
    it cannot be read with certainty."""
    if depth > MAX_DEPTH:
        raise Unparseable(f"commands nest more than {MAX_DEPTH} deep")
    lexed = lex(text)
    found: list[SimpleCommand] = []
    for inner in lexed.inner:
        found.extend(simple_commands(inner, depth + 1))
    for words, given in _split(lexed):
        found.extend(_unwrap(words, given, depth))
    return found


@dataclass
class _Input:
    """What feeds a simple command's standard input: here-documents and here-strings (a
    shell reading them runs them), and whether a pipe does (what it runs is unknown)."""

    feeds: list[str]
    piped: bool = False


def _split(lexed: Lexed) -> list[tuple[list[Word], _Input]]:
    """Simple commands as word lists, each with what feeds its standard input."""
    bodies = dict(lexed.heredocs)
    commands: list[tuple[list[Word], _Input]] = []
    words: list[Word] = []
    feeds: list[str] = []
    piped = False
    skip_next = False
    for index, token in enumerate(lexed.tokens):
        if token.kind == "word":
            assert token.word is not None
            if skip_next:
                skip_next = False
                continue
            words.append(token.word)
        elif token.kind == "redirect":
            if token.op in ("<<", "<<-"):
                feeds.append(bodies.get(index, ""))
            elif token.op == "<<<":
                here = _next_word(lexed, index)
                if here is not None:
                    feeds.append(here.text)
                skip_next = True
            else:
                skip_next = True  # the redirect's target is a file, not an argument
        else:
            if words:
                commands.append((words, _Input(feeds, piped)))
            words, feeds = [], []
            piped = token.op in ("|", "|&")
    if words:
        commands.append((words, _Input(feeds, piped)))
    return commands


def _next_word(lexed: Lexed, index: int) -> Word | None:
    following = lexed.tokens[index + 1 : index + 2]
    return following[0].word if following and following[0].kind == "word" else None


def _unwrap(words: list[Word], given: _Input, depth: int) -> list[SimpleCommand]:
    if depth > MAX_DEPTH:
        raise Unparseable(f"commands nest more than {MAX_DEPTH} deep")
    layers: list[tuple[str, ...]] = []
    nested: list[SimpleCommand] = []
    start = 0  # an index, not a slice a word: a long line of assignments stays linear
    while start < len(words):
        first = words[start]
        if not first.quoted and first.text in ("function", "coproc"):
            start += 1 + _names_a_group(words, start)  # `function f {`, `coproc X {`
            continue
        if not first.quoted and (first.text in RESERVED or _ASSIGNMENT.match(first.text)):
            start += 1
            continue
        if len(layers) == MAX_LAYERS:
            raise Unparseable(f"more than {MAX_LAYERS} wrappers around one command")
        rest = words[start:]
        layers.append(tuple(w.text for w in rest))
        program = _program(first.text)
        if first.dynamic:
            return [*nested, SimpleCommand(tuple(layers), unknown=True)]
        if program == "command" and any(w.text in ("-v", "-V") for w in rest[1:2]):
            return nested  # `command -v git` only says where git is
        split = _env_split(rest[1:]) if program == "env" else None
        if split is not None:  # `env -S 'cmd args'` splits its text as a command line
            return [*nested, *_script(split, depth, layers)]
        if program in WRAPPERS:
            words, start = _after_options(rest[1:], WRAPPERS[program]), 0
            continue
        if program == "eval":
            return [*nested, *_script(rest[1:], depth, layers)]
        if program in COMMAND_TAKERS:
            script = _command_option(rest[1:])
            if script is not None:  # `su -c 'CMD' user`, `script -qc 'CMD' /dev/null`
                return [*nested, *_script([script], depth, layers)]
        if program == "trap" and len(rest) > 2 and not rest[1].text.startswith("-"):
            return [*nested, *_script(rest[1:2], depth, layers)]  # `trap 'CMD' EXIT` runs CMD
        if program in SHELLS:
            script, reads_input = _shell_script(rest[1:])
            if script is not None:
                return [*nested, *_script([script], depth, layers)]
            if reads_input:
                if given.piped:  # `... | bash`: it runs whatever the pipe holds
                    return [*nested, SimpleCommand(tuple(layers), unknown=True)]
                for fed in given.feeds:
                    nested.extend(simple_commands(fed, depth + 1))
        if program in ("source", ".") and len(rest) > 1:
            script = rest[1]
            if script.dynamic:  # `source <(...)`, `. "$file"`: it runs what is not written
                return [*nested, SimpleCommand(tuple(layers), unknown=True)]
            if script.text in STDIN_FILES:
                if given.piped:
                    return [*nested, SimpleCommand(tuple(layers), unknown=True)]
                for fed in given.feeds:
                    nested.extend(simple_commands(fed, depth + 1))
        if program == "find":
            nested.extend(_find_exec(rest, depth))
        break
    if not layers:
        return nested
    return [*nested, SimpleCommand(tuple(layers))]


def _names_a_group(words: list[Word], start: int) -> int:
    """1 when `function`/`coproc` at `start` is followed by a name and then its body's
    `{` or `(` (a name is no program), else 0 (`coproc git push`: git is the program)."""
    body = start + 2
    if words[start].text == "function" and start + 1 < len(words):
        return 1
    return 1 if body < len(words) and words[body].text in ("{", "(") else 0


def _command_option(arguments: list[Word]) -> Word | None:
    """The command given by `-c CMD` (or in a cluster, `-qc CMD`) or `--command[=]CMD`."""
    for index, word in enumerate(arguments):
        text = word.text
        if text == "--":
            return None
        if text.startswith("--command="):
            return Word(text[len("--command=") :], dynamic=word.dynamic)
        is_short = text.startswith("-") and not text.startswith("--") and text.endswith("c")
        if (text == "--command" or is_short) and index + 1 < len(arguments):
            return arguments[index + 1]
    return None


def _program(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _after_options(words: list[Word], wrapper: Wrapper) -> list[Word]:
    """The words after a wrapper's options (and its positionals: timeout's duration)."""
    i = 0
    while i < len(words):
        text = words[i].text
        if text == "--":
            i += 1
            break
        if text == "-" and wrapper.dash:
            i += 1  # `env -`: an empty environment, no program
            continue
        if not text.startswith("-") or text == "-":
            break
        if text.startswith("--"):
            i += 2 if "=" not in text and text in wrapper.values else 1
        elif text[-1] in wrapper.values and (len(text) == 2 or text[1:].isalpha()):
            i += 2  # `-u root`, `-Eu root`: the value is the next word
        else:
            i += 1  # flags, or a value attached (`-uroot`, `-oL`)
    i += min(wrapper.positionals, len(words) - i)
    return words[i:]


def _env_split(arguments: list[Word]) -> list[Word] | None:
    """What follows `env -S` / `--split-string`, the string first, if it is given."""
    for index, word in enumerate(arguments):
        text = word.text
        if not text.startswith("-") or text == "--":
            return None
        if text.startswith("--split-string="):
            string = text[len("--split-string=") :]
            return [Word(string, dynamic=word.dynamic), *arguments[index + 1 :]]
        if text == "--split-string":
            return arguments[index + 1 :]
        cluster = _ENV_SPLIT.match(text)  # `-S 'cmd'`, `-S'cmd'`, `-vS'cmd'`
        if cluster is not None:
            string = text[cluster.end() :]
            if not string:
                return arguments[index + 1 :]
            return [Word(string, dynamic=word.dynamic), *arguments[index + 1 :]]
    return None


_ENV_SPLIT = re.compile(r"-[iv0]*S")


def _shell_script(arguments: list[Word]) -> tuple[Word | None, bool]:
    """The script a shell is given with `-c` (`bash -lc '...'`, `bash -o pipefail -c
    '...'`, `bash -c -- '...'`), if any; and, when none, whether it reads its commands
    from its standard input (no script file named, or `-s`)."""
    index = 0
    while index < len(arguments):
        text = arguments[index].text
        if text == "--" or not text.startswith(("-", "+")) or text in ("-", "+"):
            break
        if text in SHELL_VALUES:
            index += 2
            continue
        if not text.startswith("--") and "c" in text[1:]:
            after = arguments[index + 1 :]
            if after and after[0].text == "--":
                after = after[1:]
            return (after[0] if after else None), False
        if not text.startswith("--") and "s" in text[1:]:
            return None, True  # `sh -s`: commands from the input, the rest are arguments
        index += 1
    if index < len(arguments) and arguments[index].text == "--":
        index += 1
    return None, index >= len(arguments)


def _script(words: list[Word], depth: int, layers: list[tuple[str, ...]]) -> list[SimpleCommand]:
    """What `eval` or `sh -c` runs: its text read as a command line, or unknown when the
    text is not written out (`eval "$x"`)."""
    if any(w.dynamic for w in words):
        return [SimpleCommand(tuple(layers), unknown=True)]
    text = " ".join(w.text for w in words)
    return [SimpleCommand(tuple(layers)), *simple_commands(text, depth + 1)]


def _find_exec(words: list[Word], depth: int) -> list[SimpleCommand]:
    """The commands `find ... -exec CMD ... ;` runs, one per `-exec`/`-execdir`/`-ok`."""
    found: list[SimpleCommand] = []
    i = 0
    while i < len(words):
        if words[i].text in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(words) and words[j].text not in (";", "+"):
                j += 1
            found.extend(_unwrap(words[i + 1 : j], _Input([]), depth + 1))
            i = j
        i += 1
    return found


__all__ = ["SEPARATOR", "SimpleCommand", "Unparseable", "simple_commands"]
