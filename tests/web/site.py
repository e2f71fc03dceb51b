"""A real `palimpsest serve --http` over a store made for the web page's tests.

The store holds, in workspace `default`: an editor (ana), a viewer (vic), and a memory
whose every field an agent writes carries markup that would run if it were not escaped;
in workspace `other`, a memory of its own. Each person's key is made as an owner makes it.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from palimpsest.embed import NullEmbedder
from palimpsest.service import Service, open_service

from ..agent_runs import ran
from ..agents.test_mcp_e2e import command, free_port, serving

# What markup an agent might write, each setting a flag in `window.pwned` if it ran.
SCRIPT = "<script>window.pwned = (window.pwned || 0) + 1</script>"
IMAGE = '<img src=x onerror="window.pwned = (window.pwned || 0) + 1">'
TEXT = f"The pool holds 40 connections {SCRIPT} {IMAGE}"
TITLE = f"Pool size {IMAGE}"
TAG = "<svg onload=window.pwned=1>"
NOTEBOOK = "ops<script>window.pwned=1</script>"
ACTOR = "agent:<img src=x onerror=window.pwned=1>"
REASON = f"measured on prod {SCRIPT}"
SESSION = "sess-ana"  # a session of the editor's, recorded in `default`
OTHER_SESSION = "sess-other"  # a session recorded in workspace `other`
DUPLICATES = "deploys"  # the notebook holding a group of duplicates
DUPLICATED = "Deploys go out on Tuesdays after the standup"
DISPUTE_REASON = f"both give the API's latency {SCRIPT}"
LONG_AGO = "2020-01-02T00:00:00Z"  # when the memories possibly stale were filed
STALE = f"The cache expires after an hour {SCRIPT}"  # possibly stale, its text with markup
# A rule of NOTEBOOK whose check forbids a command, and the commands the guard's hook kept
# there: one denied, one asked about (it cannot be read), each with markup.
RULE_TITLE = f"No force-push {IMAGE}"
RULE_TEXT = f"Never force-push to main {SCRIPT}"
RULE_LITERAL = f"deploy {TAG}"
DENIED = f'git push --force origin "{SCRIPT}"'
ASKED = f'git push --force "{IMAGE}'
GUARD_SESSION = f"sess-{IMAGE}"
OTHER_DENIED = "git push --force to the other team's main"  # kept in workspace `other`


@dataclass
class Site:
    base: str  # http://127.0.0.1:PORT
    port: int
    db: Path
    editor_key: str
    editor_key_id: str
    viewer_key: str
    memory_id: str  # the memory full of markup, in `default`
    other_memory_id: str  # a memory of workspace `other`
    anas_memory_id: str  # a memory the editor owns, in `default`
    duplicate_ids: list[str]  # two of the editor's memories saying the same, in DUPLICATES
    dispute_id: str  # an open dispute in `default`
    disputed_ids: list[str]  # its two memories
    other_dispute_id: str  # an open dispute in workspace `other`
    stale_ids: list[str]  # two of ana's assumptions filed long ago: possibly stale
    other_stale_id: str  # one of workspace `other`'s, possibly stale too
    rule_id: str  # RULE_TEXT's rule, in NOTEBOOK

    def service(self) -> Service:
        """The store opened as its owner, as the CLI opens it."""
        return open_service(str(self.db), actor="user:owner", embedder=NullEmbedder())


def make_store(db: Path) -> dict[str, Any]:
    service = open_service(str(db), actor="user:owner", embedder=NullEmbedder())
    try:
        # Filed long ago, never verified since: each outlived its kind's freshness window.
        then = Service(service.store, actor="user:ana", clock=lambda: LONG_AGO,
                       embedder=NullEmbedder())  # fmt: skip
        stale = [then.remember(notebook="ops", kind="assumption", text=text)["id"]
                 for text in (STALE, "Builds run on two cores")]  # fmt: skip
        agent = service.with_actor(ACTOR)
        filed = agent.remember(notebook=NOTEBOOK, kind="fact", text=TEXT, title=TITLE,
                               tags=[TAG, "pool"])  # fmt: skip
        memory_id = filed["id"]
        agent.revise(id=memory_id, append=" (checked)", note=REASON)
        service.add_user(name="ana", role="editor")
        service.add_user(name="vic", role="viewer")
        editor = service.create_key(user="ana")
        viewer = service.create_key(user="vic")
        anas = service.with_actor("user:ana").remember(
            notebook="ops", kind="decision", text="The pool is sized by the load test"
        )
        # A session of ana's: what it was shown (a recall) and what it wrote through it.
        in_session = service.with_actor("user:ana").in_session(SESSION)
        in_session.recall(query="pool size")
        in_session.recall(query=f"pool {IMAGE}")  # a query kept as asked, shown as text
        in_session.remember(notebook="ops", kind="fact", text="The session filed this")
        # Two of ana's memories that say the same thing: a group for the duplicates queue.
        dups = [service.with_actor("user:ana").remember(notebook=DUPLICATES, kind="fact",
                                                        text=text)["id"]
                for text in (DUPLICATED, DUPLICATED + ", as agreed.")]  # fmt: skip
        # Two memories that contradict, in an open dispute whose reason carries markup.
        sides = [service.remember(notebook="api", kind="fact", text=f"The API answers in {ms} ms")
                 for ms in (200, 900)]  # fmt: skip
        disputed = service.dispute(action="open", ids=[m["id"] for m in sides],
                                   reason=DISPUTE_REASON)  # fmt: skip
        service.create_workspace(name="other")
        theirs = service.in_workspace("other")
        their_then = Service(service.store, actor="user:owner", workspace=theirs.workspace,
                             clock=lambda: LONG_AGO, embedder=NullEmbedder())  # fmt: skip
        their_stale = their_then.remember(notebook="secret-plans", kind="assumption",
                                          text="Other team's budget is fixed")  # fmt: skip
        other = theirs.remember(notebook="secret-plans", kind="fact",
                                text="Other team's pool is 99")  # fmt: skip
        theirs.in_session(OTHER_SESSION).recall(query="pool")
        their_sides = [theirs.remember(notebook="secret-plans", kind="fact", text=t)["id"]
                       for t in ("Launch is in May", "Launch is in June")]  # fmt: skip
        their_dispute = theirs.dispute(action="open", ids=their_sides, reason="which month")
        # Links both ways between the memory full of markup and ana's: its page's graph.
        service.link(source=memory_id, target=anas["id"], type="relates_to")
        service.link(source=anas["id"], target=memory_id, type="derived_from")
        # The notebooks pages: a rule forbidding commands, and what the guard's hook kept.
        forbidding = {"severity": "irreversible", "falsifier": f"a push that lost nothing {TAG}",
                      "bindings": {"moments": ["before_command"],
                                   "targets": [f"main {TAG}"]}}  # fmt: skip
        rule = service.remember(notebook=NOTEBOOK, kind="rule", title=RULE_TITLE, text=RULE_TEXT,
                                check={"kind": "forbidden",
                                       "literals": ["git push --force", RULE_LITERAL]},
                                **forbidding)  # fmt: skip
        for command in (DENIED, ASKED, "git status"):
            ran(service, command, notebook=NOTEBOOK, session=GUARD_SESSION)
        theirs.remember(notebook="secret-plans", kind="rule", text="Theirs: never force-push",
                        check={"kind": "forbidden", "literals": ["git push --force"]},
                        **forbidding)  # fmt: skip
        ran(theirs, OTHER_DENIED, notebook="secret-plans")
    finally:
        service.close()
    return {"memory_id": memory_id, "other_memory_id": other["id"], "anas_memory_id": anas["id"],
            "duplicate_ids": dups,
            "dispute_id": disputed["id"], "disputed_ids": [m["id"] for m in sides],
            "other_dispute_id": their_dispute["id"],
            "stale_ids": stale, "other_stale_id": their_stale["id"],
            "editor_key": editor["key"], "editor_key_id": editor["id"], "rule_id": rule["id"],
            "viewer_key": viewer["key"]}  # fmt: skip


def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    env.update(HOME=str(home / "home"), XDG_DATA_HOME=str(home / "xdg"))
    env["PALIMPSEST_EMBEDDER"] = "none"
    return env


@contextmanager
def running_site(tmp: Path, **settings: object) -> Iterator[Site]:
    """`serve --http` over a new store in `tmp`, with `settings` (http.NAME=value)."""
    db = tmp / "web.db"
    made = make_store(db)
    port = free_port()
    env = base_env(tmp)
    env.update({f"PALIMPSEST_HTTP_{k.upper()}": str(v) for k, v in settings.items()})
    args = command(db, "serve", "--http", "--port", str(port))
    process = subprocess.Popen(
        args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    with serving(process, port):
        yield Site(f"http://127.0.0.1:{port}", port, db, **made)


def sign_in(site: Site, key: str) -> httpx2.Response:
    """The answer to signing in with `key`, as the page's form posts it."""
    return httpx2.post(f"{site.base}/sign-in", data={"key": key},
                       headers={"Origin": site.base}, timeout=30)  # fmt: skip


def cookie_of(answer: httpx2.Response) -> str:
    """`name=value` of the session cookie an answer sets."""
    set_cookie = answer.headers["set-cookie"]
    return set_cookie.split(";", 1)[0]


def session(site: Site, key: str) -> str:
    """A signed-in session's cookie (`name=value`), sent by hand: the tests say what goes."""
    answer = sign_in(site, key)
    assert answer.status_code == 303, answer.text
    return cookie_of(answer)


def get(site: Site, path: str, cookie: str | None = None) -> httpx2.Response:
    headers = {"Cookie": cookie} if cookie else {}
    return httpx2.get(f"{site.base}{path}", headers=headers, timeout=30)


def form_token(page: str) -> str:
    """The session's form token, read off a page as a browser would submit it."""
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, "the page holds no form token"
    return found[1]
