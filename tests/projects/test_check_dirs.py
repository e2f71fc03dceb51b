"""`http.check_dirs`: each directory a team server may read belongs to one workspace, and a
request reads only its own workspace's (issue 30, item 5)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from palimpsest.config import load_config
from palimpsest.domain.errors import ValidationError
from palimpsest.domain.projects import Places, bind_project

from ..agents.test_mcp_e2e import http_server
from ..mcp_helpers import call, refuse
from ..team.test_access import cli, keyed

SECRET = "token = s3cr3t\n"


def project(root: Path, notebook: str) -> Path:
    root.mkdir(parents=True)
    (root / "config.toml").write_text(SECRET)
    bind_project(root, notebook)
    return root


def lab_key(db: Path, env: dict[str, str]) -> str:
    """An editor's key in a second workspace, `lab` (team B)."""
    cli(db, env, "workspace", "create", "lab")
    cli(db, env, "--workspace", "lab", "user", "add", "bo", "--role", "editor")
    return str(cli(db, env, "--workspace", "lab", "key", "create", "--user", "bo")["key"])


def guessing(notebook: str, literal: str) -> dict[str, Any]:
    """The attack: a `contains` check with a guessed literal, in a notebook named like A's."""
    check = {"kind": "contains", "path": "config.toml", "literal": literal}
    return {"notebook": notebook, "kind": "rule", "text": f"Guess {literal}", "check": check,
            "severity": "costly", "falsifier": "a counterexample"}  # fmt: skip


@pytest.mark.anyio
async def test_a_workspace_reads_only_its_own_configured_directories_over_http(
    tmp_path: Path, env: dict[str, str]
) -> None:
    db = tmp_path / "team.db"
    shop = project(tmp_path / "a" / "shop", "shop")  # team A's, in the default workspace
    lab = project(tmp_path / "b" / "lab", "lab-nb")  # team B's
    key = lab_key(db, env)
    missing = tmp_path / "a" / "gone"
    dirs = os.pathsep.join([str(shop), f"{lab}=lab", f"{missing.parent}=default"])
    with http_server(db, env | {"PALIMPSEST_HTTP_CHECK_DIRS": dirs}) as (url, _):
        async with keyed(url, key) as client:
            await call(client, "remember", **guessing("shop", "token = s"))
            refusals = [
                await refuse(client, "check", dir=str(shop)),
                await refuse(client, "check", dir=str(shop / "..")),
                await refuse(client, "check", dir=str(missing)),  # no hint it does not exist
                await refuse(client, "orient", dir=str(shop)),
                await refuse(client, "guard", command="ls", dir=str(shop)),
            ]
            for refusal in refusals:
                assert refusal["error_class"] == "forbidden"
                assert "shop" not in refusal["message"] and str(tmp_path / "a") not in json.dumps(
                    refusal
                )
            assert len({r["message"] for r in refusals[:3]}) == 1  # the same whatever is there
            await call(client, "remember", **guessing("lab-nb", "token = s"))
            own = await call(client, "check", dir=str(lab))
            assert own["notebook"] == "lab-nb" and len(own["holds"]) == 1
        async with keyed(url, key) as client:  # a link in B's directory to A's is no way in
            (lab / "link").symlink_to(shop)
            assert (await refuse(client, "check", dir=str(lab / "link")))["error_class"] == (
                "forbidden"
            )
            (lab / "config.toml").unlink()
            (lab / "config.toml").symlink_to(shop / "config.toml")  # nor is a linked file
            linked = await call(client, "check", dir=str(lab))
            assert not linked.get("holds") and linked["fails"][0]["reason"] == "leaves the project"


def test_check_dirs_are_given_to_workspaces_in_the_file_or_the_environment(
    tmp_path: Path,
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    config = tmp_path / "config.toml"
    config.write_text(f'[http.check_dirs]\n"{a}" = "team-a"\n"{b}/x/.." = "team-b"\n')
    assert load_config(environ={}, config_path=str(config)).check_dirs == {
        a: "team-a",
        b: "team-b",
    }
    config.write_text(f'[http]\ncheck_dirs = ["{a}", "{b}=team-b"]\n')
    assert load_config(environ={}, config_path=str(config)).check_dirs == {a: None, b: "team-b"}
    environ = {"PALIMPSEST_HTTP_CHECK_DIRS": f"{a}=team-a{os.pathsep}{b}"}
    assert load_config(environ=environ).check_dirs == {a: "team-a", b: None}
    for wrong in (f"{a}=", "relative=team-a", f"{a}=x{os.pathsep}{a}=y"):
        with pytest.raises(ValidationError) as refused:
            load_config(environ={"PALIMPSEST_HTTP_CHECK_DIRS": wrong})
        assert refused.value.field == "http.check_dirs"


def test_a_directory_inside_another_workspaces_is_refused(tmp_path: Path) -> None:
    outer, inner = tmp_path / "srv", tmp_path / "srv" / "shop"
    inner.mkdir(parents=True)
    with pytest.raises(ValidationError) as refused:
        Places.served({outer: "w_a", inner: "w_b"}, "w_a")
    assert refused.value.field == "http.check_dirs"
    served = Places.served({outer: "w_a", inner: "w_a"}, "w_a")
    assert served.permits(inner) and not served.within("w_b").permits(inner)
    assert served.within("w_b").within("w_a").permits(inner)  # a request moves, never narrows


def test_a_served_directory_swapped_for_a_link_later_moves_nothing(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    served = Places.served({a: "w_a", b: "w_b"}, "w_a")
    b.rmdir()
    b.symlink_to(a)  # after the server started
    assert not served.within("w_b").permits(b) and not served.within("w_b").permits(a)
