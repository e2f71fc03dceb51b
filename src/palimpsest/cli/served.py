"""`palimpsest served`: what a session was shown, and what it wrote, in order."""

from __future__ import annotations

from typing import Any

import click

from .app import Env, command, emit, given, palimpsest, pass_env


@command(palimpsest, "served", "palimpsest served 5d1c0e4e-claude-session --since 2026-12-01")
@click.argument("session", required=False)
@click.option("--since", help="Steps at or after this time (RFC 3339 or a date, UTC).")
@click.option("--limit", type=int, help="At most this many steps, or sessions (default 100).")
@pass_env
def served(env: Env, /, **options: Any) -> None:
    """What SESSION (a hook's session id, an MCP session) was shown (briefs, recalls'
    hits: ids, versions, scores) and what it wrote, in order; without SESSION, the sessions
    recorded, the latest first. Erase one with `palimpsest forget --served SESSION`."""
    emit(env.service(create=False).served(**given(**options)), _served)


def _served(answer: dict[str, Any]) -> None:
    if "sessions" in answer:
        for s in answer["sessions"]:
            click.echo(f"{s['session']}  {s['actor']}  {s['first_at'][:19]} .. "
                       f"{s['last_at'][:19]}  {s['servings']} served")  # fmt: skip
        if not answer["sessions"]:
            click.echo(f"No session recorded (the record is kept {answer['keep_days']} days).")
        return
    click.echo(f"Session {answer['session']} ({answer['actor']}):")
    for entry in answer["entries"]:
        head = f"{entry['at'][:19]}  {entry['what']}"
        if "event" in entry:
            event = entry["event"]
            version = f" v{event['version']}" if event.get("version") else ""
            click.echo(f"{head}  {event['target_id']}{version}")
            continue
        asked = "  ".join(f"{k}={v}" for k, v in entry.get("request", {}).items())
        click.echo(f"{head}  {asked}".rstrip())
        for line in entry.get("shown", []):
            version = f" v{line['version']}" if line["version"] is not None else ""
            score = f"  {line['score']:.3f}" if line["score"] is not None else ""
            click.echo(f"    {line['id']}{version}{score}")
