"""Secrets kept by name in the OS keychain: the way out of the write gate.

The gate refuses a credential in a memory; the memory holds `secret:NAME` instead, and the
value lives in the keychain of the person who ran `palimpsest secret set NAME` (through
`keyring`: macOS Keychain, Windows Credential Manager, Secret Service or KWallet). Only that
person's commands read it back: no MCP tool sets or gets a value, so none passes through an
agent's context.

One keyring service, `palimpsest`, for every store and workspace: a keychain is a person's,
and `secret:NAME` must mean the same whichever store the memory was read from. A NAME may
carry its own namespace (`shop/stripe-key`). Keyring cannot list what a service holds, so
there is no `list`.

No message here repeats a value; a NAME is repeated only once it passed `check_name`.
"""

from __future__ import annotations

import configparser
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from .domain.errors import NotFound, Retryable, ValidationError
from .screening.secret_rules import SECRET_NAME
from .screening.secrets import find_secrets

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

SERVICE = "palimpsest"
MAX_NAME = 100  # SECRET_NAME's bound, said in messages
# Windows Credential Manager holds 2,560 bytes; UTF-16 makes that 1,280 characters.
MAX_VALUE = 1_280
_NAME = re.compile(SECRET_NAME)

NAME_RULE = (
    f"A secret's NAME is 1 to {MAX_NAME} letters, digits and `.`, `_`, `/`, `-`, starting and "
    "ending with a letter or digit (`github/deploy-token`)."
)
NO_BACKEND = "No keychain is available here (a server without a desktop session has none)"
BACKEND_FIX = (
    "Run it where you have one (macOS Keychain, GNOME Keyring or KWallet), or choose a "
    "backend on purpose: install `keyrings.alt pycryptodomex` into Palimpsest's own "
    "environment (`.venv/bin/pip install ...` in a checkout, `pipx inject palimpsest ...` or "
    "`uv tool install --with ...` for a tool) and set "
    "PYTHON_KEYRING_BACKEND=keyrings.alt.file.EncryptedKeyring (a file under a password it "
    "asks for), or name it in keyringrc.cfg."
)


class Stored(TypedDict):
    name: str
    reference: str  # what a memory holds in place of the value
    replaced: bool  # the name held a value before, now overwritten
    backend: str  # where it went, so a plain-file fallback is never a surprise


def reference(name: str) -> str:
    return f"secret:{name}"


# Where a credential's value stands (assigned, in a config line, in prose): the gate reads
# a reference there most strictly, and reads some credential words more strictly than others.
VALUE_PLACES = (
    "password: {ref}",
    "DB_PASSWORD={ref}",
    "client_secret: {ref}",
    "AWS_SECRET_ACCESS_KEY={ref}",
    "The staging password is {ref}.",
    "Use {ref} to push.",
    "api_token = '{ref}'",
)


def check_name(name: str) -> str:
    """Return `name` if it may name a secret; the refusal never repeats it."""
    if not _NAME.fullmatch(name):
        raise ValidationError(NAME_RULE, field="name")
    # A name accepted here is one every memory can hold, wherever it stands.
    ref = reference(name)
    if find_secrets(name) or any(find_secrets(p.format(ref=ref)) for p in VALUE_PLACES):
        raise ValidationError(
            "NAME reads like a credential itself (random, a vendor's key, one word with "
            "digits, or a password's letters and digits): a name lands in shell history and "
            "in every memory that refers to it. "
            "Name what the secret is for (`stripe/live-key`, `wifi/home-2`) and give the "
            "value on stdin or at the prompt.",
            field="name",
        )
    return name


def check_value(value: str) -> str:
    """Return `value` if a keychain can keep it: one line, not empty, bounded, no NUL."""
    if not value:
        raise ValidationError("The value is empty; nothing was stored.", field="value")
    if "\n" in value or "\r" in value:
        raise ValidationError(
            "The value is more than one line; nothing was stored. Keep a multi-line secret "
            "(a key file) as a file and write its path in memory.",
            field="value",
        )
    if any("\ud800" <= c <= "\udfff" for c in value):  # stdin's bytes were not UTF-8
        raise ValidationError(
            "The value is not UTF-8 text; nothing was stored. Send it as UTF-8.", field="value"
        )
    if "\x00" in value or len(value) > MAX_VALUE:
        raise ValidationError(
            f"The value holds a NUL character or is over {MAX_VALUE} characters, more than "
            "every keychain keeps; nothing was stored.",
            field="value",
        )
    return value


def store(name: str, value: Callable[[], str]) -> Stored:
    """Keep the value under `name`, replacing what the name held. `value` is asked for only
    once the name and the keychain are known to be fine (a prompt is not answered in vain)."""
    check_name(name)
    backend = _backend("stored")
    kept = check_value(value())
    with _refusals(backend):
        replaced = backend.get_password(SERVICE, name) is not None
        backend.set_password(SERVICE, name, kept)
    return Stored(name=name, reference=reference(name), replaced=replaced, backend=_label(backend))


def read(name: str) -> str:
    """The value kept under `name`; `not_found` when there is none."""
    check_name(name)
    backend = _backend("read")
    with _refusals(backend):
        value = backend.get_password(SERVICE, name)
    if value is None:
        raise _missing(name, backend)
    return value


def remove(name: str) -> None:
    """Delete the value kept under `name`; `not_found` when there is none."""
    check_name(name)
    backend = _backend("deleted")
    # Some backends raise for a missing name and some do nothing: ask first, the same answer.
    with _refusals(backend):
        if backend.get_password(SERVICE, name) is None:
            raise _missing(name, backend)
        backend.delete_password(SERVICE, name)


def _missing(name: str, backend: KeyringBackend) -> NotFound:
    return NotFound(
        f"No secret named {name} in the keychain ({_label(backend)}); store it with "
        f"`palimpsest secret set {name}`.",
        field="name",
    )


def _backend(done: str) -> KeyringBackend:
    """The keyring backend in effect, refused where it would keep nothing, or keep values in
    a plain file nobody chose; `done` says what did not happen ("stored")."""
    import keyring
    from keyring.backends import chainer, fail, null

    try:
        backend = keyring.get_keyring()
    except Exception as exc:  # a named backend that does not import or is not viable here
        raise ValidationError(
            "The keyring backend named by PYTHON_KEYRING_BACKEND or keyringrc.cfg does not "
            f"load here ({type(exc).__name__}); nothing was {done}. {BACKEND_FIX}",
            field="keychain",
        ) from None
    empty_chain = isinstance(backend, chainer.ChainerBackend) and not backend.backends
    if isinstance(backend, fail.Keyring | null.Keyring) or empty_chain:
        raise ValidationError(f"{NO_BACKEND}; nothing was {done}. {BACKEND_FIX}", field="keychain")
    if not usable(backend, chosen=_chosen()):
        raise ValidationError(
            f"The only keyring backend here is a fallback nobody chose ({_label(backend)}, "
            f"values in a plain file); nothing was {done}. {BACKEND_FIX}",
            field="keychain",
        )
    return backend


def usable(backend: KeyringBackend, *, chosen: bool) -> bool:
    """A real keychain (keyring's own "recommended": priority 1 or more), or any backend a
    person chose by name. keyring would otherwise pick a plain-file backend on its own."""
    from keyring.core import recommended

    return chosen or bool(recommended(backend))


def _chosen() -> bool:
    """Whether the backend was named by the person: the environment or keyringrc.cfg."""
    from keyring.util import platform_

    if os.environ.get("PYTHON_KEYRING_BACKEND"):
        return True
    config = configparser.RawConfigParser()
    try:  # keyring reads the same file, the same way (keyring.core.load_config)
        config.read(Path(platform_.config_root()) / "keyringrc.cfg", encoding="utf-8")
    except (OSError, UnicodeDecodeError, configparser.Error):
        return False
    return config.has_option("backend", "default-keyring")


def _label(backend: KeyringBackend) -> str:
    kind = type(backend)
    return f"{kind.__module__}.{kind.__qualname__}"


@contextmanager
def _refusals(backend: KeyringBackend) -> Iterator[None]:
    """A keychain's own failure (locked, access denied) as `retryable`, named by its type
    only: a backend's message might quote what it was given."""
    from keyring.errors import KeyringError

    try:
        yield
    except KeyringError as exc:
        raise Retryable(
            f"The keychain ({_label(backend)}) refused: {type(exc).__name__}. Unlock it (or "
            "allow access) and run the command again.",
            field="keychain",
        ) from None
