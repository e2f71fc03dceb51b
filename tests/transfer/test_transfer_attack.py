"""Export and import under attack: hand-edited files, hidden secrets, odd paths.

Each test is an attack that once broke a promise of docs/export.md, other-servers.md or
markdown-export.md: a file changed by hand is refused with a structured error (or its
memory reported), never a crash or a half-written store; a secret in any field is refused
by line and field and never echoed nor stored; a markdown export never writes outside its
folder.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from palimpsest.domain.errors import PalimpsestError
from palimpsest.formats import native
from palimpsest.service import Service
from palimpsest.store import EventFilter, open_store

from ..memory.test_copy import picture
from .test_transfer import canonical, everything, export, fresh_stores

SECRET = "AKIA" + "Q3EGRJ7PLXK2M4NB"  # an AWS access key id's shape (made up)

Records = list[dict[str, Any]]


def source(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A file exported from a workspace with every kind of record, and its memories' ids
    (a SQLite source of its own: a test restores its ids into its own target)."""
    store = open_store(str(tmp_path / "source.db"))
    try:
        exported = Service(store)
        ids = everything(exported)
        file = tmp_path / "w.jsonl"
        export(exported, file)
    finally:
        store.close()
    return file, ids


@pytest.fixture(params=["empty", "holding"])
def into(request: pytest.FixtureRequest, service: Service) -> str:
    """Each attack twice: on a workspace holding nothing, and on one holding a memory of
    its own (the first written before the test's file is made: the file has a store of
    its own)."""
    if request.param == "holding":
        service.remember(notebook="mine", kind="fact", text="Already here")
    return str(request.param)


def edited(file: Path, change: Callable[[Records], Records | None], name: str = "bad") -> Path:
    """The file with its records changed by hand, and its header's counts made to agree
    (so the change is not refused as a file cut short)."""
    records = [json.loads(text) for text in file.read_text(encoding="utf-8").splitlines()]
    changed = change(records)
    records = records if changed is None else changed
    head, rest = records[0], records[1:]
    head["counts"] = dict(Counter(native.PLURAL[r["record"]] for r in rest))
    out = file.with_name(f"{name}.jsonl")
    lines = (json.dumps(r, ensure_ascii=False) for r in [head, *rest])
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def current(records: Records, memory_id: str) -> dict[str, Any]:
    [found] = [r for r in records if r["record"] == "version"
               and r["memory_id"] == memory_id and r["to_seq"] is None]  # fmt: skip
    return found


def state(service: Service) -> tuple[int, list[tuple[str, int]]]:
    """What a user sees of a workspace: its events, and each memory's id and version."""
    with service.store.read(service.workspace) as tx:
        events = len(tx.events(EventFilter(limit=100_000)))
        memories = sorted((m.id, m.version) for m in tx.memories_at(None))
    return events, memories


def attempt(service: Service, file: Path) -> dict[str, Any] | PalimpsestError:
    """The import's answer or its refusal; anything else (a crash) fails the test."""
    try:
        return service.import_file(file)
    except PalimpsestError as exc:
        assert exc.error_class != "internal", exc.message
        return exc


# -- a file changed by hand -----------------------------------------------------------------


def _memory_twice(ids: dict[str, str]) -> Callable[[Records], Records]:
    def change(records: Records) -> Records:
        line = next(r for r in records if r["record"] == "memory" and r["id"] == ids["c"])
        return [*records, dict(line)]

    return change


def _version_twice(ids: dict[str, str]) -> Callable[[Records], Records]:
    return lambda records: [*records, dict(current(records, ids["c"]))]


def _two_current(ids: dict[str, str]) -> Callable[[Records], Records]:
    def change(records: Records) -> Records:
        other = {**current(records, ids["c"]), "version": 2, "text": "Refunds take a year"}
        return [*records, other]

    return change


def _huge_version(ids: dict[str, str]) -> Callable[[Records], None]:
    return lambda records: current(records, ids["c"]).update(version=10**30)


def _forgotten_with_content(ids: dict[str, str]) -> Callable[[Records], None]:
    def change(records: Records) -> None:
        template = current(records, ids["c"])
        for record in records:
            if record["record"] == "version" and record["memory_id"] == ids["gone"]:
                kept = {k: template[k] for k in native.RECORDS["version"][1]
                        if k not in ("memory_id", "version", "from_seq", "to_seq")}  # fmt: skip
                record.update(kept, scrubbed=0, text="Ana's phone is 555 0101")

    return change


def _same_notebook_name(ids: dict[str, str]) -> Callable[[Records], None]:
    def change(records: Records) -> None:
        notebooks = [r for r in records if r["record"] == "notebook"]
        notebooks[1]["name"] = notebooks[0]["name"]

    return change


def _link_twice(ids: dict[str, str]) -> Callable[[Records], Records]:
    def change(records: Records) -> Records:
        link = next(r for r in records if r["record"] == "link")
        return [*records, {**link, "id": "ln_" + "7" * 20}]

    return change


def _user_twice(ids: dict[str, str]) -> Callable[[Records], Records]:
    return lambda records: [*records, next(dict(r) for r in records if r["record"] == "user")]


def _notebook_also_forgotten(ids: dict[str, str]) -> Callable[[Records], Records]:
    def change(records: Records) -> Records:
        notebook = _first("notebook", records)
        tombstone = {"record": "notebook_tombstone", "id": notebook["id"],
                     "forgotten_at": notebook["created_at"], "forgotten_by": "user:local",
                     "forget_reason": "not needed"}  # fmt: skip
        at = records.index(notebook) + 1
        return [*records[:at], tombstone, *records[at:]]

    return change


HAND_EDITS = {
    "a notebook alive and forgotten": _notebook_also_forgotten,
    "a memory twice": _memory_twice,
    "a version twice": _version_twice,
    "two current versions": _two_current,
    "a version number too large for a store": _huge_version,
    "a forgotten memory with content in its versions": _forgotten_with_content,
    "two notebooks of one name": _same_notebook_name,
    "a link twice under two ids": _link_twice,
    "a user twice": _user_twice,
}


@pytest.mark.parametrize("edit", HAND_EDITS)
def test_a_hand_edited_file_is_refused_or_reported_never_a_crash(
    service: Service, tmp_path: Path, edit: str, into: str
) -> None:
    file, ids = source(tmp_path)
    bad = edited(file, HAND_EDITS[edit](ids))
    answer = attempt(service, bad)
    # Whatever lands is whole: a memory's versions run 1..n, the last current, and no
    # text of a memory forgotten in the file comes back.
    with service.store.read(service.workspace) as tx:
        for memory in tx.memories_at(None):
            versions = [v.version for v in tx.memory_versions(memory.id)]
            assert versions == list(range(1, memory.version + 1)), (memory.id, versions)
        assert tx.get_memory(ids["gone"]) is None
        assert not [v for v in tx.memory_versions(ids["gone"]) if v.memory is not None]
    if isinstance(answer, dict) and answer["mode"] == "restore":
        # What was refused is named; the untouched memories came in.
        assert answer["refused"] and all(r["where"] for r in answer["refused"])
        assert service.inspect(id=ids["a"])["memory"]["text"] == "We use Stripe and refunds"


def _memory_line_missing(ids: dict[str, str]) -> Callable[[Records], Records]:
    return lambda records: [r for r in records
                            if not (r["record"] == "memory" and r["id"] == ids["c"])]  # fmt: skip


def _memory_line_after_its_versions(ids: dict[str, str]) -> Callable[[Records], Records]:
    def change(records: Records) -> Records:
        line = next(r for r in records if r["record"] == "memory" and r["id"] == ids["c"])
        return [r for r in records if r is not line] + [line]

    return change


@pytest.mark.parametrize("edit", [_memory_line_missing, _memory_line_after_its_versions])
def test_a_version_whose_memory_the_file_lacks_is_refused_in_both_ways(
    service: Service, tmp_path: Path, edit: Callable[..., Any], into: str
) -> None:
    file, ids = source(tmp_path)
    bad = edited(file, edit(ids))
    answer = service.import_file(bad)
    assert ids["c"] in {r.get("id") for r in answer["refused"]}
    assert service.inspect(id=ids["a"])["memory"]["text"] == "We use Stripe and refunds"
    with service.store.read(service.workspace) as tx:
        assert tx.get_memory(ids["c"]) is None


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"\xff\xfe{}\n", id="a header that is not UTF-8"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000 + b"\n", id="a header nested too deep"),
    ],
)
def test_a_header_that_cannot_be_read_is_refused(
    service: Service, tmp_path: Path, content: bytes
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(content)
    answer = attempt(service, bad)
    assert isinstance(answer, PalimpsestError) and answer.error_class == "validation"
    assert answer.to_dict()["field"] == "file"


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda lines: [lines[0].replace('"notebooks": null', '"notebooks": 5'),
                                    *lines[1:]], id="a header whose notebooks are a number"),
        pytest.param(lambda lines: [*lines[:4], "[" * 100_000 + "]" * 100_000, *lines[4:]],
                     id="a line nested too deep"),
        pytest.param(lambda lines: [*lines[:4], '{"record":"event","data":' + "[" * 5_000
                                    + "]" * 5_000 + "}", *lines[4:]],
                     id="a record nested deep"),
    ],
)  # fmt: skip
def test_a_damaged_line_is_a_structured_refusal_never_a_crash(
    service: Service, tmp_path: Path, damage: Callable[[list[str]], list[str]], into: str
) -> None:
    file, _ = source(tmp_path)
    lines = [json.dumps(json.loads(t)) for t in file.read_text(encoding="utf-8").splitlines()]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(damage(lines)) + "\n", encoding="utf-8")
    before = state(service)
    answer = attempt(service, bad)
    if isinstance(answer, PalimpsestError):  # a restore: nothing, and why
        assert answer.error_class == "validation" and state(service) == before
    else:  # a merge: the line reported, the rest in
        assert answer["mode"] == "merge" and answer["counts"]["imported"] == 7
        assert [r["where"] for r in answer["refused"]] == ["line 5"]


def test_bytes_that_are_not_utf8_inside_the_file_are_refused(
    service: Service, tmp_path: Path
) -> None:
    file, _ = source(tmp_path)
    data = file.read_bytes().split(b"\n")
    data[3] = data[3].replace(b'"record":"memory"', b'"record":"memory","x":"\xff"')
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join(data))
    answer = attempt(service, bad)
    assert isinstance(answer, PalimpsestError) and answer.error_class == "validation"
    with service.store.read(service.workspace) as tx:
        assert tx.is_empty()


# -- a secret in every field a file carries -------------------------------------------------

GITHUB = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # a GitHub token's shape (made up)
PEM = ("-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"[i:] + "Q" * i
    for i in range(6)) + "\n-----END RSA PRIVATE KEY-----")  # fmt: skip
PASSWORD = "hunter2pass"  # in postgres://user:hunter2pass@host/db


def _first(kind: str, records: Records) -> dict[str, Any]:
    return next(r for r in records if r["record"] == kind)


def _event(records: Records) -> dict[str, Any]:
    return [r for r in records if r["record"] == "event" and r["target_type"] == "memory"][2]


def _zero_width(value: str) -> str:
    return "\u200b".join(value)


def _fullwidth(value: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in value)


def _in_version(column: str, value: Any) -> Callable[[Records, dict[str, str]], None]:
    return lambda records, ids: current(records, ids["c"]).update({column: value})


def _split(first: str, second: str, owner: Callable[[Records, dict[str, str]], dict[str, Any]]
           ) -> Callable[[Records, dict[str, str]], None]:  # fmt: skip
    def change(records: Records, ids: dict[str, str]) -> None:
        record = owner(records, ids)
        record[first], record[second] = GITHUB[:20], GITHUB[20:]

    return change


# (how the secret gets in, the part of it that must never show)
HIDDEN: dict[str, tuple[Callable[[Records, dict[str, str]], None], str]] = {
    "text": (_in_version("text", f"The key is {SECRET}"), SECRET),
    "title": (_in_version("title", SECRET), SECRET),
    "why": (_in_version("why", f"because {GITHUB}"), GITHUB),
    "tags": (_in_version("tags", ["ok", SECRET]), SECRET),
    "source": (_in_version("source", f"postgres://user:{PASSWORD}@host/db"), PASSWORD),
    "anchors": (_in_version("anchors", [{"path": f"src/{SECRET}.py", "hash": None}]), SECRET),
    "falsifier": (_in_version("falsifier", f"if {SECRET} fails"), SECRET),
    "status_note": (_in_version("status_note", f"retired: {SECRET}"), SECRET),
    "key": (_in_version("key", SECRET), SECRET),
    "check literal": (
        _in_version("check_json", {"kind": "grep", "path": "a.txt", "literal": SECRET}),
        SECRET,
    ),
    "author": (_in_version("author", f"user:{SECRET}"), SECRET),
    "owner": (_in_version("owner", f"user:{SECRET}"), SECRET),
    "a PEM key in the text": (_in_version("text", PEM), PEM.splitlines()[2]),
    "zero-width characters": (_in_version("text", _zero_width(SECRET)), _zero_width(SECRET)),
    "fullwidth letters": (_in_version("text", _fullwidth(SECRET)), _fullwidth(SECRET)),
    "split across title and text": (
        _split("title", "text", lambda rs, ids: current(rs, ids["c"])),
        GITHUB[20:],
    ),
    "an event's note": (lambda rs, ids: _event(rs).update(note=SECRET), SECRET),
    "an event's data": (lambda rs, ids: _event(rs).update(data={"x": [SECRET]}), SECRET),
    "an event's data key": (lambda rs, ids: _event(rs).update(data={SECRET: 1}), SECRET),
    "an event's actor": (lambda rs, ids: _event(rs).update(actor=f"agent:{SECRET}"), SECRET),
    "split across an event's fields and note": (
        lambda rs, ids: _event(rs).update(fields=[GITHUB[:20]], note=GITHUB[20:]),
        GITHUB[20:],
    ),
    "split across an event's note and a value of its data": (
        lambda rs, ids: _event(rs).update(note=GITHUB[:20], data={"x": GITHUB[20:]}),
        GITHUB[20:],
    ),
    "a dispute's reason": (lambda rs, ids: _first("dispute", rs).update(reason=SECRET), SECRET),
    "a dispute's evidence": (
        lambda rs, ids: _first("dispute", rs).update(evidence=SECRET),
        SECRET,
    ),
    "a ruling": (
        lambda rs, ids: [r for r in rs if r["record"] == "dispute"][-1].update(
            ruling_reason=SECRET
        ),
        SECRET,
    ),
    "split across a dispute's reason and evidence": (
        _split("reason", "evidence", lambda rs, ids: _first("dispute", rs)),
        GITHUB[20:],
    ),
    "a notebook's name": (lambda rs, ids: _first("notebook", rs).update(name=SECRET), SECRET),
    "a notebook's summary": (
        lambda rs, ids: _first("notebook", rs).update(summary=SECRET),
        SECRET,
    ),
    "a notebook's tags": (lambda rs, ids: _first("notebook", rs).update(tags=[SECRET]), SECRET),
    "split across a notebook's name and summary": (
        _split("name", "summary", lambda rs, ids: _first("notebook", rs)),
        GITHUB[20:],
    ),
    "a setting's value": (
        lambda rs, ids: _first("setting", rs).update(value=json.dumps(SECRET)),
        SECRET,
    ),
    "a user's name": (lambda rs, ids: _first("user", rs).update(name=SECRET), SECRET),
    "a forget's reason": (
        lambda rs, ids: next(r for r in rs if r["record"] == "memory" and r["forgotten_at"]).update(
            forget_reason=SECRET
        ),
        SECRET,
    ),
    "a link's actor": (lambda rs, ids: _first("link", rs).update(actor=f"user:{SECRET}"), SECRET),
    "a column's name": (lambda rs, ids: current(rs, ids["c"]).update({SECRET: 1}), SECRET),
    "the header's workspace name": (lambda rs, ids: rs[0]["workspace"].update(name=SECRET), SECRET),
    "the header's export time": (lambda rs, ids: rs[0].update(exported_at=SECRET), SECRET),
}


def leaked(service: Service, secret: str, tmp_path: Path) -> list[str]:
    """Where `secret` is in the store now: the SQLite file and its WAL, and (both stores)
    everything an export of the workspace shows."""
    found = []
    if service.store.url.endswith(".db"):
        for part in Path(service.store.url).parent.glob(Path(service.store.url).name + "*"):
            if secret.encode() in part.read_bytes():
                found.append(part.name)
    out = tmp_path / "after.jsonl"
    export(service, out)
    if secret in out.read_text(encoding="utf-8"):
        found.append("export")
    return found


@pytest.mark.parametrize("hiding", HIDDEN)
def test_a_secret_anywhere_in_the_file_is_refused_by_field_and_never_echoed_nor_stored(
    service: Service, tmp_path: Path, hiding: str, into: str
) -> None:
    file, ids = source(tmp_path)
    change, shown = HIDDEN[hiding]
    bad = edited(file, lambda records: change(records, ids))
    assert shown in bad.read_text(encoding="utf-8")
    answer = attempt(service, bad)
    said = json.dumps(answer if isinstance(answer, dict) else answer.to_dict(), ensure_ascii=False)
    assert shown not in said and SECRET not in said and GITHUB not in said
    if isinstance(answer, dict):
        if answer["mode"] == "restore" or hiding not in NOT_MERGED:
            assert answer["refused"] and all(r["where"].startswith("line ") and r["field"]
                                             for r in answer["refused"])  # fmt: skip
    else:
        assert answer.error_class == "validation" and answer.to_dict()["field"]
    assert leaked(service, shown, tmp_path) == []


# What a merge leaves in the file (events, disputes, users, settings: counted, not merged).
NOT_MERGED = {name for name in HIDDEN if name.startswith(("an event", "a dispute", "a ruling",
              "split across an event", "split across a dispute", "a setting", "a user",
              "a forget", "a link", "a notebook's summary", "a notebook's tags",
              "the header", "split across a notebook"))}  # fmt: skip


@pytest.mark.parametrize("strict", [False, True])
def test_the_cli_names_the_refused_field_and_never_prints_the_secret(
    tmp_path: Path, env: dict[str, str], strict: bool
) -> None:
    file, ids = source(tmp_path)
    bad = edited(file, lambda records: HIDDEN["a column's name"][0](records, ids))
    bad = edited(bad, lambda records: HIDDEN["status_note"][0](records, ids), name="worse")
    target = tmp_path / "target.db"
    command = [sys.executable, "-m", "palimpsest", "--db", str(target), "import", str(bad)]
    done = subprocess.run([*command, *(["--strict"] if strict else []), "--json"], env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert SECRET not in done.stdout + done.stderr
    answer = json.loads(done.stdout or done.stderr)
    if strict:
        assert done.returncode != 0 and answer["error_class"] == "validation"
    else:
        assert done.returncode == 0, done.stderr
        assert {r["id"] for r in answer["refused"]} == {ids["c"]}
    for part in tmp_path.glob("target.db*"):
        assert SECRET.encode() not in part.read_bytes()


# -- other servers' files: names and keys that hold a secret --------------------------------


def _notes_named_by_secrets(folder: Path) -> Path:
    folder.mkdir()
    (folder / f"{SECRET}.md").write_text("A note whose file name is a key\n", encoding="utf-8")
    (folder / GITHUB).mkdir()
    (folder / GITHUB / "inside.md").write_text("A note in a folder named by a token\n")
    (folder / "plain.md").write_text(f"---\ntitle: Plain\n{SECRET}: 1\n---\nA plain note\n")
    return folder


def _mem0_with_secret_names(folder: Path) -> Path:
    folder.mkdir()
    items = [
        {"id": "1", "memory": "The deploy runs at noon", SECRET: "x", "user_id": GITHUB},
        {"id": "2", "memory": "The queue holds 100 jobs", "metadata": {SECRET: 1}},
    ]
    file = folder / f"{SECRET}.json"
    file.write_text(json.dumps({"results": items}), encoding="utf-8")
    return file


def _graph_named_by_a_secret(folder: Path) -> Path:
    folder.mkdir()
    file = folder / f"{SECRET}.jsonl"
    lines = [{"type": "entity", "name": "Billing", "entityType": "service",
              "observations": ["Runs on Fridays"], SECRET: 1}]  # fmt: skip
    file.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return file


@pytest.mark.parametrize(
    ("source_format", "make"),
    [
        ("markdown", _notes_named_by_secrets),
        ("mem0", _mem0_with_secret_names),
        ("mcp-memory", _graph_named_by_a_secret),
    ],
)
def test_a_secret_in_another_servers_names_is_never_echoed_nor_stored(
    service: Service, tmp_path: Path, source_format: str, make: Callable[[Path], Path]
) -> None:
    path = make(tmp_path / "from")
    answer = service.import_file(path, source_format=source_format)
    said = json.dumps(answer, ensure_ascii=False)
    assert SECRET not in said and GITHUB not in said
    assert answer["counts"].get("imported", 0) >= 1  # the rest came in
    assert leaked(service, SECRET, tmp_path) == [] and leaked(service, GITHUB, tmp_path) == []


# -- two imports at once, in two processes --------------------------------------------------


def _many(tmp_path: Path, count: int) -> Path:
    store = open_store(str(tmp_path / "many.db"))
    try:
        many = Service(store)
        items = [{"kind": "fact", "text": f"Service {n} answers on port {9000 + n}"}
                 for n in range(count)]  # fmt: skip
        for start in range(0, count, 250):
            many.remember(items=items[start : start + 250], notebook="ports")
        file = tmp_path / "many.jsonl"
        export(many, file)
    finally:
        store.close()
    return file


def test_two_imports_at_once_in_two_processes_file_each_memory_once(
    service: Service, tmp_path: Path, env: dict[str, str], into: str
) -> None:
    file = _many(tmp_path, 700)
    with service.store.write(service.workspace):
        pass  # the workspace exists, empty, for the command line to name it
    with service.store.read(service.workspace) as tx:
        name = next((w.name for w in tx.workspaces() if w.id == service.workspace),
                    service.workspace)  # fmt: skip
    command = [sys.executable, "-m", "palimpsest", "--db", service.store.url, "--workspace",
               name, "--json", "import", str(file)]  # fmt: skip
    running = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(2)]  # fmt: skip
    outcomes = [(p.wait(timeout=300), *p.communicate()) for p in running]
    for code, out, err in outcomes:
        answer = json.loads(out or err)
        assert code == 0 or answer["error_class"] == "conflict", (out, err)
    with service.store.read(service.workspace) as tx:
        memories = tx.memories_at(None)
        events = tx.events(EventFilter(limit=100_000))
    assert len([m for m in memories if m.text.startswith("Service ")]) == 700
    filed = Counter(e.target_id for e in events if e.op in ("import", "remember"))
    assert set(filed.values()) == {1}  # each memory filed once, by one of the two


# -- restore or merge -----------------------------------------------------------------------


def test_a_workspace_just_created_for_the_file_is_restored_into_with_its_history(
    service: Service, tmp_path: Path
) -> None:
    file, ids = source(tmp_path)
    made = service.create_workspace(name=f"team-{service.workspace[-6:]}")["workspace"]
    team = service.with_workspace(made["id"])
    answer = team.import_file(file)
    assert answer["mode"] == "restore" and "refused" not in answer
    first = team.history(id=ids["a"])["events"][0]
    assert (first["op"], first["actor"]) == ("remember", "user:local")  # not an import
    again = tmp_path / "again.jsonl"
    export(team, again)
    lines = again.read_text(encoding="utf-8").splitlines()
    made_event = [t for t in lines if '"op":"workspace.create"' in t]
    assert len(made_event) == 1  # the team's own making, kept, before the file's history
    assert team.import_file(file)["mode"] == "merge"  # and now it holds the file


def test_a_workspace_holding_a_notebook_alone_is_merged_into(
    service: Service, tmp_path: Path
) -> None:
    file, _ = source(tmp_path)
    service.create_notebook(name="mine")
    assert service.import_file(file)["mode"] == "merge"


def test_a_restore_stopped_before_its_vectors_landed_gets_them_when_run_again(
    service: Service, meaning: Service, tmp_path: Path
) -> None:
    # The restore committed, its embedding never ran (killed, or another model then): the
    # same import run again finds everything unchanged, and embeds what lacks vectors.
    file, _ = source(tmp_path)
    assert service.import_file(file)["mode"] == "restore"
    with meaning.store.read(meaning.workspace) as tx:
        assert tx.stale_vector_count(meaning.vectors.model) > 0
    answer = meaning.import_file(file)
    assert answer["mode"] == "merge" and "imported" not in answer["counts"]
    with meaning.store.read(meaning.workspace) as tx:
        assert tx.stale_vector_count(meaning.vectors.model) == 0
    assert meaning.recall(query="how are payments made")["hits"]


# What a restore must refuse or it lands a workspace that every later read fails on.
BRICKS = {
    "a setting whose value is not JSON": lambda rs, ids: _first("setting", rs).update(
        value="{not json"
    ),
    "a setting whose value is of the wrong type": lambda rs, ids: _first("setting", rs).update(
        value='"thirty"'
    ),
    "a setting of a number written as text": lambda rs, ids: _first("setting", rs).update(
        value='"30"'
    ),
    "a setting no Palimpsest has": lambda rs, ids: _first("setting", rs).update(name="no_such"),
    "a current version in no notebook": lambda rs, ids: current(rs, ids["c"]).update(
        notebook_id=None
    ),
    "a time that is no day of the calendar": lambda rs, ids: current(rs, ids["c"]).update(
        recorded_at="2026-13-45T99:99:99.000000Z"
    ),
    "an event at a time that is no day": lambda rs, ids: _event(rs).update(
        at="2026-02-30T10:00:00.000000Z"
    ),
}


@pytest.mark.parametrize("brick", BRICKS)
def test_a_restore_refuses_what_would_make_every_later_read_fail(
    service: Service, tmp_path: Path, brick: str
) -> None:
    file, ids = source(tmp_path)
    bad = edited(file, lambda records: BRICKS[brick](records, ids))
    answer = attempt(service, bad)
    if isinstance(answer, dict):
        assert answer["refused"] and all(r["field"] for r in answer["refused"])
    # Whatever landed, the workspace reads: no read fails on what the file held.
    service.inspect(id=ids["moved"])
    service.recall(query="refunds")
    service.orient()
    service.doctor()
    service.settings()
    service.history(id=ids["moved"])


# What the write gate refuses from remember, link and dispute, a file cannot bring either.
OUT_OF_BOUNDS = {
    "a tag longer than a tag may be": lambda rs, ids: current(rs, ids["c"]).update(
        tags=["t" * 100]
    ),
    "more tags than a memory may hold": lambda rs, ids: current(rs, ids["c"]).update(
        tags=[f"t{n}" for n in range(100)]
    ),
    "a rule without its falsifier": lambda rs, ids: current(rs, ids["c"]).update(kind="rule"),
}
NOT_OURS = {
    "a link of a type we do not have": lambda rs, ids: _first("link", rs).update(type="owns"),
    "a dispute in a state we do not have": lambda rs, ids: _first("dispute", rs).update(
        status="hacked"
    ),
}


@pytest.mark.parametrize("bound", [*OUT_OF_BOUNDS, *NOT_OURS])
def test_what_the_gate_refuses_elsewhere_a_file_cannot_bring(
    service: Service, tmp_path: Path, bound: str, into: str
) -> None:
    file, ids = source(tmp_path)
    change = {**OUT_OF_BOUNDS, **NOT_OURS}[bound]
    bad = edited(file, lambda records: change(records, ids))
    answer = service.import_file(bad)
    if bound in OUT_OF_BOUNDS:
        assert ids["c"] in {r.get("id") for r in answer["refused"]}
        with service.store.read(service.workspace) as tx:
            assert tx.get_memory(ids["c"]) is None
    elif answer["mode"] == "restore":
        assert [r["field"] for r in answer["refused"]] in (["type"], ["status"])
    elif bound == "a link of a type we do not have":  # a merge: reported, not made
        assert [g["where"] for g in answer["links_left_out"]] == [
            next(f"line {n}" for n, t in enumerate(bad.read_text().splitlines(), 1)
                 if '"owns"' in t)
        ]  # fmt: skip
    with service.store.read(service.workspace) as tx:
        assert not [link for m in tx.memories_at(None) for link in tx.links(m.id)
                    if link.type == "owns"]  # fmt: skip
        assert {d.status for d in tx.disputes()} <= {"open", "ruled", "withdrawn"}


# -- the round trip, with what `everything` lacks ---------------------------------------------


def test_a_round_trip_keeps_marks_an_undone_ruling_a_move_back_and_a_notebook_forgotten(
    service: Service, tmp_path: Path
) -> None:
    ids = everything(service)
    service.revise(id=ids["c"], feedback="helped", note="saved an hour")
    service.revise(id=ids["a"], feedback="noise")
    with service.store.read(service.workspace) as tx:
        ruled = next(d.id for d in tx.disputes() if d.status == "ruled")
    service.dispute(action="undo", dispute=ruled, reason="ruled too fast")
    service.revise(id=ids["moved"], move_to="web")
    service.create_notebook(name="scratch")
    service.forget(notebook="scratch", because="not needed")
    first = tmp_path / "first.jsonl"
    export(service, first)
    with fresh_stores(tmp_path) as stores:
        for number, store in enumerate(stores):
            restored = Service(store, workspace=service.workspace)
            assert "refused" not in restored.import_file(first)
            again = tmp_path / f"again-{number}.jsonl"
            export(restored, again)
            assert canonical(again) == canonical(first)
            assert picture(store, service.workspace) == picture(service.store, service.workspace)
            twice = restored.import_file(first)
            assert twice["mode"] == "merge" and "imported" not in twice["counts"]


def test_a_line_larger_than_any_record_is_refused_without_being_held(
    service: Service, tmp_path: Path, into: str
) -> None:
    file, _ = source(tmp_path)
    lines = file.read_text(encoding="utf-8").splitlines()
    huge = json.loads(lines[3])
    huge["forget_reason"] = "x" * 40_000_000  # 40 MB on one line
    bad = tmp_path / "huge.jsonl"
    bad.write_text("\n".join([*lines[:3], json.dumps(huge), *lines[4:]]) + "\n")
    before = state(service)
    answer = attempt(service, bad)
    assert isinstance(answer, PalimpsestError) and answer.error_class == "validation"
    assert answer.to_dict()["field"] == "file" and state(service) == before


LONG = {
    "a forget's reason": lambda rs, ids: next(
        r for r in rs if r["record"] == "memory" and r["forgotten_at"]
    ).update(forget_reason="x" * 5_000),
    "a dispute's reason": lambda rs, ids: _first("dispute", rs).update(reason="x" * 5_000),
    "a notebook's name": lambda rs, ids: _first("notebook", rs).update(name="x" * 500),
    "a user's name": lambda rs, ids: _first("user", rs).update(name="x" * 500),
    "a notebook's tag": lambda rs, ids: _first("notebook", rs).update(tags=["x" * 500]),
}


@pytest.mark.parametrize("field", LONG)
def test_a_restore_holds_each_field_to_the_gates_length(
    service: Service, tmp_path: Path, field: str
) -> None:
    file, ids = source(tmp_path)
    bad = edited(file, lambda records: LONG[field](records, ids))
    answer = service.import_file(bad)
    assert answer["mode"] == "restore" and answer["refused"]
    out = tmp_path / "after.jsonl"
    export(service, out)
    assert "x" * 500 not in out.read_text(encoding="utf-8")


def test_a_file_rewritten_with_spaces_merges_its_links_too(
    service: Service, tmp_path: Path
) -> None:
    # A hand edit through a tool that writes `"record": "link"` (Python's json.dumps) kept
    # every memory and silently lost every link.
    file, ids = source(tmp_path)
    spaced = edited(file, lambda records: None)
    assert '"record": "link"' in spaced.read_text(encoding="utf-8")
    service.remember(notebook="mine", kind="fact", text="Already here")
    answer = service.import_file(spaced)
    assert answer["counts"]["links"] == 2 and "links_left_out" not in answer
    with service.store.read(service.workspace) as tx:
        assert [link.target_id for link in tx.links(ids["a"]) if link.type == "depends_on"] == [
            ids["b"]
        ]
