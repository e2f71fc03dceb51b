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
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "busybox"})
RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until",
                      "!", "{", "}", "esac", "in", "function", "coproc"})  # fmt: skip
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")


@dataclass(frozen=True)
class Wrapper:
    """How a command that runs another takes its options: those followed by a value, and
    how many words (a duration...) come before the command it runs."""

    values: frozenset[str] = frozenset()  # short letters and long names taking a value
    positionals: int = 0


WRAPPERS = {
    "env": Wrapper(frozenset({"u", "C", "--unset", "--chdir"})),
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
    for words, feeds in _split(lexed):
        found.extend(_unwrap(words, feeds, depth))
    return found


def _split(lexed: Lexed) -> list[tuple[list[Word], list[str]]]:
    """Simple commands as word lists, each with the texts fed to its standard input by a
    here-document or here-string (a shell reading them runs them)."""
    bodies = dict(lexed.heredocs)
    commands: list[tuple[list[Word], list[str]]] = []
    words: list[Word] = []
    feeds: list[str] = []
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
                commands.append((words, feeds))
            words, feeds = [], []
    if words:
        commands.append((words, feeds))
    return commands


def _next_word(lexed: Lexed, index: int) -> Word | None:
    following = lexed.tokens[index + 1 : index + 2]
    return following[0].word if following and following[0].kind == "word" else None


def _unwrap(words: list[Word], feeds: list[str], depth: int) -> list[SimpleCommand]:
    layers: list[tuple[str, ...]] = []
    nested: list[SimpleCommand] = []
    while words:
        first = words[0]
        if not first.quoted and (first.text in RESERVED or _ASSIGNMENT.match(first.text)):
            words = words[1:]
            continue
        layers.append(tuple(w.text for w in words))
        program = _program(first.text)
        if first.dynamic:
            return [*nested, SimpleCommand(tuple(layers), unknown=True)]
        if program == "command" and any(w.text in ("-v", "-V") for w in words[1:2]):
            return nested  # `command -v git` only says where git is
        split = _env_split(words[1:]) if program == "env" else None
        if split is not None:  # `env -S 'cmd args'` splits its text as a command line
            return [*nested, *_script(split, depth, layers)]
        if program in WRAPPERS:
            words = _after_options(words[1:], WRAPPERS[program])
            continue
        if program == "eval":
            return [*nested, *_script([w for w in words[1:]], depth, layers)]
        if program in SHELLS:
            script = _shell_script(words[1:])
            if script is not None:
                return [*nested, *_script([script], depth, layers)]
            if len([w for w in words[1:] if not w.text.startswith("-")]) == 0:
                for fed in feeds:
                    nested.extend(simple_commands(fed, depth + 1))
        if program == "find":
            nested.extend(_find_exec(words, depth))
        break
    if not layers:
        return nested
    return [*nested, SimpleCommand(tuple(layers))]


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
        for flag in ("-S", "--split-string="):
            if text.startswith(flag) and text != flag:
                return [Word(text[len(flag) :], dynamic=word.dynamic), *arguments[index + 1 :]]
        if text in ("-S", "--split-string"):
            return arguments[index + 1 :]
    return None


def _shell_script(arguments: list[Word]) -> Word | None:
    """The script a shell is given with `-c` (`bash -lc '...'`), if any."""
    for index, word in enumerate(arguments):
        text = word.text
        if not text.startswith("-") or text == "-":
            return None
        if not text.startswith("--") and "c" in text[1:]:
            return arguments[index + 1] if index + 1 < len(arguments) else None
    return None


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
            found.extend(_unwrap(words[i + 1 : j], [], depth + 1))
            i = j
        i += 1
    return found


__all__ = ["SEPARATOR", "SimpleCommand", "Unparseable", "simple_commands"]
