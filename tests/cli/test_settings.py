"""Workspace settings: known keys with defaults, each change one event with its reason.

Service tests run on both stores; the CLI ones run `palimpsest` as a subprocess. The first
real setting, each kind's freshness window, changes what recall, inspect and doctor flag.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from palimpsest.domain.errors import ValidationError
from palimpsest.domain.model import FRESHNESS_DAYS, KINDS
from palimpsest.service import Service
from palimpsest.service.stores import copy_workspace
from palimpsest.store import EventFilter, Store, open_store

from ..screening.test_gate import SECRETS, assert_refused_without_echo

FILED = "2026-01-01T00:00:00.000000Z"
FORTY_DAYS_ON = "2026-02-10T00:00:00.000000Z"  # a fact filed then is 40 days old
FIXTURE = Path(__file__).parents[1] / "fixtures" / "store_before_003.db"  # a previous release's


def at(store: Store, workspace: str, time: str) -> Service:
    return Service(store, workspace=workspace, clock=lambda: time)


def events(service: Service) -> list[Any]:
    with service.store.read(service.workspace) as tx:
        return tx.events(EventFilter(limit=1000))


def stale_flags(service: Service, memory_id: str) -> dict[str, bool]:
    """Whether recall, inspect and doctor each flag the memory possibly stale."""
    hits = service.recall(query="invoices")["hits"]
    doctor = service.doctor()["possibly_stale"]
    return {
        "recall": any(h.get("possibly_stale") for h in hits if h["id"] == memory_id),
        "inspect": service.inspect(id=memory_id)["memory"]["possibly_stale"],
        "doctor": any(line["id"] == memory_id for line in doctor),
    }


def test_every_setting_starts_at_its_default(service: Service) -> None:
    listed = service.settings()["settings"]
    assert {name: s["value"] for name, s in listed.items()} == {
        f"freshness_days.{kind}": FRESHNESS_DAYS.get(kind) for kind in KINDS
    } | {
        "recall.weight.words": 0.4,
        "recall.weight.meaning": 0.7,
        "recall.min_similarity": 0.25,
        "recall.weight.context": 0.3,
        "recall.weight.episode": 0.7,
        "recall.weight.author": 0.15,
        "recall.floor.similarity": 0.3,
        "recall.floor.words": 0.3,
        "recall.floor.share": 0.5,
        "served.keep_days": 30,
    }
    assert not any(s["chosen"] for s in listed.values())


def test_a_shorter_freshness_window_flags_what_recall_inspect_and_doctor_show(
    store: Store, workspace: str
) -> None:
    filed = at(store, workspace, FILED).remember(
        notebook="ops", kind="fact", text="Invoices go out monthly"
    )
    later = at(store, workspace, FORTY_DAYS_ON)
    nothing = {"recall": False, "inspect": False, "doctor": False}
    assert stale_flags(later, filed["id"]) == nothing  # 40 days: within a fact's 90

    later.change_settings(changes={"freshness_days.fact": 30}, because="facts here age fast")
    assert stale_flags(later, filed["id"]) == {"recall": True, "inspect": True, "doctor": True}

    later.change_settings(changes={"freshness_days.fact": "never"}, because="they never age")
    assert stale_flags(later, filed["id"]) == nothing
    assert later.settings()["settings"]["freshness_days.fact"]["value"] is None


def test_recall_as_of_a_past_time_judges_staleness_with_the_windows_of_that_time(
    store: Store, workspace: str
) -> None:
    filed = at(store, workspace, FILED).remember(
        notebook="ops", kind="fact", text="Invoices go out monthly"
    )
    at(store, workspace, FORTY_DAYS_ON).change_settings(
        changes={"freshness_days.fact": 30}, because="facts here age fast"
    )
    now = at(store, workspace, "2026-02-11T00:00:00.000000Z")

    def stale_as_of(time: str) -> bool:
        [hit] = now.recall(query="invoices", as_of=time)["hits"]
        return bool(hit.get("possibly_stale") and hit["id"] == filed["id"])

    assert stale_as_of("2026-02-09T00:00:00Z") is False  # 39 days old; the window was 90
    assert stale_as_of("2026-02-10T12:00:00Z") is True  # 40 days old; the window is 30
    assert stale_as_of("2026-01-20T00:00:00Z") is False


def test_a_change_is_one_event_with_who_why_and_old_and_new(store: Store, workspace: str) -> None:
    service = at(store, workspace, FILED)
    done = service.change_settings(
        changes={"freshness_days.fact": "30", "freshness_days.goal": 365}, because="reviewed"
    )
    assert done["changes"] == {
        "freshness_days.fact": {"old": 90, "new": 30},
        "freshness_days.goal": {"old": None, "new": 365},
    }
    [event] = events(service)
    assert (event.op, event.actor, event.note) == ("settings.change", service.actor, "reviewed")
    assert event.data == {"freshness_days.fact": [90, 30], "freshness_days.goal": [None, 365]}
    assert [e["op_id"] for e in service.settings_history()["events"]] == [event.op_id]
    assert [e["op"] for e in service.history()["events"]] == ["settings.change"]

    back = service.change_settings(changes={"freshness_days.fact": "default"}, because="undo")
    assert back["changes"] == {"freshness_days.fact": {"old": 30, "new": 90}}
    listed = service.settings()["settings"]
    assert (listed["freshness_days.fact"]["value"], listed["freshness_days.fact"]["chosen"]) == (
        90, False
    )  # fmt: skip
    assert listed["freshness_days.goal"] == {**listed["freshness_days.goal"], "value": 365,
                                             "chosen": True}  # fmt: skip
    history = service.settings_history()["events"]
    assert [e["data"] for e in history] == [
        {"freshness_days.fact": [90, 30], "freshness_days.goal": [None, 365]},
        {"freshness_days.fact": [30, 90]},
    ]


def test_the_same_value_again_writes_nothing(service: Service) -> None:
    service.change_settings(changes={"freshness_days.issue": 14}, because="sprint length")
    again = service.change_settings(changes={"freshness_days.issue": 14}, because="again")
    assert again["unchanged"] is True and again["changes"] == {}
    assert len(events(service)) == 1


def test_a_dry_run_shows_before_and_after_and_keeps_everything(service: Service) -> None:
    shown = service.change_settings(
        changes={"freshness_days.note": 7}, because="try it", dry_run=True
    )
    assert shown["dry_run"] is True and "seq" not in shown
    assert shown["changes"] == {"freshness_days.note": {"old": 180, "new": 7}}
    assert service.settings()["settings"]["freshness_days.note"]["value"] == 180
    assert events(service) == []


@pytest.mark.parametrize(
    ("changes", "because", "field"),
    [
        ({"freshness_days.fact": 30}, None, "because"),
        ({"freshness_days.fact": 30}, "  ", "because"),
        ({}, "why", "changes"),
        ({"freshness_days.unicorn": 30}, "why", "changes"),
        ({"freshness_days.fact": 0}, "why", "freshness_days.fact"),
        ({"freshness_days.fact": 36_501}, "why", "freshness_days.fact"),
        ({"freshness_days.fact": True}, "why", "freshness_days.fact"),
        ({"freshness_days.fact": "ninety"}, "why", "freshness_days.fact"),
        ({"freshness_days.fact": 2.5}, "why", "freshness_days.fact"),
    ],
)
def test_a_wrong_change_is_refused_and_changes_nothing(
    service: Service, changes: dict[str, Any], because: str | None, field: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        service.change_settings(changes=changes, because=because)
    assert caught.value.field == field
    assert events(service) == []
    assert not any(s["chosen"] for s in service.settings()["settings"].values())


def test_a_secret_is_refused_in_the_reason_the_value_and_the_name(service: Service) -> None:
    secret = SECRETS["github-token"]
    assert_refused_without_echo(
        service,
        secret,
        lambda: service.change_settings(changes={"freshness_days.fact": 30}, because=secret),
        field="because",
    )
    for changes, field in (
        ({"freshness_days.fact": secret}, "freshness_days.fact"),
        ({secret: 30}, "changes"),
    ):
        assert_refused_without_echo(
            service,
            secret,
            lambda c=changes: service.change_settings(changes=c, because="why"),  # type: ignore[misc]
            field=field,
            as_secret=False,  # refused as no setting or no number of days, never repeated
        )


def test_settings_of_one_workspace_leave_another_alone(store: Store, workspace: str) -> None:
    mine = Service(store, workspace=workspace)
    other = Service(store, workspace=f"{workspace}-other")
    mine.change_settings(changes={"freshness_days.fact": 5}, because="mine only")
    assert other.settings()["settings"]["freshness_days.fact"]["value"] == 90
    assert other.settings_history()["events"] == []


def test_a_copy_of_the_workspace_keeps_its_settings_and_their_history(
    service: Service, tmp_path: Path
) -> None:
    service.change_settings(changes={"freshness_days.debt": 14}, because="pay debts fast")
    target = open_store(str(tmp_path / "copy.db"))
    try:
        copy_workspace(service.store, target, service.workspace)
        copied = Service(target, workspace=service.workspace)
        assert copied.settings() == service.settings()
        assert [e["data"] for e in copied.settings_history()["events"]] == [
            {"freshness_days.debt": [90, 14]}
        ]
    finally:
        target.close()


def test_a_store_of_the_previous_release_has_the_defaults_and_takes_changes(
    tmp_path: Path,
) -> None:
    db = tmp_path / "before.db"
    shutil.copy(FIXTURE, db)
    store = open_store(str(db))
    try:
        service = Service(store, clock=lambda: "2027-01-15T00:00:00.000000Z")  # 46 days on
        assert service.settings()["settings"]["freshness_days.fact"]["value"] == 90
        assert service.doctor()["possibly_stale"] == []
        service.change_settings(changes={"freshness_days.fact": 30}, because="audit")
        assert len(service.doctor()["possibly_stale"]) == 5  # every fact of that release
    finally:
        store.close()


# -- the CLI ------------------------------------------------------------------------------


def palimpsest(db: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "palimpsest", "--db", str(db), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_cli_shows_sets_and_lists_the_history_of_settings(
    db_path: Path, env: dict[str, str]
) -> None:
    palimpsest(db_path, env, "migrate")  # a read never makes a store
    shown = json.loads(palimpsest(db_path, env, "settings", "--json").stdout)
    assert shown["settings"]["freshness_days.fact"]["value"] == 90

    dry = palimpsest(db_path, env, "settings", "set", "freshness_days.fact", "30",
                     "--because", "audit", "--dry-run", "--json")  # fmt: skip
    assert json.loads(dry.stdout)["changes"] == {"freshness_days.fact": {"old": 90, "new": 30}}
    done = palimpsest(db_path, env, "settings", "set", "freshness_days.fact", "30",
                      "--because", "audit")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "freshness_days.fact: 90 -> 30" in done.stdout

    person = palimpsest(db_path, env, "settings").stdout
    assert "freshness_days.fact" in person and "30" in person
    history = palimpsest(db_path, env, "settings", "--history").stdout
    assert "freshness_days.fact: 90 -> 30" in history and "audit" in history
    listed = json.loads(palimpsest(db_path, env, "settings", "--history", "--json").stdout)
    assert [e["data"] for e in listed["events"]] == [{"freshness_days.fact": [90, 30]}]


def test_the_cli_refuses_a_change_without_because_or_with_a_wrong_value(
    db_path: Path, env: dict[str, str]
) -> None:
    for args in (
        ("settings", "set", "freshness_days.fact", "30"),
        ("settings", "set", "freshness_days.fact", "soon", "--because", "why"),
        ("settings", "set", "no_such.setting", "3", "--because", "why"),
    ):
        done = palimpsest(db_path, env, *args, "--json")
        assert done.returncode == 1, done.stdout + done.stderr
        assert json.loads(done.stdout)["error_class"] == "validation"
    listed = json.loads(palimpsest(db_path, env, "settings", "--history", "--json").stdout)
    assert listed["events"] == []


def test_two_writers_changing_settings_at_once_leave_an_unbroken_history(
    store: Store, workspace: str
) -> None:
    """Each change's old value is the previous change's new one: no change is lost or
    judged against a stale value, whichever writer wins each race."""

    def writer(values: range) -> None:
        service = Service(open_store(store.url), actor="user:w", workspace=workspace)
        try:
            for days in values:
                service.change_settings(changes={"freshness_days.fact": days}, because="race")
        finally:
            service.close()

    threads = [threading.Thread(target=writer, args=(range(start, start + 40, 2),))
               for start in (10, 11)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    history = Service(store, workspace=workspace).settings_history(limit=1000)["events"]
    sides = [event["data"]["freshness_days.fact"] for event in history]
    assert len(sides) == 40
    assert all(old == new for (_, new), (old, _) in pairwise(sides))
    final = Service(store, workspace=workspace).settings()["settings"]["freshness_days.fact"]
    assert final["value"] == sides[-1][1]
