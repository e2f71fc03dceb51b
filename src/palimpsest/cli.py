"""The `palimpsest` command: one subcommand per service operation, `--json` on each.

Each command maps its options onto the service's parameter names (DESIGN section 2),
passing only what the user gave so that "omit keeps" holds, and prints the answer for a
person (`cli_render`) or as JSON. Errors are turned into output and exit codes in one
place, `_Group.invoke`, which names the CLI's flags where the service names its fields.
`--db`, `--actor` and `--json` belong to the whole command and work before or after the
subcommand (`palimpsest serve --db x.db`, as MCP client configurations write it).
"""

from __future__ import annotations

import getpass
import json
import os
import re
import shlex
import socket
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
import platformdirs

from . import cli_render as render
from .cli_demo import run_demo
from .config import Config, load_config
from .errors import PalimpsestError, ValidationError
from .gate import check_actor
from .model import KINDS, LINK_TYPES, SCOPES, SEVERITIES, STATUSES
from .service import DEFAULT_WORKSPACE, Service
from .store import Store, default_db_path, open_store, shown
from .transfer import copy_between

F = TypeVar("F", bound=Callable[..., Any])
Renderer = Callable[[dict[str, Any]], None]

# Exit codes: 1 the request was refused (fix it; also when every target of a write was),
# 2 click's usage errors, 3 try again or report.
EXIT_CODES = {"validation": 1, "not_found": 1, "conflict": 1, "forbidden": 1}
JSON_KEY = "palimpsest.json"
COMMAND_KEY = "palimpsest.command"  # the subcommand being run, for its flags' names
# API names whose CLI option has another name (the option's parameter name, see _flag_names).
API_ALIASES = {
    "texts": "text_match",
    "id": "ids",
    "type": "type_",
    "diff_from": "diff",
    "diff_to": "diff",
    "from": "source",
    "to": "target",
    "from_domain": "source",
    "to_domain": "target",
}


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
    found_earlier = platform_dir != earlier and default_db_path(earlier).exists()
    if found_earlier and not default_db_path(platform_dir).exists():
        return earlier
    return platform_dir


def default_actor() -> str:
    """`user:<login name>`: spaces, a domain and a backslash are kept, blanks around dropped."""
    try:
        login = getpass.getuser().strip()
    except (OSError, KeyError):  # no login name (some containers)
        login = ""
    return f"user:{login}" if login else "user:local"


class _Env:
    """What the group options chose; opens the store only when a command needs it.

    The configuration (config.py) is read when a command first needs it, so that a bad
    file is refused in the command's own terms (`--json` after the subcommand too).
    """

    def __init__(self, ctx: click.Context, db: str | None, actor: str | None, config: str | None):
        self.ctx = ctx
        self.flags = {"db": db, "actor": actor}  # only what was typed; None: not given
        self.config_path = config
        self._store: Store | None = None

    def config(self, **flags: Any) -> Config:
        """The effective configuration, with the subcommand's own `flags` (KEYS names)."""
        return load_config({**self.flags, **flags}, os.environ, self.config_path)

    @property
    def db(self) -> str:
        return self.config().db or str(default_db_path(data_dir()))

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

    @actor.setter
    def actor(self, value: str) -> None:
        self.flags["actor"] = value

    def service(self) -> Service:
        check_actor(self.actor)  # before a store is opened (or a database file made) for it
        if self._store is None:
            self._store = open_store(self.db)
            self.ctx.call_on_close(self._store.close)
        return Service(self._store, actor=self.actor)


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PalimpsestError as exc:
            _fail(ctx, exc.to_dict(), EXIT_CODES.get(exc.error_class, 3))
        except click.BadParameter as exc:
            _fail(ctx, _bad_parameter(exc), 2)
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
            _fail(ctx, {"error_class": "internal", "message": message}, 3)


def _bad_parameter(exc: click.BadParameter) -> dict[str, Any]:
    """click's refusal of an option value, said without the value (click quotes it)."""
    if exc.param is None:
        return {"error_class": "validation", "message": "An option has a wrong value."}
    hint = exc.param.get_error_hint(exc.ctx) if exc.ctx else exc.param.name
    command = exc.ctx.command_path if exc.ctx else "palimpsest"
    kind = exc.param.type
    if isinstance(kind, click.IntRange):
        wanted = f"a whole number from {kind.min} to {kind.max}"
    elif isinstance(kind, click.types.IntParamType):
        wanted = "a whole number"
    else:
        wanted = f"a {kind.name} value"
    return {
        "error_class": "validation",
        "message": f"{hint} takes {wanted}; see `{command} --help`.",
        "field": exc.param.name,
    }


def _fail(ctx: click.Context, body: dict[str, Any], code: int) -> None:
    command = ctx.meta.get(COMMAND_KEY)
    if command is not None:
        body = {**body, "message": _in_cli_terms(body["message"], _flag_names(command))}
    if ctx.meta.get(JSON_KEY):
        click.echo(json.dumps(body, indent=2, ensure_ascii=False))
    else:
        click.echo(f"error ({body['error_class']}): {body['message']}", err=True)
    ctx.exit(code)


def _flag_names(command: click.Command) -> dict[str, str]:
    """The command's parameter names (and the API's names for them) -> what a user types."""
    names: dict[str, str] = {}
    for param in command.params:
        if param.name is None:
            continue
        if isinstance(param, click.Option):
            names[param.name] = max(param.opts, key=len)  # --notebook rather than -n
        else:
            names[param.name] = param.human_readable_name.strip("[].").upper()
    for api_name, param_name in API_ALIASES.items():
        if api_name not in names and param_name in names:
            names[api_name] = names[param_name]
    return names


def _in_cli_terms(message: str, names: dict[str, str]) -> str:
    """A service message with each `api_field` named as the CLI's flag or argument."""
    message = re.sub(r"`([a-z_]+)`", lambda m: f"`{names.get(m.group(1), m.group(1))}`", message)
    return _say_once(message)


NAMED = re.compile(r"(, | and | or |/| \(or )?(`[^`]+`)(\))?")


def _say_once(message: str) -> str:
    """Drop a flag named twice in a list (`id` and `ids` are both `--id`).

    "`ID`, `--diff` and `--diff`" reads "`ID` and `--diff`"; "`ID` (or `ID`)" reads "`ID`".
    """
    pieces: list[str] = []
    seen: set[str] = set()
    kept: list[int] = []  # where each kept name's connector and name sit in `pieces`
    last = 0
    for match in NAMED.finditer(message):
        pieces.append(message[last : match.start()])
        last = match.end()
        connector, name = match.group(1) or "", match.group(2)
        if name not in seen:
            seen.add(name)
            kept.append(len(pieces))
            pieces.append(match.group(0))
        elif connector in (" and ", " or ") and kept and pieces[kept[-1]].startswith(", "):
            pieces[kept[-1]] = connector + pieces[kept[-1]][2:]  # the list's last word moves
    pieces.append(message[last:])
    return "".join(pieces)


def _set_json(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    # meta is shared by the whole context chain: --json before or after the subcommand
    ctx.meta[JSON_KEY] = bool(ctx.meta.get(JSON_KEY)) or value
    ctx.meta[COMMAND_KEY] = ctx.command  # the innermost command parsed so far
    return value


def _set_db(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:  # given after the subcommand: it wins over the group's
        env = ctx.find_object(_Env)
        assert env is not None
        env.db = value


def _set_actor(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        env = ctx.find_object(_Env)
        assert env is not None
        env.actor = value


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
CONFIG_HELP = (
    "The configuration file. Default: $PALIMPSEST_CONFIG, else config.toml in $PALIMPSEST_HOME "
    "or the user config directory (see `palimpsest config`)."
)


def _has_option(fn: Callable[..., Any], flag: str) -> bool:
    params = getattr(fn, "__click_params__", [])
    return any(flag in getattr(p, "opts", ()) for p in params)


def _command(parent: click.Group, name: str, example: str) -> Callable[[F], click.Command]:
    """A subcommand with `--json` and a help text that ends with an example."""

    def decorate(fn: F) -> click.Command:
        # The group's options work after the subcommand too (`palimpsest serve --db x.db`),
        # except where the subcommand has an option of that name (history's --actor filter).
        shared = [
            click.Option(
                ["--db"],
                metavar="PATH|URL",
                expose_value=False,
                callback=_set_db,
                help="The store, as before the command (see palimpsest --help).",
            )
        ]
        if not _has_option(fn, "--actor"):
            shared.append(
                click.Option(["--actor"], expose_value=False, callback=_set_actor, help=ACTOR_HELP)
            )
        command = parent.command(name, epilog=f"\b\nExample:\n  {example}")(JSON_OPTION(fn))
        command.params.extend(shared)  # listed last in the help: the command's own come first
        return command

    return decorate


def _emit(result: dict[str, Any], human: Renderer = render.fields) -> None:
    ctx = click.get_current_context()
    if ctx.meta.get(JSON_KEY):
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        human(result)
    if result.get("unmatched") and not result.get("results"):
        ctx.exit(1)  # every target was refused and nothing changed: a refusal, as such


def _given(**values: Any) -> dict[str, Any]:
    """Only what the user gave: None, unset flags and empty repeats are left out."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        if value is None or value is False or value == ():
            continue
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


def _json_value(name: str, raw: str | None) -> Any:
    """A JSON option's value, given inline or as @file."""
    if raw is None:
        return None
    try:
        text = Path(raw[1:]).read_text(encoding="utf-8") if raw.startswith("@") else raw
        return json.loads(text)
    except OSError as exc:
        raise ValidationError(
            f"--{name}: cannot read {raw[1:]!r}: {exc.strerror}.", field=name
        ) from None
    except json.JSONDecodeError as exc:
        raise ValidationError(f"--{name} is not valid JSON: {exc.msg}.", field=name) from None


def _one_or_many(values: tuple[str, ...]) -> str | list[str] | None:
    if not values:
        return None
    return values[0] if len(values) == 1 else list(values)


# -- the group -------------------------------------------------------------------------


@click.group(cls=_Group, epilog="\b\nExample:\n  palimpsest demo")
@click.option("--db", metavar="PATH|URL", help=DB_HELP)
@click.option("--actor", help=ACTOR_HELP + " Default: $PALIMPSEST_ACTOR, else user:<login name>.")
@click.option("--config", metavar="PATH", help=CONFIG_HELP)
@JSON_OPTION
@click.version_option(package_name="palimpsest")
@click.pass_context
def palimpsest(ctx: click.Context, db: str | None, actor: str | None, config: str | None) -> None:
    """Long-term memory for AI agents: memory changes, but nothing is lost silently."""
    ctx.obj = _Env(ctx, db, actor, config)


pass_env = click.make_pass_decorator(_Env)


def _field_options(fn: F) -> F:
    """The optional memory fields, shared by remember and revise."""
    options = [
        click.option("--title"),
        click.option("--why", help="Why this is so, or why it was decided."),
        click.option("--tag", "tags", multiple=True, help="A tag (repeat for several)."),
        click.option("--key", help="A name unique among the notebook's active memories."),
        click.option("--occurred-at", help="When it happened (RFC 3339 or a date)."),
        click.option("--expires-at", help="When it stops being true."),
        click.option("--source", help="Where it comes from (URL, ticket, person)."),
        click.option("--anchor", "anchors", multiple=True, help="A project-relative path."),
        click.option("--severity", help=f"For rules: {', '.join(SEVERITIES)}."),
        click.option("--falsifier", help="What would show this is wrong (rules need one)."),
        click.option(
            "--check",
            help='A check as JSON (or @file), e.g. \'{"kind": "forbidden", '
            '"literals": ["rm -rf"]}\'.',
        ),
        click.option("--bindings", help="When a rule binds, as JSON (or @file)."),
        click.option("--scope", help=f"{', '.join(SCOPES)}."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _write_options(fn: F) -> F:
    fn = click.option("--dry-run", is_flag=True, help="Check everything, write nothing.")(fn)
    return click.option("--idempotency-key", help="Retrying with the same key writes once.")(fn)


def _memory_fields(values: dict[str, Any]) -> dict[str, Any]:
    """Field options as service parameters, JSON options parsed."""
    for name in ("check", "bindings"):
        values[name] = _json_value(name, values.get(name))
    return _given(**values)


# -- memories --------------------------------------------------------------------------

KIND_HELP = f"One of: {', '.join(KINDS)}."


@_command(
    palimpsest,
    "remember",
    'palimpsest remember -n myproj -k decision "We use PostgreSQL 16" --why "pgvector needs it"',
)
@click.argument("text")
@click.option("-n", "--notebook", required=True, help="Notebook name or id (created if new).")
@click.option("-k", "--kind", default="fact", show_default=True, help=KIND_HELP)
@_field_options
@click.option("--supersedes", multiple=True, help="Id of a memory this replaces (repeatable).")
@click.option("--because", help="Why, when superseding a rule.")
@_write_options
@pass_env
def remember(env: _Env, /, text: str, notebook: str, kind: str, **options: Any) -> None:
    """File a new memory in a notebook (TEXT `-` reads standard input)."""
    if text == "-":
        text = sys.stdin.read()
    _emit(
        env.service().remember(notebook=notebook, kind=kind, text=text, **_memory_fields(options))
    )


@_command(palimpsest, "recall", 'palimpsest recall "database version" -n myproj --kind decision')
@click.argument("query", nargs=-1)
@click.option("-n", "--notebook", help="Only this notebook.")
@click.option("--domain", help="Only notebooks of this domain.")
@click.option("-k", "--kind", multiple=True, help="Only these kinds (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Hits carry every tag given (repeatable).")
@click.option("--status", multiple=True, help=f"Statuses to include: {', '.join(STATUSES)}.")
@click.option("--since", help="Occurred (else recorded) at or after this time.")
@click.option("--until", help="Occurred (else recorded) at or before this time.")
@click.option("--limit", type=int, help="At most this many hits (default 10).")
@click.option("--include-retired", is_flag=True, help="Also superseded and retracted ones.")
@click.option("--as-of", help="Answer from the state at this past time.")
@pass_env
def recall(env: _Env, /, query: tuple[str, ...], kind: tuple[str, ...], **options: Any) -> None:
    """Find what is known: words and filters, now or as of a past time."""
    status = _one_or_many(options.pop("status"))
    found = env.service().recall(
        **_given(query=" ".join(query) or None, kind=_one_or_many(kind), status=status, **options)
    )
    _emit(found, render.hits)


@_command(
    palimpsest,
    "revise",
    "palimpsest revise --id m_01abc --replace-from 'PostgreSQL 15' --replace-to 'PostgreSQL 16'",
)
@click.argument("target_ids", nargs=-1, metavar="[ID]...")
@click.option("--id", "ids", multiple=True, help="A memory id (repeat for several).")
@click.option("--text-match", multiple=True, help="A memory's exact text (with --notebook).")
@click.option("-n", "--notebook", help="The notebook --text-match looks in.")
@click.option("--items", help="A batch as a JSON list of {id, ...} (or @file); all or nothing.")
@click.option("-k", "--kind", help=KIND_HELP)
@click.option("--text", help="Replace the whole text.")
@_field_options
@click.option("--clear", multiple=True, help="Clear this field (repeatable).")
@click.option("--append", help="Add to the end of the text (a leading newline starts a new line).")
@click.option("--replace-from", help="Replace the first occurrence of this...")
@click.option("--replace-to", help="...with this.")
@click.option("--remove", help="Delete the first occurrence of this from the text.")
@click.option("--status", help="superseded, retracted, active or verified.")
@click.option("--note", help="Why the status changes.")
@click.option("--redact", is_flag=True, help="Store the note with credentials as [REDACTED:kind].")
@click.option("--because", help="Reason, needed to weaken a rule or move across domains.")
@click.option("--move-to", help="Move to this notebook (kept: id, dates, key, history).")
@click.option("--supersede", is_flag=True, help="File as a new memory; retire the original.")
@click.option("--claim", is_flag=True, help="Make an ownerless memory yours.")
@click.option("--override-reason", help="Why you change a memory someone else owns.")
@click.option("--override-confirm", is_flag=True, help="Confirm overriding a person's memory.")
@click.option("--expected-version", type=int, help="Refuse if the memory changed since.")
@_write_options
@pass_env
def revise(
    env: _Env,
    /,
    target_ids: tuple[str, ...],
    ids: tuple[str, ...],
    text_match: tuple[str, ...],
    items: str | None,
    **options: Any,
) -> None:
    """Change what memories say, losing nothing: omitted fields keep their value."""
    all_ids = target_ids + ids
    targets: dict[str, Any] = {}
    if len(all_ids) == 1:
        targets["id"] = all_ids[0]
    elif all_ids:
        targets["ids"] = list(all_ids)
    if text_match:
        targets["texts"] = list(text_match)
    if items is not None:
        targets["items"] = _json_value("items", items)
    _emit(env.service().revise(**targets, **_memory_fields(options)))


@_command(palimpsest, "revert", "palimpsest revert m_01abc --version 2 --because 'v3 was wrong'")
@click.argument("id", required=False)
@click.option("--version", type=int, help="The version of ID to go back to.")
@click.option("-n", "--notebook", help="Revert a whole notebook (with --as-of).")
@click.option("--as-of", help="The past time the notebook goes back to.")
@click.option("--because", help="Why (needed when this weakens a rule).")
@_write_options
@pass_env
def revert(env: _Env, /, **options: Any) -> None:
    """Go back to an earlier version, as a new event: history only grows."""
    _emit(env.service().revert(**_given(**options)))


@_command(palimpsest, "forget", "palimpsest forget m_01abc --because 'an API key was pasted in'")
@click.argument("ids", nargs=-1, required=False, metavar="[ID...]")
@click.option("--version", type=int, help="Scrub only this version of the one ID.")
@click.option("-n", "--notebook", help="Forget a notebook's --field, or the empty notebook.")
@click.option(
    "--field",
    type=click.Choice(["summary", "name"]),
    help="With --notebook: scrub every value this field had (a summary is cleared too).",
)
@click.option("--because", help="Why it must not stay on disk (required).")
@_write_options
@pass_env
def forget(env: _Env, /, ids: tuple[str, ...], **options: Any) -> None:
    """Delete memories, or a notebook's field, for good, leaving a tombstone. Irreversible.

    Prefer revise. `--notebook NB --field summary` scrubs a summary from the notebook and
    its history; `--notebook NB` alone forgets an empty notebook.
    """
    target = {"id": ids[0]} if len(ids) == 1 else {"ids": list(ids)} if ids else {}
    _emit(env.service().forget(**target, **_given(**options)))


@_command(palimpsest, "inspect", "palimpsest inspect m_01abc")
@click.argument("id", required=False)
@click.option("-n", "--notebook", help="Show a notebook and all its memories instead.")
@pass_env
def inspect(env: _Env, /, **options: Any) -> None:
    """Show a memory whole (fields, versions, links), or a whole notebook."""
    _emit(env.service().inspect(**_given(**options)), render.inspected)


@_command(palimpsest, "history", "palimpsest history m_01abc --diff 1 3")
@click.argument("id", required=False)
@click.option("-n", "--notebook", help="Events of this notebook and its memories.")
@click.option("--actor", help="Only events by this actor.")
@click.option("--since", help="Events at or after this time.")
@click.option("--until", help="Events at or before this time.")
@click.option("--limit", type=int, help="At most this many events (default 100).")
@click.option("--diff", nargs=2, type=int, metavar="FROM TO", help="Diff two versions of ID.")
@pass_env
def history(env: _Env, /, diff: tuple[int, int] | None, **options: Any) -> None:
    """List what happened, by memory, notebook, actor or time; or diff two versions."""
    if diff:
        options.update(diff_from=diff[0], diff_to=diff[1])
    _emit(env.service().history(**_given(**options)), render.events)


@_command(palimpsest, "link", "palimpsest link m_01abc m_02def --type depends_on")
@click.argument("source")
@click.argument("target")
@click.option(
    "--type",
    "type_",
    default="relates_to",
    show_default=True,
    help=f"One of: {', '.join(LINK_TYPES)}.",
)
@click.option("--remove", is_flag=True, help="Remove this link instead.")
@_write_options
@pass_env
def link(env: _Env, /, source: str, target: str, type_: str, **options: Any) -> None:
    """Link two memories (or two notebooks) with a typed edge; --remove unlinks."""
    _emit(env.service().link(source=source, target=target, type=type_, **_given(**options)))


# -- notebooks -------------------------------------------------------------------------


@palimpsest.group(epilog="\b\nExample:\n  palimpsest notebook list")
def notebook() -> None:
    """List, create and edit notebooks."""


@_command(notebook, "list", "palimpsest notebook list --json")
@pass_env
def notebook_list(env: _Env, /) -> None:
    """List the notebooks."""
    _emit(env.service().notebooks(), render.notebooks)


@_command(notebook, "create", "palimpsest notebook create myproj --domain work --summary 'API'")
@click.argument("name")
@click.option("--summary", help="What the notebook is about.")
@click.option(
    "--redact", is_flag=True, help="Store the summary with credentials as [REDACTED:kind]."
)
@click.option("--domain", help="The domain it belongs to.")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@_write_options
@pass_env
def notebook_create(env: _Env, /, **options: Any) -> None:
    """Create a notebook (remember also creates one on first use)."""
    _emit(env.service().create_notebook(**_given(**options)))


@_command(notebook, "edit", "palimpsest notebook edit myproj --name api-server --clear summary")
@click.argument("notebook")
@click.option("--name", help="Rename it (the id never changes).")
@click.option("--summary", help="Replace the summary.")
@click.option(
    "--redact", is_flag=True, help="Store the summary with credentials as [REDACTED:kind]."
)
@click.option("--domain", help="Replace the domain.")
@click.option("--tag", "tags", multiple=True, help="Replace the tags (repeatable).")
@click.option("--clear", multiple=True, help="Clear summary, domain or tags (repeatable).")
@_write_options
@pass_env
def notebook_edit(env: _Env, /, **options: Any) -> None:
    """Rename a notebook, or replace its summary, domain or tags."""
    _emit(env.service().edit_notebook(**_given(**options)))


@_command(
    notebook, "merge-domains", "palimpsest notebook merge-domains ops infra --because 'same team'"
)
@click.argument("source")
@click.argument("target")
@click.option("--because", help="Why (required).")
@_write_options
@pass_env
def notebook_merge_domains(env: _Env, /, **options: Any) -> None:
    """Move every notebook of domain SOURCE into domain TARGET."""
    _emit(env.service().merge_domains(**_given(**options)))


# -- stores ----------------------------------------------------------------------------


@_command(palimpsest, "migrate", "palimpsest migrate  # with PALIMPSEST_DB=postgresql://...")
@pass_env
def migrate(env: _Env, /) -> None:
    """Create the store's schema, or upgrade it to this version of Palimpsest.

    Any command does this on first use; migrate does only that, for deployments that
    upgrade the database before starting servers.
    """
    store = env.service().store
    _emit({"schema_version": store.schema_version()})


@_command(
    palimpsest,
    "copy",
    "palimpsest copy --from ~/.local/share/palimpsest/palimpsest.db --to postgresql://...",
)
@click.option("--from", "source", required=True, help="The store to copy from (path or URL).")
@click.option("--to", "target", required=True, help="The store to copy to (path or URL).")
@click.option("--workspace", default=DEFAULT_WORKSPACE, show_default=True)
@pass_env
def copy(env: _Env, /, source: str, target: str, workspace: str) -> None:
    """Copy a whole workspace, history included, to another store (SQLite or PostgreSQL).

    The target must not hold that workspace yet. Nothing is removed from the source.
    """
    _emit(copy_between(source, target, workspace))


# -- doctor ----------------------------------------------------------------------------


@_command(palimpsest, "doctor", "palimpsest doctor --json")
@pass_env
def doctor(env: _Env, /) -> None:
    """List what needs a person: secrets that got in, stale, expired and ownerless memories.

    Each secret comes with the forget command that removes it. Doctor also finishes a
    scrub that a forget left pending.
    """
    _emit(env.service().doctor(), render.doctor)


@_command(palimpsest, "scrub", "palimpsest scrub --db postgresql://... --json")
@pass_env
def scrub(env: _Env, /) -> None:
    """Erase from the store's files what forgets left there, and say how long it locked.

    On PostgreSQL a forget is logical at once, but the old row versions keep the bytes in
    the table and index files until this rewrites each table that held them (one at a
    time, each copied while in use and locked only to swap the copy in). On SQLite it
    finishes a pending checkpoint.
    """
    _emit(env.service().scrub())


# -- serve -----------------------------------------------------------------------------


@_command(palimpsest, "serve", "palimpsest serve --http --port 8765")
@click.option("--http", is_flag=True, help="Speak streamable HTTP instead of stdio.")
@click.option("--port", type=click.IntRange(1, 65535), help="With --http: the port (default 8765).")
@click.option("--host", help="With --http: 127.0.0.1 (the default), ::1 or localhost.")
@pass_env
def serve(env: _Env, /, http: bool, port: int | None, host: str | None) -> None:
    """Serve the memory to MCP clients (agents): over stdio, or streamable HTTP at /mcp.

    Without --http the client starts this command and speaks MCP on its standard input
    and output. With --http it listens on this machine only (127.0.0.1, or --host ::1 or
    localhost); the address goes to standard error (as JSON with --json). The port, host and
    limits may also come from the configuration (`palimpsest config`).
    """
    from .mcp_server import PATH, serve  # the SDK is only loaded when serving

    config = env.config(**{"http.port": port, "http.host": host})
    service = env.service()
    pending = service.pending_scrubs()
    if pending:  # reported only: a rewrite locks tables, so a server never starts one
        click.echo(
            f"{len(pending)} forget(s) still wait for their bytes to be erased from the "
            "store's files: run `palimpsest scrub` (see `palimpsest doctor`).",
            err=True,
        )
    if http:
        host, port = config.http_host, config.http_port
        _check_port_free(host, port)  # before printing an address nobody will answer at
        url = f"http://{host}:{port}{PATH}" if ":" not in host else f"http://[{host}]:{port}{PATH}"
        if click.get_current_context().meta.get(JSON_KEY):
            click.echo(json.dumps({"url": url, "store": shown(env.db)}), err=True)
        else:
            click.echo(f"Palimpsest MCP at {url} (store: {shown(env.db)})", err=True)
    serve(service, http=http, host=config.http_host, port=config.http_port, limits=config.limits)


def _check_port_free(host: str, port: int) -> None:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        # as the server will: a port left in TIME_WAIT by a server just stopped is free
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            raise ValidationError(
                f"Port {port} on {host} is taken by another program: stop it, or choose "
                "another with `port`.",
                field="port",
            ) from None


# -- demo ------------------------------------------------------------------------------


@_command(palimpsest, "demo", "palimpsest demo")
@click.option("-n", "--notebook", default="demo", show_default=True, help="Notebook to use.")
@pass_env
def demo(env: _Env, /, notebook: str) -> None:
    """A short guided tour: remember, revise, recall and history, in a store of its own.

    Without --db the tour makes a new store in a temporary directory, so your memory is
    never touched; with --db it uses that store, in a notebook that must not exist yet.
    """
    as_json = bool(click.get_current_context().meta.get(JSON_KEY))
    label = shown(env.db)
    if not env.db_typed:
        env.db = str(Path(tempfile.mkdtemp(prefix="palimpsest-demo-")) / "demo.db")
        label = f"{env.db} (new, for this tour only: your own memory is not touched)"
    command = f"palimpsest --db {shlex.quote(shown(env.db))}"
    tour = run_demo(env.service(), notebook, label, command, quiet=as_json)
    if as_json:
        _emit(tour)


from . import cli_settings  # noqa: E402, F401  (its commands join the group: config, settings)


def main() -> None:
    palimpsest(prog_name="palimpsest")
