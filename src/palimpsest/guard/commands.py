"""From a command line to the simple commands it would run, wrappers and shells seen through.

Each simple command is kept as its layers, outermost first: `sudo -u ci git push` is
`sudo -u ci git push` and `git push`, so a pattern may name the wrapper or the program.
Leading `VAR=value` assignments and reserved words (`if`, `then`, `do`, `{`, `!`...) are
dropped; the script of `bash -c`, `sh -c`, `eval`, `$(...)`, backticks, a here-document
or here-string fed to a shell, an alias, a git alias, `watch`, `flock -c` and `find -exec`
are read the same way, to a bounded depth. Each layer keeps its words as read, so that
a pattern can tell which are only known when the command runs (`$x`, `$(...)`, a glob, the
words xargs adds); an interpreter's inline code (`python3 -c`) is kept as it is written.
"""

from __future__ import annotations

import contextlib
import posixpath
import re
from dataclasses import dataclass, field

from .lexer import SEPARATOR, Lexed, Unparseable, Word, lex, substitutions
from .scripts import (
    TRUSTED,
    alias_text,
    command_option,
    env_split,
    git_aliases,
    inline_code,
    option_lines,
    reads_code_from_input,
    sets_trusted,
    shell_run,
    variable_lines,
    watch_execs,
)
from .wrappers import WRAPPERS, Wrapper, interpreter

MAX_DEPTH = 8
MAX_LAYERS = 16  # wrappers around one command: more is no command typed by hand
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "rbash", "yash",
                    "posh", "fish", "csh", "tcsh"})  # fmt: skip
COMMAND_TAKERS = frozenset({"su", "script"})  # run `-c CMD` or `--command CMD`
STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"})
FD_FILES = ("/dev/fd/", "/proc/self/fd/", "/dev/stdin", "/proc/")  # open descriptors' files
RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until",
                      "!", "{", "}", "esac", "in", "function", "coproc"})  # fmt: skip
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_WRITES = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
SCHEDULERS = frozenset({"at", "batch"})  # read commands from their input, run them later
# tmux's options that take a value: what else it is given may be a command line.
TMUX = Wrapper(frozenset({"s", "n", "t", "c", "e", "F", "x", "y", "L", "S", "f", "T"}))
DECLARERS = frozenset({"declare", "typeset", "export", "local", "readonly"})
# The words xargs (or parallel) adds to its command: read at run time, any number.
FED = Word("", dynamic=True, many=True)


@dataclass(frozen=True)
class SimpleCommand:
    """One command that would run. `unknown` says its program or script is not known
    here (`$CMD ...`, `eval "$x"`): only what is written can be matched. `argv` holds each
    layer's words as read (with the words xargs adds), `code` an interpreter's inline code."""

    layers: tuple[tuple[str, ...], ...]  # outermost first; the last is what finally runs
    unknown: bool = False
    argv: tuple[tuple[Word, ...], ...] = field(default=(), compare=False, repr=False)
    code: Word | None = field(default=None, compare=False)

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
    shell reading them runs them), and whether a pipe, or a redirect from what is not
    written here (`< <(...)`, `<&3`, `< /dev/fd/3`), does (what it runs is unknown)."""

    feeds: list[str]
    piped: bool = False
    written: frozenset[str] = frozenset()  # files the line writes: a script run from one is
    # not written out here (`cat > s.sh <<EOF ... EOF; bash s.sh`)


def _split(lexed: Lexed) -> list[tuple[list[Word], _Input]]:
    """Simple commands as word lists, each with what feeds its standard input."""
    bodies = dict(lexed.heredocs)
    written = _written(lexed)
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
                target = _next_word(lexed, index)
                piped = piped or (token.op in ("<", "<&", "<>") and _unseen(token.op, target))
        else:
            if words:
                commands.append((words, _Input(feeds, piped, written)))
            words, feeds = [], []
            piped = token.op in ("|", "|&")
    if words:
        commands.append((words, _Input(feeds, piped, written)))
    return commands


def _written(lexed: Lexed) -> frozenset[str]:
    """The files a line's output redirections write (`> s.sh`, `>> s.sh`), as paths."""
    targets = (_next_word(lexed, i) for i, t in enumerate(lexed.tokens)
               if t.kind == "redirect" and t.op in _WRITES)  # fmt: skip
    return frozenset(posixpath.normpath(w.text) for w in targets if w is not None and w.text)


def _unseen(op: str, target: Word | None) -> bool:
    """Whether an input redirect reads what is not written here: another descriptor, a
    process substitution, a variable's file (a plain file is a script file, not read)."""
    if op == "<&" or target is None or target.dynamic:
        return True
    return target.text.startswith(FD_FILES)


def _next_word(lexed: Lexed, index: int) -> Word | None:
    following = lexed.tokens[index + 1 : index + 2]
    return following[0].word if following and following[0].kind == "word" else None


class _Layers:
    """The layers of one simple command as they are found, outermost first."""

    def __init__(self) -> None:
        self.texts: list[tuple[str, ...]] = []
        self.argv: list[tuple[Word, ...]] = []
        self.fed = False  # under xargs: more words come at run time

    def add(self, words: list[Word]) -> None:
        if len(self.texts) == MAX_LAYERS:
            raise Unparseable(f"more than {MAX_LAYERS} wrappers around one command")
        self.texts.append(tuple(w.text for w in words))
        self.argv.append((*words, FED) if self.fed else tuple(words))

    def command(self, *, unknown: bool = False, code: Word | None = None) -> SimpleCommand:
        return SimpleCommand(tuple(self.texts), unknown, tuple(self.argv), code)


def _unwrap(words: list[Word], given: _Input, depth: int) -> list[SimpleCommand]:
    if depth > MAX_DEPTH:
        raise Unparseable(f"commands nest more than {MAX_DEPTH} deep")
    layers = _Layers()
    nested: list[SimpleCommand] = []
    start = 0  # an index, not a slice a word: a long line of assignments stays linear
    while start < len(words):
        first = words[start]
        if not first.quoted and first.text in ("function", "coproc"):
            start += 1 + _names_a_group(words, start)  # `function f {`, `coproc X {`
            continue
        if not first.quoted and first.text in RESERVED:
            start += 1
            continue
        if _ASSIGNMENT.match(first.text):
            nested.extend(_stored(first, depth))
            start += 1
            continue
        rest = words[start:]
        layers.add(rest)
        program = _program(first.text)
        if first.dynamic or ("/" in first.text and posixpath.normpath(first.text) in given.written):
            return [*nested, layers.command(unknown=True)]  # `$CMD`, or `./s.sh` made here
        inner = _inner(program, rest, given, layers, depth)
        if inner is not None:
            return [*nested, *inner]
        if program in WRAPPERS:
            wrapper = WRAPPERS[program]
            layers.fed = layers.fed or wrapper.feeds
            words, start = _after_options(rest[1:], wrapper), 0
            continue
        nested.extend(_nested(program, rest, given, depth))
        break
    if not layers.texts:
        return nested
    return [*nested, layers.command()]


def _inner(
    program: str, rest: list[Word], given: _Input, layers: _Layers, depth: int
) -> list[SimpleCommand] | None:
    """What a command that runs the text of others runs (its own layer included), or None
    when it is not one: then it is a wrapper, or a program."""
    arguments = rest[1:]
    if program == "command" and any(w.text in ("-v", "-V") for w in arguments[:1]):
        return []  # `command -v git` only says where git is
    split = env_split(arguments) if program == "env" else None
    if split is not None:  # `env -S 'cmd args'` splits its text as a command line
        return _script(split, depth, layers)
    if program in ("eval", "alias"):  # an alias's text runs wherever its name is typed
        texts = arguments if program == "eval" else [alias_text(w) for w in arguments]
        return _script(texts, depth, layers)
    if program in COMMAND_TAKERS or program == "flock":
        after = arguments if program != "flock" else _after_options(arguments, WRAPPERS[program])
        script = command_option(after[:2] if program == "flock" else after)
        if script is not None:  # `su -c 'CMD' user`, `flock FILE -c 'CMD'`
            return _script([script], depth, layers)
    if program == "sg" and len(arguments) > 1:  # `sg GROUP [-c] CMD`: a line for `sh -c`
        return _script([w for w in arguments[1:] if w.text != "-c"], depth, layers)
    if program == "watch" and not watch_execs(arguments):  # it hands its words to `sh -c`
        return _script(_after_options(arguments, WRAPPERS[program]), depth, layers)
    if program == "trap" and len(rest) > 2 and not arguments[0].text.startswith("-"):
        return _script(arguments[:1], depth, layers)  # `trap 'CMD' EXIT` runs CMD
    if program in SHELLS:
        return _shell(arguments, given, layers, depth)
    if program in SCHEDULERS and not any(w.text.startswith("-f") for w in arguments):
        return _fed(given, layers, depth)  # `echo CMD | at now`: a shell runs it later
    if program == "tmux":  # `tmux new 'CMD'`, `tmux send-keys 'CMD' Enter`: each may run
        lines = [w for w in _after_options(arguments, TMUX) if not w.text.startswith("-")]
        return [layers.command(), *[c for w in lines for c in _script([w], depth, _Layers())]]
    if program in ("source", ".") and arguments:
        return _sourced(arguments[0], given, layers, depth)
    name = interpreter(program)
    if name is not None:
        code = inline_code(name, arguments)
        if code is None and reads_code_from_input(name, arguments) and given.piped:
            code = Word("", dynamic=True)  # `curl ... | python3`: code not written here
        elif code is None and reads_code_from_input(name, arguments) and given.feeds:
            code = Word("\n".join(given.feeds))  # `python3 - <<EOF`
        if code is not None:
            return [layers.command(code=code)]
    return None


def _nested(program: str, rest: list[Word], given: _Input, depth: int) -> list[SimpleCommand]:
    """Commands a program runs besides itself: `find -exec`'s, a git alias's, an option's
    (`rsync -e CMD`, `git -c core.pager=CMD`), and those in the values a declaration
    stores."""
    if program in DECLARERS:
        return [found for word in rest[1:] for found in _stored(word, depth)]
    if sets_trusted(program, rest[1:]):  # `read HOME`, `printf -v CDPATH /`
        return [SimpleCommand((), unknown=True)]
    if program == "find":
        return _find_exec(rest, depth)
    lines = option_lines(program, rest[1:])
    if program == "git":
        lines += git_aliases(rest[1:])
    return [found for line in lines for found in _script([line], depth, _Layers())]


def _shell(
    arguments: list[Word], given: _Input, layers: _Layers, depth: int
) -> list[SimpleCommand]:
    run = shell_run(arguments)
    if layers.fed:  # `xargs -I{} sh -c '{}'`, `parallel sh -c ::: CMD`: made at run time
        read = _script([run.script], depth, layers)[1:] if run.script is not None else []
        return [*read, layers.command(unknown=True)]
    if run.script is not None:
        return _script([run.script], depth, layers)
    source = run.file
    if source is not None and source.text in STDIN_FILES:
        return _fed(given, layers, depth)
    if source is not None and _unwritten(source, given):
        return [layers.command(unknown=True)]  # `bash <(curl ...)`, `bash /dev/fd/3 3<...`
    if run.reads_input:
        return _fed(given, layers, depth)
    return [layers.command()]  # a script file: what it holds is not read


def _sourced(script: Word, given: _Input, layers: _Layers, depth: int) -> list[SimpleCommand]:
    if script.text in STDIN_FILES:
        return _fed(given, layers, depth)
    if _unwritten(script, given):  # `source <(...)`, `. "$file"`
        return [layers.command(unknown=True)]
    return [layers.command()]


def _unwritten(script: Word, given: _Input) -> bool:
    """Whether a script file a shell runs holds what is not written here: a process
    substitution, a variable, another descriptor, or a file this line writes."""
    text = script.text
    return script.dynamic or text.startswith(FD_FILES) or posixpath.normpath(text) in given.written


def _fed(given: _Input, layers: _Layers, depth: int) -> list[SimpleCommand]:
    """What a shell reading its standard input runs: its here-documents and here-strings,
    or, from a pipe, what is not written here."""
    if given.piped:  # `... | bash`: it runs whatever the pipe holds
        return [layers.command(unknown=True)]
    found = [layers.command()]
    for fed in given.feeds:
        found.extend(simple_commands(fed, depth + 1))
    return found


def _stored(assignment: Word, depth: int) -> list[SimpleCommand]:
    """The commands a value stored in a variable may run: `$(...)` or backticks kept in it
    unexpanded (bash runs them when an arithmetic expansion reads the variable: `x='a[$(cmd)]';
    echo $((x))`), and a git alias given in git's environment (`GIT_CONFIG_VALUE_0`)."""
    name, equals, value = assignment.text.partition("=")
    if not equals:
        return []
    if name in TRUSTED:
        return [SimpleCommand((), unknown=True)]
    lines = variable_lines(name, value)
    # not a complete substitution: arithmetic could not run it either
    with contextlib.suppress(Unparseable):
        lines += substitutions(value) if "$(" in value or "`" in value else []
    if lines and assignment.dynamic:
        return [SimpleCommand((), unknown=True)]
    return [found for line in lines for found in simple_commands(line, depth + 1)]


def _names_a_group(words: list[Word], start: int) -> int:
    """1 when `function`/`coproc` at `start` is followed by a name and then its body's
    `{` or `(` (a name is no program), else 0 (`coproc git push`: git is the program)."""
    body = start + 2
    if words[start].text == "function" and start + 1 < len(words):
        return 1
    return 1 if body < len(words) and words[body].text in ("{", "(") else 0


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


def _script(words: list[Word], depth: int, layers: _Layers) -> list[SimpleCommand]:
    """What `eval` or `sh -c` runs: its text read as a command line, or unknown when the
    text is not written out (`eval "$x"`)."""
    if any(w.dynamic for w in words):
        return [layers.command(unknown=True)]
    text = " ".join(w.text for w in words)
    own = [layers.command()] if layers.texts else []
    return [*own, *simple_commands(text, depth + 1)]


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
