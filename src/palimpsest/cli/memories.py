"""The commands on memories: remember, recall, revise, revert, forget, inspect, history, link."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..domain.model import KINDS, LINK_TYPES, SCOPES, SEVERITIES, STATUSES
from . import bulk, render
from .app import Env, F, command, emit, given, json_value, one_or_many, palimpsest, pass_env


def _field_options(fn: F) -> F:
    """The optional memory fields, shared by remember and revise."""
    options = [
        click.option("--title", help="A short title."),
        click.option("--why", help="Why this is so, or why it was decided."),
        click.option("--tag", "tags", multiple=True, help="A tag (repeat for several)."),
        click.option("--key", help="A name unique among the notebook's active memories."),
        click.option("--occurred-at", help="When it happened (RFC 3339 or a date, UTC)."),
        click.option("--expires-at", help="When it stops being true (RFC 3339 or a date, UTC)."),
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
        click.option(
            "--accept-refusing",
            multiple=True,
            help="A seen command a new forbidden check is meant to refuse (repeatable; "
            "needs --because).",
        ),
        click.option(
            "--keep-as-note", is_flag=True, help="Keep a too-broad forbidden check as a note."
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def write_options(fn: F) -> F:
    fn = click.option("--dry-run", is_flag=True, help="Check everything, write nothing.")(fn)
    return click.option("--idempotency-key", help="Retrying with the same key writes once.")(fn)


def _memory_fields(values: dict[str, Any]) -> dict[str, Any]:
    """Field options as service parameters, JSON options parsed."""
    for name in ("check", "bindings"):
        values[name] = json_value(name, values.get(name))
    return given(**values)


# -- memories --------------------------------------------------------------------------

KIND_HELP = f"One of: {', '.join(KINDS)}."


@command(
    palimpsest,
    "remember",
    'palimpsest remember -n myproj -k decision "We use PostgreSQL 16" --why "pgvector needs it"',
)
@click.argument("text", required=False)
@click.option("-n", "--notebook", help="Notebook name or id (created if new).")
@click.option("-k", "--kind", default="fact", show_default=True, help=KIND_HELP)
@_field_options
@click.option("--supersedes", multiple=True, help="Id of a memory this replaces (repeatable).")
@click.option("--because", help="Why, when superseding a rule.")
@click.option(
    "--from",
    "from_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="File many: a JSONL file, one memory's fields per line (-n, -k: their defaults).",
)
@write_options
@pass_env
def remember(
    env: Env, /, text: str | None, notebook: str | None, kind: str, **options: Any
) -> None:
    """File a new memory in a notebook (TEXT `-` reads standard input), or a file of them.

    With --from FILE.jsonl, each line is a JSON object of one memory's fields, as
    remember takes them ({"kind": "fact", "text": ..., "notebook": ...}); -n and -k give
    the notebook and kind of lines that name none. Lines are filed 256 to a transaction,
    with a progress bar for long files; a bad line stops the run and is named.
    """
    from_file = options.pop("from_file")
    if from_file is not None:
        _remember_file(env, from_file, text, notebook, kind, options)
        return
    if notebook is None:
        raise click.UsageError("Missing option '-n' / '--notebook' (or file many: --from FILE).")
    if text is None:
        raise click.UsageError("Missing argument 'TEXT' (or file many: --from FILE).")
    if text == "-":
        text = sys.stdin.read().removesuffix("\n").removesuffix("\r")  # as `$(cat f)` does
    filed = env.service().remember(
        notebook=notebook, kind=kind, text=text, **_memory_fields(options)
    )
    emit(filed, render.written)


def _remember_file(
    env: Env, path: Path, text: str | None, notebook: str | None, kind: str, options: Any
) -> None:
    dry_run = options.pop("dry_run")
    extra = [name for name, value in given(text=text, **options).items()]
    if extra:
        flag = "TEXT" if extra[0] == "text" else "--" + extra[0].replace("_", "-")
        raise click.UsageError(
            f"{flag} does not go with --from: put a memory's fields on its line of the file."
        )
    answer = bulk.file_lines(env.service(), path, notebook=notebook, kind=kind, dry_run=dry_run)
    emit(answer)


@command(palimpsest, "recall", 'palimpsest recall "database version" -n myproj --kind decision')
@click.argument("query", nargs=-1)
@click.option("-n", "--notebook", help="Only this notebook.")
@click.option("--domain", help="Only notebooks of this domain.")
@click.option("-k", "--kind", multiple=True, help="Only these kinds (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Hits carry every tag given (repeatable).")
@click.option("--status", multiple=True, help=f"Statuses to include: {', '.join(STATUSES)}.")
@click.option(
    "--since", help="Occurred (else recorded) at or after this time (RFC 3339 or a date, UTC)."
)
@click.option(
    "--until", help="Occurred (else recorded) at or before this (RFC 3339 or a date, UTC)."
)
@click.option("--limit", type=int, help="At most this many hits (default 10).")
@click.option("--include-retired", is_flag=True, help="Also superseded and retracted ones.")
@click.option("--as-of", help="Answer from the state at this past time (RFC 3339 or a date, UTC).")
@click.option("--near-misses", is_flag=True, help="Also hits below the relevance floor, marked.")
@click.option("--budget", type=int, help="Fill at most this many characters (as JSON) with hits.")
@pass_env
def recall(env: Env, /, query: tuple[str, ...], kind: tuple[str, ...], **options: Any) -> None:
    """Find what is known, by words and meaning, with filters, now or as of a past time.
    Only hits above a relevance floor are listed: none when nothing answers."""
    status = one_or_many(options.pop("status"))
    found = env.service(create=False).recall(
        **given(query=" ".join(query) or None, kind=one_or_many(kind), status=status, **options)
    )
    emit(found, render.hits)


@command(
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
@click.option(
    "--feedback",
    type=click.Choice(["helped", "noise"], case_sensitive=False),
    help="Mark a recalled memory as useful or not (no new version; alone, or with --note).",
)
@click.option("--redact", is_flag=True, help="Store the note with credentials as [REDACTED:kind].")
@click.option("--because", help="Reason, needed to weaken a rule or move across domains.")
@click.option("--move-to", help="Move to this notebook (kept: id, dates, key, history).")
@click.option("--supersede", is_flag=True, help="File as a new memory; retire the original.")
@click.option("--superseded-by", help="With --status superseded: the active memory replacing it.")
@click.option("--claim", is_flag=True, help="Make an ownerless memory yours.")
@click.option("--override-reason", help="Why you change a memory someone else owns.")
@click.option("--override-confirm", is_flag=True, help="Confirm overriding a person's memory.")
@click.option("--expected-version", type=int, help="Refuse if the memory changed since.")
@write_options
@pass_env
def revise(
    env: Env,
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
        targets["items"] = json_value("items", items)
    emit(env.service(create=False).revise(**targets, **_memory_fields(options)), render.written)


@command(palimpsest, "revert", "palimpsest revert m_01abc --version 2 --note 'v3 was wrong'")
@click.argument("id", required=False)
@click.option("--version", type=int, help="The version of ID to go back to.")
@click.option("-n", "--notebook", help="Revert a whole notebook (with --as-of).")
@click.option("--as-of", help="The past time the notebook goes back to (RFC 3339 or a date, UTC).")
@click.option("--note", help="Why, kept in history.")
@click.option("--because", help="Why a rule may be weakened (needed when this weakens one).")
@click.option("--expected-version", type=int, help="Refuse if ID changed since this version.")
@write_options
@pass_env
def revert(env: Env, /, **options: Any) -> None:
    """Go back to an earlier version, as a new event: history only grows."""
    emit(env.service(create=False).revert(**given(**options)))


@command(palimpsest, "forget", "palimpsest forget m_01abc --because 'an API key was pasted in'")
@click.argument("ids", nargs=-1, required=False, metavar="[ID...]")
@click.option("--version", type=int, help="Scrub only this version of the one ID.")
@click.option("-n", "--notebook", help="Forget a notebook's --field, or the empty notebook.")
@click.option(
    "--field",
    type=click.Choice(["summary", "name"], case_sensitive=False),
    help="With --notebook: scrub every value this field had (a summary is cleared too).",
)
@click.option("--served", help="Erase what this session was shown (`palimpsest served`).")
@click.option("--because", help="Why it must not stay on disk (required).")
@write_options
@pass_env
def forget(env: Env, /, ids: tuple[str, ...], **options: Any) -> None:
    """Delete memories, or a notebook's field, for good, leaving a tombstone. Irreversible.

    Prefer revise. `--notebook NB --field summary` scrubs a summary from the notebook and
    its history; `--notebook NB` alone forgets an empty notebook; `--served SESSION` erases
    the record of what a session was shown (an owner's).
    """
    session = options.pop("served")
    if session is not None:
        if ids or options["notebook"] or options["version"] or options["field"]:
            raise click.UsageError("--served takes no ID, --notebook, --field or --version.")
        service = env.service(create=False)
        emit(service.forget_served(session=session, **given(**options)), render.forgotten)
        return
    target = {"id": ids[0]} if len(ids) == 1 else {"ids": list(ids)} if ids else {}
    emit(env.service(create=False).forget(**target, **given(**options)), render.forgotten)


@command(palimpsest, "inspect", "palimpsest inspect m_01abc")
@click.argument("id", required=False)
@click.option("-n", "--notebook", help="Show a notebook and all its memories instead.")
@pass_env
def inspect(env: Env, /, **options: Any) -> None:
    """Show a memory whole (fields, versions, links), or a whole notebook."""
    emit(env.service(create=False).inspect(**given(**options)), render.inspected)


@command(palimpsest, "history", "palimpsest history m_01abc --diff 1 3")
@click.argument("id", required=False)
@click.option("-n", "--notebook", help="Events of this notebook and its memories.")
@click.option("--actor", help="Only events by this actor.")
@click.option("--since", help="Events at or after this time (RFC 3339 or a date, UTC).")
@click.option("--until", help="Events at or before this time (RFC 3339 or a date, UTC).")
@click.option("--limit", type=int, help="At most this many events (default 100).")
@click.option("--diff", nargs=2, type=int, metavar="FROM TO", help="Diff two versions of ID.")
@pass_env
def history(env: Env, /, diff: tuple[int, int] | None, **options: Any) -> None:
    """List what happened, by memory, notebook, actor or time; or diff two versions."""
    if diff:
        options.update(diff_from=diff[0], diff_to=diff[1])
    emit(env.service(create=False).history(**given(**options)), render.events)


@command(palimpsest, "link", "palimpsest link m_01abc m_02def --type depends_on")
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
@write_options
@pass_env
def link(env: Env, /, source: str, target: str, type_: str, **options: Any) -> None:
    """Link two memories (or two notebooks) with a typed edge; --remove unlinks."""
    emit(
        env.service(create=False).link(source=source, target=target, type=type_, **given(**options))
    )
