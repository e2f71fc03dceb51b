"""The guard against what bash really runs (issue 30): each line runs in real bash, with a
fake `git` and `rm` first on PATH that only record their arguments, and the guard must never
allow a line whose recorded arguments hold what a rule forbids (a relative path read in the
directory bash ran it in); lines that run nothing forbidden are still allowed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from palimpsest.guard import decide

from .test_guard_patterns import RULES

BASH = shutil.which("bash")
USER = "guard-test-user"  # $USER and $LOGNAME in bash: `/home/$USER` is a home
pytestmark = pytest.mark.skipif(BASH is None, reason="no bash here")

# Records the directory it ran in, its name and arguments, \037 between them, \036 after.
FAKE = """#!/bin/sh
{ printf '%s\\037%s' "$PWD" "$(basename "$0")"; for a in "$@"; do printf '\\037%s' "$a"; done
printf '\\036'; } >> "$GUARD_LOG"
"""

# Lines that run a forced push or wipe `/` or `~` in bash, each once allowed by the guard.
FORBIDDEN = [
    "git push $(echo --force) origin main",
    "F=--force; git push $F origin main",
    "git push {--force,origin} main",
    "echo --force | xargs git push origin",
    'f(){ git push "$@"; }; f --force',
    "git push `echo -f` origin main",
    'set -- --force; git push "$@"',
    "read -r x <<< --force; git push $x",
    'git push "${x:---force}"',
    "printf '%s\\n' --force | xargs -I{} git push {} origin",
    'arr=(--force); git push "${arr[@]}"',
    "IFS=,; v=push,--force; git $v",
    "g=git; $g push --force",
    "git push --force-with-lease",
    "git push --force-if-includes --force-with-lease",
    "git push $'\\x2d\\x2dforce'",
    'bash -c -e "git push --force"',
    "bash -euo pipefail -c 'git push -f'",
    "bash - <<< 'git push --force'",
    "bash /dev/stdin <<< 'git push --force'",
    "bash <(echo git push --force)",
    "bash < <(echo 'git push -f')",
    "exec 3<<<'git push -f'; bash <&3",
    "source /dev/fd/3 3<<<'git push -f'",
    "x='a[$(git push --force)]'; echo $((x))",
    "export V='a[$(git push -f)]'; echo $((V))",
    "python3 -c 'import os; os.system(\"git push --force\")'",
    "python3 - <<'EOF'\nimport subprocess\nsubprocess.run(['git', 'push', '-f'])\nEOF",
    "awk 'BEGIN { system(\"git push -f\") }'",
    "rm -rf //",
    "rm -rf /.",
    "rm -rf /tmp/..",
    "rm -rf ~/",
    'rm -rf "$HOME"',
    "rm -rf ${HOME}/",
    "rm -rf /*",
    'dir=/; rm -rf "$dir"',
    'HOME="/ x"; rm -rf $HOME/.cache',
    "git $(echo push) --force",
    "echo x | sed 'e git push -f'",
    "xargs -I{} sh -c '{}' <<< 'git push -f'",
    "echo 'git push -f' | xargs -0 bash -c",
    "BASH_ENV=<(echo 'git push -f') bash -c true",
    "sed -n '1e git push -f' <<< x",
    "printf 'git push -f' > s.sh; bash s.sh",
    "cat > s.sh <<'EOF'\ngit push -f\nEOF\n. ./s.sh",
    "echo 'git push -f' > s.sh; chmod +x s.sh; ./s.sh",
    "F=--force; git --git-dir .git push $F",
    "B='main --force'; git push origin HEAD:$B",
    "bash -c 'git push \"$1\"' _ --force",
    "echo / | xargs rm -rf",
    "node -e \"require('child_process').execSync('git push -f')\"",
    # a relative path read where an earlier `cd` or `pushd` went
    "cd / && rm -rf *",
    "cd ~ && rm -rf *",
    "cd /; rm -rf .",
    "pushd / && rm -rf -- *",
    'cd "$HOME" && rm -rf ./*',
    "(cd / && rm -rf *)",
    "cd && rm -rf *",
    "cd /tmp && rm -rf ../*",
    "cd ~/build && rm -rf ../*",
    "cd //tmp/.. && rm -rf ./.",
    "f(){ rm -rf *; }; cd /; f",
    "cd / && x=$(rm -rf *)",
    "cd / && bash -c 'rm -rf *'",
    "cd $(echo /) && rm -rf *",
    "cd ~/.. && rm -rf *",  # above the home: the home goes with it
    "rm -rf ~/..",
    "cd $HOME/.. && rm -rf ./*",
    "cd / && rm -rf ?*",
    "rm -rf /?*",
    "env -C / rm -rf .",
    "env --chdir=/ rm -rf ./",
    "cd /proc/self/root && rm -rf *",
    "shopt -s cdable_vars; r=/; cd r && rm -rf *",  # `cd r` goes where $r says
    'X=/..; cd "$HOME$X" && rm -rf *',
    "env -u X -C / rm -rf ./",
    "cd /; rm -rf ~+",
    "cd /; rm -rf ~+/*",
    "read CDPATH <<< /; cd etc && rm -rf ..",  # a builtin sets where `cd etc` goes
    "ln -s / r && cd r && rm -rf *",
    # the home written as the user's
    "rm -rf /home/$USER",
    'rm -rf "/home/${USER}/"',
    "rm -rf /home/$LOGNAME/.",
]
# Lines a wrapper or an option hands to a shell; run only where the program is installed.
WRAPPED = [
    ("tar", "tar -I 'git push -f' -cf x.tar ."),
    ("ssh", "ssh -o ProxyCommand='git push -f' h"),
    ("vim", "vim -es -c '!git push -f' -c q"),
    ("gdb", "gdb -batch -ex 'shell git push -f'"),
    ("flock", "flock ./lock -c 'git push --force'"),
    ("fish", "fish -c 'git push --force'"),
    ("strace", "strace -f -o ./trace git push --force"),
    ("fakeroot", "fakeroot git push --force"),
]
# Lines that run nothing forbidden: the guard must not ask about them.
HARMLESS = [
    "git push origin main",
    'git commit -m "$(echo fix: a message)"',
    'git checkout "$(echo main)"',
    "rm -rf build/*",
    'rm -rf "$HOME/build"',
    "rm -rf $HOME/build",
    "ls $HOME",
    "python3 -c 'print(1)'",
    "echo --force | xargs echo",
    "git push -- --force",  # after `--`, a remote named --force: no option
    "N='5 push --force'; git log --oneline -n $N",  # the subcommand is log, whatever N holds
    "touch a.py b.py; for f in *.py; do git add $f; done",
    "git checkout -b $(echo topic)",
    "git -C . log $(echo --force)",
    "echo 'git status' > s.sh; bash ./other.sh 2>/dev/null; echo done",
    "cd build && rm -rf *",  # from the project's directory, not `/`
    "cd ~/build && rm -rf *",
    "cd /tmp && rm -rf ./build",
    "(cd / && ls); rm -rf build",
    "rm -rf /home/$USER/build",
]


@pytest.fixture
def sandbox(tmp_path: Path) -> dict[str, str]:
    fakes = tmp_path / "bin"
    fakes.mkdir()
    for name in ("git", "rm"):
        (fakes / name).write_text(FAKE)
        (fakes / name).chmod(0o755)
    (tmp_path / "home" / "build").mkdir(parents=True)
    (tmp_path / "home" / "notes").touch()  # `~/build` alone is not every file of the home
    (tmp_path / "work" / "build").mkdir(parents=True)
    return {"PATH": f"{fakes}:/usr/bin:/bin", "HOME": str(tmp_path / "home"), "USER": USER,
            "LOGNAME": USER, "GUARD_LOG": str(tmp_path / "log"), "LC_ALL": "C",
            "GIT_DIR": str(tmp_path / "no-repo")}  # a real git, if one ran: no repo  # fmt: skip


def run(line: str, env: dict[str, str]) -> list[list[str]]:
    """The fake programs' argument lists once bash has run `line`, each after the directory
    it ran in."""
    log = Path(env["GUARD_LOG"])
    log.unlink(missing_ok=True)
    assert BASH is not None
    workdir = Path(env["HOME"]).parent / "work"
    subprocess.run([BASH, "-c", line], env=env, cwd=workdir, capture_output=True, timeout=30)
    if not log.exists():
        return []
    return [record.split("\037") for record in log.read_text().split("\036") if record]


def forbidden(call: list[str], home: str) -> bool:
    """Whether a recorded call is a forced push, or `rm -rf` of `/` or of the home (its
    own, or `/home/$USER`, the home bash expands on most machines)."""
    workdir, program, arguments = call[0], call[1], call[2:]
    options = arguments[: arguments.index("--")] if "--" in arguments else arguments
    flags = {a for a in options if a.startswith("-")}
    letters = {c for a in flags if not a.startswith("--") for c in a[1:]}
    if program == "git":
        forced = "f" in letters or any(a.startswith("--force") for a in flags)
        forced = forced or any(a.startswith("+") for a in options)
        return _subcommand(options) == "push" and forced
    recursive = bool(letters & {"r", "R"}) or "--recursive" in flags
    force = "f" in letters or "--force" in flags
    # the path each names, by its words (`/bin` is not `/usr/bin` here: `/*` lists `/`)
    where = os.path.realpath(workdir)  # `/proc/self/root` is `/`
    named = (os.path.join(where, a) for a in arguments if not a.startswith("-"))
    paths = {os.path.normpath(re.sub("/+", "/", a)) for a in named}
    wipes = any(_wiped(top, paths) for top in ("/", home, f"/home/{USER}"))
    return recursive and force and wipes


def _wiped(top: str, paths: set[str]) -> bool:
    """Whether `paths` hold `top` (or a directory it is in), or every file in it (as `*`
    there lists them)."""
    if any(top == path or top.startswith(path.rstrip("/") + "/") for path in paths):
        return True
    inside = {os.path.join(top, n) for n in os.listdir(top) if not n.startswith(".")} \
        if os.path.isdir(top) else set()  # fmt: skip
    return bool(inside) and inside <= paths


def _subcommand(arguments: list[str]) -> str | None:
    """git's subcommand: its first word that is no option nor the value of -C or -c."""
    words = iter(arguments)
    for word in words:
        if word in ("-C", "-c", "--git-dir", "--work-tree"):
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


@pytest.mark.parametrize("line", FORBIDDEN)
def test_what_bash_runs_forbidden_is_never_allowed(line: str, sandbox: dict[str, str]) -> None:
    ran = run(line, sandbox)
    assert any(forbidden(argv, sandbox["HOME"]) for argv in ran), ran  # bash really runs it
    decision = decide(line, RULES)
    assert decision.decision in ("ask", "deny"), decision.reason
    if decision.decision == "ask":
        assert decision.reason  # says why a person decides


@pytest.mark.parametrize(("wrapper", "line"), WRAPPED)
def test_wrappers_bash_runs_are_read_through(
    wrapper: str, line: str, sandbox: dict[str, str]
) -> None:
    if shutil.which(wrapper) is None:
        pytest.skip(f"no {wrapper} here")
    ran = run(line, sandbox)
    assert any(forbidden(argv, sandbox["HOME"]) for argv in ran), ran
    assert decide(line, RULES).decision == "deny"


@pytest.mark.parametrize("line", HARMLESS)
def test_what_bash_runs_harmless_is_allowed(line: str, sandbox: dict[str, str]) -> None:
    ran = run(line, sandbox)
    assert not any(forbidden(argv, sandbox["HOME"]) for argv in ran), ran
    decision = decide(line, RULES)
    assert decision.decision == "allow", decision.reason


def test_the_home_written_out_is_refused(
    sandbox: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", sandbox["HOME"])  # the guard's home is the agent's
    for line in (f"rm -rf {sandbox['HOME']}/", f"cd {sandbox['HOME']} && rm -rf *"):
        assert any(forbidden(argv, sandbox["HOME"]) for argv in run(line, sandbox))
        assert decide(line, RULES).decision == "deny", line
