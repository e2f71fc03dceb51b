"""The `palimpsest` group: options of the whole command, the store it opens, and the pieces
every subcommand is built from (`command`, `emit`, `given`).

Each command maps its options onto the service's parameter names (DESIGN section 2),
passing only what the user gave so that "omit keeps" holds, and prints the answer for a
person (`render`) or as JSON. Errors become output and exit codes in one place,
`_Group.invoke` (see `failures`). `--db`, `--actor` and `--json` belong to the whole command
and work before or after the subcommand (`palimpsest serve --db x.db`, as MCP client
configurations write it).
"""

from __future__ import annotations

import getpass
import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
import platformdirs

from ..config import Config, load_config
from ..domain.errors import PalimpsestError, ValidationError
from ..domain.projects import local_places
from . import render
from .failures import COMMAND_KEY, EXIT_CODES, JSON_KEY, bad_parameter, fail

if TYPE_CHECKING:
    from ..service import Service

# The service is imported where a command first needs it (`Env.service`, the default store's
# place), not with the group: `serve` answers `initialize` before it loads (cli/serving.py).

F = TypeVar("F", bound=Callable[..., Any])
Renderer = Callable[[dict[str, Any]], None]


def data_dir() -> Path:
    """PALIMPSEST_HOME, else the platform's user data directory (XDG on Linux)."""
    home = os.environ.get("PALIMPSEST_HOME")
    if home:
        return Path(home).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    earlier = (Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share") / "palimpsest"
    return pick_data_dir(Path(platformdirs.user_data_dir("palimpsest", appauthor=False)), earlier)


def pick_data_dir(platform_dir: Path, earlier: Path) -> Path:
    """Releases before 0.2 used the XDG place on every platform (macOS and Windows too): a
    store found there is still used, never an empty one started beside it."""
    from ..service import default_store_path

    found_earlier = platform_dir != earlier and default_store_path(earlier).exists()
    if found_earlier and not default_store_path(platform_dir).exists():
        return earlier
    return platform_dir


def default_actor() -> str:
    """`user:<login name>`: spaces, a domain and a backslash are kept, blanks around dropped."""
    try:
        login = getpass.getuser().strip()
    except (OSError, KeyError):  # no login name (some containers)
        login = ""
    return f"user:{login}" if login else "user:local"


class Env:
    """What the group options chose; opens the store only when a command needs it.

    The configuration (config.py) is read when a command first needs it, so that a bad
    file is refused in the command's own terms (`--json` after the subcommand too).
    """

    def __init__(
        self,
        ctx: click.Context,
        db: str | None,
        actor: str | None,
        config: str | None,
        workspace: str | None = None,
    ):
        self.ctx = ctx
        # only what was typed; None: not given
        self.flags = {"db": db, "actor": actor, "workspace": workspace}
        self.config_path = config
        self._service: Service | None = None

    def config(self, **flags: Any) -> Config:
        """The effective configuration, with the subcommand's own `flags` (KEYS names)."""
        if self.config_path is not None and not self.config_path.strip():
            raise ValidationError(
                "`--config` is empty: name a configuration file, or leave it out.",
                field="config",
            )
        return load_config({**self.flags, **flags}, os.environ, self.config_path)

    @property
    def db(self) -> str:
        db = self.config().db
        if db is not None:
            return db
        from ..service import default_store_path

        return str(default_store_path(data_dir()))

    @db.setter
    def db(self, value: str) -> None:
        self.flags["db"] = value

    @property
    def db_typed(self) -> bool:
        """Whether --db was typed (not taken from the environment, the file or the default)."""
        return self.flags["db"] is not None

    @property
    def actor(self) -> str:
        return self.config().actor or default_actor()

    def service(self, *, create: bool = True) -> Service:
        """The service over the chosen store; a read (`create=False`) of a SQLite file
        that does not exist is refused rather than making an empty store of a typo."""
        if self._service is None:
            from ..service import load_embedder, open_service

            embedder = load_embedder(self.config().embedder)  # its model loads when used
            opened = open_service(self.db, actor=self.actor, create=create, embedder=embedder)
            self.ctx.call_on_close(opened.close)
            self._service = opened.in_workspace(self.config().workspace)
            # The CLI (and a stdio server it starts) reads the project it is run in.
            self._service.places = local_places()
        return self._service


# `palimpsest --help` lists the commands by what a person comes for, not alphabetically.
SECTIONS = {
    "Everyday": ("remember", "recall", "revise", "inspect", "history", "link", "revert",
                 "duplicates", "merge", "forget", "notebook", "web", "demo"),
    "Agents and hooks": ("serve", "orient", "hook", "guard", "seen", "served", "check",
                         "project", "secret"),
    "Teams": ("user", "key", "workspace", "dispute", "sync"),
    "Moving memory": ("export", "import", "copy"),
    "Upkeep": ("doctor", "reindex", "scrub", "migrate", "config", "settings", "bench"),
}  # fmt: skip


class _Group(click.Group):
    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from . import load_commands  # only the modules of this command (cli/__init__.py)

        load_commands(cmd_name)
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        from . import load_commands

        load_commands()
        return super().list_commands(ctx)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        shown = {name: self.get_command(ctx, name) for name in self.list_commands(ctx)}
        named = {name for names in SECTIONS.values() for name in names}
        # a command given no section still shows, under Other (a test keeps it empty)
        sections = {**SECTIONS, "Other": tuple(sorted(shown.keys() - named))}
        width = max(map(len, shown))  # one column for the names of every section
        limit = formatter.width - 6 - width
        for title, names in sections.items():
            rows = [
                (name.ljust(width), found.get_short_help_str(limit))
                for name in names
                if (found := shown.get(name)) is not None and not found.hidden
            ]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PalimpsestError as exc:
            fail(ctx, exc.to_dict(), EXIT_CODES.get(exc.error_class, 3))
        except click.BadParameter as exc:
            fail(ctx, bad_parameter(exc), 2)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except BrokenPipeError:
            # The reader went away (`palimpsest ... | head`): nothing more to say to it.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        except Exception as exc:
            if os.environ.get("PALIMPSEST_DEBUG"):
                raise
            # The exception's own text may hold paths, SQL or data: show only its type.
            message = (
                f"unexpected {type(exc).__name__}; this is a bug or a broken database file. "
                "Run again with PALIMPSEST_DEBUG=1 to see the traceback."
            )
            fail(ctx, {"error_class": "internal", "message": message}, 3)


def _set_json(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    # meta is shared by the whole context chain: --json before or after the subcommand
    ctx.meta[JSON_KEY] = bool(ctx.meta.get(JSON_KEY)) or value
    ctx.meta[COMMAND_KEY] = ctx.command  # the innermost command parsed so far
    return value


def _sets_flag(name: str) -> Callable[[click.Context, click.Parameter, str | None], None]:
    """The callback of a group option given again after the subcommand: it wins there."""

    def given(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
        if value is not None:
            env = ctx.find_object(Env)
            assert env is not None
            env.flags[name] = value

    return given


def _set_config(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        env = ctx.find_object(Env)
        assert env is not None
        env.config_path = value


JSON_OPTION = click.option(
    "--json",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_set_json,
    help="Print the answer as JSON.",
)
DB_HELP = (
    "SQLite file or postgresql:// URL. Default: $PALIMPSEST_DB, else `db` in the configuration "
    "file, else palimpsest.db in $PALIMPSEST_HOME or the user data directory."
)
ACTOR_HELP = "Who is acting, as recorded in the history."
WORKSPACE_HELP = (
    "The workspace to act in, by name. Default: $PALIMPSEST_WORKSPACE, else `workspace` in "
    "the configuration file, else the store's first (`default`)."
)
CONFIG_HELP = (
    "The configuration file. Default: $PALIMPSEST_CONFIG, else config.toml in $PALIMPSEST_HOME "
    "or the user config directory (see `palimpsest config`)."
)


def _has_option(fn: Callable[..., Any], flag: str) -> bool:
    params = getattr(fn, "__click_params__", [])
    return any(flag in getattr(p, "opts", ()) for p in params)


def shared_options(fn: Callable[..., Any]) -> list[click.Option]:
    """The group's options, again, for after a subcommand (`palimpsest serve --db x.db`),
    except where the subcommand has an option of that name (history's --actor filter)."""
    shared = [
        click.Option(
            ["--db"],
            metavar="PATH|URL",
            expose_value=False,
            callback=_sets_flag("db"),
            help="The store, as before the command (see palimpsest --help).",
        ),
        click.Option(
            ["--config"],
            metavar="PATH",
            expose_value=False,
            callback=_set_config,
            help="The configuration file, as before the command.",
        ),
        click.Option(
            ["--workspace"],
            metavar="NAME",
            expose_value=False,
            callback=_sets_flag("workspace"),
            help="The workspace, as before the command.",
        ),
    ]
    if not _has_option(fn, "--actor"):
        shared.append(
            click.Option(
                ["--actor"], expose_value=False, callback=_sets_flag("actor"), help=ACTOR_HELP
            )
        )
    return shared


def command(
    parent: click.Group, name: str, example: str, *, uses_store: bool = True
) -> Callable[[F], click.Command]:
    """A subcommand with `--json` and a help text that ends with an example. One that
    does not use the `--db` store (copy names its own two) does not offer the group's
    `--db` and `--actor` again."""

    def decorate(fn: F) -> click.Command:
        shared = shared_options(fn) if uses_store else []
        command = parent.command(name, epilog=f"\b\nExample:\n  {example}")(JSON_OPTION(fn))
        command.params.extend(shared)  # listed last in the help: the command's own come first
        return command

    return decorate


def group(parent: click.Group, name: str, example: str) -> Callable[[F], click.Group]:
    """A group of subcommands that takes the group's options too (`notebook --json list`)."""

    def decorate(fn: F) -> click.Group:
        made = parent.group(name, epilog=f"\b\nExample:\n  {example}")(JSON_OPTION(fn))
        made.params.extend(shared_options(fn))
        return made

    return decorate


def emit(result: Mapping[str, Any], human: Renderer = render.fields) -> None:
    ctx = click.get_current_context()
    if ctx.meta.get(JSON_KEY):
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        human(_printable(result))
    if result.get("unmatched") and not result.get("results"):
        ctx.exit(1)  # every target was refused and nothing changed: a refusal, as such


# What a terminal acts on rather than shows: escapes (OSC 52 sets the clipboard), a carriage
# return (the line is written over), bidirectional overrides (the text reads reordered).
_NOT_SHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _printable(value: Any) -> Any:
    """`value` with each such character in a string written out (`\\x1b`): a memory
    someone else wrote reaches your terminal as text, never as a command to it."""
    if isinstance(value, str):
        return _NOT_SHOWN.sub(lambda m: m[0].encode("unicode_escape").decode(), value)
    if isinstance(value, dict):
        return {k: _printable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable(v) for v in value]
    return value


def given(**values: Any) -> dict[str, Any]:
    """Only what the user gave: None, unset flags and empty repeats are left out."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        if value is None or value is False or value == ():
            continue
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


def json_value(name: str, raw: str | None) -> Any:
    """A JSON option's value, given inline or as @file."""
    if raw is None:
        return None
    try:
        text = Path(raw[1:]).read_text(encoding="utf-8") if raw.startswith("@") else raw
        return json.loads(text)
    except UnicodeDecodeError:
        raise ValidationError(
            f"--{name}: the file is not UTF-8 text; convert it first (iconv -t UTF-8).",
            field=name,
        ) from None
    except OSError as exc:
        raise ValidationError(
            f"--{name}: cannot read {raw[1:]!r}: {exc.strerror}.", field=name
        ) from None
    except json.JSONDecodeError as exc:
        raise ValidationError(f"--{name} is not valid JSON: {exc.msg}.", field=name) from None


def one_or_many(values: tuple[str, ...]) -> str | list[str] | None:
    if not values:
        return None
    return values[0] if len(values) == 1 else list(values)


# -- the group -------------------------------------------------------------------------


@click.group(
    cls=_Group,
    epilog="\b\nExample:\n  palimpsest demo",
    context_settings={"help_option_names": ["-h", "--help"]},  # inherited by every subcommand
)
@click.option("--db", metavar="PATH|URL", help=DB_HELP)
@click.option("--actor", help=ACTOR_HELP + " Default: $PALIMPSEST_ACTOR, else user:<login name>.")
@click.option("--config", metavar="PATH", help=CONFIG_HELP)
@click.option("--workspace", metavar="NAME", help=WORKSPACE_HELP)
@JSON_OPTION
@click.version_option(package_name="palimpsest")
@click.pass_context
def palimpsest(
    ctx: click.Context, db: str | None, actor: str | None, config: str | None, workspace: str | None
) -> None:
    """Long-term memory for AI agents: memory changes, but nothing is lost silently."""
    ctx.obj = Env(ctx, db, actor, config, workspace)


pass_env = click.make_pass_decorator(Env)


def main() -> None:
    palimpsest(prog_name="palimpsest")
