"""The programs that run another program given after their own options, and how each
takes those options; and the interpreters whose inline code may run anything.

A wrapper's command is read as if typed alone (`sudo -u ci git push` runs `git push`).
One whose option is missing here takes a value as its program: a name not matching any
rule is then allowed, so a wrapper an agent uses with options of its own is worth adding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Wrapper:
    """How a command that runs another takes its options: those followed by a value, and
    how many words (a duration...) come before the command it runs."""

    values: frozenset[str] = frozenset()  # short letters and long names taking a value
    positionals: int = 0
    dash: bool = False  # a lone `-` is one of its options (env's), not a program
    feeds: bool = False  # adds words read elsewhere to the command (xargs): not known here


def _takes(*names: str) -> frozenset[str]:
    return frozenset(names)


# fmt: off
WRAPPERS = {
    "env": Wrapper(_takes("u", "C", "--unset", "--chdir"), dash=True),
    "sudo": Wrapper(_takes("u", "g", "C", "D", "h", "p", "r", "t", "U", "T", "--user", "--group",
                           "--chdir", "--host", "--prompt", "--role", "--type", "--other-user",
                           "--command-timeout")),
    "doas": Wrapper(_takes("u")),
    "pkexec": Wrapper(_takes("--user")),
    "busybox": Wrapper(),  # `busybox sh -c '...'`: the applet is the program
    "toybox": Wrapper(),
    "screen": Wrapper(_takes("S", "c", "p", "T", "t", "h", "X", "r", "x", "L", "Logfile")),
    "setsid": Wrapper(),
    "unbuffer": Wrapper(),
    "ionice": Wrapper(_takes("c", "n", "--class", "--classdata")),
    "chrt": Wrapper(positionals=1),  # its priority
    "taskset": Wrapper(positionals=1),  # its mask or list of processors
    "flock": Wrapper(_takes("w", "E", "--timeout", "--conflict-exit-code"), positionals=1),
    "chroot": Wrapper(_takes("--userspec", "--groups"), positionals=1),
    "runuser": Wrapper(_takes("u", "g", "G", "--user", "--group", "--supp-group")),
    "watch": Wrapper(_takes("n", "q", "--interval", "--equexit")),
    "nohup": Wrapper(),
    "time": Wrapper(_takes("f", "o", "--format", "--output")),
    "command": Wrapper(),
    "builtin": Wrapper(),
    "exec": Wrapper(_takes("a")),
    "nice": Wrapper(_takes("n", "--adjustment")),
    "stdbuf": Wrapper(_takes("i", "o", "e", "--input", "--output", "--error")),
    "timeout": Wrapper(_takes("s", "k", "--signal", "--kill-after"), positionals=1),
    "xargs": Wrapper(_takes("I", "n", "P", "d", "E", "L", "s", "a", "--arg-file", "--delimiter",
                            "--max-args", "--max-procs", "--replace", "--max-lines",
                            "--max-chars", "--eof"), feeds=True),
    "parallel": Wrapper(_takes("j", "S", "--jobs", "--sshlogin"), feeds=True),
    # tracers, sandboxes and environments that run the command after them
    "strace": Wrapper(_takes("e", "o", "p", "s", "u", "E", "a", "b", "I", "P", "X", "O", "S",
                             "--output", "--user", "--env", "--trace", "--signal")),
    "ltrace": Wrapper(_takes("e", "o", "p", "s", "u", "a", "n", "l", "--output")),
    "fakeroot": Wrapper(_takes("l", "s", "i", "--lib", "--faked")),
    "fakechroot": Wrapper(_takes("l", "d", "e", "s", "--lib", "--elfloader", "--environment")),
    "eatmydata": Wrapper(),
    "nocache": Wrapper(),
    "valgrind": Wrapper(),  # its options are `--name=value`
    "faketime": Wrapper(_takes("m", "f", "p"), positionals=1),  # its time
    "torsocks": Wrapper(_takes("u", "p", "a", "P")),
    "proxychains": Wrapper(_takes("f")),
    "proxychains4": Wrapper(_takes("f")),
    "firejail": Wrapper(),  # its options are `--name=value`
    "unshare": Wrapper(_takes("S", "G", "R", "w", "--setuid", "--setgid", "--root", "--wd")),
    "nsenter": Wrapper(_takes("t", "S", "G", "--target", "--setuid", "--setgid")),
    "systemd-run": Wrapper(_takes("u", "p", "E", "M", "--unit", "--property", "--setenv",
                                  "--machine", "--uid", "--gid", "--working-directory")),
    "xvfb-run": Wrapper(_takes("n", "s", "f", "e", "p", "--server-num", "--server-args")),
    "dbus-run-session": Wrapper(_takes("--config-file", "--dbus-daemon")),
    "catchsegv": Wrapper(),
    "prlimit": Wrapper(_takes("p", "--pid")),
    "numactl": Wrapper(_takes("C", "N", "m", "p", "i")),
    "cgexec": Wrapper(_takes("g")),
    "entr": Wrapper(),  # runs its command each time a file it reads the names of changes
    "caffeinate": Wrapper(_takes("t", "w")),
}
# fmt: on

# Interpreters, by name, with the options that give them their code inline. The code may
# run any program (`os.system(...)`), which the guard cannot read.
INTERPRETERS = {
    "python": frozenset({"-c"}),
    "perl": frozenset({"-e", "-E"}),
    "ruby": frozenset({"-e"}),
    "node": frozenset({"-e", "-p", "--eval", "--print"}),
    "nodejs": frozenset({"-e", "-p", "--eval", "--print"}),
    "bun": frozenset({"-e", "--eval"}),
    "php": frozenset({"-r"}),
    "lua": frozenset({"-e"}),
    "Rscript": frozenset({"-e"}),
    "osascript": frozenset({"-e"}),
    "expect": frozenset({"-c"}),
    "awk": frozenset(),  # `awk 'BEGIN { system("...") }'`: its program is its first word
    "gawk": frozenset(),
    "mawk": frozenset(),
    "nawk": frozenset(),
}
_VERSIONED = re.compile(r"(python|perl|ruby|lua|php)[0-9.]*")


def interpreter(program: str) -> str | None:
    """The interpreter a program name is (`python3.12` is `python`), if one."""
    versioned = _VERSIONED.fullmatch(program)
    name = versioned.group(1) if versioned else program
    return name if name in INTERPRETERS else None


# What in inline code may run a program: a call that runs one, or that builds a name to run.
RUNS_PROGRAMS = re.compile(
    r"system|exec|popen|spawn|subprocess|child_process|__import__|importlib|getattr|eval|"
    r"__dict__|__builtins__|globals|ctypes|Function|`|\bqx\b|%x|\bpty\b|Process|Runtime|"
    r"shell|fork|[Oo]pen3|\bpipe|Command|do shell",
)
