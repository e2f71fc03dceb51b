"""An adversarial review of the page and the HTTP API, each finding as what a person
relies on, against a real `serve --http` (site.py's store: markup in every field)."""

from __future__ import annotations

import html
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx2
import pytest
from playwright.sync_api import Browser

from palimpsest.embed import NullEmbedder
from palimpsest.service import open_service
from palimpsest.web.pages.common import memory_href, notebook_href, session_href

from ..agents.test_mcp_e2e import command, free_port, serving
from .browser import Visit, needs_chromium, visit
from .site import (
    GUARD_SESSION,
    IMAGE,
    NOTEBOOK,
    SCRIPT,
    SESSION,
    TAG,
    Site,
    base_env,
    get,
    running_site,
    session,
)
from .test_web_browser import LEFT_OF


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with running_site(tmp_path_factory.mktemp("adversarial")) as running:
        yield running


@pytest.fixture(scope="module")
def owner_key(site: Site) -> str:
    """An owner's key: an owner reads every session, and may forget any memory."""
    service = site.service()
    try:
        service.add_user(name="olga", role="owner")
        key: str = service.create_key(user="olga")["key"]
        return key
    finally:
        service.close()


def api(site: Site, operation: str, body: dict[str, object], key: str) -> httpx2.Response:
    return httpx2.post(f"{site.base}/api/v1/{operation}", json=body, timeout=30,
                       headers={"Authorization": f"Bearer {key}"})  # fmt: skip


def test_the_apis_answers_holding_memory_text_are_never_stored_nor_sniffed(site: Site) -> None:
    """An answer of the API holds what agents wrote (markup among it) and is read with a
    person's key: no cache keeps it (a browser's, a proxy's), and no browser reads it as
    anything but JSON, as the page's own answers are kept (`no-store`, `nosniff`)."""
    answers = [
        api(site, "recall", {"query": "pool"}, site.editor_key),
        api(site, "inspect", {"id": site.memory_id}, site.editor_key),
        api(site, "inspect", {"id": site.other_memory_id}, site.editor_key),  # a refusal
        httpx2.get(
            f"{site.base}/api/v1/openapi.json",
            timeout=30,
            headers={"Authorization": f"Bearer {site.viewer_key}"},
        ),
    ]
    assert "<script>" in answers[1].text  # the memory's text, as an agent wrote it
    for answer in answers:
        assert answer.headers["content-type"] == "application/json", answer.request.url
        assert answer.headers.get("cache-control") == "no-store", answer.request.url
        assert answer.headers.get("x-content-type-options") == "nosniff", answer.request.url


# Session ids an agent may choose that a URL's path does not carry as they are: a browser
# resolves `.` and `..` (quoted or not) as steps of the path, and drops tabs and line breaks.
AWKWARD_SESSIONS = ["..", ".", "sess\tTAB", "sess\nLINE"]


@needs_chromium
def test_every_session_listed_opens_whatever_id_its_agent_chose(
    browser: Browser, site: Site, visits: list[Visit]
) -> None:
    """An agent names its own session: whatever id it chose, a person who follows its link
    in the list reads what it was shown (else an agent could keep its steps off the page)."""
    service = site.service()
    try:
        for name in AWKWARD_SESSIONS:
            service.with_actor("user:ana").in_session(name).recall(query=f"pool {name!r}")
    finally:
        service.close()
    editor = visit(visits, browser, site)
    editor.sign_in(site.editor_key)
    page = editor.page
    page.goto("/sessions")
    links = page.locator("table a").evaluate_all(
        "links => links.map(a => [a.textContent, a.href])"  # the href as the browser reads it
    )
    followed = {text: href for text, href in links if text in AWKWARD_SESSIONS}
    assert sorted(followed) == sorted(AWKWARD_SESSIONS)
    unread = []
    for name, href in followed.items():
        page.goto(href)
        heading = page.get_by_role("heading", level=1).text_content()
        if heading != f"Session {name}" or repr(name) not in page.locator("main").inner_text():
            unread.append((name, href, heading))
    assert unread == []


PYTHON = "/usr/bin/python3"  # the system's: another user can run it (the venv may be private)
# A script's call without a key: the JSON a script sends, the answer's status and body.
CALL = """
import sys, urllib.error, urllib.request
request = urllib.request.Request(sys.argv[1], data=sys.argv[2].encode(), headers={
    "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
try:
    answer = urllib.request.urlopen(request, timeout=30)
    print(answer.status, answer.read().decode())
except urllib.error.HTTPError as error:
    print(error.code, error.read().decode())
"""
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "another-user", "version": "1"}}}  # fmt: skip


@pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/proc/net/tcp") or not os.path.exists(PYTHON),
    reason="runs a client as another user: needs root, Linux and /usr/bin/python3",
)
def test_without_keys_another_user_of_this_machine_reads_nothing_through_the_api_or_mcp(
    tmp_path: Path,
) -> None:
    """`palimpsest web` on a store without keys (one person's machine) acts for its local
    owner. The page signs in no other user of the machine (web.md); nor may the API or
    /mcp beside it, which need no key then: another user's script would read, change and
    forget the owner's memory through them."""
    db = tmp_path / "mine.db"
    service = open_service(str(db), actor="user:owner", embedder=NullEmbedder())
    try:
        service.remember(notebook="ops", kind="fact", text="The owner's private note")
    finally:
        service.close()
    port = free_port()
    process = subprocess.Popen(command(db, "web", "--no-open", "--json", "--port", str(port)),
                               env=base_env(tmp_path), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stderr is not None
    json.loads(process.stderr.readline())  # its link: the server is up

    def call(path: str, body: object, user: int | None) -> str:
        ran = subprocess.run([PYTHON, "-c", CALL, f"http://127.0.0.1:{port}{path}",
                              json.dumps(body)], user=user, env={}, capture_output=True,
                             text=True, timeout=60)  # fmt: skip
        return ran.stdout.strip() or ran.stderr

    with serving(process, port):
        theirs = {path: call(path, body, 65534) for path, body in
                  (("/api/v1/recall", {"query": "note"}), ("/mcp", INITIALIZE))}  # fmt: skip
        assert all(got.startswith("401 ") for got in theirs.values()), theirs
        assert not any("private note" in got for got in theirs.values())
        # The user who ran it still calls both without a key.
        mine = call("/api/v1/recall", {"query": "note"}, None)
        assert mine.startswith("200 ") and "private note" in mine
        assert call("/mcp", INITIALIZE, None).startswith("200 ")


def test_a_step_another_actor_made_in_someones_session_names_that_actor(
    site: Site, owner_key: str
) -> None:
    """A session's id is its agent's to choose, and another's agent may send the same one:
    the owner reading that session sees whose each step was, never another's reads and
    writes under the first actor's name (`Served to user:ana`)."""
    service = site.service()
    try:
        service.with_actor("user:ana").in_session("sess-shared").recall(query="pool size")
        planted = service.with_actor("user:mallory").in_session("sess-shared")
        planted.recall(query="what mallory asked")
        planted.remember(notebook="ops", kind="fact", text="Mallory filed this as ana")
    finally:
        service.close()
    page = get(site, "/sessions/sess-shared", session(site, owner_key)).text
    assert "Served to <bdi>user:ana</bdi>" in page
    steps = page.split("<h2", 1)[1].split("<h2")
    anas = [step for step in steps if "pool size" in step]
    malloris = [step for step in steps if "mallory asked" in step or "Wrote" in step]
    assert len(anas) == 1 and len(malloris) == 2, page
    assert "user:mallory" not in anas[0]
    assert all("user:mallory" in step for step in malloris), malloris


# What no page may hold, wherever agents' markup is shown: an element or attribute that
# came from it. The CSP would stop most of it from running, so `window.pwned` alone would
# not tell escaping from the CSP: the page itself must hold none of it.
INJECTED = """() => [...document.querySelectorAll(
    'script:not([src="/static/site.js"]), img, iframe, object, embed, base, meta[http-equiv],'
    + ' style, svg svg, foreignObject, [style], [srcdoc], [formaction]')]
  .map(e => e.outerHTML.slice(0, 120))
  .concat([...document.querySelectorAll('*')].flatMap(e => [...e.attributes]
    .filter(a => /^on/i.test(a.name) || /^\\s*(javascript|data|vbscript):/i.test(a.value))
    .map(a => `${e.tagName} ${a.name}=${a.value.slice(0, 80)}`)))"""


@needs_chromium
def test_no_page_holds_an_element_or_attribute_made_of_what_agents_wrote(
    browser: Browser, site: Site, owner_key: str, visits: list[Visit]
) -> None:
    """Every page an owner reads (the owner sees every session and every form), each
    refusal naming what was asked for, and forget's confirmation: none holds markup of an
    agent's as markup, and the browser reports no script or style the CSP had to stop."""
    owner = visit(visits, browser, site)
    page = owner.page
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Security Policy" in m.text else None)
    owner.sign_in(owner_key)
    names = [NOTEBOOK, SESSION, GUARD_SESSION]
    paths = ["/?q=pool", f"/?q={quote(IMAGE)}&notebook={quote(NOTEBOOK)}&tags={quote(TAG)}",
             f"/memories/{site.memory_id}", f"/memories/{site.rule_id}",
             "/notebooks", notebook_href(names[0]), f"{notebook_href(names[0])}?days=400",
             "/sessions", session_href(SESSION), session_href(GUARD_SESSION),
             "/review/duplicates?all=1", "/review/disputes", "/review/stale", "/review/doctor",
             memory_href(IMAGE), notebook_href(SCRIPT), session_href(IMAGE)]  # fmt: skip
    found = {}
    for path in paths:
        page.goto(path)
        found[path] = page.evaluate(INJECTED)
    # Forget's confirmation, the page a POST answers, its reason as the person wrote it.
    page.goto(f"/memories/{site.memory_id}")
    page.get_by_text("Forget", exact=True).click()
    page.get_by_label("Why it must not stay on disk").fill(f"because {SCRIPT}")
    page.get_by_role("button", name="Review what forget erases").click()
    page.get_by_role("button", name="Forget for good").wait_for()
    found["forget"] = page.evaluate(INJECTED)
    assert {path: held for path, held in found.items() if held} == {}
    assert refused == [] and owner.pwned() is None


OPENS_EMBEDDING = "\u202a\u202b\u202d\u202e"  # LRE, RLE, LRO, RLO: closed by PDF or a PDI
OPENS_ISOLATE = "\u2066\u2067\u2068"  # LRI, RLI, FSI: closed by PDI


def open_at_end(text: str) -> list[str]:
    """The embeddings, overrides and isolates still open at the end of `text`, as the
    Unicode bidi algorithm pairs them (a PDI closes its isolate and all opened within it;
    a PDF closes an embedding or override only, never past an isolate; strays do nothing)."""
    stack: list[str] = []
    for c in text:
        if c in OPENS_EMBEDDING or c in OPENS_ISOLATE:
            stack.append(c)
        elif c == "\u202c" and stack and stack[-1] in OPENS_EMBEDDING:
            stack.pop()
        elif c == "\u2069" and any(o in OPENS_ISOLATE for o in stack):
            while stack.pop() not in OPENS_ISOLATE:
                pass
    return stack


def test_a_direction_an_agent_leaves_open_turns_none_of_the_tabs_own_words(
    site: Site, owner_key: str
) -> None:
    """The browser's tab names the page as `<title of the memory> · Palimpsest`: the title
    is isolated (FSI ... PDI), so an override an agent leaves open in it (U+202E) ends
    there. An agent's own PDI or isolate in the title must not undo that and draw the
    page's words backwards, as on the page itself (`<bdi>`)."""
    titles = ["Pool\u2069\u202e size", "Pool \u2068\u202e size", "Pool \u202e\u2069\u2069 size"]
    service = site.service()
    try:
        ids = [service.remember(notebook="ops", kind="fact", text="t", title=t)["id"]
               for t in titles]  # fmt: skip
    finally:
        service.close()
    cookie = session(site, owner_key)
    for memory_id in ids:
        page = get(site, f"/memories/{memory_id}", cookie).text
        title = html.unescape(page.split("<title>", 1)[1].split("</title>", 1)[0])
        agents, own = title.rsplit(" · Palimpsest", 1)[0], " · Palimpsest"
        assert title.endswith(own) and open_at_end(agents) == [], repr(title)


@needs_chromium
def test_an_agents_own_isolate_marks_in_a_value_turn_none_of_the_pages_words(
    browser: Browser, site: Site, visits: list[Visit]
) -> None:
    """A value among the page's own words is isolated (`<bdi>`): a PDI of the agent's in
    it, then an override, must not escape it and draw `active · version 1` backwards."""
    service = site.service()
    try:
        service.remember(notebook="wombats\u2069\u202e", kind="fact", text="A wombat digs")
    finally:
        service.close()
    person = visit(visits, browser, site)
    person.sign_in(site.viewer_key)
    person.page.goto("/?q=wombat")
    facts = ".hits li:first-child .facts"
    person.page.locator(facts).wait_for()
    active, version = (person.page.evaluate(LEFT_OF, [facts, w]) for w in ("active", "version"))
    assert active is not None and version is not None
    assert active < version, "the page's own words after the notebook's name run backwards"
