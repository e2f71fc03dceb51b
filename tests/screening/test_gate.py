"""The write gate on every path in: each kind of secret refused in each field, never echoed,
nothing written; redaction where asked; doctor finds what got in before the gate."""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from typing import Any

import pytest

from palimpsest.domain.errors import ValidationError
from palimpsest.domain.ids import new_id
from palimpsest.domain.model import Event, Memory
from palimpsest.screening.detector_id import detector_id
from palimpsest.service import Service

from ..memory.test_revise_rules import current, event_count, fact, rule

RNG = random.Random(7)
ALNUM = string.ascii_letters + string.digits


def _random(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def _b64url(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


# One generated secret per kind the gate must refuse, each in the shape a real one has.
SECRETS = {
    "aws-access-key-id": "AKIA" + _random(string.ascii_uppercase + "234567", 16),
    "github-token": "ghp_" + _random(ALNUM, 36),
    "slack-token": f"xoxb-{_random(string.digits, 12)}-{_random(string.digits, 13)}-"
    + _random(ALNUM, 24),
    "stripe-key": "sk_live_" + _random(ALNUM, 24),
    "jwt": ".".join(
        [
            _b64url({"alg": "HS256", "typ": "JWT"}),
            _b64url({"sub": _random(string.digits, 8), "name": "Ana", "iat": 1716239022}),
            _random(ALNUM + "-_", 43),
        ]
    ),
    "private-key": "-----BEGIN RSA PRIVATE KEY-----\n"
    + "\n".join(_random(ALNUM + "+/", 64) for _ in range(6))
    + "\n-----END RSA PRIVATE KEY-----",
    "url-password": f"postgresql://app:{_random(ALNUM, 14)}@db.internal:5432/orders",
    "env-password": f"DB_PASSWORD={_random(ALNUM, 12)}!9",
}
SECRET_ITEMS = sorted(SECRETS.items())

CLEAN = [
    "Fixed in commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "The job id is 123e4567-e89b-12d3-a456-426614174000",
    '"integrity": "sha512-' + base64.b64encode(bytes(range(64))).decode() + '"',
    "Upgrade to version 2.14.3-rc.1 before Friday",
    "The token file lives at /etc/app/secrets/token_path.conf",
    "Use AKIAIOSFODNN7EXAMPLE in the docs, never a real key",
    "Set DB_PASSWORD=${DB_PASSWORD} in the deploy environment",
    "Our password policy needs twelve characters and a rotation every 90 days",
]


def assert_refused_without_echo(
    service: Service,
    secret: str,
    call: Callable[[], Any],
    *,
    field: str,
    as_secret: bool = True,
) -> ValidationError:
    """Refused as `validation` on `field`, naming no part of the secret, writing nothing;
    `as_secret`: for being one (a value too long for its field is refused for its length)."""
    before = event_count(service)
    with pytest.raises(ValidationError) as caught:
        call()
    assert (caught.value.error_class, caught.value.field) == ("validation", field)
    body = json.dumps(caught.value.to_dict())
    assert ("secret" in caught.value.message) or not as_secret
    assert secret not in body
    assert all(part not in body for part in secret.split() if len(part) > 12)
    assert event_count(service) == before
    return caught.value


REMEMBER_FIELDS: dict[str, Callable[[str], dict[str, Any]]] = {
    "text": lambda s: {"text": f"Use {s} for deploys"},
    "title": lambda s: {"title": s},
    "why": lambda s: {"why": f"because {s}"},
    "tags": lambda s: {"tags": ["ops", s]},
    "source": lambda s: {"source": s},
    "key": lambda s: {"key": s},
}
SHORT_FIELDS = {"title": 200, "tags": 64, "key": 200}  # longer values fail the length check


@pytest.mark.parametrize(("kind", "secret"), SECRET_ITEMS)
@pytest.mark.parametrize("field", sorted(REMEMBER_FIELDS))
def test_remember_refuses_each_kind_in_each_field(
    service: Service, kind: str, secret: str, field: str
) -> None:
    values = {"notebook": "proj", "kind": "fact", "text": "Deploys need a key"}
    values |= REMEMBER_FIELDS[field](secret)
    fits = len(secret) <= SHORT_FIELDS.get(field, 8000)
    refuse = lambda: service.remember(**values)  # noqa: E731
    assert_refused_without_echo(service, secret, refuse, field=field, as_secret=fits)


@pytest.mark.parametrize(("kind", "secret"), SECRET_ITEMS)
def test_rule_fields_are_gated(service: Service, kind: str, secret: str) -> None:
    for field, extra in (
        ("falsifier", {"falsifier": f"it fails with {secret}"}),
        ("check.literal", {"check": {"kind": "contains", "path": "app.cfg", "literal": secret}}),
        ("bindings.targets", {"bindings": {"targets": [secret]}}),
    ):
        refuse = lambda extra=extra: rule(service, **extra)  # noqa: E731
        assert_refused_without_echo(service, secret, refuse, field=field)


@pytest.mark.parametrize(("kind", "secret"), SECRET_ITEMS)
def test_revise_refuses_each_kind_on_every_field_and_edit(
    service: Service, kind: str, secret: str
) -> None:
    mid = fact(service, text="Deploys use the vault")
    for field, change in (
        ("text", {"text": f"Deploys use {secret}"}),
        ("append", {"append": secret}),
        ("replace_to", {"replace_from": "vault", "replace_to": secret}),
        ("why", {"why": secret}),
        ("note", {"status": "retracted", "note": f"leaked: {secret}"}),
        ("because", {"move_to": "proj", "because": f"see {secret}"}),
    ):
        refuse = lambda change=change: service.revise(id=mid, **change)  # noqa: E731
        assert_refused_without_echo(service, secret, refuse, field=field)
    assert current(service, mid)["version"] == 1


@pytest.mark.parametrize(("kind", "secret"), SECRET_ITEMS)
def test_a_batch_with_one_secret_applies_nothing(service: Service, kind: str, secret: str) -> None:
    a, b = fact(service, text="alpha"), fact(service, text="beta")
    items = [{"id": a, "append": "fine"}, {"id": b, "append": secret}]
    refused = assert_refused_without_echo(
        service, secret, lambda: service.revise(items=items), field="append"
    )
    assert refused.item == 1
    assert current(service, a)["text"] == "alpha"


@pytest.mark.parametrize(("kind", "secret"), SECRET_ITEMS)
def test_notebooks_forget_and_merge_reasons_are_gated(
    service: Service, kind: str, secret: str
) -> None:
    mid = fact(service)
    calls: list[tuple[str, Callable[[], Any]]] = [
        ("summary", lambda: service.create_notebook(name="nb", summary=f"uses {secret}")),
        ("tags", lambda: service.create_notebook(name="nb", tags=["ops", secret])),
        ("summary", lambda: service.edit_notebook(notebook="proj", summary=secret)),
        ("because", lambda: service.forget(id=mid, because=f"it held {secret}")),
        ("because", lambda: service.merge_domains(source="a", target="b", because=secret)),
    ]
    for field, call in calls:
        fits = len(secret) <= 64
        assert_refused_without_echo(service, secret, call, field=field, as_secret=fits)
    for field, call in (
        ("name", lambda: service.create_notebook(name=secret)),
        ("domain", lambda: service.edit_notebook(notebook="proj", domain=secret)),
    ):
        fits = len(secret) <= 100
        assert_refused_without_echo(service, secret, call, field=field, as_secret=fits)


@pytest.mark.parametrize("text", CLEAN)
def test_ordinary_text_passes_unchanged(service: Service, text: str) -> None:
    mid = fact(service, text=text, why=text[:2000])
    assert current(service, mid)["text"] == text


# `secret:NAME` names a value kept in the OS keychain (`palimpsest secret set NAME`): the
# way out the refusal offers must itself pass, in the places a credential's value stood.
SECRET_REFERENCES = [
    "AWS_SECRET_ACCESS_KEY=secret:aws/prod-secret-key",
    "client_secret: secret:oauth/client-secret",
    "The staging password is secret:db.",
    "DB_PASSWORD=secret:db-password and GITHUB_TOKEN=secret:ci.deploy_token",
    "Push with secret:github/pat-2025.",  # not "secret" naming the value "github/pat-2025"
]


@pytest.mark.parametrize("text", SECRET_REFERENCES)
def test_a_secret_kept_by_name_passes(service: Service, text: str) -> None:
    mid = fact(service, text=text, title="Where the credentials are")
    assert current(service, mid)["text"] == text


@pytest.mark.parametrize(
    "text",
    [
        f"client_secret=secret:{_random(ALNUM, 32)}",  # a random "name" is a key
        f"token: secret:{SECRETS['github-token']}",
        f"AWS_SECRET_ACCESS_KEY=secret:{_random(ALNUM + '/+', 40)}",
        "The wifi password is secret:hunter22",  # one word with digits reads as a password
    ],
)
def test_a_key_pasted_after_secret_is_still_refused(service: Service, text: str) -> None:
    secret = text.partition("secret:")[2]
    assert_refused_without_echo(service, secret, lambda: fact(service, text=text), field="text")


def test_the_refusal_names_the_way_out(service: Service) -> None:
    with pytest.raises(ValidationError) as caught:
        fact(service, text=f"CI pushes with {SECRETS['github-token']}")
    assert "`palimpsest secret set NAME`" in caught.value.message
    assert "`secret:NAME`" in caught.value.message


@pytest.mark.parametrize(("kind", "secret"), SECRET_ITEMS)
def test_redaction_on_notes_and_summaries(service: Service, kind: str, secret: str) -> None:
    mid = fact(service)
    answer = service.revise(id=mid, status="retracted", note=f"was {secret} here", redact=True)
    note = current(service, mid)["status_note"]
    assert secret not in note and "[REDACTED:" in note
    assert answer["redacted"][0]["field"] == "note"
    created = service.create_notebook(name="ops", summary=f"Deploy key: {secret}", redact=True)
    assert secret not in created["notebook"]["summary"]
    assert "[REDACTED:" in created["notebook"]["summary"]
    assert created["redacted"][0]["field"] == "summary"


def test_redaction_is_only_for_notes_and_summaries(service: Service) -> None:
    """`redact` cleans a note; a secret in the text of the same valid call is still refused."""
    secret = SECRETS["github-token"]
    mid = fact(service, text="the deploy runs on Thursday")
    before = event_count(service)
    with pytest.raises(ValidationError) as caught:
        service.revise(id=mid, text=f"deploy with {secret}", note="new token", redact=True)
    assert (caught.value.error_class, caught.value.field) == ("validation", "text")
    assert secret not in json.dumps(caught.value.to_dict())
    assert current(service, mid)["text"] == "the deploy runs on Thursday"
    assert event_count(service) == before


def test_doctor_finds_secrets_that_got_in_before_the_gate(service: Service) -> None:
    secret = SECRETS["github-token"]
    clean = fact(service, text="nothing to see")
    leaked = _write_past_the_gate(service, f"old note with {secret}")
    report = service.doctor()
    assert [(s["id"], list(s["fields"])) for s in report["secrets"]] == [(leaked, ["text"])]
    assert report["secrets"][0]["fields"]["text"]
    assert report["secrets"][0]["fix"] == {
        "tool": "forget", "arguments": {"id": leaked, "because": "a secret got in"},
    }  # fmt: skip
    assert secret not in json.dumps(report)
    service.forget(id=leaked, because="doctor found a token")
    assert service.doctor()["secrets"] == []
    assert current(service, clean)["text"] == "nothing to see"  # forget took only the leak


def test_doctor_reads_each_version_once_and_still_finds_what_came_since(
    service: Service,
) -> None:
    """A version never changes: one found clean is not read again by the same detector, so
    a second doctor costs only what was written since; a leak is listed every time."""
    secret = SECRETS["github-token"]
    clean = fact(service, text="nothing to see")
    leaked = _write_past_the_gate(service, f"old note with {secret}")
    assert [s["id"] for s in service.doctor()["secrets"]] == [leaked]
    with service.store.read(service.workspace) as tx:
        assert [m.id for m in tx.unscreened_versions(detector_id())] == [leaked]
    later = _write_past_the_gate(service, f"a later note with {secret}")
    assert [s["id"] for s in service.doctor()["secrets"]] == [leaked, later]
    with service.store.read(service.workspace) as tx:
        assert clean not in [m.id for m in tx.unscreened_versions(detector_id())]
        assert len(tx.unscreened_versions("d1:another-detector")) >= 3  # it reads them all


def _write_past_the_gate(service: Service, text: str) -> str:
    """Store a memory the way an old version or an import could have: straight to the store."""
    with service.store.write(service.workspace) as tx:
        notebook = tx.list_notebooks()[0]
        memory = Memory(
            id=new_id("m"),
            workspace=service.workspace,
            notebook_id=notebook.id,
            kind="note",
            text=text,
            version=1,
            recorded_at="2026-01-01T00:00:00.000000Z",
            author="user:old",
            owner="user:old",
        )
        event = Event(0, new_id("op"), memory.recorded_at, "user:old", "import", "memory",
                      memory.id, notebook.id, 1, ("created",))  # fmt: skip
        tx.put_memory(memory, tx.append_event(event))
    return memory.id


def test_doctor_reads_a_status_note_with_the_record(service: Service) -> None:
    """Half a key in the text and the rest in the retire note, stored before the gate read
    them together: doctor finds it, as the gate now refuses it."""
    key = SECRETS["github-token"]
    fact(service, text="a notebook to file into")
    with service.store.write(service.workspace) as tx:
        notebook = tx.list_notebooks()[0]
        memory = Memory(id=new_id("m"), workspace=service.workspace, notebook_id=notebook.id,
                        kind="note", text=f"The CI key starts {key[:20]}", version=1,
                        recorded_at="2026-01-01T00:00:00.000000Z", author="user:old",
                        owner="user:old", status="retracted", status_note=key[20:])  # fmt: skip
        event = Event(0, new_id("op"), memory.recorded_at, "user:old", "import", "memory",
                      memory.id, notebook.id, 1, ("created",))  # fmt: skip
        tx.put_memory(memory, tx.append_event(event))
    [finding] = service.doctor()["secrets"]
    assert finding["id"] == memory.id and "status_note" in finding["fields"]


def test_an_anchor_hash_is_gated_too(service: Service) -> None:
    secret = SECRETS["aws-access-key-id"]
    anchors = [{"path": "app.py", "hash": secret}]
    assert_refused_without_echo(
        service,
        secret,
        lambda: fact(service, text="anchored", anchors=anchors),
        field="anchors.hash",
    )
    huge = [{"path": "app.py", "hash": "f" * 10_000}]
    assert_refused_without_echo(
        service,
        "f" * 10_000,
        lambda: fact(service, text="anchored", anchors=huge),
        as_secret=False,
        field="anchors.hash",
    )
