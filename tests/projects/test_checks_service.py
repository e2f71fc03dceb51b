"""`check DIR` and project binding through the service on both stores, the `check` MCP tool,
and `palimpsest check` as a CI gate (its exit code) in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from palimpsest.domain.errors import PalimpsestError
from palimpsest.domain.projects import PROJECT_FILE, Places, bind_project, find_project
from palimpsest.mcp import build_server
from palimpsest.service import Service
from palimpsest.store import EventFilter, open_store

from ..agents.test_mcp_e2e import STARTUP_SECONDS, http_server
from ..mcp_helpers import call, refuse

MIGRATIONS = {"kind": "requires", "path": "migrations", "literals": ["BEGIN", "COMMIT"]}
NO_ENV = {"kind": "path_exists", "path": ".env.example"}
POOL = {"kind": "contains", "path": "config.toml", "literal": "pool = 20"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "migrations").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "config.toml").write_text("pool = 20\n")
    (root / "migrations" / "001.sql").write_text("BEGIN;\nCREATE TABLE a();\nCOMMIT;\n")
    bind_project(root, "shop")
    return root


@pytest.fixture
def local(service: Service, project: Path) -> Service:
    """The service as the CLI and a stdio server run it: working in the project."""
    service.places = Places(working_dir=project / "src", allowed=None)
    return service


def rule(service: Service, text: str, check: dict[str, Any], **fields: Any) -> str:
    fields = {"notebook": "shop", "severity": "costly", "falsifier": "a counterexample"} | fields
    return str(service.remember(kind="rule", text=text, check=check, **fields)["id"])


def events(service: Service) -> int:
    with service.store.read(service.workspace) as tx:
        return len(tx.events(EventFilter(limit=1_000_000)))


def test_check_lists_what_holds_and_each_file_and_literal_that_fails(
    local: Service, project: Path
) -> None:
    migrations = rule(local, "Every migration runs in a transaction", MIGRATIONS)
    example = rule(local, "Ship a .env.example", NO_ENV, severity="house_style")
    pool = local.remember(notebook="shop", kind="fact", text="The pool is 20", check=POOL)["id"]
    (project / "migrations" / "002.sql").write_text("BEGIN;\nALTER TABLE a;\n")

    answer = local.check()

    assert answer["dir"] == str(project.resolve()) and answer["notebook"] == "shop"
    assert answer["checked"] == 3
    assert [(h["id"], h["check"]) for h in answer["holds"]] == [(pool, "contains")]
    fails = {(f["id"], f["file"], f.get("literal"), f["reason"]) for f in answer["fails"]}
    assert fails == {
        (migrations, "migrations/002.sql", "COMMIT", "lacks"),
        (example, ".env.example", None, "does not exist"),
    }
    assert answer["gating"] == [migrations]  # house_style fails too, but does not gate


def test_which_checks_apply_the_notebooks_and_the_workspace_wide_rules(local: Service) -> None:
    everywhere = rule(local, "No project keeps a .env", {"kind": "absent", "path": "config.toml",
                      "literal": "SECRET"}, notebook="house", scope="workspace")  # fmt: skip
    rule(local, "Another project's rule", NO_ENV, notebook="other")
    rule(local, "A guard's rule", {"kind": "forbidden", "literals": ["git push --force"]})
    retired = rule(local, "A retired rule", NO_ENV)
    local.revise(id=retired, status="retracted", note="never true", because="wrong")

    answer = local.check()

    assert [h["id"] for h in answer["holds"]] == [everywhere]
    assert answer["fails"] == [] and answer["gating"] == []


def test_check_finds_the_project_from_below_and_refuses_without_one(
    local: Service, project: Path, tmp_path: Path
) -> None:
    rule(local, "Every migration runs in a transaction", MIGRATIONS)
    assert local.check(dir=str(project / "migrations"))["checked"] == 1
    assert local.check(dir="../migrations")["checked"] == 1  # relative to the working dir
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with pytest.raises(PalimpsestError) as unbound:
        local.check(dir=str(elsewhere))
    assert unbound.value.error_class == "not_found" and "project bind" in unbound.value.message
    bind_project(elsewhere, "no such notebook")
    with pytest.raises(PalimpsestError) as missing:
        local.check(dir=str(elsewhere))
    assert missing.value.error_class == "not_found"


def test_an_http_server_reads_only_the_directories_its_owner_configured(
    service: Service, project: Path, tmp_path: Path
) -> None:
    rule(service, "Every migration runs in a transaction", MIGRATIONS)
    with pytest.raises(PalimpsestError) as nothing_configured:
        service.check(dir=str(project))  # a program's service reads no directory by default
    assert nothing_configured.value.error_class == "forbidden"

    service.places = Places(working_dir=None, allowed=(project,))
    assert service.check(dir=str(project / "src"))["checked"] == 1
    for given, error_class in ((None, "validation"), ("src", "validation"),
                               (str(tmp_path), "forbidden"), ("/", "forbidden")):  # fmt: skip
        with pytest.raises(PalimpsestError) as refused:
            service.check(dir=given)
        assert refused.value.error_class == error_class, given

    # A binding above the configured directory would read outside it: refused too.
    service.places = Places(working_dir=None, allowed=(project / "src",))
    with pytest.raises(PalimpsestError) as above:
        service.check(dir=str(project / "src"))
    assert above.value.error_class == "forbidden"


def test_bind_refuses_a_notebook_that_does_not_exist_unless_asked_to_create_it(
    service: Service, tmp_path: Path
) -> None:
    service.places = Places(working_dir=tmp_path, allowed=None)
    before = events(service)
    with pytest.raises(PalimpsestError) as typo:
        service.bind_project(dir=".", notebook="shpo")
    assert typo.value.error_class == "not_found"
    assert not (tmp_path / PROJECT_FILE).exists() and events(service) == before

    made = service.bind_project(dir=".", notebook="shop", create=True)
    assert made["created"] and made["notebook_exists"] and made["dir"] == str(tmp_path.resolve())
    assert find_project(tmp_path) == find_project(tmp_path / ".")
    assert service.notebooks()["notebooks"][0]["name"] == "shop"
    again = service.bind_project(dir=str(tmp_path), notebook=made["notebook_id"])  # by id
    assert not again["created"] and again["notebook"] == "shop"  # the file names it
    assert service.project()["notebook_id"] == made["notebook_id"]


@pytest.mark.anyio
async def test_the_check_tool_answers_as_the_service_does(local: Service, project: Path) -> None:
    migrations = rule(local, "Every migration runs in a transaction", MIGRATIONS)
    (project / "migrations" / "002.sql").write_text("ALTER TABLE a;\n")
    server = build_server(local)
    try:
        async with Client(server) as client:
            answer = await call(client, "check")
            assert answer["gating"] == [migrations]
            assert {f["literal"] for f in answer["fails"]} == {"BEGIN", "COMMIT"}
            assert (await call(client, "check", dir=str(project)))["checked"] == 1
            local.places = Places(working_dir=None, allowed=())
            refusal = await refuse(client, "check", dir=str(project))
            assert refusal["error_class"] == "forbidden"
    finally:
        server.close()


def test_the_cli_gates_ci_on_costly_and_irreversible_rules(
    tmp_path: Path, project: Path, env: dict[str, str]
) -> None:
    db = tmp_path / "ci.db"

    def palimpsest(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "palimpsest", "--db", str(db), *args],
            cwd=project / "src", env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip

    added = palimpsest("remember", "-n", "shop", "-k", "rule", "Migrations are transactions",
                       "--severity", "irreversible", "--falsifier", "one that cannot be",
                       "--check", json.dumps(MIGRATIONS))  # fmt: skip
    assert added.returncode == 0, added.stderr
    (project / "migrations" / "002.sql").write_text("ALTER TABLE a;\n")
    failing = palimpsest("check", "--json")
    assert failing.returncode == 1, failing.stderr
    assert json.loads(failing.stdout)["fails"][0]["file"] == "migrations/002.sql"
    doctor = palimpsest("doctor")
    assert "Rules whose checks fail in the project: fix the files: 1" in doctor.stdout
    (project / "migrations" / "002.sql").write_text("BEGIN; ALTER TABLE a; COMMIT;\n")
    passing = palimpsest("check", str(project))
    assert passing.returncode == 0 and "1 hold, 0 fail" in passing.stdout
    shown = palimpsest("project", "show", "--json")
    assert json.loads(shown.stdout)["dir"] == str(project.resolve()), shown.stderr


@pytest.mark.anyio
async def test_over_http_check_guard_and_orient_read_only_the_configured_directories(
    tmp_path: Path, project: Path, env: dict[str, str]
) -> None:
    db = tmp_path / "http.db"
    service = Service(open_store(str(db)))
    migrations = rule(service, "Every migration runs in a transaction", MIGRATIONS)
    force = rule(service, "Never force-push", {"kind": "forbidden", "literals": ["git push -f"]})
    service.close()
    (project / "migrations" / "002.sql").write_text("ALTER TABLE a;\n")
    configured = env | {"PALIMPSEST_HTTP_CHECK_DIRS": str(project)}
    with http_server(db, configured) as (url, _):
        async with Client(url, read_timeout_seconds=STARTUP_SECONDS) as client:
            answer = await call(client, "check", dir=str(project / "migrations"))
            assert answer["gating"] == [migrations]
            assert (await refuse(client, "check"))["error_class"] == "validation"
            outside = await refuse(client, "check", dir=str(tmp_path))
            assert outside["error_class"] == "forbidden"
            denied = await call(client, "guard", command="git push --force", dir=str(project))
            assert [r["id"] for r in denied["refused_by"]] == [force]
            brief = await call(client, "orient", dir=str(project / "src"))
            assert brief["notebook"] == "shop"
            for tool, arguments in (("guard", {"command": "ls"}), ("orient", {})):
                outside = await refuse(client, tool, dir=str(tmp_path), **arguments)
                assert outside["error_class"] == "forbidden", tool
