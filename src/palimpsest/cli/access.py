"""`palimpsest user`, `palimpsest key` and `palimpsest workspace`: who may use a workspace
over HTTP, their keys, and the store's workspaces (service/access.py, workspaces.py).
Whoever runs these has opened the store itself: its owner."""

from __future__ import annotations

import shlex
from typing import Any

import click

from .app import Env, command, emit, group, palimpsest, pass_env
from .render import counted, table


@group(palimpsest, "user", "palimpsest user add ana --role editor")
def user() -> None:
    """Users of the workspace and their roles: viewer, editor or owner."""


@command(user, "add", "palimpsest user add ana --role editor")
@click.argument("name")
@click.option("--role", required=True, help="viewer (reads), editor (writes) or owner (all).")
@pass_env
def user_add(env: Env, /, name: str, role: str) -> None:
    """Add user NAME (they act as user:NAME), or give them another role."""
    # The workspace typed is said again: the key is made in it, not in the default.
    typed = env.flags["workspace"]
    prog = f"palimpsest --workspace {shlex.quote(typed)}" if typed else "palimpsest"
    emit(env.service().add_user(name=name, role=role), lambda r: click.echo(
        f"{r['user']} is {r['role']}: make their key with `{prog} key create --user "
        f"{shlex.quote(r['user'].removeprefix('user:'))}`."))  # fmt: skip


@command(user, "remove", "palimpsest user remove ana")
@click.argument("name")
@pass_env
def user_remove(env: Env, /, name: str) -> None:
    """Remove user NAME: their keys stop working and what they owned becomes ownerless."""
    emit(env.service().remove_user(name=name), lambda r: click.echo(
        f"{r['user']} is removed; their keys no longer work. "
        + counted(len(r["ownerless"]), "memory they owned is", "memories they owned are")
        + " ownerless now: anyone may `claim` them."))  # fmt: skip


@command(user, "list", "palimpsest user list --json")
@pass_env
def user_list(env: Env, /) -> None:
    """List the users and their roles."""
    emit(env.service(create=False).list_users(), _show_users)


def _show_users(result: dict[str, Any]) -> None:
    if not result["users"]:
        click.echo("No users yet: `palimpsest user add NAME --role editor` adds one.")
    table(result["users"], [("user", "user"), ("role", "role"), ("added", "added_at")])


@group(palimpsest, "key", "palimpsest key create --agent ci --note 'the CI runner'")
def key() -> None:
    """Keys for `serve --http`: once a store has one, every HTTP request needs a key."""


@command(key, "create", "palimpsest key create --user ana --expires 2027-06-30")
@click.option("--user", help="A personal key: acts as this user, with their role.")
@click.option(
    "--agent", help="A workspace key: acts as agent:NAME, an editor that never overrides."
)
@click.option("--expires", help="When it stops working (a date or an RFC 3339 time, UTC).")
@click.option("--note", help="What it is for (shown by `key list`).")
@pass_env
def key_create(
    env: Env, /, user: str | None, agent: str | None, expires: str | None, note: str | None
) -> None:
    """Make a key. Its secret is printed once, here: store it where the client reads it."""
    # `user`, as the service names it: its refusals then name `--user`
    made = env.service().create_key(user=user, agent=agent, expires=expires, note=note)
    emit(made, lambda r: click.echo(
        f"{r['key']}\n\nThe key above acts as {r['holder']} (id {r['id']}). It is shown only "
        "now: Palimpsest keeps a hash of it, never the key. Send it as `Authorization: Bearer "
        "<key>`; `palimpsest key revoke ID` ends it."))  # fmt: skip


@command(key, "list", "palimpsest key list")
@pass_env
def key_list(env: Env, /) -> None:
    """List the keys (never their secrets): holder, expiry, revocation."""
    emit(env.service(create=False).list_keys(), _show_keys)


def _show_keys(result: dict[str, Any]) -> None:
    if not result["keys"]:
        click.echo("No keys: `serve --http` answers without one, on loopback only.")
    columns = [("id", "id"), ("holder", "holder"), ("created", "created_at"),
               ("expires", "expires_at"), ("revoked", "revoked_at"), ("note", "note")]  # fmt: skip
    table(result["keys"], columns)


@command(key, "revoke", "palimpsest key revoke k_01jb3x4y5z6a7b8c9d0e")
@click.argument("key_id")
@pass_env
def key_revoke(env: Env, /, key_id: str) -> None:
    """End key KEY_ID now, on every server."""
    done = env.service().revoke_key(id=key_id)
    emit(done, lambda r: click.echo(
        f"{r['id']} ({r['holder']}) " + ("was already revoked." if r.get("unchanged")
                                         else "is revoked.")))  # fmt: skip


@group(palimpsest, "workspace", "palimpsest workspace create research")
def workspace() -> None:
    """The store's workspaces: nothing of one is visible from another."""


@command(workspace, "create", "palimpsest workspace create research")
@click.argument("name")
@pass_env
def workspace_create(env: Env, /, name: str) -> None:
    """Make an empty workspace NAME; `--workspace NAME` then acts in it."""
    emit(env.service().create_workspace(name=name), lambda r: click.echo(
        f"Workspace {r['workspace']['name']} is made: act in it with `palimpsest --workspace "
        f"{r['workspace']['name']} ...`, or give its users keys (`palimpsest --workspace "
        f"{r['workspace']['name']} user add NAME --role editor`)."))  # fmt: skip


@command(workspace, "list", "palimpsest workspace list")
@pass_env
def workspace_list(env: Env, /) -> None:
    """List the workspaces; * marks the one commands act in now."""
    emit(env.service(create=False).workspaces(), _show_workspaces)


def _show_workspaces(result: dict[str, Any]) -> None:
    rows = [{**w, "mark": "*" if w["current"] else ""} for w in result["workspaces"]]
    table(rows, [("", "mark"), ("name", "name"), ("id", "id"), ("created", "created_at")])


@command(workspace, "rename", "palimpsest workspace rename lab --workspace research")
@click.argument("new_name", metavar="NEW_NAME")
@pass_env
def workspace_rename(env: Env, /, new_name: str) -> None:
    """Rename the workspace chosen by --workspace (else the default) to NEW_NAME."""
    emit(env.service().rename_workspace(name=new_name), lambda r: click.echo(
        f"The workspace is named {r['workspace']['name']} now." if "renamed_from" in r
        else f"The workspace is already named {r['workspace']['name']}."))  # fmt: skip
