"""`POST /api/v1/sync_pull` under attack, on a team's PostgreSQL server holding two
workspaces (one sequence of event numbers for both): what a key, or no key, can pull."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
import psycopg
import pytest

from ..api.scripts import status_before_body
from ..conftest import TEST_EMBEDDER, needs_postgres, own_postgres_database
from ..team.test_attack_matrix import fingerprint
from .replicas import Server, opened, served

pytestmark = needs_postgres

PULL = "/api/v1/sync_pull"
LAB_TEXT = "Only the lab knows the kiln's firing schedule"
LAB_DAYS = 47  # lab's setting: no answer of ours holds it
OURS = 5_100  # events of the default workspace: past the largest answer (5,000)


@dataclass
class Attacked:
    server: Server
    url: str
    ours: str  # a key of the default workspace (an editor's)
    viewer: str
    theirs: str  # the owner's key of "lab"
    lab_events: list[tuple[int, str]]  # (seq, op_id) of lab's events
    lab_ids: set[str]  # every id lab's rows hold: memories, notebooks, events' op ids

    def pull(self, body: Any, key: str | None = None, **headers: str) -> httpx2.Response:
        sent = {"Content-Type": "application/json", **headers}
        given = self.ours if key is None else key
        if given:
            sent["Authorization"] = f"Bearer {given}"
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return httpx2.post(self.server.base + PULL, content=content, headers=sent, timeout=60)


def filled(url: str) -> tuple[str, str, str]:
    """Default's memories (OURS events in all) around lab's, so their numbers interleave;
    (editor's key, viewer's key, lab owner's key)."""
    service = opened(url)
    try:
        service.add_user(name="ed", role="editor")
        service.add_user(name="vic", role="viewer")
        lab = service.with_workspace(service.create_workspace(name="lab")["workspace"]["id"])
        lab.add_user(name="mallory", role="owner")
        theirs = lab.create_key(user="mallory")["key"]
        keys = service.create_key(user="ed")["key"], service.create_key(user="vic")["key"]
        for start in range(0, OURS, 250):
            items = [{"kind": "fact", "text": f"Meter {n} reads {n * 7} units"}
                     for n in range(start, start + 250)]  # fmt: skip
            service.remember(notebook="meters", items=items)
            if start % 1000 == 0:
                lab.remember(notebook="lab", kind="fact", text=f"{LAB_TEXT} ({start})")
        service.change_settings(changes={"freshness_days.fact": 60}, because="ours")
        lab.change_settings(changes={"freshness_days.fact": LAB_DAYS}, because="lab's")
        lab.link(source=lab.recall(query="kiln")["hits"][0]["id"],
                 target=lab.recall(query="kiln")["hits"][1]["id"], type="relates_to")  # fmt: skip
        return keys[0], keys[1], theirs
    finally:
        service.store.close()


def lab_rows(url: str) -> tuple[list[tuple[int, str]], set[str]]:
    with psycopg.connect(url) as conn:
        (lab,) = conn.execute("SELECT id FROM workspaces WHERE name = 'lab'").fetchone()
        events = conn.execute(
            "SELECT seq, op_id, target_id FROM events WHERE workspace = %s ORDER BY seq", (lab,)
        ).fetchall()
        ids = {row[0] for row in conn.execute("SELECT id FROM notebooks WHERE workspace = %s",
                                              (lab,))}  # fmt: skip
    ids |= {str(op) for _, op, _ in events} | {str(t) for _, _, t in events if t}
    return [(int(seq), str(op)) for seq, op, _ in events], ids


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Attacked]:
    home = tmp_path_factory.mktemp("attack")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    env.update(HOME=str(home / "home"), XDG_DATA_HOME=str(home / "xdg"),
               PALIMPSEST_EMBEDDER=TEST_EMBEDDER)  # fmt: skip
    with own_postgres_database("sync_attack") as url:
        ours, viewer, theirs = filled(url)
        events, ids = lab_rows(url)
        with served(url, env) as server:
            yield Attacked(server, url, ours, viewer, theirs, events, ids)


def leaks(answer: str, attacked: Attacked) -> set[str]:
    """What of lab's an answer holds."""
    found = {ident for ident in attacked.lab_ids if ident in answer}
    return found | ({LAB_TEXT} if "kiln" in answer else set())


def test_a_position_naming_another_workspace_s_event_is_refused_and_leaks_nothing(
    attacked: Attacked,
) -> None:
    seq, op_id = attacked.lab_events[-1]
    got = attacked.pull({"since": {"seq": seq, "op_id": op_id}})
    assert got.status_code == 409, got.text
    assert (got.json()["error_class"], got.json()["field"]) == ("conflict", "since")
    assert not leaks(got.text, attacked)
    # The same answer as for a number no event holds: no way to learn that lab's exists.
    past = attacked.pull({"since": {"seq": 10**12, "op_id": op_id}})
    assert (past.status_code, past.json()) == (got.status_code, got.json())
    # Nor with our own op id at lab's number, nor lab's op id at one of ours.
    ours = attacked.pull({"limit": 1}).json()["position"]
    for since in ({"seq": seq, "op_id": ours["op_id"]}, {"seq": ours["seq"], "op_id": op_id}):
        crossed = attacked.pull({"since": since})
        assert crossed.status_code == 409 and not leaks(crossed.text, attacked), crossed.text


def pulled_all(attacked: Attacked, key: str, limit: int) -> list[dict[str, Any]]:
    """Every answer of a round from the start, `limit` events each."""
    answers, body = [], {"limit": limit}
    while True:
        got = attacked.pull(body, key)
        assert got.status_code == 200, got.text
        answers.append(got.json())
        if not answers[-1]["more"]:
            return answers
        body = {"since": answers[-1]["position"], "limit": limit}


def test_no_answer_holds_another_workspace_s_rows(attacked: Attacked) -> None:
    answers = pulled_all(attacked, attacked.viewer, 5_000)
    assert [len(a["records"]) > 0 for a in answers] == [True, True]
    events = [r for a in answers for r in a["records"] if r["record"] == "event"]
    assert len(events) == len({e["seq"] for e in events}) >= OURS
    lab_seqs = {seq for seq, _ in attacked.lab_events}
    assert all(a["role"] == "viewer" and a["workspace"]["name"] == "default" for a in answers)
    assert not {a["position"]["seq"] for a in answers} & lab_seqs
    for answer in answers:
        assert not leaks(json.dumps(answer), attacked)
        settings = {r["name"]: r["value"] for r in answer["records"] if r["record"] == "setting"}
        assert settings == {"freshness_days.fact": "60"}, settings  # as JSON
    # Lab's key pulls lab's rows, and only them.
    theirs = pulled_all(attacked, attacked.theirs, 1_000)
    texts = json.dumps(theirs)
    assert "kiln" in texts and "Meter 1 reads" not in texts
    held = [r for a in theirs for r in a["records"] if r["record"] == "event"]
    assert {(e["seq"], e["op_id"]) for e in held} == set(attacked.lab_events)


BAD = {
    "limit 0": ({"limit": 0}, "limit"),
    "limit past the most": ({"limit": 5_001}, "limit"),
    "limit huge": ({"limit": 10**18}, "limit"),
    "limit a string": ({"limit": "5"}, "limit"),
    "limit a float": ({"limit": 5.0}, "limit"),
    "limit a fraction": ({"limit": 2.5}, "limit"),
    "limit true": ({"limit": True}, "limit"),
    "limit negative": ({"limit": -1}, "limit"),
    "since a list": ({"since": [1, "op_x"]}, "since"),
    "since a number": ({"since": 4}, "since"),
    "seq negative": ({"since": {"seq": -1, "op_id": "op_01m93qm2xaq28gmj85hg"}}, "since"),
    "seq huge": ({"since": {"seq": 2**64, "op_id": "op_01m93qm2xaq28gmj85hg"}}, "since"),
    "seq a float": ({"since": {"seq": 3.0, "op_id": "op_01m93qm2xaq28gmj85hg"}}, "since"),
    "seq a string": ({"since": {"seq": "3", "op_id": "op_01m93qm2xaq28gmj85hg"}}, "since"),
    "seq without op_id": ({"since": {"seq": 3}}, "since"),
    "op_id of another shape": ({"since": {"seq": 3, "op_id": "op_x' OR 1=1 --"}}, "since"),
    "op_id a number": ({"since": {"seq": 3, "op_id": 7}}, "since"),
    "op_id too long": ({"since": {"seq": 3, "op_id": "op_" + "a" * 5000}}, "since"),
    "an extra key in since": (
        {"since": {"seq": 3, "op_id": "op_01m93qm2xaq28gmj85hg", "workspace": "lab"}}, "since"
    ),
    "an extra key": ({"limit": 5, "workspace": "lab"}, "workspace"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD))
def test_a_malformed_pull_is_refused_naming_its_field(attacked: Attacked, case: str) -> None:
    body, field = BAD[case]
    got = attacked.pull(body)
    assert got.status_code == 400, got.text
    answer = got.json()
    assert answer["error_class"] == "validation" and answer["field"] == field, answer
    assert "records" not in answer and not leaks(got.text, attacked)


def test_a_keyless_pull_is_refused_before_its_body_is_read(attacked: Attacked) -> None:
    port = attacked.server.port
    wrong = attacked.ours[:-1] + ("0" if attacked.ours[-1] != "0" else "1")
    for given in (None, "palimpsest_k_made_up", wrong):
        assert status_before_body(port, PULL, given) == 401
    for headers in ({}, {"X-Api-Key": attacked.ours}):
        got = attacked.pull({"limit": 5, "authorization": attacked.ours}, "", **headers)
        assert got.status_code == 401 and "Meter" not in got.text


def test_a_pull_replayed_answers_the_same_and_changes_nothing(attacked: Attacked) -> None:
    before = fingerprint(attacked.url)
    first = attacked.pull({"limit": 40})
    since = first.json()["position"]
    again = attacked.pull({"limit": 40})
    assert first.status_code == 200 and first.json() == again.json()
    later = [attacked.pull({"since": since, "limit": 40}).json() for _ in range(3)]
    assert later[0] == later[1] == later[2] and later[0]["records"]
    assert fingerprint(attacked.url) == before


def test_the_largest_answer_is_bounded(attacked: Attacked) -> None:
    got = attacked.pull({"limit": 5_000})
    answer = got.json()
    events = [r for r in answer["records"] if r["record"] == "event"]
    assert len(events) == 5_000 and answer["more"] is True
    refused = attacked.pull({"limit": 10**9})
    assert refused.status_code == 400 and refused.json()["field"] == "limit"
    # Without a limit an answer holds the default, 1,000.
    plain = attacked.pull({}).json()
    assert len([r for r in plain["records"] if r["record"] == "event"]) == 1_000


def test_a_pull_answers_the_key_s_role(attacked: Attacked) -> None:
    answer = attacked.pull({"limit": 1}, attacked.viewer).json()
    assert answer["role"] == "viewer"
    assert attacked.pull({"limit": 1}).json()["role"] == "editor"
