"""Where a command holds the text of other commands: a shell's `-c` script or the file it
reads, `env -S`, `su -c`, `flock FILE -c`, `watch`, an alias, a git alias given with `-c
alias.NAME=...`, an interpreter's inline code, the lines programs run from their options
(`rsync -e`, `ssh -o ProxyCommand=`, git's `core.pager`) and from variables (`GIT_PAGER`,
`GIT_CONFIG_PARAMETERS`); and the builtins that set a variable the guard trusts
(`TRUSTED`: `read HOME`). Each function finds that text in a command's words; reading it is
`commands`' part.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from .lexer import Word
from .wrappers import INTERPRETERS

# Shell options followed by a value (`bash -o pipefail -c '...'`), which is no script.
SHELL_VALUES = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_ENV_SPLIT = re.compile(r"-[iv0]*S")
AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})


@dataclass(frozen=True)
class ShellRun:
    """What a shell is told to run: a `-c` script, a script file, or its standard input."""

    script: Word | None = None
    file: Word | None = None
    reads_input: bool = False


def shell_run(arguments: list[Word]) -> ShellRun:
    """What a shell's arguments tell it to run. As bash reads them: options (their values
    too: `-o pipefail`, `-euo pipefail`) until the first other word, `--` or a lone `-`;
    with `-c` anywhere among them the first other word is the script (`bash -c -e '...'`),
    else that word is a script file; none, or `-s`, and it reads its standard input.
    `fish -c`, `--command=...` too."""
    command = stdin = False
    index = 0
    while index < len(arguments):
        text = arguments[index].text
        if text in ("--", "-"):
            index += 1
            break
        if text.startswith("--command=") or text == "--command":  # fish, zsh's long form
            if text == "--command":
                return ShellRun(script=_at(arguments, index + 1))
            value = arguments[index]
            return ShellRun(script=Word(text[len("--command=") :], dynamic=value.dynamic))
        if not text.startswith(("-", "+")) or text == "+":
            break
        if text in SHELL_VALUES:
            index += 2
            continue
        letters = text[1:] if not text.startswith("--") else ""
        command = command or (text[0] == "-" and "c" in letters)
        stdin = stdin or "s" in letters
        index += 2 if "o" in letters or "O" in letters else 1  # `-eo pipefail`
    operand = _at(arguments, index)
    if command:
        return ShellRun(script=operand)
    if stdin or operand is None:
        return ShellRun(reads_input=True)
    return ShellRun(file=operand)


def _at(words: list[Word], index: int) -> Word | None:
    return words[index] if index < len(words) else None


def command_option(arguments: list[Word]) -> Word | None:
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


def env_split(arguments: list[Word]) -> list[Word] | None:
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


def git_aliases(arguments: list[Word]) -> list[Word]:
    """The command lines a git alias defined in this command may run: one given with
    `git -c alias.NAME=VALUE ...` (run now), or set with `git config alias.NAME VALUE` (run
    by a later `git NAME`). Each is `git VALUE ARGS`, or for a `!VALUE` alias the shell line
    `VALUE ARGS` (git appends the arguments); ARGS are all the words after the definition:
    a little more than git passes, never less."""
    found: list[Word] = []
    configures = any(w.text == "config" for w in arguments)
    for index, word in enumerate(arguments[:-1]):
        if word.text == "-c":
            key, _, value = arguments[index + 1].text.partition("=")
            after = index + 2
        elif configures and word.text.lower().startswith("alias.") and "=" not in word.text:
            key, value, after = word.text, arguments[index + 1].text, index + 2
        else:
            continue
        if not key.lower().startswith("alias."):
            continue
        rest = arguments[after:]
        dynamic = any(w.dynamic for w in arguments[index : index + 2])
        dynamic = dynamic or any(w.dynamic and w.many for w in rest)
        found.append(Word(f"{alias_line(value)} {_quoted(rest)}", dynamic=dynamic))
    return found


def alias_line(value: str) -> str:
    """The command line a git alias's value stands for."""
    return value[1:] if value.startswith("!") else "git " + value


def _quoted(words: list[Word]) -> str:
    return " ".join(shlex.quote(w.text) for w in words)


def inline_code(name: str, arguments: list[Word]) -> Word | None:
    """The code an interpreter (`INTERPRETERS`) is given on its command line, if any
    (`python3 -c CODE`, `perl -ne CODE`, `node --eval=CODE`, awk's program): all its words
    together, a little more than the code, so that no way of attaching it is missed."""
    options = INTERPRETERS[name]
    given = name in AWKS and not any(w.text.startswith(("-f", "--file")) for w in arguments)
    for word in arguments:
        text = word.text
        if text == "--" or not text.startswith("-"):
            break
        letters = text[1:] if not text.startswith("--") else ""
        given = given or text.split("=", 1)[0] in options
        given = given or any(len(o) == 2 and o[1] in letters for o in options)
    if not given:
        return None
    return Word(" ".join(w.text for w in arguments), dynamic=any(w.dynamic for w in arguments))


def reads_code_from_input(name: str, arguments: list[Word]) -> bool:
    """Whether an interpreter given no code on its command line reads it from its standard
    input (`python3`, `python3 -`, `node -`): no script file named."""
    if name in AWKS:
        return False
    for word in arguments:
        if word.text == "-":
            return True
        if not word.text.startswith("-"):
            return False
    return True


# Options whose value is a shell line the program runs (`rsync -e CMD`, `tar -I CMD`).
OPTION_COMMANDS: dict[str, frozenset[str]] = {
    "rsync": frozenset({"-e", "--rsh"}),
    "tar": frozenset({"-I", "-F", "--use-compress-program", "--to-command", "--info-script",
                      "--new-volume-script"}),
    "ssh": frozenset(), "scp": frozenset({"-S"}), "sftp": frozenset({"-S"}),
    "vim": frozenset({"-c", "--cmd"}), "vi": frozenset({"-c", "--cmd"}),
    "nvim": frozenset({"-c", "--cmd"}), "ex": frozenset({"-c", "--cmd"}),
    "gdb": frozenset({"-ex", "--ex", "-iex", "--eval-command"}),
}  # fmt: skip
# ssh's `-o` settings whose value runs on this machine.
SSH_RUNNERS = frozenset({"proxycommand", "localcommand", "knownhostscommand"})
# git settings whose value is a shell line git runs (and `pager.<command>`).
GIT_RUNNERS = frozenset({"core.pager", "core.sshcommand", "core.editor", "core.fsmonitor",
                         "core.hookspath", "sequence.editor", "diff.external",
                         "credential.helper", "core.askpass", "gpg.program"})  # fmt: skip
# sed's `e` command, or the `e` flag of `s///e`: sed runs a shell line it builds.
_SED_RUNS = re.compile(
    r"(^|[;\n{}\d$/,])\s*e(\s|$|;)|s(.)[^;\n]*?\3[^;\n]*?\3[gpiImM0-9]*e[gpiImM0-9]*(\s|$|;|\})"
)


def option_lines(program: str, arguments: list[Word]) -> list[Word]:
    """The shell lines a program runs from its options' values (`rsync -e CMD`, `ssh -o
    ProxyCommand=CMD`, `vim -c '!CMD'`, `gdb -ex 'shell CMD'`, git's `-c core.pager=CMD`);
    for sed with an `e` command, an unknown line (what it runs is built from its input)."""
    if program == "sed":
        runs = any(_SED_RUNS.search(w.text) for w in arguments)
        return [Word("", dynamic=True)] if runs else []
    if program == "git":
        return [Word(value, dynamic=setting.dynamic) for setting, value in _git_settings(arguments)]
    names = OPTION_COMMANDS.get(program)
    if names is None:
        return []
    lines: list[Word] = []
    for name, word, value in _option_values(arguments, names | _SSH_OPTION):
        if name == "-o":
            key, _, line = value.replace("=", " ", 1).partition(" ")
            if program not in SSHS or key.lower() not in SSH_RUNNERS:
                continue
        elif program in EDITORS:
            bang = _after_bang(value)
            if bang is None:
                continue
            line = bang
        else:
            line = value
        lines.append(Word(line, dynamic=word.dynamic))
    return lines


SSHS = frozenset({"ssh", "scp", "sftp"})
EDITORS = frozenset({"vim", "vi", "nvim", "ex", "gdb"})
_SSH_OPTION = frozenset({"-o"})


def _option_values(arguments: list[Word], names: frozenset[str]) -> list[tuple[str, Word, str]]:
    """Each option of `names` with its value: `-e CMD`, `-eCMD`, `--rsh=CMD`, `--rsh CMD`."""
    found: list[tuple[str, Word, str]] = []
    for index, word in enumerate(arguments):
        text = word.text
        following = arguments[index + 1] if index + 1 < len(arguments) else None
        for name in names:
            if text == name and following is not None:
                found.append((name, following, following.text))
            elif name.startswith("--") and text.startswith(name + "="):
                found.append((name, word, text[len(name) + 1 :]))
            elif len(name) == 2 and text.startswith(name) and len(text) > 2:
                found.append((name, word, text[2:]))
    return found


def _after_bang(command: str) -> str | None:
    """The shell line of an editor's or gdb's `!CMD` / `shell CMD`, if it holds one."""
    if "!" in command:
        return command.split("!", 1)[1]
    stripped = command.strip()
    return stripped[len("shell") :] if stripped.startswith("shell") else None


def _git_settings(arguments: list[Word]) -> list[tuple[Word, str]]:
    """git's `-c KEY=VALUE` (and `git config KEY VALUE`) settings that run a shell line."""
    found: list[tuple[Word, str]] = []
    configures = any(w.text == "config" for w in arguments)
    for index, word in enumerate(arguments[:-1]):
        following = arguments[index + 1]
        if word.text == "-c":
            key, _, value = following.text.partition("=")
            setting = following
        elif configures and not word.text.startswith("-"):
            key, value, setting = word.text, following.text, following
        else:
            continue
        key = key.lower()
        if key in GIT_RUNNERS or key.startswith("pager."):
            found.append((setting, value[1:] if value.startswith("!") else value))
    return found


RUNNER_VARIABLES = frozenset({"GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_SSH",
                              "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS",
                              "PAGER", "EDITOR", "VISUAL", "LESSOPEN", "MANPAGER"})  # fmt: skip
_GIT_VALUE = re.compile(r"GIT_CONFIG_VALUE_[0-9]+")


def variable_lines(name: str, value: str) -> list[str]:
    """The lines a variable's value may have a program run: git aliases and settings given
    by `GIT_CONFIG_VALUE_<n>` or `GIT_CONFIG_PARAMETERS` (read as aliases whatever their
    key: a little more, never less), and a pager, an editor or an ssh command to run."""
    if _GIT_VALUE.fullmatch(name):  # an alias, or a setting that runs a line (core.pager)
        return [alias_line(value), value]
    if name in RUNNER_VARIABLES:
        return [value.lstrip("|")]  # `LESSOPEN='|cmd %s'`
    if name != "GIT_CONFIG_PARAMETERS":
        return []
    try:
        settings = shlex.split(value)
    except ValueError:
        return [value]
    lines = []
    for setting in settings:
        key, _, value = setting.partition("=")
        if key.lower().startswith("alias."):
            lines.append(alias_line(value))
        elif key.lower() in GIT_RUNNERS or key.lower().startswith("pager."):
            lines.append(value[1:] if value.startswith("!") else value)
    return lines


# Read as the agent's shell holds them: a line that sets one is asked about (a script a shell
# runs first; the home: `HOME='/ x'`; where `cd x` goes).
TRUSTED = frozenset({"BASH_ENV", "ENV", "HOME", "USER", "LOGNAME", "CDPATH"})
SETTERS = frozenset({"read", "mapfile", "readarray", "getopts"})  # set the variables named


def sets_trusted(program: str, arguments: list[Word]) -> bool:
    """Whether a builtin sets a variable of `TRUSTED`: `read HOME`, `printf -v CDPATH /`."""
    if program == "printf":
        names = [w.text[2:] or next((n.text for n in arguments[i + 1 : i + 2]), "")
                 for i, w in enumerate(arguments) if w.text.startswith("-v")]  # fmt: skip
    else:
        names = [w.text for w in arguments] if program in SETTERS else []
    return any(name in TRUSTED for name in names)


def alias_text(word: Word) -> Word:
    """The text `alias NAME='TEXT'` stands for (nothing for `alias` or `alias NAME`)."""
    _, equals, text = word.text.partition("=")
    return Word(text if equals else "", dynamic=word.dynamic)


def watch_execs(arguments: list[Word]) -> bool:
    """Whether `watch -x` (`--exec`) runs its words as a command, not through `sh -c`."""
    for word in arguments:
        text = word.text
        if text == "--exec" or (text.startswith("-") and not text.startswith("--") and "x" in text):
            return True
        if not text.startswith("-"):
            return False
    return False
