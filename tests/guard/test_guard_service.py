"""guard as a service: which rules apply where, the answer a caller gets, the commands kept
for trials, and the trial a new forbidden check must pass (both stores)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from palimpsest.domain.errors import Forbidden, NotFound, ValidationError
from palimpsest.domain.projects import Places, bind_project
from palimpsest.mcp import build_server
from palimpsest.service import Service

from ..agent_runs import ran
from ..mcp_helpers import call

FORCE = {"kind": "forbidden", "literals": ["git push --force"]}


@pytest.fixture
def service(store: Any, workspace: str) -> Service:
    """A local process's service (the CLI's, a stdio server's): it may read any directory."""
    local = Service(store, workspace=workspace)
    local.places = Places(working_dir=None, allowed=None)
    return local


def rule(service: Service, notebook: str = "web", **fields: Any) -> str:
    body: dict[str, Any] = {
        "kind": "rule", "text": "Never force-push: others build on main.",
        "falsifier": "a force-push that lost nobody's work", "severity": "irreversible",
        "check": FORCE, "bindings": {"moments": ["before_command"]}, "title": "no force-push",
    }  # fmt: skip
    body.update(fields)
    return str(service.remember(notebook=notebook, **body)["id"])


def test_a_rule_of_the_project_refuses_and_is_named(service: Service, tmp_path: Path) -> None:
    rule_id = rule(service)
    bind_project(tmp_path, "web")
    (tmp_path / "src").mkdir()
    answer = service.guard(command="git push -f origin main", dir=str(tmp_path / "src"))
    assert answer["decision"] == "deny"
    assert answer["notebook"] == "web"
    assert answer["refused_by"][0]["id"] == rule_id
    assert answer["refused_by"][0]["title"] == "no force-push"
    assert answer["refused_by"][0]["literal"] == "git push --force"
    assert service.guard(command="git push", dir=str(tmp_path))["decision"] == "allow"


def test_rules_apply_in_their_notebook_or_everywhere_when_workspace_wide(
    service: Service, tmp_path: Path
) -> None:
    rule(service, notebook="other")
    service.create_notebook(name="web")
    bind_project(tmp_path, "web")
    assert service.guard(command="git push --force", dir=str(tmp_path))["decision"] == "allow"
    assert service.guard(command="git push --force")["decision"] == "allow"
    wide = rule(service, notebook="other", check={"kind": "forbidden", "literals": ["rm -rf /"]},
                scope="workspace", text="Never wipe the disk.")  # fmt: skip
    for place in ({"dir": str(tmp_path)}, {}, {"notebook": "other"}):
        answer = service.guard(command="sudo rm -fr /", **place)
        assert answer["decision"] == "deny"
        assert [r["id"] for r in answer["refused_by"]] == [wide]


def test_over_http_dir_is_read_only_where_the_owner_allows(
    service: Service, tmp_path: Path
) -> None:
    rule(service)
    allowed, elsewhere = tmp_path / "allowed", tmp_path / "elsewhere"
    for project in (allowed, elsewhere):
        project.mkdir()
        bind_project(project, "web")
    service.places = Places(working_dir=None, allowed=(allowed,))  # `http.check_dirs`
    assert service.guard(command="git push -f", dir=str(allowed))["decision"] == "deny"
    for outside in (str(elsewhere), str(allowed / ".." / "elsewhere")):
        with pytest.raises(Forbidden) as refused:
            service.guard(command="git push -f", dir=outside)
        assert refused.value.field == "dir"
    with pytest.raises(ValidationError):  # relative to what? This server has no working dir.
        service.guard(command="git push -f", dir="allowed")
    service.places = Places()  # nothing configured: no directory is read
    with pytest.raises(Forbidden):
        service.guard(command="git push -f", dir=str(allowed))
    assert service.seen()["commands"] == []  # judging keeps nothing, refused or not


def test_without_dir_the_working_directory_s_project_applies(
    service: Service, tmp_path: Path
) -> None:
    rule(service)
    bind_project(tmp_path, "web")
    service.places = Places(working_dir=tmp_path, allowed=None)  # a stdio server's, the CLI's
    assert service.guard(command="git push -f")["decision"] == "deny"
    service.places = Places(working_dir=None, allowed=(tmp_path,))  # HTTP: none of its own
    assert service.guard(command="git push -f")["decision"] == "allow"


def test_severity_kind_bindings_and_status_decide(service: Service) -> None:
    style = rule(service, severity="house_style", check={"kind": "forbidden",
                 "literals": ["git reset --hard"]}, text="Prefer a new commit.")  # fmt: skip
    rule(service, kind="orientation", check={"kind": "forbidden", "literals": ["npm publish"]},
         text="Publishing is done by CI.")  # fmt: skip
    release = {"kind": "forbidden", "literals": ["make release"]}
    rule(service, bindings={"moments": ["before_commit"]}, check=release, text="Not at commit.")
    retired = rule(service, check={"kind": "forbidden", "literals": ["docker system prune"]},
                   text="Keep the cache.")  # fmt: skip
    service.revise(id=retired, status="retracted", because="the cache is gone", note="gone")
    assert service.guard(command="git reset --hard", notebook="web")["decision"] == "ask"
    assert service.guard(command="git reset --hard", notebook="web")["refused_by"][0]["id"] == style
    assert service.guard(command="npm publish", notebook="web")["decision"] == "ask"
    assert service.guard(command="make release", notebook="web")["decision"] == "allow"
    assert service.guard(command="docker system prune", notebook="web")["decision"] == "allow"


def test_what_cannot_be_read_is_asked_about(service: Service) -> None:
    rule(service)
    answer = service.guard(command="git push 'never closed", notebook="web")
    assert answer["decision"] == "ask"
    assert "quote" in answer["unreadable"]


def test_bad_input_is_refused_and_changes_nothing(service: Service, tmp_path: Path) -> None:
    for bad in ("", "   ", None, 42):
        with pytest.raises(ValidationError) as refused:
            service.guard(command=bad)  # type: ignore[arg-type]
        assert refused.value.field == "command"
    with pytest.raises(ValidationError):
        service.guard(command="ls", dir=str(tmp_path / "missing"))
    with pytest.raises(NotFound):
        service.guard(command="ls", notebook="no-such-notebook")
    assert service.seen()["commands"] == []


def test_commands_are_kept_redacted_bounded_and_forgettable(service: Service) -> None:
    ran(service, "git status", session="s-1")
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    ran(service, f"curl -H 'Authorization: token {token}' https://x.test")
    kept = service.seen()["commands"]
    assert [c["decision"] for c in kept] == ["allow", "allow"]
    assert kept[1]["command"] == "git status" and kept[1]["session"] == "s-1"
    assert token not in kept[0]["command"] and "[REDACTED:" in kept[0]["command"]
    answer = service.forget(id=kept[0]["id"], because="it held a token")
    assert answer["results"] == [{"id": kept[0]["id"], "forgotten": True}]
    assert [c["command"] for c in service.seen()["commands"]] == ["git status"]
    with pytest.raises(NotFound):
        service.forget(id=kept[0]["id"], because="again")


def test_a_long_command_is_redacted_whole_before_it_is_cut(service: Service) -> None:
    token = "glpat-C3J27XDCG2LmlZGEONYl"
    head = "git clone https://oauth2:"
    padding = "x" * (8_000 - len("echo  ") - len(head) - 14)  # the cut falls in the token
    ran(service, f"echo {padding} {head}{token}@gitlab.example/app.git")
    [command] = [c["command"] for c in service.seen()["commands"]]
    assert token[:10] not in command and "C3J27X" not in command
    assert len(command) <= 8_000


def test_a_credential_in_accept_refusing_is_kept_redacted(service: Service) -> None:
    password = "Zk8qP2mVx7RtL4nW"
    login = {"kind": "forbidden", "literals": ["docker login"]}
    for _ in range(5):
        ran(service, f"docker login -u me -p {password}")
    kept = service.seen()["commands"][0]["command"]
    assert password not in kept
    meant = [f"docker login -u me -p {password}"]
    rule(service, check=login, text="No docker login.", accept_refusing=meant, because="meant")
    assert password not in str(service.history(limit=100))


def test_a_kept_command_the_reader_chokes_on_never_blocks_a_new_rule(service: Service) -> None:
    service.keep_seen("find -exec " * 800 + "ls", "ask", None, None)
    wide = {"kind": "forbidden", "literals": ["kubectl delete ns"]}
    assert rule(service, check=wide, scope="workspace", text="Keep the namespaces.")


def test_kept_commands_are_bounded_in_age(store: Any, workspace: str) -> None:
    now = ["2026-01-01T00:00:00.000000Z"]
    service = Service(store, workspace=workspace, clock=lambda: now[0])
    ran(service, "ls old")
    now[0] = "2026-03-01T00:00:00.000000Z"  # 59 days on: the old one is past 30 days
    ran(service, "ls new")
    later = Service(store, workspace=workspace, clock=lambda: "2026-03-02T00:00:00.000000Z")
    assert [c["command"] for c in later.seen(days=365)["commands"]] == ["ls new"]


def seen(service: Service, *commands: str) -> None:
    """Commands the guard saw in the project of notebook `web` (which exists by then)."""
    service.remember(notebook="web", kind="note", text="The web project.")
    for command in commands:
        ran(service, command, notebook="web")


SEEN = ("git push --force origin wip", "git push -f", "git push origin +feature",
        "git push origin main", "git push --force-with-lease", "git push -f origin x",
        "ls", "make test")  # fmt: skip


def test_a_check_refusing_most_of_what_it_reaches_is_too_broad(service: Service) -> None:
    seen(service, *SEEN)
    with pytest.raises(ValidationError) as refused:
        rule(service, check={"kind": "forbidden", "literals": ["git push"]})
    assert refused.value.field == "check"
    assert "too broad" in refused.value.message
    assert "accept_refusing" in refused.value.message
    assert service.recall(query="force-push", notebook="web")["hits"] == []
    # 4 of 6 `git push` calls are forced: a check on --force refuses them, and is too broad
    with pytest.raises(ValidationError):
        rule(service)


def test_accept_refusing_with_because_lets_it_in(service: Service) -> None:
    seen(service, *SEEN)
    forced = [SEEN[0], SEEN[1], SEEN[2], SEEN[5]]
    with pytest.raises(ValidationError) as refused:
        rule(service, accept_refusing=forced)
    assert refused.value.field == "because"
    filed = service.remember(notebook="web", kind="rule", text="Never force-push.",
                             falsifier="f", check=FORCE, accept_refusing=forced,
                             because="these were the force-pushes that lost work")  # fmt: skip
    assert filed["version"] == 1 and "kept_as_note" not in filed
    assert service.guard(command="git push -f", notebook="web")["decision"] == "deny"
    event = service.history(id=filed["id"])["events"][0]
    assert event["note"] == "these were the force-pushes that lost work"


def test_a_contested_rule_is_kept_as_a_note_and_doctor_lists_it(service: Service) -> None:
    seen(service, *SEEN)
    filed = service.remember(notebook="web", kind="rule", text="Never push.", falsifier="f",
                             check={"kind": "forbidden", "literals": ["git push"]},
                             keep_as_note=True)  # fmt: skip
    assert filed["kept_as_note"] is True
    assert service.inspect(id=filed["id"])["memory"]["tags"] == ["contested"]
    assert service.guard(command="git push", notebook="web")["decision"] == "allow"
    listed = service.doctor()["rules_kept_as_notes"]
    assert [item["id"] for item in listed] == [filed["id"]]


def test_fewer_than_five_reached_is_no_trial_and_revising_the_check_is_tried(
    service: Service,
) -> None:
    seen(service, "git push -f", "git push -f", "ls", "ls", "ls", "ls")
    rule_id = rule(service)  # 2 reached: too few to judge
    seen(service, "git push -f", "git push -f", "git push")
    assert service.revise(id=rule_id, tags=["git"])["results"][0]["version"] == 2  # untouched
    wider = {"kind": "forbidden", "literals": ["git push -f", "git"]}
    with pytest.raises(ValidationError):
        service.revise(id=rule_id, check=wider, because="wider")
    kept = service.revise(id=rule_id, because="wider", keep_as_note=True, check=wider)
    assert kept["results"][0]["kept_as_note"] is True
    assert service.guard(command="git push -f", notebook="web")["decision"] == "allow"
    # taking the tag off tries the check again: still too broad
    with pytest.raises(ValidationError):
        service.revise(id=rule_id, tags=["git"])


def test_a_superseding_rule_is_tried_too(service: Service) -> None:
    rule_id = rule(service)
    seen(service, *SEEN)
    wider = {"kind": "forbidden", "literals": ["git push"]}
    with pytest.raises(ValidationError):
        service.revise(id=rule_id, supersede=True, check=wider, because="push less")
    assert service.inspect(id=rule_id)["memory"]["status"] == "active"


@pytest.mark.anyio
async def test_mcp_guard_says_when_only_workspace_wide_rules_were_checked(
    service: Service, tmp_path: Path
) -> None:
    rule(service)
    bind_project(tmp_path, "web")
    service.places = Places(working_dir=None, allowed=(tmp_path,))  # a team server's
    server = build_server(service)
    try:
        async with Client(server) as client:
            blind = await call(client, "guard", command="git push --force")
            assert blind["decision"] == "allow" and blind.get("notebook") is None
            assert "`dir`" in blind["note"] and "`notebook`" in blind["note"]
            seen = await call(client, "guard", command="git push --force", dir=str(tmp_path))
            assert seen["decision"] == "deny" and "note" not in seen
            named = await call(client, "guard", command="git push --force", notebook="web")
            assert named["decision"] == "deny" and "note" not in named
    finally:
        server.close()


def test_a_binding_naming_no_notebook_asks_when_a_notebook_s_rule_refuses(
    service: Service, tmp_path: Path
) -> None:
    rule(service)
    bind_project(tmp_path, "gone")  # by hand, or the notebook renamed before ids were kept
    asked = service.guard(command="git push --force", dir=str(tmp_path))
    assert asked["decision"] == "ask" and "palimpsest project bind" in asked["reason"]
    allowed = service.guard(command="ls", dir=str(tmp_path))  # no rule anywhere refuses it
    assert allowed["decision"] == "allow"
    assert "palimpsest project bind" in allowed["warnings"][0]


def test_paths_are_compared_as_the_files_they_name(service: Service) -> None:
    """Issue 30: `rm -rf //` and `rm -rf "$HOME"` wipe what `rm -rf /` and `rm -rf ~` name."""
    wipe = {"kind": "forbidden", "literals": ["rm -rf /", "rm -rf ~"]}
    rule(service, check=wipe, scope="workspace", text="Never wipe a disk or a home.")
    for command in ("rm -rf /*", "rm -rf //", "rm -rf /.", "rm -rf ~/", 'rm -rf "$HOME"',
                    "rm -rf ${HOME}", "sudo rm -fr /tmp/.."):  # fmt: skip
        assert service.guard(command=command)["decision"] == "deny", command
    assert service.guard(command="rm -rf ~/build /tmp/x")["decision"] == "allow"
    asked = service.guard(command='rm -rf "$target"')
    assert asked["decision"] == "ask" and "only known when it runs" in asked["reason"]


def test_a_rule_naming_force_refuses_its_family(service: Service) -> None:
    rule(service, scope="workspace")
    for command in ("git push --force-with-lease", "git push --force-if-includes origin x",
                    "git push --force-with-lease=main:abc origin main"):  # fmt: skip
        assert service.guard(command=command)["decision"] == "deny", command
    assert service.guard(command="git push --forced-ok")["decision"] == "allow"  # no boundary


def test_judging_a_command_keeps_nothing(service: Service) -> None:
    """Only the hook keeps what agents run: any other caller could flood the trials."""
    assert service.guard(command="git status")["decision"] == "allow"
    assert service.seen()["commands"] == []
