"""The process's configuration: one TOML file and environment variables, read into one object.

Each key is a line in `KEYS`: its dotted name (`http.port` is `port` in the file's `[http]`
table, and `PALIMPSEST_HTTP_PORT` in the environment), its default, and how a value is
read. A value comes from the first of: a flag of the command, the environment, the file,
the default; `Config.sources` says which, for `palimpsest config`.

The file is `--config PATH`, else `$PALIMPSEST_CONFIG`, else `config.toml` in
`$PALIMPSEST_HOME` when that is set (it moves the data directory, and one variable should
move a whole instance: a test, a demo, a second identity), else in the user's configuration
directory. A file named by the flag or the variable must exist; the default one may not.

A refusal names the file (or variable) and the key and says what is allowed; it never
repeats a value, which may hold a password (a `postgresql://` URL).
"""

from __future__ import annotations

import ipaddress
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import platformdirs

from .domain.errors import ValidationError
from .embed import DEFAULT_EMBEDDER, EMBEDDERS

# The rules a value is held to (an actor's, a name fit to repeat: the write gate's) and a
# store's label are imported where a value needs them, not with this module; the actor's from
# the gate itself, not through the service: `serve` checks its configuration before it
# answers `initialize`, and loading the whole service would take most of a start beyond the
# MCP SDK's own import (docs/benchmarks.md).

FILE_NAME = "config.toml"
ENV_PREFIX = "PALIMPSEST_"
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


def _whole(low: int, high: int) -> Callable[[Any], int]:
    def read(value: Any) -> int:
        if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
            return value
        raise ValueError(f"a whole number from {low} to {high}")

    return read


def _seconds(low: float, high: float) -> Callable[[Any], float]:
    def read(value: Any) -> float:
        if isinstance(value, str):
            try:
                value = float(value.strip()) if value.isascii() else None
            except ValueError:
                value = None
        if isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high:
            return float(value)
        raise ValueError(f"a number of seconds from {low:g} to {high:g}")

    return read


def _yes_no(value: Any) -> bool:
    if isinstance(value, str):
        value = {"true": True, "yes": True, "1": True, "false": False, "no": False,
                 "0": False}.get(value.strip().lower(), value)  # fmt: skip
    if isinstance(value, bool):
        return value
    raise ValueError("true or false")


def _text(what: str) -> Callable[[Any], str]:
    def read(value: Any) -> str:
        if isinstance(value, str) and value.strip() and "\0" not in value:
            return value.strip()
        raise ValueError(what)

    return read


def _actor(value: Any) -> str:
    from .screening.gate import check_actor

    try:
        return check_actor(_text("")(value))
    except (ValueError, ValidationError):
        raise ValueError(
            "an actor: `user:` or `agent:` and a name, as user:alice or agent:ci"
        ) from None


def _host(value: Any) -> str:
    """A name or an address to listen on. Only the loopback names are spelled one way: the
    MCP SDK guards `Host` headers (DNS rebinding) on exactly these, and `serve` listens
    anywhere else only once the store has keys (is_loopback)."""
    if isinstance(value, str):
        host = value.strip().lower()
        host = {"[::1]": "::1"}.get(host, host)
        if _is_address(host) or re.fullmatch(r"[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?", host):
            return host
    raise ValueError("a host name or an address, as 127.0.0.1, ::1, localhost or 0.0.0.0")


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def is_loopback(host: str) -> bool:
    return host in LOOPBACK_HOSTS


def _server(value: Any) -> str:
    """A Palimpsest server's address for a replica: https, or plain http on this machine
    only (a key sent over plain HTTP can be read by anyone on the way)."""
    from urllib.parse import urlsplit

    if isinstance(value, str) and value.isascii():
        url = value.strip().rstrip("/")
        try:
            parts = urlsplit(url)
            host = (parts.hostname or "").lower()
            parts.port  # noqa: B018 - a port that is no number raises here
        except ValueError:
            parts, host = None, ""
        plain = parts is not None and host and not (parts.path or parts.query or parts.fragment)
        if (
            parts is not None
            and plain
            and not parts.username
            and (parts.scheme == "https" or (parts.scheme == "http" and is_loopback(host)))
        ):
            return url
    raise ValueError(
        "a server's address, as https://memory.example.org or http://127.0.0.1:8765 "
        "(plain http only to this machine: elsewhere anyone on the way could read the key)"
    )


def _secret_key(value: Any) -> str:
    if isinstance(value, str) and value.strip().isascii() and value.strip().isprintable():
        return value.strip()
    raise ValueError("a key that `palimpsest key create` made on the server")


def _embedder(value: Any) -> str:
    """An embedder's name, read whatever its case (`NONE`, `MiniLM`), as it is spelled."""
    if isinstance(value, str):
        spelled = {name.lower(): name for name in EMBEDDERS}
        if value.strip().lower() in spelled:
            return spelled[value.strip().lower()]
    raise ValueError(f"one of {', '.join(sorted(EMBEDDERS))}")


def _check_dirs(value: Any) -> dict[str, str | None]:
    """Each directory an HTTP server may read, with the workspace it belongs to (None: the
    workspace the server itself acts in). In the file, a table `{"/srv/shop" = "team-a"}`,
    or a list of `DIR=WORKSPACE` (or bare `DIR`); in the environment, such entries joined
    by the path separator (`:` on Linux and macOS). Each path is absolute, expanded (`~`)
    and resolved."""
    what = (
        'a table of absolute directory paths to workspace names ({"/srv/shop" = "team-a"}), '
        f"or a list of DIR=WORKSPACE entries (in the environment, joined by {os.pathsep!r})"
    )
    if isinstance(value, str):
        value = [part for part in value.split(os.pathsep) if part.strip()]
    if isinstance(value, list):
        if not all(isinstance(v, str) for v in value):
            raise ValueError(what)
        pairs = [_dir_entry(v) for v in value]
    elif isinstance(value, dict):
        pairs = list(value.items())
    else:
        raise ValueError(what)
    found: dict[str, str | None] = {}
    for raw, workspace in pairs:
        if not isinstance(raw, str) or not raw.strip() or "\0" in raw:
            raise ValueError(what)
        if workspace is not None and (not isinstance(workspace, str) or not workspace.strip()):
            raise ValueError(what)
        path = Path(raw.strip()).expanduser()
        if not path.is_absolute():
            raise ValueError(what)
        resolved = str(path.resolve())
        owner = workspace.strip() if workspace else None
        if found.get(resolved, owner) != owner:  # one directory, two workspaces: which?
            raise ValueError(what + ", each directory given to one workspace")
        found[resolved] = owner
    return found


def _dir_entry(entry: str) -> tuple[str, str | None]:
    """`DIR=WORKSPACE` (a workspace's name holds no `=`), or a bare `DIR`."""
    head, equals, tail = entry.rpartition("=")
    return (head, tail) if equals else (entry, None)


@dataclass(frozen=True)
class Key:
    name: str  # dotted: `http.port` is `port` in the file's [http] table
    default: Any
    read: Callable[[Any], Any]  # a value from the file or the environment -> the value
    about: str
    flag: str | None = None  # the command's flag that sets it, when there is one

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.name.replace(".", "_").upper()


KEYS: Mapping[str, Key] = {
    k.name: k
    for k in (
        Key("db", None, _text("a SQLite file path or a postgresql:// URL"),
            "the store: a SQLite file or a postgresql:// URL (default: palimpsest.db in the "
            "data directory)", "--db"),
        Key("actor", None, _actor,
            "who acts, as the history records it (default: user:<login name>)", "--actor"),
        Key("workspace", None, _text("a workspace's name (`palimpsest workspace list`)"),
            "the workspace commands and a stdio server act in (default: the store's first, "
            "`default`); over HTTP each key's own", "--workspace"),
        Key("embedder", DEFAULT_EMBEDDER, _embedder,
            "the model that turns memories into vectors for recall by meaning; `none`: "
            "full text alone (after a change, run `palimpsest reindex`)"),
        Key("http.host", "127.0.0.1", _host,
            "the address `serve --http` listens on; beyond 127.0.0.1, ::1 and localhost only "
            "once the store has keys", "--host"),
        Key("http.port", 8765, _whole(1, 65535), "the port `serve --http` listens on", "--port"),
        Key("http.max_connections", 256, _whole(8, 4096),
            "connections open at once; past it the one idle longest is closed"),
        Key("http.head_seconds", 10.0, _seconds(1, 300),
            "time a client has to send a request's headers"),
        Key("http.keep_alive_seconds", 5, _whole(1, 300),
            "how long an idle connection is kept between requests"),
        Key("http.check_dirs", {}, _check_dirs,
            "the directories `check`, `guard`, `orient` (and anchors) may read over HTTP, "
            "with those below, each for one workspace's requests (DIR=WORKSPACE; a bare DIR: "
            "the server's own workspace); none by default (the CLI and a stdio server read "
            "their working directory)"),
        Key("http.stateless", False, _yes_no,
            "answer each HTTP request on its own, keeping no MCP session: for several "
            "processes behind one address (a reverse proxy)", "--stateless"),
        Key("http.calls_per_minute", 600, _whole(1, 100_000),
            "calls a key may make a minute (tools, API operations, web pages, sign-ins), in "
            "a burst or spread (per server process); "
            "past it a call is answered `retryable` with `retry_after`"),
        Key("http.sessions_per_key", 8, _whole(1, 1000),
            "MCP sessions one key may hold open (per server process); a new one past it "
            "closes that key's least recently used"),
        Key("http.streams_per_key", 4, _whole(1, 1000),
            "event streams (GET) one key may hold open; past it a new one is answered 429"),
        Key("http.requests_per_key", 16, _whole(1, 4096),
            "requests one key may have under way at once, its streams included; past it a "
            "request is answered 429"),
        Key("http.web_sessions_per_key", 8, _whole(1, 1000),
            "web page sessions one key may hold (across every process serving the store); "
            "signing in past it ends that key's least recently used"),
        Key("http.behind_tls", False, _yes_no,
            "the server is reached over TLS through a reverse proxy: the web page's cookie "
            "is then marked Secure and its origin is https"),
        Key("sync.server", None, _server,
            "the Palimpsest server this store follows as a replica (docs/sync.md): "
            "`palimpsest sync` and `serve` pull from it", "--server"),
        Key("sync.key", None, _secret_key,
            "the key the replica uses on `sync.server` (never shown; better in the "
            "environment than in the file)"),
        Key("sync.every_seconds", 30, _whole(1, 86_400),
            "how often `serve` syncs the replica it keeps"),
        Key("server.store_threads", 8, _whole(1, 64),
            "tool calls served at once (each holds a store connection)"),
    )
}  # fmt: skip


@dataclass(frozen=True)
class Limits:
    """What `serve` bounds; the defaults are those of KEYS."""

    store_threads: int = KEYS["server.store_threads"].default
    max_connections: int = KEYS["http.max_connections"].default
    head_seconds: float = KEYS["http.head_seconds"].default
    keep_alive_seconds: int = KEYS["http.keep_alive_seconds"].default
    calls_per_minute: int = KEYS["http.calls_per_minute"].default
    sessions_per_key: int = KEYS["http.sessions_per_key"].default
    streams_per_key: int = KEYS["http.streams_per_key"].default
    requests_per_key: int = KEYS["http.requests_per_key"].default
    web_sessions_per_key: int = KEYS["http.web_sessions_per_key"].default


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Config:
    values: Mapping[str, Any]
    sources: Mapping[str, str]  # key -> flag, env, file or default
    file: Path | None  # the file read, if any
    origins: Mapping[str, str] = field(default_factory=dict)  # key -> the flag, variable, file

    @property
    def db(self) -> str | None:
        return self.values["db"]  # type: ignore[no-any-return]

    @property
    def actor(self) -> str | None:
        return self.values["actor"]  # type: ignore[no-any-return]

    @property
    def workspace(self) -> str | None:
        return self.values["workspace"]  # type: ignore[no-any-return]

    @property
    def http_host(self) -> str:
        return str(self.values["http.host"])

    @property
    def http_port(self) -> int:
        return int(self.values["http.port"])

    @property
    def http_stateless(self) -> bool:
        return bool(self.values["http.stateless"])

    @property
    def http_behind_tls(self) -> bool:
        return bool(self.values["http.behind_tls"])

    @property
    def embedder(self) -> str:
        return str(self.values["embedder"])

    @property
    def check_dirs(self) -> dict[Path, str | None]:
        """Each directory an HTTP server may read -> the name of the workspace it belongs
        to (None: the one the server acts in)."""
        return {Path(p): w for p, w in self.values["http.check_dirs"].items()}

    @property
    def limits(self) -> Limits:
        return Limits(
            store_threads=self.values["server.store_threads"],
            max_connections=self.values["http.max_connections"],
            head_seconds=self.values["http.head_seconds"],
            keep_alive_seconds=self.values["http.keep_alive_seconds"],
            calls_per_minute=self.values["http.calls_per_minute"],
            sessions_per_key=self.values["http.sessions_per_key"],
            streams_per_key=self.values["http.streams_per_key"],
            requests_per_key=self.values["http.requests_per_key"],
            web_sessions_per_key=self.values["http.web_sessions_per_key"],
        )

    def described(self, fallbacks: Mapping[str, str] | None = None) -> dict[str, Any]:
        """What `palimpsest config` shows: each value, where it came from; no password.

        `fallbacks` fill what has no value of its own (the default store, the login name).
        """
        from .service import store_label as shown

        keys = {}
        for name, key in KEYS.items():
            value = self.values[name]
            if value is None:
                value = (fallbacks or {}).get(name)
            if name == "db" and isinstance(value, str):
                value = shown(value)
            if name == "sync.key" and value is not None:
                value = "(set)"
            keys[name] = {
                "value": value,
                "from": self.sources[name],
                "where": self.origins.get(name),
                "env": key.env,
                "about": key.about,
            }
        return {"file": str(self.file) if self.file else None, "keys": keys}


def config_file(given: str | None, environ: Mapping[str, str]) -> tuple[Path, bool]:
    """The file to read, and whether it must exist (named by the flag or the variable)."""
    if given:
        return Path(given).expanduser(), True
    if environ.get(f"{ENV_PREFIX}CONFIG"):
        return Path(environ[f"{ENV_PREFIX}CONFIG"]).expanduser(), True
    home = environ.get(f"{ENV_PREFIX}HOME")
    folder = (
        Path(home).expanduser()
        if home
        else Path(platformdirs.user_config_dir("palimpsest", appauthor=False))
    )
    return folder / FILE_NAME, False


def load_config(
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    config_path: str | None = None,
) -> Config:
    """flag > environment > file > default, each value read and checked by its key."""
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    environ = os.environ if environ is None else environ
    path, required = config_file(config_path, environ)
    from_file = _read_file(path, required)
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    origins: dict[str, str] = {}
    for name, key in KEYS.items():
        if name in flags:
            raw, source, origin = flags[name], "flag", key.flag or name
        elif environ.get(key.env):
            raw, source, origin = environ[key.env], "env", key.env
        elif name in from_file:
            raw, source, origin = from_file[name], "file", str(path)
        else:
            values[name], sources[name] = key.default, "default"
            continue
        values[name] = _read(key, raw, source, origin)
        sources[name], origins[name] = source, origin
    read = path if from_file or path.exists() else None
    return Config(MappingProxyType(values), MappingProxyType(sources), read,
                  MappingProxyType(origins))  # fmt: skip


def _read(key: Key, raw: Any, source: str, origin: str) -> Any:
    try:
        return key.read(raw)
    except ValueError as exc:
        where = {
            "flag": f"`{origin}`",
            "env": f"${origin}",
            "file": f'"{key.name}" in {origin}',  # quoted, not a flag: the CLI keeps it
        }[source]
        raise ValidationError(
            f"{where} must be {exc}; the value is not shown.", field=key.name
        ) from None


def _read_file(path: Path, required: bool) -> dict[str, Any]:
    """The file's keys, flattened to dotted names and checked against KEYS."""
    try:
        with path.open("rb") as opened:
            document = tomllib.load(opened)
    except FileNotFoundError:
        if required:
            raise ValidationError(
                f"No configuration file at {path}; create it, or give another with --config "
                f"(or ${ENV_PREFIX}CONFIG).",
                field="config",
            ) from None
        return {}
    except OSError as exc:
        raise ValidationError(
            f"Cannot read the configuration file {path} ({exc.strerror}).", field="config"
        ) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        reason = str(exc) if isinstance(exc, tomllib.TOMLDecodeError) else "not UTF-8"
        raise ValidationError(
            f"The configuration file {path} is not valid TOML ({reason}).", field="config"
        ) from None
    return _flattened(document, path)


def _flattened(document: dict[str, Any], path: Path) -> dict[str, Any]:
    tables = {name.split(".")[0] for name in KEYS if "." in name}
    found: dict[str, Any] = {}
    for head, value in document.items():
        if head in tables and isinstance(value, dict):
            found.update({f"{head}.{name}": v for name, v in value.items()})
        else:
            found[head] = value
    for name in found:
        if name not in KEYS:
            from .screening.gate import shown_name

            raise ValidationError(
                f'{path}: "{shown_name(name)}" is not a configuration key; the keys are '
                f"{', '.join(KEYS)} (docs/configuration.md).",
                field="config",
            )
    return found
