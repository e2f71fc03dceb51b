"""Possibly stale, by age and by evidence: an injectable clock for the freshness windows;
real files for anchors (their hash recorded when written or verified) and for a fact's
check; verify refused while the evidence fails; doctor's findings. Both stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from palimpsest.domain.checks import MAX_BYTES
from palimpsest.domain.model import add_days
from palimpsest.domain.projects import Places, bind_project
from palimpsest.service import Service
from palimpsest.store import Store

START = "2026-01-01T09:00:00.000000Z"
POOL = {"kind": "contains", "path": "config.toml", "literal": "pool = 20"}


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> str:
        return self.now

    def advance(self, days: int) -> None:
        self.now = add_days(self.now, days)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    (root / "config.toml").write_text("pool = 20\n")
    bind_project(root, "shop")
    return root


@pytest.fixture
def timed(store: Store, workspace: str, clock: Clock, project: Path) -> Service:
    """A service on the test's store with its own clock, working in the project."""
    service = Service(store, workspace=workspace, clock=clock)
    service.places = Places(working_dir=project, allowed=None)
    service.create_notebook(name="shop")
    return service


def shown(service: Service, memory_id: str) -> dict[str, Any]:
    """The memory as inspect and recall show it: both must agree."""
    inspected = service.inspect(id=memory_id)["memory"]
    hits = [h for h in service.recall(notebook="shop", limit=50)["hits"] if h["id"] == memory_id]
    assert hits and hits[0].get("possibly_stale", False) == inspected["possibly_stale"]
    assert hits[0].get("stale_reasons") == inspected.get("stale_reasons")
    return dict(inspected)


def test_a_fact_goes_stale_by_age_and_a_verify_makes_it_fresh(timed: Service, clock: Clock) -> None:
    fact = timed.remember(notebook="shop", kind="fact", text="The pool is 20")["id"]
    clock.advance(90)
    assert not shown(timed, fact)["possibly_stale"]
    clock.advance(1)
    stale = shown(timed, fact)
    assert stale["possibly_stale"] and "90 days" in stale["stale_reasons"][0]
    timed.revise(id=fact, status="verified")
    assert not shown(timed, fact)["possibly_stale"]
    assert "stale_reasons" not in shown(timed, fact)


def test_an_anchor_records_its_files_hash_and_a_change_makes_the_memory_stale(
    timed: Service, project: Path
) -> None:
    fact = timed.remember(notebook="shop", kind="decision", text="Pool of 20",
                          anchors=["config.toml"])["id"]  # fmt: skip
    [anchor] = shown(timed, fact)["anchors"]
    assert anchor["path"] == "config.toml" and anchor["hash"].startswith("sha256:")
    assert not shown(timed, fact)["possibly_stale"]

    (project / "config.toml").write_text("pool = 30\n")
    stale = shown(timed, fact)
    assert stale["possibly_stale"]
    assert stale["stale_reasons"] == [
        "anchored file config.toml changed since it was last verified"
    ]

    verified = timed.revise(id=fact, status="verified")["results"][0]
    assert set(verified["changed"]) == {"anchors", "verified_at"}  # the hash seen now, recorded
    assert not shown(timed, fact)["possibly_stale"]

    (project / "config.toml").unlink()
    gone = shown(timed, fact)
    assert gone["possibly_stale"] and "does not exist" in gone["stale_reasons"][0]
    refused = timed.revise(id=fact, status="verified")
    assert refused["results"] == [] and "does not exist" in refused["unmatched"][0]["reason"]


def test_without_a_known_project_the_hash_is_left_for_later_and_said_so(
    timed: Service, project: Path
) -> None:
    timed.places = Places()  # an HTTP server with no directory configured
    filed = timed.remember(notebook="shop", kind="fact", text="Pool of 20", anchors=["config.toml"])
    assert "left for later" in filed["warnings"][0]
    assert shown(timed, filed["id"])["anchors"] == [{"path": "config.toml", "hash": None}]
    (project / "config.toml").write_text("pool = 30\n")
    assert not shown(timed, filed["id"])["possibly_stale"]  # nothing known to compare with

    timed.places = Places(working_dir=project, allowed=None)
    assert not shown(timed, filed["id"])["possibly_stale"]  # no hash yet: no change seen
    timed.revise(id=filed["id"], status="verified")
    assert shown(timed, filed["id"])["anchors"][0]["hash"].startswith("sha256:")


def test_a_fact_whose_evidence_check_fails_is_stale_and_cannot_be_verified(
    timed: Service, project: Path
) -> None:
    fact = timed.remember(notebook="shop", kind="fact", text="The pool is 20", check=POOL)["id"]
    assert not shown(timed, fact)["possibly_stale"]
    (project / "config.toml").write_text("pool = 30\n")
    stale = shown(timed, fact)
    assert stale["possibly_stale"] and "lacks 'pool = 20'" in stale["stale_reasons"][0]

    version = stale["version"]
    refused = timed.revise(id=fact, status="verified")
    assert refused["results"] == [] and "evidence fails" in refused["unmatched"][0]["reason"]
    assert timed.inspect(id=fact)["memory"]["version"] == version  # nothing written

    # Saying what is true now, then verifying, clears it.
    timed.revise(id=fact, text="The pool is 30", check=POOL | {"literal": "pool = 30"})
    timed.revise(id=fact, status="verified")
    assert not shown(timed, fact)["possibly_stale"]


def test_a_rule_broken_by_the_files_is_not_stale_but_listed_by_doctor(
    timed: Service, project: Path
) -> None:
    no_debug = {"kind": "absent", "path": "config.toml", "literal": "debug"}
    rule = timed.remember(notebook="shop", kind="rule", text="No debug flag in config",
                          falsifier="a debug build", severity="costly", check=no_debug)  # fmt: skip
    fact = timed.remember(notebook="shop", kind="fact", text="The pool is 20", check=POOL)["id"]
    assert timed.doctor()["failing_checks"] == [] and timed.doctor()["stale_by_evidence"] == []

    (project / "config.toml").write_text("pool = 30\ndebug = true\n")
    assert not shown(timed, rule["id"])["possibly_stale"]  # the project breaks it: it holds
    timed.revise(id=rule["id"], status="verified")  # and may be verified

    report = timed.doctor()
    assert report["project"] == str(project.resolve())
    assert [(r["id"], r["fails"]) for r in report["failing_checks"]] == [
        (rule["id"], ["config.toml (line 2): holds 'debug'"])
    ]
    assert [r["id"] for r in report["stale_by_evidence"]] == [fact]
    timed.places = Places()
    assert timed.doctor()["project"] is None and "failing_checks" not in timed.doctor()


def test_doctor_reads_a_named_project_and_recall_of_the_past_reads_no_file(
    timed: Service, project: Path, clock: Clock
) -> None:
    fact = timed.remember(notebook="shop", kind="fact", text="The pool is 20", check=POOL)["id"]
    clock.advance(1)
    (project / "config.toml").write_text("pool = 30\n")
    timed.places = Places(working_dir=None, allowed=None)
    assert [r["id"] for r in timed.doctor(dir=str(project))["stale_by_evidence"]] == [fact]
    timed.places = Places(working_dir=project, allowed=None)
    past = timed.recall(notebook="shop", as_of=clock.now)["hits"][0]
    assert past["id"] == fact and not past.get("possibly_stale")  # today's files: not then


def test_evidence_is_read_only_for_the_projects_notebook(
    timed: Service, project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.toml").write_text("pool = 20\n")
    bind_project(other, "other")
    fact = timed.remember(notebook="other", kind="fact", text="Other's pool", check=POOL,
                          anchors=["config.toml"])  # fmt: skip
    assert "left for later" in fact["warnings"][0]  # this directory is shop's, not other's
    timed.places = Places(working_dir=other, allowed=None)
    assert not timed.inspect(id=fact["id"])["memory"]["possibly_stale"]
    (other / "config.toml").write_text("pool = 30\n")
    assert timed.inspect(id=fact["id"])["memory"]["possibly_stale"]


def test_a_successor_records_the_files_as_they_are_when_it_is_filed(
    timed: Service, project: Path
) -> None:
    old = timed.remember(notebook="shop", kind="fact", text="Pool of 20",
                         anchors=["config.toml"])["id"]  # fmt: skip
    (project / "config.toml").write_text("pool = 30\n")
    assert shown(timed, old)["possibly_stale"]
    new = timed.revise(id=old, supersede=True, text="Pool of 30")["results"][0]["id"]
    assert not shown(timed, new)["possibly_stale"]
    assert (
        shown(timed, new)["anchors"][0]["hash"]
        != timed.inspect(id=old)["memory"]["anchors"][0]["hash"]
    )


def test_a_batch_records_the_hash_of_each_items_anchors(timed: Service, project: Path) -> None:
    filed = timed.remember(notebook="shop", items=[
        {"kind": "decision", "text": "Pool of 20", "anchors": ["config.toml"]},
        {"kind": "fact", "text": "The pool lives in config.toml"},
    ])  # fmt: skip
    anchored = filed["results"][0]["id"]
    [anchor] = shown(timed, anchored)["anchors"]
    assert anchor["hash"] is not None and anchor["hash"].startswith("sha256:")
    (project / "config.toml").write_text("pool = 30\n")
    assert shown(timed, anchored)["possibly_stale"]


def test_a_file_too_large_to_hash_is_anchored_by_its_path_alone(
    timed: Service, project: Path
) -> None:
    """Hashing a huge file would hold the write for seconds: such a file is not read."""
    with (project / "dump.bin").open("wb") as dump:
        dump.truncate(MAX_BYTES + 1)  # sparse: no disk, but a real file of that size
    fact = timed.remember(notebook="shop", kind="fact", text="The dump is kept for audits",
                          anchors=["dump.bin"])["id"]  # fmt: skip
    assert shown(timed, fact)["anchors"] == [{"path": "dump.bin", "hash": None}]
    assert not shown(timed, fact)["possibly_stale"]
    (project / "dump.bin").unlink()
    assert "does not exist" in shown(timed, fact)["stale_reasons"][0]
