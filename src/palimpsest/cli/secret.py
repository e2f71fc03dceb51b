"""`palimpsest secret set|get|delete NAME`: a secret kept by name in the OS keychain, so a
memory can hold `secret:NAME` where the gate refused the value (`palimpsest.keychain`).

The value never comes from the command line (it would stay in shell history and show in
`ps`): from a prompt that does not echo when stdin is a terminal, else one line of stdin.
Only `get` prints it.
"""

from __future__ import annotations

import getpass
import io
import sys
from typing import Any

import click

from .. import keychain
from ..domain.errors import ValidationError
from .app import JSON_OPTION, command, emit, palimpsest

NAME = click.argument("name", metavar="NAME")


# Not `app.group`: a keychain is no store, so none of the store's options are offered.
@palimpsest.group("secret", epilog="\b\nExample:\n  palimpsest secret set github/deploy-token")
@JSON_OPTION
def secret() -> None:
    """Secrets kept by name in your OS keychain, never in memory: a memory holds
    `secret:NAME`, and a person reads the value back with `palimpsest secret get NAME`. No
    MCP tool sets or reads one. Keyring cannot list a keychain's names, so there is no list."""


@command(
    secret,
    "set",
    "printf '%s\\n' \"$TOKEN\" | palimpsest secret set github/deploy-token",
    uses_store=False,
)
@NAME
def secret_set(name: str) -> None:
    """Store a value under NAME, replacing any earlier one (the answer says so). The value is
    asked for without echo on a terminal, else read as one line of stdin (its newline
    dropped); never give it as an argument. Then write `secret:NAME` in memory."""
    if click.get_current_context().args:
        # Not click's own refusal: it would print the stray argument, likely the value.
        raise ValidationError(
            "`secret set` takes NAME only: the value comes at the prompt or on stdin, never as "
            "an argument (shell history and `ps` keep those); nothing was stored.",
            field="value",
        )
    emit(dict(keychain.store(name, lambda: _read_value(name))), _said_stored)


# Whatever follows NAME is caught above, so that it is refused without being repeated.
secret_set.allow_extra_args = secret_set.ignore_unknown_options = True


@command(secret, "get", "palimpsest secret get github/deploy-token", uses_store=False)
@NAME
def secret_get(name: str) -> None:
    """Print the value stored under NAME (alone on its line, for `$(...)`)."""
    value = keychain.read(name)
    emit({"name": name, "value": value}, lambda _: click.echo(value))


@command(secret, "delete", "palimpsest secret delete github/deploy-token", uses_store=False)
@NAME
def secret_delete(name: str) -> None:
    """Delete the value stored under NAME. Memories that name `secret:NAME` keep the name."""
    keychain.remove(name)
    emit(
        {"name": name, "deleted": True},
        lambda _: click.echo(f"Deleted {keychain.reference(name)} from the keychain."),
    )


def _read_value(name: str) -> str:
    if sys.stdin is None:  # no stdin at all (`<&-`): nothing to keep
        return ""
    if sys.stdin.isatty():
        return getpass.getpass(f"Value for {keychain.reference(name)} (not shown): ")
    # Undecodable bytes are kept as surrogates for check_value to refuse, whatever the
    # locale: a strict decoder would fail with the bytes in its message.
    stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape")
    # Two characters over the limit tell a long value from one with its newline.
    value = stdin.read(keychain.MAX_VALUE + 3)
    return value.removesuffix("\n").removesuffix("\r")


def _said_stored(answer: dict[str, Any]) -> None:
    ref = answer["reference"]
    again = "; it replaced the earlier value" if answer["replaced"] else ""
    click.echo(f"Stored {ref} in the keychain ({answer['backend']}){again}.")
    click.echo(
        f"Write `{ref}` in memory; read it back with `palimpsest secret get {answer['name']}`."
    )
