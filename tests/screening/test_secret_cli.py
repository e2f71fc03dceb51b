"""`palimpsest secret set|get|delete`, run as real processes against a real keyring backend:
keyrings.alt's file backend, chosen by PYTHON_KEYRING_BACKEND, its file under this test's
XDG_DATA_HOME. The value never comes from argv and never shows in `set`'s answer."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from keyrings.alt.file import PlaintextKeyring

from palimpsest import keychain
from palimpsest.domain.errors import ValidationError

PLAIN_FILE = "keyrings.alt.file.PlaintextKeyring"
VALUE = "s3cr3t-Value-9fQx!"  # what a person types; never on a command line below


@pytest.fixture
def keyring_env(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The file backend, chosen by name; no keyringrc.cfg of the user's is read."""
    return {**env, "PYTHON_KEYRING_BACKEND": PLAIN_FILE, "XDG_CONFIG_HOME": str(tmp_path / "cfg")}


def secret(
    env: dict[str, str], *args: str, stdin: str = "", backend: str | None = None
) -> subprocess.CompletedProcess[str]:
    chosen = env if backend is None else {**env, "PYTHON_KEYRING_BACKEND": backend}
    return subprocess.run(
        [sys.executable, "-m", "palimpsest", "secret", *args],
        env=chosen,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def answer(done: subprocess.CompletedProcess[str], code: int = 0) -> Any:
    assert done.returncode == code, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_set_then_get_round_trips_a_value_from_stdin(keyring_env: dict[str, str]) -> None:
    stored = secret(keyring_env, "set", "github/deploy-token", "--json", stdin=VALUE + "\n")
    assert answer(stored) == {
        "name": "github/deploy-token",
        "reference": "secret:github/deploy-token",
        "replaced": False,
        "backend": PLAIN_FILE,
    }
    assert VALUE not in stored.stdout + stored.stderr
    said = secret(keyring_env, "set", "github/deploy-token", stdin=VALUE + "-2\r\n")
    assert "replaced" in said.stdout and "secret:github/deploy-token" in said.stdout
    assert VALUE not in said.stdout + said.stderr
    got = secret(keyring_env, "get", "github/deploy-token")
    assert (got.returncode, got.stdout) == (0, VALUE + "-2\n")  # the newline was stdin's
    as_json = answer(secret(keyring_env, "get", "github/deploy-token", "--json"))
    assert as_json == {"name": "github/deploy-token", "value": VALUE + "-2"}


def test_delete_then_get_is_not_found(keyring_env: dict[str, str]) -> None:
    secret(keyring_env, "set", "db.password", stdin=VALUE)
    assert answer(secret(keyring_env, "delete", "db.password", "--json"))["deleted"] is True
    for command in ("get", "delete"):
        missing = answer(secret(keyring_env, command, "db.password", "--json"), 1)
        assert (missing["error_class"], missing["field"]) == ("not_found", "name")
        assert "palimpsest secret set db.password" in missing["message"]


@pytest.mark.parametrize(
    ("stdin", "field"),
    [
        ("", "value"),  # `echo $UNSET | ...`: nothing to keep
        ("\n", "value"),
        ("alpha-7Q\nbravo-9Z\n", "value"),  # one line only: a key file stays a file
        ("x" * (keychain.MAX_VALUE + 1), "value"),
    ],
)
def test_a_value_no_keychain_should_keep_is_refused_and_nothing_stored(
    keyring_env: dict[str, str], stdin: str, field: str
) -> None:
    body = answer(secret(keyring_env, "set", "ci/token", "--json", stdin=stdin), 1)
    assert (body["error_class"], body["field"]) == ("validation", field)
    assert all(part not in body["message"] for part in stdin.split())
    assert answer(secret(keyring_env, "get", "ci/token", "--json"), 1)["error_class"] == (
        "not_found"
    )


def test_stdin_that_is_not_utf8_or_absent_is_refused(keyring_env: dict[str, str]) -> None:
    command = [sys.executable, "-m", "palimpsest", "secret", "set", "ci/token", "--json"]
    for locale in ("C.UTF-8", "C"):
        done = subprocess.run(
            command,
            env={**keyring_env, "LC_ALL": locale},
            input=b"caf\xe9-Zq9\n",
            capture_output=True,
            timeout=60,
        )
        assert done.returncode == 1, done.stderr
        assert json.loads(done.stdout)["field"] == "value"
    closed = subprocess.run(command, env=keyring_env, stdin=subprocess.DEVNULL, timeout=60)
    assert closed.returncode == 1
    assert secret(keyring_env, "get", "ci/token").returncode == 1  # nothing was stored


def test_a_value_given_as_an_argument_is_refused_without_being_repeated(
    keyring_env: dict[str, str],
) -> None:
    for extra in ([VALUE], [f"--value={VALUE}"]):
        done = secret(keyring_env, "set", "ci/token", *extra, stdin=VALUE)
        assert done.returncode == 1, done.stderr
        assert "stdin" in done.stderr and VALUE not in done.stdout + done.stderr
    assert secret(keyring_env, "get", "ci/token").returncode == 1  # nothing was stored


@pytest.mark.parametrize(
    "name",
    [
        "a\nb",
        "x" * 101,
        "-starts-with-a-dash",
        "ends/with/",
        "has space",
        "hunter22",  # one word with digits: `password: secret:hunter22` reads as a password
        "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5",  # the value pasted as the name
    ],
)
def test_a_bad_name_is_refused_without_being_repeated(
    keyring_env: dict[str, str], name: str
) -> None:
    for command in ("set", "get", "delete"):
        done = secret(keyring_env, command, "--json", "--", name, stdin=VALUE)
        body = answer(done, 1)
        assert (body["error_class"], body["field"]) == ("validation", "name"), command
        assert name not in done.stdout + done.stderr


def test_a_name_with_a_nul_is_refused() -> None:  # argv cannot carry one; the API can
    with pytest.raises(ValidationError):
        keychain.check_name("a\x00b")


@pytest.mark.parametrize(
    "backend",
    ["keyring.backends.fail.Keyring", "keyring.backends.null.Keyring", "no.such.Backend"],
)
def test_without_a_keychain_it_says_what_to_install_and_stores_nothing(
    keyring_env: dict[str, str], tmp_path: Path, backend: str
) -> None:
    done = secret(keyring_env, "set", "ci/token", "--json", stdin=VALUE, backend=backend)
    body = answer(done, 1)
    assert (body["error_class"], body["field"]) == ("validation", "keychain")
    assert "keyrings.alt" in body["message"] and "PYTHON_KEYRING_BACKEND" in body["message"]
    assert VALUE not in done.stdout + done.stderr
    human = secret(keyring_env, "get", "ci/token", backend=backend)
    assert human.returncode == 1 and human.stderr.startswith("error (validation): ")
    assert "keyrings.alt" in human.stderr
    assert not list(tmp_path.rglob("keyring_pass.cfg"))  # nothing stored anywhere


def test_a_backend_named_in_keyringrc_is_a_choice(
    keyring_env: dict[str, str], tmp_path: Path
) -> None:
    config = tmp_path / "cfg" / "python_keyring" / "keyringrc.cfg"
    config.parent.mkdir(parents=True)
    config.write_text(f"[backend]\ndefault-keyring = {PLAIN_FILE}\n", encoding="utf-8")
    by_file = {k: v for k, v in keyring_env.items() if k != "PYTHON_KEYRING_BACKEND"}
    assert answer(secret(by_file, "set", "ci/token", "--json", stdin=VALUE))["backend"] == (
        PLAIN_FILE
    )
    assert secret(by_file, "get", "ci/token").stdout == VALUE + "\n"


def test_a_plain_file_backend_nobody_chose_is_refused() -> None:
    """keyring falls back to keyrings.alt's plain file on its own when it is installed and
    no keychain is: only a person's choice makes that acceptable."""
    plain = PlaintextKeyring()
    assert not keychain.usable(plain, chosen=False)
    assert keychain.usable(plain, chosen=True)


# The child makes the pty its controlling terminal (getpass opens /dev/tty), then runs the CLI.
ON_A_TERMINAL = (
    "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.executable, [sys.executable, '-m', 'palimpsest', *sys.argv[1:]])"
)


def test_a_terminal_is_asked_without_echo(keyring_env: dict[str, str]) -> None:
    """On a terminal the value is typed at a prompt that does not show it."""
    terminal, child_end = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-c", ON_A_TERMINAL, "secret", "set", "tty/token"],
        stdin=child_end,
        stdout=child_end,
        stderr=child_end,
        env=keyring_env,
        start_new_session=True,
    )
    os.close(child_end)
    try:
        shown = _read_until(terminal, b"(not shown): ")
        assert b"secret:tty/token" in shown
        os.write(terminal, VALUE.encode() + b"\n")
        shown = _read_until(terminal, b"secret get tty/token")
        assert VALUE.encode() not in shown
        assert child.wait(timeout=60) == 0
    finally:
        child.kill()
        child.wait()
        os.close(terminal)
    assert secret(keyring_env, "get", "tty/token").stdout == VALUE + "\n"


def _read_until(terminal: int, wanted: bytes, timeout: float = 30) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while wanted not in seen:
        left = deadline - time.monotonic()
        assert left > 0, seen
        ready, _, _ = select.select([terminal], [], [], left)
        if ready:
            try:
                chunk = os.read(terminal, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    return seen


@pytest.mark.parametrize(
    "text",
    [
        "The staging password is secret:Tr0ub4dor-3",  # a password with a dash, leet inside
        "password: secret:S3cr3t-P4ss",
        "DB_PASSWORD=secret:p4ssw0rd.2024",
        "The wifi password is secret:Hunter2-x",  # capitalised, with a digit: not a name
        "password: secret:xK9-mQ2-vL7-pR4",  # a generated one, in groups
    ],
)
def test_a_password_with_a_separator_after_secret_is_still_refused(
    keyring_env: dict[str, str], tmp_path: Path, text: str
) -> None:
    """`secret:` before a password does not make it a name: a dash or a dot in it did."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "palimpsest",
            "--db",
            str(tmp_path / "s.db"),
            "remember",
            "-n",
            "infra",
            text,
            "--json",
        ],
        env=keyring_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stdout
    password = text.partition("secret:")[2]
    assert password not in done.stdout + done.stderr
    refused = secret(keyring_env, "set", password, stdin=VALUE + "\n")
    assert refused.returncode == 1 and password not in refused.stdout + refused.stderr
