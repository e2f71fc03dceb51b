"""The rough edges a newcomer found trying the CLI (issue 31), each through the real command."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run(env: dict[str, str], tmp_path: Path) -> Run:
    def run(*args: str, stdin: str | None = None, **extra_env: str) -> Any:
        return subprocess.run(
            [sys.executable, "-m", "palimpsest", *args],
            env={**env, "COLUMNS": "100", "TMPDIR": str(tmp_path), **extra_env},
            capture_output=True,
            text=True,
            timeout=120,
            input=stdin,
            cwd=tmp_path,
        )

    return run


@pytest.fixture
def store(run: Run, db_path: Path) -> Callable[..., Any]:
    """Run a command on the test's store; the finished process."""

    def store(*args: str, code: int = 0, stdin: str | None = None, **extra_env: str) -> Any:
        done = run("--db", str(db_path), *args, stdin=stdin, **extra_env)
        assert done.returncode == code, done.stdout + done.stderr
        return done

    return store


def remembered(store: Callable[..., Any], text: str = "We deploy on Fridays") -> str:
    return str(json.loads(store("remember", "-n", "ops", text, "--json").stdout)["id"])


# 1 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "words", [[], ["recall"], ["notebook"], ["notebook", "list"], ["hook", "guard"], ["key"]]
)
def test_h_is_help_on_every_command_and_group(run: Run, words: list[str]) -> None:
    done = run(*words, "-h")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage:") and done.stdout == run(*words, "--help").stdout


# 2 -------------------------------------------------------------------------------------


def test_scripts_run_installs_only_when_the_venv_or_pyproject_is_newer(tmp_path: Path) -> None:
    """scripts/run in a copy whose .venv's python and palimpsest only note their calls."""
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    for script in ("run", "venv.sh"):
        shutil.copy(ROOT / "scripts" / script, checkout / "scripts" / script)
    (checkout / "pyproject.toml").write_text("[project]\n")
    calls = tmp_path / "calls"
    bin_dir = checkout / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("python", "palimpsest"):
        (bin_dir / name).write_text(f'#!/bin/sh\necho "{name} $*" >> {calls}\n')
        (bin_dir / name).chmod(0o755)

    def run_script(*args: str) -> list[str]:
        calls.write_text("")
        subprocess.run([str(checkout / "scripts" / "run"), *args], check=True, timeout=30)
        return calls.read_text().splitlines()

    first = run_script("recall", "deploy")
    assert any("pip install" in call for call in first)
    assert first[-1] == "palimpsest recall deploy"
    again = run_script("recall", "deploy")  # the venv's Python is checked, nothing installed
    assert not any("pip install" in call for call in again)
    assert again[-1] == "palimpsest recall deploy"
    later = time.time() + 5  # newer than the stamp, whatever the file system's resolution
    os.utime(checkout / "pyproject.toml", (later, later))
    assert any("pip install" in call for call in run_script())
    assert run_script()[-1] == "palimpsest demo"


# 3 -------------------------------------------------------------------------------------


def test_the_demo_says_how_to_remove_its_store_and_a_next_command_that_works(
    run: Run, tmp_path: Path
) -> None:
    done = run("demo", PALIMPSEST_PROG="./scripts/run")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    next_words = shlex.split(next(line for line in lines if line.startswith("Next: "))[6:])
    assert next_words[0] == "./scripts/run"
    assert run(*next_words[1:]).returncode == 0  # the same arguments work
    removal = shlex.split(lines[-1].split(": ", 1)[1])
    assert removal[:2] == ["rm", "-r"] and Path(removal[2]).parent == tmp_path
    assert Path(next_words[2]).parent == Path(removal[2])  # --db names the store removed
    plain = run("demo")
    assert "Next: palimpsest --db" in plain.stdout


def test_the_demo_in_json_removes_its_store(run: Run, tmp_path: Path) -> None:
    done = run("demo", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["remembered"]
    assert not list(tmp_path.glob("palimpsest-demo-*"))


def test_the_demo_in_a_given_store_says_nothing_of_removing_it(run: Run, db_path: Path) -> None:
    done = run("--db", str(db_path), "demo")
    assert done.returncode == 0, done.stderr
    assert "rm -r" not in done.stdout


# 4 -------------------------------------------------------------------------------------


def test_bench_startup_leaves_no_folder(env: dict[str, str], tmp_path: Path) -> None:
    bench = ROOT / "bench" / "bench_startup.py"
    done = subprocess.run(
        [sys.executable, str(bench), "--runs", "1", "--embedder", "none"],
        env={**env, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert not list(tmp_path.glob("palimpsest-start-*"))


# 5, 10 ---------------------------------------------------------------------------------


def test_export_to_stdout_counts_what_it_wrote_in_the_singular_too(store: Any) -> None:
    remembered(store)
    done = store("export", "-")
    assert done.stderr.strip() == "Exported 1 memory, 2 events."


def test_counts_agree_with_their_number(store: Any) -> None:
    store("user", "add", "ana", "--role", "editor")
    store("remember", "-n", "ops", "Ana's memory", "--actor", "user:ana")
    done = store("user", "remove", "ana")
    assert "1 memory they owned is ownerless now" in done.stdout
    cli = ROOT / "src" / "palimpsest" / "cli"
    assert not [p.name for p in cli.glob("*.py") if "(s)" in p.read_text()]


# 6 -------------------------------------------------------------------------------------


def test_export_of_an_unknown_notebook_names_the_command_that_lists_them(store: Any) -> None:
    remembered(store)
    done = store("export", "--notebook", "nosuch", "--json", code=1)
    assert "`palimpsest notebook list`" in json.loads(done.stdout)["message"]


# 7 -------------------------------------------------------------------------------------


def test_the_hint_after_adding_a_user_keeps_the_workspace(store: Any) -> None:
    store("workspace", "create", "team")
    done = store("--workspace", "team", "user", "add", "ana", "--role", "editor")
    assert "`palimpsest --workspace team key create --user ana`" in done.stdout
    plain = store("user", "add", "bo", "--role", "editor")
    assert "`palimpsest key create --user bo`" in plain.stdout


# 8 -------------------------------------------------------------------------------------


def test_hooks_take_format_and_generic_alike(store: Any, tmp_path: Path) -> None:
    remembered(store)
    call = json.dumps({"command": "ls", "cwd": str(tmp_path), "session_id": "s1"})
    for words in (["--generic"], ["--format", "generic"]):
        answer = json.loads(store("hook", "guard", *words, stdin=call).stdout)
        assert answer["decision"] == "allow"
    start = json.dumps({"session_id": "s2", "cwd": str(tmp_path)})
    for words in (["--generic"], ["--format", "generic"]):
        answer = json.loads(store("hook", "session-start", *words, stdin=start).stdout)
        assert "brief" in answer


# 9 -------------------------------------------------------------------------------------


def test_key_create_without_a_holder_names_the_flags(store: Any) -> None:
    done = store("key", "create", "--json", code=1)
    message = json.loads(done.stdout)["message"]
    assert "`--user`" in message and "`--agent`" in message


# 11 ------------------------------------------------------------------------------------


def test_a_dry_run_of_forget_says_it_would_forget(store: Any) -> None:
    memory_id = remembered(store)
    done = store("forget", memory_id, "--because", "a test", "--dry-run")
    assert "FORGOTTEN" not in done.stdout
    assert "would forget" in done.stdout.lower()
    assert "yes" not in done.stdout.split("would_erase")[0].lower()


# 12 ------------------------------------------------------------------------------------


def test_a_restore_says_plainly_what_it_embedded(store: Any, run: Run, tmp_path: Path) -> None:
    remembered(store)
    store("export", str(tmp_path / "all.jsonl"))
    done = run("--db", str(tmp_path / "restored.db"), "import", str(tmp_path / "all.jsonl"),
               PALIMPSEST_EMBEDDER="minilm")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert re.search(r"^vectors: 1 version embedded anew with \S+", done.stdout, re.M)
    assert "stale" not in done.stdout


# 13 ------------------------------------------------------------------------------------


def test_our_own_markdown_export_imports_without_reporting_our_keys(
    store: Any, run: Run, tmp_path: Path
) -> None:
    remembered(store)
    store("export", "--markdown", str(tmp_path / "notes"))
    done = run("--db", str(tmp_path / "other.db"), "import", "--from", "markdown",
               str(tmp_path / "notes"), "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["counts"]["imported"] == 1
    assert answer.get("unmapped", []) == []


# 14 ------------------------------------------------------------------------------------


@pytest.mark.parametrize("group", ["key", "user", "workspace", "hook"])
def test_each_group_ends_its_help_with_a_real_example(run: Run, group: str) -> None:
    done = run(group, "--help")
    example = done.stdout.split("Example:")[1].strip().splitlines()[0]
    assert example.startswith(f"palimpsest {group} ") and "--help" not in example


# 15 ------------------------------------------------------------------------------------


def test_the_commands_are_listed_in_groups(run: Run) -> None:
    done = run("--help")
    headings = re.findall(r"^(\S.*):$", done.stdout, re.M)
    assert headings[1:] == ["Everyday", "Agents and hooks", "Teams", "Moving memory", "Upkeep"]
    listed = re.findall(r"^  ([a-z-]+)  ", done.stdout.split("Everyday:")[1], re.M)
    from palimpsest.cli import COMMANDS

    assert sorted(listed) == sorted(COMMANDS)


# 16 ------------------------------------------------------------------------------------


def test_a_first_recall_with_the_model_writes_nothing_under_home(
    store: Any, env: dict[str, str]
) -> None:
    home = Path(env["HOME"])
    home.mkdir(exist_ok=True)
    remembered(store)
    store("recall", "deploy", PALIMPSEST_EMBEDDER="minilm")
    assert list(home.iterdir()) == []
