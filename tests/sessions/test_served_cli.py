"""End to end: Claude Code's session hooks as subprocesses, then `palimpsest served` and
`palimpsest forget --served` as a person runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from palimpsest.domain.projects import bind_project
from palimpsest.service import Service
from palimpsest.store import open_store

RULE = {"kind": "rule", "falsifier": "a case where it does harm", "severity": "irreversible"}


def run(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "palimpsest", *args],
        input=stdin, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    bind_project(root, "shop")
    return root


def test_a_hook_session_is_followed_from_its_brief_to_what_it_filed(
    project: Path, tmp_path: Path
) -> None:
    db = tmp_path / "p.db"
    env = {**os.environ, "PALIMPSEST_DB": str(db)}
    service = Service(open_store(str(db)))
    rule = service.remember(notebook="shop", text="Never force-push main", **RULE)["id"]
    service.store.close()
    body = {"session_id": "4f1c-e2e", "cwd": str(project), "hook_event_name": "SessionStart"}
    assert run(env, "hook", "session-start", stdin=json.dumps(body)).returncode == 0
    # The agent files through its own connection, as the hooks' actor (the CLI's user).
    filed = run(env, "--json", "remember", "-n", "shop", "-k", "decision", "Use pgbouncer")
    decision = json.loads(filed.stdout)["id"]
    stop = json.dumps(body | {"hook_event_name": "Stop", "stop_hook_active": False})
    assert run(env, "hook", "session-end", stdin=stop).returncode == 0

    listed = run(env, "served")
    assert listed.returncode == 0 and listed.stdout.startswith("4f1c-e2e  user:"), listed.stderr
    shown = run(env, "--json", "served", "4f1c-e2e")
    steps = json.loads(shown.stdout)["entries"]
    assert [s["what"] for s in steps] == ["brief", "remember", "review"]
    assert steps[0]["shown"] == [{"id": rule, "version": 1, "score": None}]
    assert steps[1]["event"]["target_id"] == decision
    human = run(env, "served", "4f1c-e2e").stdout
    assert f"    {rule} v1" in human and f"remember  {decision} v1" in human
    assert "force-push" not in shown.stdout + human and "pgbouncer" not in shown.stdout + human

    both = run(env, "forget", "--served", "4f1c-e2e", "m_1", "--because", "x")
    assert both.returncode == 2 and "--served takes no ID" in both.stderr
    forgot = run(env, "--json", "forget", "--served", "4f1c-e2e", "--because", "a customer")
    assert json.loads(forgot.stdout)["servings"] == 2, forgot.stderr
    gone = run(env, "--json", "served", "4f1c-e2e")
    assert gone.returncode == 1 and json.loads(gone.stdout)["error_class"] == "not_found"
    assert run(env, "served").stdout.startswith("No session recorded")
