"""`palimpsest duplicates` and `palimpsest merge`, run as a real subprocess."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .test_cli import Run, cli, run

__all__ = ["cli", "run"]  # fixtures


def test_duplicates_lists_a_group_and_merge_retires_the_rest(
    cli: Callable[..., Any], run: Run, db_path: Path
) -> None:
    keep = cli("remember", "-n", "web", "Deploys run on Fridays")["id"]
    copy = cli("remember", "-n", "web", "-k", "note", "deploys run on fridays.")["id"]
    cli("remember", "-n", "web", "The cache holds pages for an hour")
    found = cli("duplicates", "-n", "web")
    assert [{m["id"] for m in g["memories"]} for g in found["groups"]] == [{keep, copy}]
    assert found["groups"][0]["mixed"] == ["kind"]
    tried = cli("merge", keep, copy, "--because", "the same fact twice", "--dry-run")
    assert tried["dry_run"] is True and cli("inspect", copy)["memory"]["status"] == "active"
    merged = cli("merge", keep, copy, "--because", "the same fact twice")
    assert [(r["id"], r["version"]) for r in merged["superseded"]] == [(copy, 2)]
    shown = cli("inspect", copy)["memory"]
    assert (shown["status"], shown["superseded_by"]) == ("superseded", keep)
    event = cli("history", copy)["events"][-1]
    assert (event["op"], event["note"]) == ("retire", "the same fact twice")
    assert cli("duplicates")["groups"] == []
    printed = run("--db", str(db_path), "duplicates")
    assert printed.returncode == 0 and printed.stdout.startswith("No duplicates among 2")


def test_merge_refusals_exit_1_and_change_nothing(
    cli: Callable[..., Any], run: Run, db_path: Path
) -> None:
    keep = cli("remember", "-n", "web", "Deploys run on Fridays")["id"]
    copy = cli("remember", "-n", "web", "Deploys run on Fridays.")["id"]
    done = run("--db", str(db_path), "merge", keep, copy)  # no --because
    assert done.returncode == 1 and done.stderr.startswith("error (validation): ")
    assert "--because" in done.stderr
    body = cli("merge", keep, keep, copy, "--because", "same", code=1)
    assert (body["error_class"], body["field"]) == ("validation", "ids")
    assert cli("merge", keep, "m_missing", "--because", "same", code=1)["error_class"] == (
        "not_found"
    )
    assert cli("inspect", copy)["memory"]["status"] == "active"
    printed = run("--db", str(db_path), "duplicates")
    assert "2 alike by words" in printed.stdout and copy in printed.stdout
