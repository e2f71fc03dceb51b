"""The write gate on its indirect paths (issue 8): what a caller sends is screened as a
reader would see it and as the record would stand, and no refusal repeats what it refused.

Markers that excuse their neighbours, invisible and look-alike characters, a credential
split across fields or calls, the actor, and echoes in refusals; then append on new lines.
"""

from __future__ import annotations

import base64
import json
import random
import string
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from palimpsest.domain.errors import ValidationError
from palimpsest.domain.ids import new_id
from palimpsest.domain.model import Event, Memory
from palimpsest.service import Service
from palimpsest.store import Store

from ..agents.test_mcp_e2e import stdio
from ..mcp_helpers import call, refuse
from ..memory.test_revise_rules import current, event_count, fact
from .test_gate import assert_refused_without_echo

RNG = random.Random(8)
ALNUM = string.ascii_letters + string.digits


def _random(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


TOKEN = "ghp_" + _random(ALNUM, 36)
STRIPE = "sk_live_" + _random(ALNUM, 24)
AKIA = "AKIA" + _random(string.ascii_uppercase + "234567", 16)
PASSWORD = _random(string.ascii_letters, 6) + _random(string.digits, 3) + _random(ALNUM, 4)
HEX40 = _random("0123456789abcdef", 40)


def _pem_body(escaped: bool = False) -> str:
    """A PKCS#1 RSA private key's base64 lines, without the BEGIN and END lines."""
    der = b"\x30\x82\x04\xa4\x02\x01\x00\x02\x82\x01\x01\x00" + RNG.randbytes(1180)
    body = base64.b64encode(der).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return ("\\n" if escaped else "\n").join(lines)


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


# -- markers -------------------------------------------------------------------------------

MARKED = {
    "env line": f"DB_PASSWORD=[REDACTED:password]{PASSWORD}",
    "url": f"postgresql://app:[REDACTED:url-password]{PASSWORD}@db.internal:5432/orders",
    "api key": f"api_key: [REDACTED:x]{HEX40}",
    "api key, spaced": f"api_key: [REDACTED:x] {HEX40}",
    "bare marker": f"DB_PASSWORD=[REDACTED]{PASSWORD}",
}


@pytest.mark.parametrize("text", MARKED.values(), ids=MARKED.keys())
def test_a_marker_excuses_nothing_next_to_it(service: Service, text: str) -> None:
    secret = PASSWORD if PASSWORD in text else HEX40
    assert_refused_without_echo(
        service, secret, lambda: fact(service, text=f"Deploy: {text}"), field="text"
    )
    mid = fact(service, text="Deploy settings live in the vault")
    assert_refused_without_echo(
        service, secret, lambda: service.revise(id=mid, text=text), field="text"
    )
    assert_refused_without_echo(
        service, secret, lambda: service.revise(id=mid, append=text), field="append"
    )
    assert current(service, mid)["version"] == 1


def test_a_marker_still_excuses_itself(service: Service) -> None:
    text = "The old note held [REDACTED:github-pat] and DB_PASSWORD=[REDACTED:password]; rotated"
    mid = fact(service, text=text)
    assert current(service, mid)["text"] == text


# -- invisible and look-alike characters ---------------------------------------------------

DISGUISED = {
    "zero-width space in a Stripe key": STRIPE[:8] + "\u200b" + STRIPE[8:],
    "soft hyphen in an AWS key id": AKIA[:4] + "\u00ad" + AKIA[4:],
    "word joiner and BOM in a GitHub token": TOKEN[:4]
    + "\u2060"
    + TOKEN[4:20]
    + "\ufeff"
    + TOKEN[20:],
    "fullwidth GitHub token": _fullwidth(TOKEN),
    "fullwidth equals sign and password": "DB_PASSWORD\uff1d" + PASSWORD,
    "PEM body without BEGIN and END": _pem_body(),
    "PEM body in JSON without BEGIN and END": '{"key": "' + _pem_body(escaped=True) + '"}',
}


@pytest.mark.parametrize("secret", DISGUISED.values(), ids=DISGUISED.keys())
def test_invisible_and_look_alike_characters_hide_nothing(service: Service, secret: str) -> None:
    call = lambda: fact(service, text=f"For the deploy:\n{secret}\nthanks")  # noqa: E731
    assert_refused_without_echo(service, secret, call, field="text")
    mid = fact(service, text="Deploys use the vault")
    assert_refused_without_echo(
        service, secret, lambda: service.revise(id=mid, why=secret), field="why"
    )


def test_what_was_sent_is_stored_not_its_normalised_copy(service: Service) -> None:
    text = (
        "Ｆｕｌｌｗｉｄｔｈ notes, a soft\u00adhyphen, a zero\u200bwidth space and 👩\u200d💻 stay"
    )
    mid = fact(service, text=text, title="Ｃａｆé ｎｏｔｅｓ")
    stored = current(service, mid)
    assert (stored["text"], stored["title"]) == (text, "Ｃａｆé ｎｏｔｅｓ")


# -- split across fields or calls ----------------------------------------------------------


def test_a_title_that_names_the_credential_its_value_alone_in_the_text(service: Service) -> None:
    assert_refused_without_echo(
        service,
        PASSWORD,
        lambda: fact(service, title="staging DB password", text=PASSWORD),
        field="text",
    )
    mid = fact(service, title="staging DB password", text="It lives in the vault")
    assert_refused_without_echo(
        service, PASSWORD, lambda: service.revise(id=mid, text=PASSWORD), field="text"
    )
    assert_refused_without_echo(
        service,
        PASSWORD,
        lambda: fact(service, key="staging-db-password", text=PASSWORD),
        field="text",
    )
    other = fact(service, text=PASSWORD)
    assert_refused_without_echo(
        service,
        PASSWORD,
        lambda: service.revise(id=other, title="staging DB password"),
        field="text",
    )


@pytest.mark.parametrize(("first", "second"), [("title", "text"), ("text", "why")])
def test_half_a_key_in_one_field_and_half_in_the_next(
    service: Service, first: str, second: str
) -> None:
    values = {first: f"CI uses {TOKEN[:20]}", second: f"{TOKEN[20:]} for CI"}
    assert_refused_without_echo(service, TOKEN[20:], lambda: fact(service, **values), field="text")
    fact(service, **{first: values[first], second: "each half alone passes"})
    fact(service, **{first: "each half alone passes", second: values[second]})


def test_half_a_key_opening_a_field_the_field_before_it_ends_in_a_word(service: Service) -> None:
    # read glued, "Deploy" + the key's start hid where the key begins
    values = {"title": "Deploy", "text": TOKEN[:20], "why": f"{TOKEN[20:]} for CI"}
    assert_refused_without_echo(service, TOKEN[20:], lambda: fact(service, **values), field="text")


@pytest.mark.parametrize("joint", ["", " ", "\n"])
def test_appending_the_rest_of_a_key_to_its_start(service: Service, joint: str) -> None:
    mid = fact(service, text=f"The CI key starts {TOKEN[:20]}")
    call = lambda: service.revise(id=mid, append=joint + TOKEN[20:])  # noqa: E731
    assert_refused_without_echo(service, TOKEN[20:], call, field="append")
    assert current(service, mid)["version"] == 1


def test_a_replace_that_completes_a_key(service: Service) -> None:
    mid = fact(service, text=f"The CI uses {TOKEN[:20]} REST (ask ops)")
    call = lambda: service.revise(id=mid, replace_from=" REST", replace_to=TOKEN[20:])  # noqa: E731
    assert_refused_without_echo(service, TOKEN[20:], call, field="text")


def test_ordinary_fields_read_together_still_pass(service: Service) -> None:
    records = [
        {"title": "DB password rotation", "text": "Rotate it every 90 days", "why": "audit"},
        {"title": "Token budget", "text": "8k per turn", "tags": ["llm", "limits"]},
        {"title": "API key", "text": "Kept in kv/prod/api (the vault), never in the repo"},
        {"title": "Deploy checklist", "text": "- build\n- test", "source": "docs/deploy.md"},
    ]
    for values in records:
        mid = fact(service, **values)
        assert current(service, mid)["title"] == values["title"]
    last = fact(service, text="Release steps:\n- build")
    service.revise(id=last, append="\n- push the tag\n")
    assert current(service, last)["text"] == "Release steps:\n- build\n- push the tag"


def _file_past_the_gate(service: Service, title: str, text: str) -> str:
    """A memory filed before the gate grew stricter: straight to the store."""
    fact(service, text="a notebook to hold it")
    with service.store.write(service.workspace) as tx:
        notebook = tx.list_notebooks()[0]
        memory = Memory(id=new_id("m"), workspace=service.workspace, notebook_id=notebook.id,
                        kind="fact", text=text, title=title, version=1,
                        recorded_at="2026-01-01T00:00:00.000000Z", author=service.actor,
                        owner=service.actor)  # fmt: skip
        event = Event(0, new_id("op"), memory.recorded_at, service.actor, "remember", "memory",
                      memory.id, notebook.id, 1, ("created",))  # fmt: skip
        tx.put_memory(memory, tx.append_event(event))
    return memory.id


def test_a_memory_the_stricter_gate_flags_can_still_be_retagged_verified_retired(
    service: Service,
) -> None:
    mid = _file_past_the_gate(service, "staging DB password", PASSWORD)
    service.revise(id=mid, tags=["to-forget"])
    service.revise(id=mid, status="verified")
    service.revise(id=mid, expires_at="2030-01-01")
    before = event_count(service)
    with pytest.raises(ValidationError) as caught:
        service.revise(id=mid, why="keep it for a week")
    assert (caught.value.error_class, caught.value.field) == ("validation", "text")
    assert "forget" in caught.value.message and PASSWORD not in caught.value.message
    assert event_count(service) == before
    with pytest.raises(ValidationError) as caught:
        service.revise(id=mid, supersede=True, tags=["copied"])
    assert (caught.value.error_class, caught.value.field) == ("validation", "text")
    assert "forget" in caught.value.message and event_count(service) == before
    service.revise(id=mid, status="retracted", note="it held a password")
    assert current(service, mid)["status"] == "retracted"
    assert current(service, mid)["tags"] == ["to-forget"]


def test_doctor_reads_a_record_as_the_gate_does(service: Service) -> None:
    mid = _file_past_the_gate(service, f"CI uses {TOKEN[:20]}", f"{TOKEN[20:]} for CI")
    found = [s for s in service.doctor()["secrets"] if s["id"] == mid]
    assert found and set(found[0]["fields"]) == {"title", "text"}
    assert (found[0]["fix"]["tool"], found[0]["fix"]["arguments"]["id"]) == ("forget", mid)


def test_a_revert_never_brings_back_a_secret_a_later_version_removed(service: Service) -> None:
    mid = _file_past_the_gate(service, "staging DB password", PASSWORD)
    service.revise(id=mid, status="retracted", note="it held a password")
    with service.store.write(service.workspace) as tx:  # the cleaned version, past the gate
        clean = tx.get_memory(mid)
        assert clean is not None
        clean = clean.replace(text="kept in the vault at ops/staging", version=3, status="active")
        event = Event(0, new_id("op"), "2026-01-02T00:00:00.000000Z", service.actor, "revise",
                      "memory", mid, clean.notebook_id, 3, ("text", "status"))  # fmt: skip
        tx.put_memory(clean, tx.append_event(event))
    before = event_count(service)
    with pytest.raises(ValidationError) as caught:
        service.revert(id=mid, version=1)
    assert PASSWORD not in caught.value.message and "forget" in caught.value.message
    assert event_count(service) == before
    assert current(service, mid)["text"] == "kept in the vault at ops/staging"


# -- the actor -----------------------------------------------------------------------------

GOOD_ACTORS = [
    "user:local",
    "user:ana",
    "agent:ci",
    "agent:bench-locomo",
    "user:Ana Lima",
    "user:CORP\\ana.lima",
    "user:ana.lima@corp.example.com",
    "user:CORP.EXAMPLE.COM\\Ana Lima",
]


@pytest.mark.parametrize("actor", GOOD_ACTORS)
def test_every_actor_a_login_name_gives_still_works(
    store: Store, workspace: str, actor: str
) -> None:
    service = Service(store, actor=actor, workspace=workspace)
    mid = fact(service, text="Deploys go through the pipeline")
    memory = current(service, mid)
    assert (memory["author"], memory["owner"]) == (actor, actor)
    assert [e["actor"] for e in service.history(id=mid)["events"]] == [actor]


def test_events_by_actors_stored_before_the_rule_still_read(service: Service) -> None:
    """An actor the old CLI took unchecked ("ana") stays readable in history and inspect."""
    fact(service, text="a notebook to hold it")
    with service.store.write(service.workspace) as tx:
        notebook = tx.list_notebooks()[0]
        memory = Memory(
            id=new_id("m"),
            workspace=service.workspace,
            notebook_id=notebook.id,
            kind="fact",
            text="filed by an old CLI",
            version=1,
            recorded_at="2026-01-01T00:00:00.000000Z",
            author="ana",
            owner="ana",
        )
        event = Event(0, new_id("op"), memory.recorded_at, "ana", "remember", "memory",
                      memory.id, notebook.id, 1, ("created",))  # fmt: skip
        tx.put_memory(memory, tx.append_event(event))
    assert [e["target_id"] for e in service.history(actor="ana")["events"]] == [memory.id]
    assert current(service, memory.id)["author"] == "ana"
    service.revise(id=memory.id, tags=["legacy"], override_reason="tidy up")
    assert current(service, memory.id)["tags"] == ["legacy"]


BAD_ACTORS = {
    "a token": "user:" + TOKEN,
    "a token, fullwidth": "user:" + _fullwidth(TOKEN),
    "a password": f"user:ana password={PASSWORD}",
    "100,000 characters": "user:" + "a" * 100_000,
    "a NUL": "user:ana\x00",
    "a newline": "user:ana\nagent:root",
    "a zero-width space": "user:an\u200ba",
    "no kind": "mallory",
    "another kind": "root:mallory",
    "no name": "user:",
    "blank name": "user:   ",
}


@pytest.mark.parametrize("actor", BAD_ACTORS.values(), ids=BAD_ACTORS.keys())
def test_an_actor_is_validated_bounded_and_screened(
    store: Store, workspace: str, actor: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        Service(store, actor=actor, workspace=workspace)
    body = json.dumps(caught.value.to_dict())
    assert caught.value.field == "actor"
    name = actor.split(":", 1)[-1].strip()
    assert (not name or name[:30] not in body) and len(body) < 400


Run = Callable[..., subprocess.CompletedProcess[str]]


def _palimpsest(env: dict[str, str], *args: str, **extra: str) -> Any:
    return subprocess.run([sys.executable, "-m", "palimpsest", *args], env={**env, **extra},
                          capture_output=True, text=True, timeout=60)  # fmt: skip


@pytest.mark.parametrize("command", [["remember", "-n", "ops", "-k", "fact", "hi"], ["serve"]])
def test_the_cli_refuses_a_bad_actor_with_exit_1(
    env: dict[str, str], tmp_path: Path, command: list[str]
) -> None:
    db = tmp_path / "actor.db"
    for actor in ("user:" + TOKEN, "user:" + "a" * 100_000):
        done = _palimpsest(env, "--db", str(db), "--actor", actor, *command, "--json")
        assert done.returncode == 1, done.stderr
        assert json.loads(done.stdout)["error_class"] == "validation"
        assert actor[5:45] not in done.stdout + done.stderr
    assert not db.exists()


@pytest.mark.parametrize(
    "login", ["Ana Lima", "CORP\\ana", "ana@corp.example.com", "CORP.EXAMPLE.COM\\Ana Lima "]
)
def test_the_default_actor_from_any_login_name(
    env: dict[str, str], tmp_path: Path, login: str
) -> None:
    db = str(tmp_path / "login.db")
    names = {"LOGNAME": login, "USER": login, "LNAME": login, "USERNAME": login}
    done = _palimpsest(env, "--db", db, "remember", "-n", "ops", "-k", "fact", "hi", "--json",
                       **names)  # fmt: skip
    assert done.returncode == 0, done.stderr
    mid = json.loads(done.stdout)["id"]
    shown = json.loads(_palimpsest(env, "--db", db, "inspect", mid, "--json").stdout)
    assert shown["memory"]["author"] == f"user:{login.strip()}"


# -- echoes --------------------------------------------------------------------------------

BIG = "z" * 60_000
ITEM_CHANGES: dict[str, dict[str, Any]] = {
    "kind": {"kind": TOKEN},
    "severity": {"severity": BIG},
    "scope": {"scope": TOKEN},
    "occurred_at": {"occurred_at": TOKEN},
    "status": {"status": TOKEN},
    "an unknown field": {TOKEN: "x"},
    "clear": {"clear": [TOKEN]},
    "a check's unknown field": {
        "check": {"kind": "contains", "path": "a", "literal": "b", TOKEN: 1}
    },
}


def _no_echo(error: ValidationError, *values: str) -> None:
    body = json.dumps(error.to_dict())
    assert all(value[:30] not in body for value in values), body
    assert len(body) < 600


@pytest.mark.parametrize("change", ITEM_CHANGES.values(), ids=ITEM_CHANGES.keys())
def test_a_refused_batch_item_never_repeats_its_value(
    service: Service, change: dict[str, Any]
) -> None:
    a, b = fact(service, text="alpha"), fact(service, text="beta")
    with pytest.raises(ValidationError) as caught:
        service.revise(items=[{"id": a, "append": "ok"}, {"id": b, **change}])
    _no_echo(caught.value, TOKEN, BIG)
    assert caught.value.item == 1
    assert current(service, a)["text"] == "alpha"


def test_remember_recall_and_revise_refusals_repeat_nothing(service: Service) -> None:
    mid = fact(service, text="alpha", key="alpha-key")
    calls = [
        lambda: service.remember(notebook="ops", kind=TOKEN, text="x"),
        lambda: service.remember(notebook="ops", kind="fact", text="x", expires_at=TOKEN),
        lambda: service.recall(query="alpha", status=TOKEN),
        lambda: service.recall(query="alpha", kind=TOKEN),
        lambda: service.revise(id=mid, status=TOKEN),
        lambda: service.revise(id=mid, **{TOKEN: 1}),
    ]
    for refused_call in calls:
        with pytest.raises(ValidationError) as caught:
            refused_call()
        _no_echo(caught.value, TOKEN)
    other = fact(service, text="beta")
    with pytest.raises(ValidationError) as caught:
        service.revise(id=other, key="alpha-key")
    _no_echo(caught.value, "alpha-key")


@pytest.mark.anyio
async def test_over_mcp_refusals_repeat_nothing_and_append_keeps_lines(client: Client) -> None:
    filed = await call(client, "remember", notebook="ops", kind="fact", text="Release:\n- build")
    mid = filed["id"]
    refusals = [
        ("remember", {"notebook": "ops", "kind": TOKEN, "text": "x"}),
        ("revise", {"items": [{"id": mid, "kind": TOKEN}]}),
        ("revise", {"items": [{"id": mid, "severity": BIG}]}),
        (
            "revise",
            {"id": mid, "check": {"kind": "absent", "path": "a", "literal": "b", TOKEN: 1}},
        ),
        ("revise", {"id": mid, "append": TOKEN[20:]}),
    ]
    await call(client, "revise", id=mid, append=f"\nCI: {TOKEN[:20]}")
    for tool, arguments in refusals[1:]:
        body = await refuse(client, tool, **arguments)
        assert TOKEN[:30] not in json.dumps(body) and TOKEN[20:] not in json.dumps(body)
        assert BIG[:100] not in json.dumps(body)
    body = await refuse(client, "remember", **refusals[0][1])
    assert TOKEN[:30] not in json.dumps(body)
    await call(client, "revise", id=mid, replace_from=f"\nCI: {TOKEN[:20]}", replace_to="\n- test")
    await call(client, "revise", id=mid, append="\n- push the tag\n")
    shown = await call(client, "inspect", id=mid)
    assert shown["memory"]["text"] == "Release:\n- build\n- test\n- push the tag"


@pytest.mark.anyio
async def test_a_real_server_refuses_disguised_and_split_secrets_without_echo(
    db_path: Path, env: dict[str, str]
) -> None:
    hidden = STRIPE[:8] + "\u200b" + STRIPE[8:]
    async with stdio(db_path, env) as client:
        for arguments in (
            {"text": f"Deploy with {hidden}"},
            {"text": f"Deploy with {_fullwidth(TOKEN)}"},
            {"text": f"DB_PASSWORD=[REDACTED:password]{PASSWORD}"},
            {"title": "staging DB password", "text": PASSWORD},
            {"title": f"CI uses {TOKEN[:20]}", "text": f"{TOKEN[20:]} for CI"},
        ):
            body = await refuse(client, "remember", notebook="ops", kind="fact", **arguments)
            shown = json.dumps(body, ensure_ascii=False)
            assert body["error_class"] == "validation" and "secret" in body["message"]
            assert all(v[-12:] not in shown for v in (STRIPE, TOKEN, PASSWORD))
        filed = await call(client, "remember", notebook="ops", kind="fact", text="Steps:\n- a")
        await call(client, "revise", id=filed["id"], append="\n- b\n")
        shown_memory = await call(client, "inspect", id=filed["id"])
        assert shown_memory["memory"]["text"] == "Steps:\n- a\n- b"


# -- append --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("addition", "expected"),
    [
        ("\n- push the tag\n", "- build\n- test\n- push the tag"),
        ("\n\nThen announce it.", "- build\n- test\n\nThen announce it."),
        (" \n- push the tag", "- build\n- test\n- push the tag"),
        ("and push the tag", "- build\n- test and push the tag"),
    ],
)
def test_append_that_starts_with_a_newline_starts_a_new_line(
    service: Service, addition: str, expected: str
) -> None:
    mid = fact(service, text="- build\n- test\n")
    service.revise(id=mid, append=addition)
    assert current(service, mid)["text"] == expected
