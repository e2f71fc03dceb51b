"""What a person reads about notebooks, as the service answers it (both stores): each
notebook with its counts and bound projects; one notebook's rules with what they check and
bind, and the commands the guard denied or asked about there; its events by day."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from palimpsest.domain.errors import NotFound, ValidationError
from palimpsest.domain.model import add_days
from palimpsest.domain.projects import Places, bind_project
from palimpsest.embed import NullEmbedder
from palimpsest.service import Service

from ..agent_runs import ran

FORCE = {"kind": "forbidden", "literals": ["git push --force"]}
NOW = "2026-03-10T12:00:00.000000Z"


def rule(service: Service, notebook: str = "web", **fields: Any) -> str:
    body: dict[str, Any] = {
        "kind": "rule", "text": "Never force-push: others build on main.",
        "falsifier": "a force-push that lost nobody's work", "severity": "irreversible",
        "check": FORCE, "bindings": {"moments": ["before_command"]},
    }  # fmt: skip
    return str(service.remember(notebook=notebook, **(body | fields))["id"])


def test_the_list_counts_each_notebooks_memories_and_rules_and_names_bound_projects(
    service: Service, tmp_path: Path
) -> None:
    rule(service)
    retired = service.remember(notebook="web", kind="fact", text="The port is 80")["id"]
    service.revise(id=retired, status="retracted", note="it never was")
    service.remember(notebook="web", kind="fact", text="The port is 8080")
    service.create_notebook(name="empty")
    shop, elsewhere = tmp_path / "shop", tmp_path / "elsewhere"
    for root in (shop, elsewhere):
        root.mkdir()
        bind_project(root, "web", service.notebooks()["notebooks"][1]["id"])
    service.places = Places(working_dir=None, allowed=(shop,))  # a server's check_dirs
    listed = {n["notebook"]["name"]: n for n in service.notebook_list()["notebooks"]}
    assert list(listed) == ["empty", "web"]
    web = listed["web"]
    assert (web["memories"], web["active"], web["rules"]) == (3, 2, 1)
    assert web["projects"] == [str(shop.resolve())]  # not the directory it may not read
    assert (listed["empty"]["memories"], listed["empty"]["projects"]) == (0, [])


def test_a_notebooks_rules_say_what_they_check_and_bind_and_which_the_guard_enforces(
    service: Service,
) -> None:
    service.places = Places(working_dir=None, allowed=None)
    enforced = rule(service, severity="costly")
    at_commit = rule(service, text="No secrets in commits.", severity="irreversible",
                     check={"kind": "forbidden", "literals": ["git add .env"]},
                     bindings={"moments": ["before_commit"]})  # fmt: skip
    wide = rule(service, notebook="ops", scope="workspace", text="Never wipe the disk.",
                check={"kind": "forbidden", "literals": ["rm -rf /"]})  # fmt: skip
    rule(service, notebook="ops", text="Ops only: no reboot.",
         check={"kind": "forbidden", "literals": ["reboot"]})  # fmt: skip
    service.remember(notebook="web", kind="fact", text="Not a rule")
    answer = service.notebook_rules(notebook="web")
    assert [r["id"] for r in answer["rules"]] == [at_commit, enforced]  # gravest first
    first, second = answer["rules"]
    assert first["bindings"] == {"always": False, "moments": ["before_commit"], "targets": []}
    assert (first["guards"], second["guards"]) == (False, True)  # the guard is before commands
    assert second["check"] == FORCE and second["severity"] == "costly"
    assert [(r["id"], r["notebook"], r["guards"]) for r in answer["workspace_rules"]] == [
        (wide, "ops", True)
    ]


def test_the_commands_denied_or_asked_about_in_a_notebook_newest_first(
    service: Service,
) -> None:
    service.places = Places(working_dir=None, allowed=None)
    rule(service)
    rule(service, notebook="ops", text="No reboot.",
         check={"kind": "forbidden", "literals": ["reboot"]})  # fmt: skip
    ran(service, "git push --force origin main", notebook="web", session="s-1")
    ran(service, "git status", notebook="web", session="s-1")  # allowed: not listed
    ran(service, "reboot", notebook="ops")  # another notebook's
    ran(service, "git push -f", notebook="web", session="s-2")
    guarded = service.notebook_rules(notebook="web")["guarded"]
    assert [(c["command"], c["decision"], c["session"]) for c in guarded] == [
        ("git push -f", "deny", "s-2"),
        ("git push --force origin main", "deny", "s-1"),
    ]


def test_activity_counts_a_notebooks_events_by_day_and_operation(service: Service) -> None:
    def on(day: int) -> Service:
        at = add_days(NOW, -day)
        return Service(service.store, workspace=service.workspace, clock=lambda: at,
                       embedder=NullEmbedder())  # fmt: skip

    long_ago = on(40).remember(notebook="web", kind="fact", text="Before the span")["id"]
    filed = on(2).remember(notebook="web", kind="fact", text="The port is 80")["id"]
    on(2).revise(id=filed, append=" (checked)")
    on(0).revise(id=long_ago, append=" still")
    on(0).remember(notebook="ops", kind="fact", text="Another notebook's")
    answer = on(0).activity(notebook="web", days=30)
    days = answer["activity"]
    assert len(days) == 30 and days[-1]["day"] == NOW[:10] and days[0]["day"] == "2026-02-09"
    busy = {d["day"]: d["ops"] for d in days if d["total"]}
    assert busy == {"2026-03-08": {"remember": 1, "revise": 1}, "2026-03-10": {"revise": 1}}
    assert answer["total"] == 3


def test_another_workspaces_notebook_is_not_found_and_bad_spans_are_refused(
    service: Service,
) -> None:
    theirs = service.in_workspace(service.create_workspace(name="other")["workspace"]["id"])
    theirs.remember(notebook="secret", kind="fact", text="Theirs")
    nb_id = theirs.notebooks()["notebooks"][0]["id"]
    for ref in ("secret", nb_id, "missing"):
        with pytest.raises(NotFound):
            service.notebook_rules(notebook=ref)
        with pytest.raises(NotFound):
            service.activity(notebook=ref)
    service.create_notebook(name="web")
    for days in (0, 367, True):
        with pytest.raises(ValidationError):
            service.activity(notebook="web", days=days)
