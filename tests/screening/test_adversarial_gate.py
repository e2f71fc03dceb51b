"""The write gate attacked as a careless writer's text would: each test here failed first.

Keys cut by a fixed-width line wrap (a terminal, a mail client); text that is not Unicode
(a Latin-1 byte on a command line, half an emoji a client cut) refused as `validation`, not
failing as `internal`; a reference that names nothing (an id, a notebook, an exact text)
answered without repeating it when it holds a secret; a revert that would bring back a
secret filed before the gate grew stricter; a credential in the Markdown an agent writes
(bold names, table rows) and in the manifests it pastes (an env entry's name and value, a
YAML block); a command-line option, and an HTTP body that is JSON but no JSON-RPC message,
refused without repeating what was sent.
"""

from __future__ import annotations

import base64
import itertools
import json
import random
import string
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from palimpsest.domain.errors import PalimpsestError, ValidationError
from palimpsest.domain.ids import new_id
from palimpsest.domain.model import Event, Memory
from palimpsest.screening.secret_rules import LANGUAGES
from palimpsest.screening.secrets import find_secrets, redact
from palimpsest.service import Service

from ..agents.test_mcp_e2e import http_url  # noqa: F401  (a fixture: a real `serve --http`)
from ..mcp_helpers import call
from ..memory.test_nul_input import nul_cases, refusal_is_right
from ..memory.test_revise_rules import current, event_count, fact
from .test_gate import assert_refused_without_echo

RNG = random.Random(81)
ALNUM = string.ascii_letters + string.digits


def _random(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def _b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


TOKEN = "ghp_" + _random(ALNUM, 36)
ANTHROPIC = "sk-ant-api03-" + _random(ALNUM + "-_", 93) + "AA"
JWT = ".".join(
    (
        _b64url({"alg": "HS256", "typ": "JWT"}),
        _b64url({"sub": "1234567890", "name": "Ana Lopez", "iat": 1716239022, "role": "admin"}),
        _random(ALNUM + "-_", 43),
    )
)


def _wrapped(text: str, width: int = 76) -> str:
    """`text` cut every `width` characters, as a terminal or a mail client wraps it."""
    return "\n".join(text[i : i + width] for i in range(0, len(text), width))


# -- keys cut by a line wrap ---------------------------------------------------------------

WRAPPED = {
    "Anthropic key in a mail wrapped at 76": (
        ANTHROPIC,
        _wrapped(f"Hi, here is the new key for the deploy pipeline, keep it safe: {ANTHROPIC}"),
    ),
    "JWT in a terminal wrapped at 80": (
        JWT,
        _wrapped(f"curl -H 'Authorization: Bearer' https://api.internal/orders {JWT}", 80),
    ),
    "GitHub token cut early, CRLF": (TOKEN, f"CI token:\r\n{TOKEN[:12]}\r\n{TOKEN[12:]}\r\n"),
    "GitHub token cut, blanks before the break": (TOKEN, f"{TOKEN[:20]}   \n{TOKEN[20:]} ok"),
    "GitHub token cut by a line separator": (TOKEN, f"CI: {TOKEN[:20]}\u2028{TOKEN[20:]}"),
    "GitHub token cut by a soft break from a word processor": (TOKEN, f"{TOKEN[:9]}\v{TOKEN[9:]}"),
}


@pytest.mark.parametrize(("secret", "text"), WRAPPED.values(), ids=WRAPPED.keys())
def test_a_key_cut_by_a_line_wrap_is_refused(service: Service, secret: str, text: str) -> None:
    call = lambda: fact(service, text=text)  # noqa: E731
    assert_refused_without_echo(service, secret, call, field="text")
    mid = fact(service, text="Deploy keys live in the vault")
    assert_refused_without_echo(
        service, secret, lambda: service.revise(id=mid, why=text), field="why"
    )
    assert current(service, mid)["version"] == 1


MULTILINE_CLEAN = [
    "Commits in the release:\n" + "\n".join(_random("0123456789abcdef", 40) for _ in range(6)),
    "Request ids:\n"
    + "\n".join(
        "-".join(_random("0123456789abcdef", n) for n in (8, 4, 4, 4, 12)) for _ in range(5)
    ),
    "Paths touched:\nsrc/palimpsest/secrets.py\nsrc/palimpsest/gate.py\ntests/test_gate.py",
    "def connect(token: str) -> Client:\n    client = Client(token)\n    return client\n",
    "integrity sha512-" + base64.b64encode(RNG.randbytes(64)).decode() + "\n"
    "resolved https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",
    "We wrapped the line at\nghp_ because the prefix\nis what GitHub uses",
    "Keys are in kv/prod/api;\nskip the sk-ant-\nprefix when you search the vault",
]


@pytest.mark.parametrize("text", MULTILINE_CLEAN)
def test_ordinary_multiline_text_still_passes(service: Service, text: str) -> None:
    assert find_secrets(text) == []
    mid = fact(service, text=text)
    assert current(service, mid)["text"] == text


# -- text that is not Unicode --------------------------------------------------------------

HALF_EMOJI = "\ud83d"  # what a client that cuts UTF-16 text mid-character sends


def _with_half_emoji(value: Any) -> Any:
    """A NUL case of test_nul_input with half an emoji where the NUL was."""
    if isinstance(value, str):
        return value.replace("\x00", HALF_EMOJI)
    if isinstance(value, list):
        return [_with_half_emoji(v) for v in value]
    if isinstance(value, dict):
        return {k: _with_half_emoji(v) for k, v in value.items()}
    return value


@pytest.mark.anyio
async def test_half_an_emoji_in_any_string_argument_is_refused_naming_the_field(
    client: Client, service: Service
) -> None:
    memory = (await call(client, "remember", notebook="n", kind="fact", text="Kept"))["id"]
    rule = (await call(client, "remember", notebook="n", kind="rule", text="Test before merging",
                       falsifier="a broken main after a tested merge"))["id"]  # fmt: skip
    await call(client, "notebook", action="edit", notebook="n", domain="web")
    before = service.history(limit=1000)["events"]
    wrong = []
    for tool, parameters in nul_cases(memory, rule).items():
        for parameter, arguments in parameters.items():
            bad = _with_half_emoji(arguments)
            right, body = await refusal_is_right(client, tool, parameter, bad, HALF_EMOJI)
            if not right:
                wrong.append((tool, parameter, body))
    assert wrong == []
    assert service.history(limit=1000)["events"] == before


def _palimpsest_bytes(env: dict[str, str], *args: bytes, stdin: bytes = b"") -> Any:
    command = [sys.executable.encode(), b"-m", b"palimpsest", *args]
    return subprocess.run(command, env=env, input=stdin, capture_output=True, timeout=60)


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        ([b"Caf\xe9 au lait is on the menu"], b""),  # a Latin-1 word on the command line
        ([b"-"], b"Caf\xe9 au lait is on the menu\n"),  # a Latin-1 file piped in
    ],
)
def test_the_cli_refuses_text_that_is_not_utf8_as_validation(
    env: dict[str, str], tmp_path: Path, args: list[bytes], stdin: bytes
) -> None:
    db = str(tmp_path / "latin1.db").encode()
    done = _palimpsest_bytes(
        env, b"--db", db, b"remember", b"-n", b"ops", *args, b"--json", stdin=stdin
    )
    assert done.returncode == 1, done.stderr
    body = json.loads(done.stdout)
    assert (body["error_class"], body["field"]) == ("validation", "text")
    listed = _palimpsest_bytes(env, b"--db", db, b"recall", b"menu", b"--json")
    assert json.loads(listed.stdout)["hits"] == []


# -- references that name nothing ----------------------------------------------------------


def test_a_reference_that_names_nothing_is_not_repeated_when_it_holds_a_secret(
    service: Service,
) -> None:
    """A key pasted where an id or a notebook goes: not found, and not written back out."""
    mid = fact(service, text="Deploys use the vault")
    lookups = {
        "recall notebook": lambda ref: service.recall(query="vault", notebook=ref),
        "revise id": lambda ref: service.revise(id=ref, tags=["ops"]),
        "revise items": lambda ref: service.revise(items=[{"id": ref, "tags": ["ops"]}]),
        "inspect id": lambda ref: service.inspect(id=ref),
        "inspect notebook": lambda ref: service.inspect(notebook=ref),
        "history id": lambda ref: service.history(id=ref),
        "history notebook": lambda ref: service.history(notebook=ref),
        "revert id": lambda ref: service.revert(id=ref, version=1),
        "revert notebook": lambda ref: service.revert(notebook=ref, as_of="2026-01-01"),
        "forget id": lambda ref: service.forget(id=ref, because="pasted by mistake"),
        "edit notebook": lambda ref: service.edit_notebook(notebook=ref, summary="Deploys"),
        "link source": lambda ref: service.link(source=ref, target=mid, type="relates_to"),
        "link target": lambda ref: service.link(source=mid, target=ref, type="relates_to"),
        "supersedes": lambda ref: fact(service, text="Deploys use kv", supersedes=[ref]),
    }
    repeated = []
    for name, lookup in lookups.items():
        for ref, secret in ((TOKEN, True), ("m_not_filed_yet", False)):
            try:
                answer: Any = lookup(ref)
            except PalimpsestError as exc:
                answer = exc.to_dict()
                assert answer["error_class"] == "not_found", (name, answer)
            if (ref in json.dumps(answer)) is secret:
                repeated.append((name, ref, answer))
    for form in ({"ids": [TOKEN]}, {"texts": [f"CI uses {TOKEN}"], "notebook": "proj"}):
        answer = service.revise(**form, tags=["ops"])  # type: ignore[arg-type]
        assert answer["unmatched"] and TOKEN not in json.dumps(answer), answer
    assert repeated == []
    assert current(service, mid)["version"] == 1


# -- revert --------------------------------------------------------------------------------


def _ticking(service: Service) -> Service:
    """The same store and workspace, with a clock one second further at each call."""
    seconds = itertools.count()

    def clock() -> str:
        n = next(seconds)
        return f"2027-01-01T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000000Z"

    return Service(service.store, workspace=service.workspace, clock=clock)


def _file_past_the_gate(service: Service, title: str, text: str) -> tuple[str, str]:
    """A memory filed before the gate grew stricter (straight to the store), and its time."""
    fact(service, text="a notebook to hold it")
    with service.store.write(service.workspace) as tx:
        notebook = tx.list_notebooks()[0]
        at = service.clock()
        memory = Memory(id=new_id("m"), workspace=service.workspace, notebook_id=notebook.id,
                        kind="fact", text=text, title=title, version=1, recorded_at=at,
                        author=service.actor, owner=service.actor)  # fmt: skip
        event = Event(0, new_id("op"), at, service.actor, "remember", "memory", memory.id,
                      notebook.id, 1, ("created",))  # fmt: skip
        tx.put_memory(memory, tx.append_event(event))
    return memory.id, at


PASSWORD = _random(string.ascii_letters, 6) + _random(string.digits, 3) + "!" + _random(ALNUM, 4)


def test_a_revert_does_not_bring_back_a_secret_the_gate_refuses(service: Service) -> None:
    """Filed before the gate grew stricter, then revised away: reverting would restore it."""
    service = _ticking(service)
    mid, filed_at = _file_past_the_gate(service, "staging DB password", PASSWORD)
    service.revise(id=mid, text="It lives in the vault under kv/staging/db")
    before = event_count(service)
    for revert in (
        lambda: service.revert(id=mid, version=1),
        lambda: service.revert(notebook="proj", as_of=filed_at),
    ):
        with pytest.raises(ValidationError) as caught:
            revert()
        assert "forget" in caught.value.message and PASSWORD not in json.dumps(
            caught.value.to_dict()
        )
        assert event_count(service) == before
    assert current(service, mid)["text"] == "It lives in the vault under kv/staging/db"
    service.forget(id=mid, version=1, because="it held the staging password")
    assert current(service, mid)["version"] >= 2


# -- Markdown around a name and its value --------------------------------------------------

HEX40 = _random("0123456789abcdef", 40)
MARKDOWN = {
    "bold name": f"Staging access:\n**Password:** {PASSWORD}",
    "bold name, value in code": f"**password**: `{PASSWORD}`",
    "italic name": f"*DB password*: {PASSWORD}",
    "table row": f"| name | value |\n|---|---|\n| DB_PASSWORD | {PASSWORD} |",
    "table row, value in code": f"| service | API key |\n| --- | --- |\n| API key | `{HEX40}` |",
}


@pytest.mark.parametrize("text", MARKDOWN.values(), ids=MARKDOWN.keys())
def test_a_credential_in_markdown_is_refused(service: Service, text: str) -> None:
    secret = PASSWORD if PASSWORD in text else HEX40
    assert_refused_without_echo(service, secret, lambda: fact(service, text=text), field="text")


MARKDOWN_CLEAN = [
    "**Password policy:** twelve characters, rotated every 90 days",
    "| setting | meaning |\n|---|---|\n| `password` | string: the user's password |\n"
    "| token_ttl | 3600 seconds |",
    "| key | required |\n| --- | --- |\n| API_TOKEN | yes |",
    "Run `cat tokens.txt | sort | uniq -c` and `def f(*args, **kwargs)`",
    "| commit | note |\n|---|---|\n| " + _random("0123456789abcdef", 40) + " | fix the key |",
    "- **Secret store:** Vault, path `kv/prod/api`",
]


@pytest.mark.parametrize("text", MARKDOWN_CLEAN)
def test_ordinary_markdown_still_passes(text: str) -> None:
    assert find_secrets(text) == []


# -- the command line ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["recall", "deploys", "--limit", TOKEN],
        ["history", "--limit", TOKEN],
        ["revise", "m_any", "--expected-version", TOKEN, "--title", "x"],
        ["forget", "m_any", "--version", TOKEN, "--because", "pasted"],
    ],
    ids=["recall --limit", "history --limit", "revise --expected-version", "forget --version"],
)
def test_a_refused_option_value_is_not_repeated(
    env: dict[str, str], tmp_path: Path, args: list[str]
) -> None:
    """A key pasted into the wrong option: refused (exit 2), not printed back."""
    db = str(tmp_path / "options.db")
    option = args[args.index(TOKEN) - 1]
    for output in ([], ["--json"]):
        done = subprocess.run([sys.executable, "-m", "palimpsest", "--db", db, *args, *output],
                              env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 2, done.stdout + done.stderr
        assert TOKEN[4:24] not in done.stdout + done.stderr
        if output:
            body = json.loads(done.stdout)
            assert body["error_class"] == "validation"
            assert body["field"] == option.lstrip("-").replace("-", "_")


# -- manifests: a name and its value on two lines --------------------------------------------

MANIFESTS = {
    "Kubernetes env entry": 'env:\n  - name: DB_PASSWORD\n    value: "' + PASSWORD + '"\n',
    "ECS environment, JSON": '"environment": [{"name": "DB_PASSWORD", "value": "'
    + PASSWORD
    + '"}]',
    "YAML literal block": "db:\n  password: |\n    " + PASSWORD + "\n  user: app\n",
    "YAML folded block": "password: >-\n  " + PASSWORD + "\n",
}


@pytest.mark.parametrize("text", MANIFESTS.values(), ids=MANIFESTS.keys())
def test_a_credential_in_a_pasted_manifest_is_refused(service: Service, text: str) -> None:
    assert_refused_without_echo(service, PASSWORD, lambda: fact(service, text=text), field="text")


MANIFESTS_CLEAN = [
    "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db\n",
    "env:\n  - name: DB_PASSWORD\n    value: ${DB_PASSWORD}\n"
    "  - name: TOKEN_TTL\n    value: '3600'",
    '[{"name": "API_KEY_HEADER", "value": "X-Api-Key"}, {"name": "LOG_LEVEL", "value": "debug"}]',
    "script: |\n  pip install -e .\n  pytest -q\n",
    "description: >-\n  The password policy needs twelve characters\n",
]


@pytest.mark.parametrize("text", MANIFESTS_CLEAN)
def test_ordinary_manifests_still_pass(text: str) -> None:
    assert find_secrets(text) == []


# -- HTTP ----------------------------------------------------------------------------------


def _post(url: str, body: bytes) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}  # fmt: skip
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused_answer:
        return refused_answer.code, json.loads(refused_answer.read())


def test_http_refuses_a_body_that_is_no_json_rpc_message_without_quoting_it(
    http_url: str,  # noqa: F811
) -> None:
    """An older client's batch, or a wrong version: refused, the body not written back."""
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "remember", "arguments": {"notebook": "ops", "kind": "fact",
                                                         "text": f"CI uses {TOKEN}"}}}  # fmt: skip
    for body in ([call], {**call, "jsonrpc": "2"}, {"text": TOKEN}):
        status, answer = _post(http_url, json.dumps(body).encode())
        assert status == 400
        assert answer["error"]["code"] == -32600, answer
        assert TOKEN[:12] not in json.dumps(answer)
    status, answer = _post(http_url, b"not json " + TOKEN.encode())
    assert (status, answer["error"]["code"]) == (400, -32700)
    assert TOKEN[:12] not in json.dumps(answer)


def test_http_answers_a_body_that_is_not_utf8_with_its_id(http_url: str) -> None:  # noqa: F811
    """The same refusal stdio gives: a parse error the caller can match to its request."""
    body = (
        b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": '
        b'"remember", "arguments": {"notebook": "ops", "kind": "fact", "text": "caf\xe9"}}}'
    )
    status, answer = _post(http_url, body)
    assert (status, answer["id"], answer["error"]["code"]) == (400, 7, -32700)
    assert "UTF-8" in answer["error"]["message"]


# -- revise: an append of nothing, an exact text longer than any ---------------------------


@pytest.mark.parametrize("blank", ["   ", "\n", " \n\t"])
def test_an_append_of_only_blanks_is_refused_not_filed_as_a_version(
    service: Service, blank: str
) -> None:
    mid = fact(service, text="Deploys use the vault")
    before = event_count(service)
    with pytest.raises(ValidationError) as caught:
        service.revise(id=mid, append=blank)
    assert caught.value.field == "append"
    assert event_count(service) == before
    assert current(service, mid)["text"] == "Deploys use the vault"


def test_an_exact_text_longer_than_any_memory_is_refused_not_echoed(service: Service) -> None:
    fact(service, text="Deploys use the vault")
    huge = "Deploys use the vault. " * 5_000
    with pytest.raises(ValidationError) as caught:
        service.revise(texts=[huge], notebook="proj", tags=["ops"])
    assert caught.value.field == "texts" and len(json.dumps(caught.value.to_dict())) < 600


# -- notebooks: name and summary read together ---------------------------------------------


def test_a_notebook_name_and_summary_are_read_together(service: Service) -> None:
    """Like a memory's title over its text: a name naming the credential, the summary it."""
    for create in (
        lambda: service.create_notebook(name="staging DB password", summary=PASSWORD),
        lambda: service.create_notebook(name="staging DB password", summary=PASSWORD, redact=True),
    ):
        assert_refused_without_echo(service, PASSWORD, create, field="summary")
    service.create_notebook(name="staging DB password", summary="Kept in kv/staging/db")
    service.create_notebook(name="staging", summary=PASSWORD)  # a summary alone: no name
    edits = (
        lambda: service.edit_notebook(notebook="staging DB password", summary=PASSWORD),
        lambda: service.edit_notebook(notebook="staging", name="staging db password"),
    )
    for edit in edits:
        assert_refused_without_echo(service, PASSWORD, edit, field="summary")
    names = {nb["name"]: nb.get("summary") for nb in service.notebooks()["notebooks"]}
    assert names["staging DB password"] == "Kept in kv/staging/db"


# -- HTML entities: what a Markdown view shows --------------------------------------------

ENTITIES = {
    "escaped quotes around a key": f"api_key=&quot;{HEX40}&quot;",
    "escaped XML element": f"&lt;password&gt;{PASSWORD}&lt;/password&gt;",
    "numeric entity in a token": TOKEN.replace("_", "&#95;"),
}


@pytest.mark.parametrize("text", ENTITIES.values(), ids=ENTITIES.keys())
def test_a_credential_behind_html_entities_is_refused(service: Service, text: str) -> None:
    """Markdown renders entities: `&quot;` is shown as a quote, `&#95;` as an underscore."""
    secret = next(s for s in (HEX40, PASSWORD, TOKEN[5:]) if s in text)
    assert_refused_without_echo(
        service, secret, lambda: fact(service, text=f"Setup: {text}"), field="text"
    )


@pytest.mark.parametrize(
    "text", ["Tom &amp; Jerry", "Set &lt;your-token&gt; in the header", "if a &lt; b &amp;&amp; c"]
)
def test_ordinary_entities_still_pass(text: str) -> None:
    assert find_secrets(text) == []


# -- an arrow between a name and its value -------------------------------------------------


@pytest.mark.parametrize("arrow", ["→", "⇒", "=>"])
def test_a_password_after_an_arrow_is_refused(service: Service, arrow: str) -> None:
    """Notes list what changed as "name → value"; chat clients turn "->" into "→"."""
    text = f"Rotated today:\n- staging DB password {arrow} {PASSWORD}"
    assert_refused_without_echo(service, PASSWORD, lambda: fact(service, text=text), field="text")


def test_ordinary_arrows_still_pass() -> None:
    assert find_secrets("password → vault; token → session → user; key → kv/prod/api") == []


# -- look-alike letters: Cyrillic and Greek letters that show as Latin ones ----------------

# What a reader sees as Latin, written with Cyrillic or Greek letters (NFKC keeps them).
_CYRILLIC = str.maketrans("AKIEOPCTXBMHaeopcxysij", "АКІЕОРСТХВМНаеорсхуѕіј")
_GREEK = str.maketrans("AKIEOPTXBMHZNYaoiv", "ΑΚΙΕΟΡΤΧΒΜΗΖΝΥαοιν")
AWS_KEY = "AKIA" + _random(string.ascii_uppercase + string.digits, 16)
LOOKALIKES = {
    "AWS key id, Cyrillic prefix": "Signing key АКІА" + AWS_KEY[4:],
    "AWS key id, all Greek look-alikes": "Signing key " + AWS_KEY.translate(_GREEK),
    "GitHub token, Cyrillic р in ghp_": f"CI uses gh\u0440_{TOKEN[4:]}",
    "GitHub token, Cyrillic letters throughout": f"CI uses {TOKEN.translate(_CYRILLIC)}",
    "password name with Cyrillic р and а": f"\u0440\u0430ssword={PASSWORD}",
    "password name, Greek ο": f"db_passw\u03bfrd: {PASSWORD}",
    "token name with Cyrillic о and е": f"t\u043ek\u0435n = {HEX40}",
    "Stripe key, Cyrillic ѕ and і": "\u0455k_l\u0456ve_" + _random(ALNUM, 24),
}


@pytest.mark.parametrize("text", LOOKALIKES.values(), ids=LOOKALIKES.keys())
def test_a_secret_in_look_alike_letters_is_refused(service: Service, text: str) -> None:
    """A reader sees the Latin secret, though NFKC leaves Cyrillic and Greek letters as they
    are; in a name (`раssword=`) or in the key itself."""
    secret = text.split()[-1].split("=")[-1]
    assert_refused_without_echo(service, secret, lambda: fact(service, text=text), field="text")
    mid = fact(service, text="Deploy keys live in the vault")
    assert_refused_without_echo(
        service, secret, lambda: service.revise(id=mid, title=text), field="title"
    )


def test_a_secret_in_look_alike_letters_is_redacted_whole_in_what_was_sent() -> None:
    text = f"CI uses {TOKEN.translate(_CYRILLIC)} nightly"
    [finding] = find_secrets(text)
    assert text[finding.start : finding.end] == TOKEN.translate(_CYRILLIC)
    assert redact(text) == ("CI uses [REDACTED:github-pat] nightly", ["github-pat"])


LOOKALIKES_CLEAN = [
    "Пароль от базы лежит в хранилище kv/prod/db; ключ API меняем каждые 90 дней.",
    "СРОЧНО: ТАКСИ К ОФИСУ В 10:00, ВСЕ СОТРУДНИКИ ОТДЕЛА ЕКОМ И КРАСНОЯРСК-ТЕХ",
    "Токен доступа выдаёт сервис авторизации; его срок жизни — один час. Секрет "
    "хранится в Vault, а не в репозитории. Сверху — прокси, снизу — кэш.",
    "Ο κωδικός πρόσβασης βρίσκεται στο vault· το κλειδί API αλλάζει κάθε μήνα.",
    "ΑΘΗΝΑ ΚΑΙ ΘΕΣΣΑΛΟΝΙΚΗ: ΤΟ ΕΡΓΟ ΠΑΡΑΔΟΘΗΚΕ ΣΤΗΝ ΩΡΑ ΤΟΥ",
    "Пароль зберігається у сховищі, а токен оновлюється щотижня. Інструкція: див. вікі.",
    "password: пароль из хранилища; token — см. раздел «Секреты»; key: ключ",
]


@pytest.mark.parametrize("text", LOOKALIKES_CLEAN)
def test_ordinary_russian_greek_and_ukrainian_text_still_passes(
    service: Service, text: str
) -> None:
    assert find_secrets(text) == []
    mid = fact(service, text=text)
    assert current(service, mid)["text"] == text  # stored as sent, not folded


# -- passwords labelled in other languages -------------------------------------------------

PASSWORD_ABROAD = "Zx9qLm2Rt77"
KEY_ABROAD = "g9DWxK2mPq7RtZ4vLb8NcY3s"
# (language, text, the secret in it): a password or key named in the language of the team.
OTHER_LANGUAGES = [
    ("French", "mot de passe: Zx9!qLm2#Rt", "Zx9!qLm2#Rt"),
    ("French", f"Le mot de passe du wifi est {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("French", f"jeton : {KEY_ABROAD}", KEY_ABROAD),
    ("French", f"mot de passe : « {PASSWORD_ABROAD} »", PASSWORD_ABROAD),
    ("German", f"Passwort ist {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("German", f"Das Kennwort lautet „{PASSWORD_ABROAD}“", PASSWORD_ABROAD),
    ("German", f"Datenbankpasswort: {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("German", f"Das Passwort für den Server ist jetzt {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("German", f"Der API-Schlüssel ist {KEY_ABROAD}", KEY_ABROAD),
    ("Spanish", f"contraseña: {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Spanish", f"La contraseña del wifi es {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Spanish", f"la clave secreta es {KEY_ABROAD}", KEY_ABROAD),
    ("Spanish", f'{{"usuario": "ana", "contraseña": "{PASSWORD_ABROAD}"}}', PASSWORD_ABROAD),
    ("Portuguese", f"A senha é {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Portuguese", f"palavra-passe: {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Italian", f"La password è {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Dutch", f"Het wachtwoord is {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Polish", f"Hasło to {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Polish", f"haslo do wifi: {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Swedish", f"Lösenordet är {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Norwegian", f"Passordet er {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Danish", f"Adgangskoden er {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Russian", f"Пароль: {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Russian", f"пароль от почты — {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Russian", f"ПАРОЛЬ = {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Russian", f"Токен: {KEY_ABROAD}", KEY_ABROAD),
    ("Ukrainian", f"Пароль від сервера: {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Turkish", f"Şifre: {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Turkish", f"wifi şifresi = {PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Japanese", f"パスワードは {PASSWORD_ABROAD} です", PASSWORD_ABROAD),
    ("Japanese", f"パスワード：{PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Japanese", f"APIキー：{KEY_ABROAD}", KEY_ABROAD),
    ("Chinese", f"密码是{PASSWORD_ABROAD}", PASSWORD_ABROAD),
    ("Chinese", f"密碼：「{PASSWORD_ABROAD}」", PASSWORD_ABROAD),
    ("Chinese", f"API密钥是{KEY_ABROAD}", KEY_ABROAD),
    ("Korean", f"비밀번호는 {PASSWORD_ABROAD}입니다", PASSWORD_ABROAD),
    ("Korean", f"토큰: {KEY_ABROAD}", KEY_ABROAD),
]


@pytest.mark.parametrize(
    ("text", "secret"),
    [(text, secret) for _, text, secret in OTHER_LANGUAGES],
    ids=[f"{language}-{i}" for i, (language, _, _) in enumerate(OTHER_LANGUAGES)],
)
def test_a_password_labelled_in_another_language_is_refused(
    service: Service, text: str, secret: str
) -> None:
    assert_refused_without_echo(service, secret, lambda: fact(service, text=text), field="text")
    assert_refused_without_echo(
        service, secret, lambda: fact(service, title=text, text="Server notes"), field="title"
    )


def test_every_language_of_the_table_has_a_refused_case() -> None:
    assert {language.name for language in LANGUAGES} <= {name for name, _, _ in OTHER_LANGUAGES}


# Prose about passwords and keys, with no value in it: what a team writes every day.
OTHER_LANGUAGES_CLEAN = [
    "le mot de passe doit être changé",
    "das Passwort wurde zurückgesetzt",
    "la contraseña se cambia cada mes",
    "Le mot de passe est expiré, demande un nouveau lien.",
    "Mot de passe : 12 caractères minimum, à changer tous les 90 jours.",
    "Le mot de passe du wifi est dans le coffre (Bitwarden).",
    "Das Passwort ist mindestens 12 Zeichen lang. Das Passwort ist falsch!",
    "Passwort: siehe Tresor. Das Kennwort lautet wie im Handbuch beschrieben.",
    "Der API-Schlüssel ist im Vault unter kv/prod/api; das Passwort ist seit 2024-03-01 gültig.",
    "La contraseña es obligatoria y debe tener 12 caracteres.",
    "A senha é pessoal e não deve ser compartilhada; a senha do wifi é a mesma de 2023.",
    "La password è scaduta: chiedi il reset all'IT.",
    "Het wachtwoord is verlopen en moet worden gewijzigd.",
    "Hasło jest zbyt krótkie, użyj co najmniej 12 znaków.",
    "Lösenordet är för kort. Passordet er lagret i hvelvet. Adgangskoden er udløbet.",
    "Пароль должен быть не короче 12 символов. Пароль — в хранилище kv/prod/db.",
    "Пароль: см. вики. Токен оновлюється щотижня.",
    "Şifre en az 12 karakter olmalı. Şifre: kasada.",
    "パスワードは定期的に変更してください。パスワードは12文字以上。",
    "密码是否正确需要验证。密码已经重置。密码：请联系管理员",
    "비밀번호는 정기적으로 변경해야 합니다. 비밀번호는 12자 이상이어야 합니다.",
    "Passwort: ${DB_PASSWORD}; mot de passe: <à remplir>; contraseña: changeme; Hasło: ****",
]


@pytest.mark.parametrize("text", OTHER_LANGUAGES_CLEAN)
def test_prose_about_passwords_in_other_languages_still_passes(service: Service, text: str) -> None:
    assert find_secrets(text) == []
    mid = fact(service, text=text)
    assert current(service, mid)["text"] == text


def test_a_password_labelled_in_another_language_is_redacted_alone() -> None:
    """The span is the value: not the word before it, not the particle or quote after it."""
    assert redact(f"パスワードは「{PASSWORD_ABROAD}」です") == (
        "パスワードは「[REDACTED:password-in-prose]」です",
        ["password-in-prose"],
    )
    assert redact(f"비밀번호는 {PASSWORD_ABROAD}입니다") == (
        "비밀번호는 [REDACTED:password-in-prose]입니다",
        ["password-in-prose"],
    )
    assert redact(f"Le mot de passe est {PASSWORD_ABROAD}.") == (
        "Le mot de passe est [REDACTED:password-in-prose].",
        ["password-in-prose"],
    )


# Found by an adversarial pass: a key disguised by one character the folding did not know
# (Latin script g, a Cherokee letter, an accent combined onto a letter), and passwords
# stated in prose that hold only digits or only letters.
DISGUISED_KEYS = [
    "token \u0261hp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",  # Latin small script g
    "AKIAIO\u13daFODNN7EXAMPLQ",  # Cherokee letter DU, drawn as an S
    "AKIA\u13a0BCDEFGHIJKLMNOP",  # Cherokee letter A, drawn as a D
    "gh\u0301p_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",  # an accent combined onto the h
    "ghp_aB3dE5fG7hI9jK1lM3n\u0323O5pQ7rS9tU1vW3xY5",  # a dot below, inside the body
]


@pytest.mark.parametrize("text", DISGUISED_KEYS)
def test_a_key_disguised_by_one_character_is_refused(text: str) -> None:
    assert find_secrets(text) != []


PROSE_PASSWORDS = [
    "the wifi password is 8473625190",
    "The router password is 84736251.",
    "our shared password is correcthorsebatterystaple",
]


@pytest.mark.parametrize("text", PROSE_PASSWORDS)
def test_a_password_of_digits_alone_or_letters_alone_is_refused_in_prose(text: str) -> None:
    assert find_secrets(text) != []


PROSE_ABOUT_PASSWORDS = [
    "The password is wrong!",
    "The password is expired? Reset it from the console.",
    "the password is 12 characters long",
    "the password is documented in the team vault",
    "the password is incorrect",
]


@pytest.mark.parametrize("text", PROSE_ABOUT_PASSWORDS)
def test_a_sentence_about_a_password_is_not_a_password(text: str) -> None:
    assert find_secrets(text) == []
