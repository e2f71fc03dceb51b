"""A key's share of the server through the web page, attacked as a key's holder would.

A person signed in with a key is held by the page to what the same key is held to on
/mcp: its calls a minute (`http.calls_per_minute`), its requests under way at once
(`http.requests_per_key`), and nothing done as it once it is revoked, even by a form
whose body was still arriving when the key went.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
from pathlib import Path
from urllib.parse import urlencode

import httpx2
import pytest

from ..agents.test_mcp_e2e import (
    command,
    free_port,
    read_status,
    serving,
    wait_closed_by_server,
)
from .site import (
    Site,
    base_env,
    cookie_of,
    form_token,
    get,
    make_store,
    running_site,
    session,
    sign_in,
)

PYTHON = "/usr/bin/python3"  # the system's: another user can run it (the venv may be private)


def verified_at(site: Site, memory_id: str) -> str | None:
    service = site.service()
    try:
        value: str | None = service.inspect(id=memory_id)["memory"]["verified_at"]
        return value
    finally:
        service.close()


def slow_post(site: Site, path: str, cookie: str, body: str, sent: int) -> socket.socket:
    """A POST from the page's origin whose head and first `sent` bytes of body are sent."""
    client = socket.create_connection(("127.0.0.1", site.port), timeout=10)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{site.port}\r\nOrigin: {site.base}\r\n"
        f"Cookie: {cookie}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    client.sendall(head.encode() + body[:sent].encode())
    return client


def test_the_page_spends_the_keys_calls_a_minute_as_mcp_does(tmp_path: Path) -> None:
    with running_site(tmp_path, calls_per_minute=3) as site:
        viewer = session(site, site.viewer_key)  # a sign-in is one of the key's calls
        answers = [get(site, "/?q=pool", viewer) for _ in range(2)]
        assert [a.status_code for a in answers] == [200, 200]
        past = get(site, f"/memories/{site.memory_id}", viewer)
        assert past.status_code == 429 and "retryable" in past.text
        assert int(past.headers["retry-after"]) >= 1
        assert site.memory_id not in past.text.replace(f"/memories/{site.memory_id}", "")
        # A flood of sign-ins is bounded as well: past its calls, a key opens no session.
        flooded = sign_in(site, site.viewer_key)
        assert flooded.status_code == 429 and "set-cookie" not in flooded.headers
        # Another key has its own calls.
        assert get(site, "/?q=pool", session(site, site.editor_key)).status_code == 200


def test_a_key_has_no_more_page_requests_under_way_than_its_share(tmp_path: Path) -> None:
    """Forms whose bodies trickle in hold connections; one key holds at most its share of
    them (`http.requests_per_key`), the rest refused before their bodies are read."""
    with running_site(tmp_path, requests_per_key=2) as site:
        viewer = session(site, site.viewer_key)
        body = urlencode({"csrf": form_token(get(site, "/", viewer).text), "pad": "x" * 500})
        clients = [slow_post(site, "/sign-out", viewer, body, 10) for _ in range(3)]
        try:
            # Which of the three is refused is the server's race; one is, at once.
            ready, _, _ = select.select(clients, [], [], 10)
            assert len(ready) == 1 and read_status(ready[0]) == 429
            assert wait_closed_by_server(ready, 10) == []
            assert select.select([c for c in clients if c not in ready], [], [], 1)[0] == []
            # Another key is served meanwhile.
            assert get(site, "/?q=pool", session(site, site.editor_key)).status_code == 200
        finally:
            for client in clients:
                client.close()


def test_a_form_sent_as_its_key_is_revoked_changes_nothing(tmp_path: Path) -> None:
    with running_site(tmp_path) as site:
        editor = session(site, site.editor_key)
        mine = f"/memories/{site.anas_memory_id}"
        body = urlencode({"csrf": form_token(get(site, mine, editor).text), "note": "checked"})
        client = slow_post(site, mine + "/verify", editor, body, 5)
        try:
            service = site.service()  # the owner, as `palimpsest key revoke`
            try:
                service.revoke_key(id=site.editor_key_id)
            finally:
                service.close()
            client.sendall(body[5:].encode())
            assert read_status(client) == 401
        finally:
            client.close()
        assert verified_at(site, site.anas_memory_id) is None


def test_signing_in_again_ends_the_session_the_browser_held(tmp_path: Path) -> None:
    """A browser signed in as one key that signs in as another (or again) keeps no
    session behind: a copy of its former cookie names nothing afterwards."""
    with running_site(tmp_path) as site:
        before = session(site, site.viewer_key)
        answer = httpx2.post(f"{site.base}/sign-in", data={"key": site.editor_key},
                             headers={"Origin": site.base, "Cookie": before},
                             timeout=30)  # fmt: skip
        assert answer.status_code == 303
        after = cookie_of(answer)
        assert after != before
        assert get(site, "/", after).status_code == 200
        assert get(site, "/", before).status_code == 401


# Opens a URL without following its redirect; prints the status (run as another user).
OPEN_LINK = """
import sys, urllib.error, urllib.request
class Stay(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None
request = urllib.request.Request(sys.argv[1], headers=dict(h.split(": ") for h in sys.argv[2:]))
try:
    print(urllib.request.build_opener(Stay).open(request, timeout=30).status)
except urllib.error.HTTPError as error:
    print(error.code)
"""


@pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/proc/net/tcp") or not os.path.exists(PYTHON),
    reason="runs a client as another user: needs root, Linux and /usr/bin/python3",
)
def test_the_local_owner_is_signed_in_for_no_other_user_of_this_machine(
    tmp_path: Path,
) -> None:
    """The browser is opened with the link in its command line, which every user of the
    machine can read: another user who takes the token from there signs in as no one, nor
    with the owner's cookie once it has it."""
    db = tmp_path / "web.db"
    make_store(db)
    port = free_port()
    process = subprocess.Popen(command(db, "web", "--no-open", "--json", "--port", str(port)),
                               env=base_env(tmp_path), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stderr is not None
    link = json.loads(process.stderr.readline())["url"]
    with serving(process, port), socket.create_connection(("127.0.0.1", port)) as owners:

        def as_another_user(url: str, *headers: str) -> str:
            ran = subprocess.run([PYTHON, "-c", OPEN_LINK, url, *headers], user=65534,
                                 env={}, capture_output=True, text=True, timeout=60)  # fmt: skip
            return ran.stdout.strip() or ran.stderr

        assert as_another_user(link) == "403"
        # Nor by claiming, as a proxy would, to speak for a connection the owner holds.
        claimed = "{}:{}".format(*owners.getsockname())
        assert as_another_user(link, f"X-Forwarded-For: {claimed}") == "403"
        # The user who ran `palimpsest web` still can.
        used = httpx2.get(link, timeout=30)
        assert used.status_code == 303
        # Its cookie goes to every server on 127.0.0.1, whatever the port (cookies know no
        # ports): another user's server that takes it from a request gets nothing with it.
        cookie = cookie_of(used)
        page = f"http://127.0.0.1:{port}/"
        assert as_another_user(page, f"Cookie: {cookie}") == "401"
        assert httpx2.get(page, headers={"Cookie": cookie}, timeout=30).status_code == 200


def test_another_pages_script_image_or_frame_reads_nothing_with_the_cookie(
    tmp_path: Path,
) -> None:
    """A page on another port of this host is the same *site*: SameSite=Strict sends it the
    cookie. Its `<script src>`, `<img>`, frame or fetch (which the browser marks with
    Fetch Metadata) is refused before the session is looked up: no search runs for it, and
    it spends none of the key's calls. A person following its link still reads the page."""
    with running_site(tmp_path, calls_per_minute=3) as site:
        viewer = session(site, site.viewer_key)  # a call: two are left
        url = f"{site.base}/memories/{site.memory_id}"
        for fetched_from in ("same-site", "cross-site"):
            for mode, dest in (("no-cors", "script"), ("no-cors", "image"),
                               ("navigate", "iframe"), ("cors", "empty")):  # fmt: skip
                headers = {"Cookie": viewer, "Sec-Fetch-Site": fetched_from,
                           "Sec-Fetch-Mode": mode, "Sec-Fetch-Dest": dest}  # fmt: skip
                answer = httpx2.get(url, headers=headers, timeout=30)
                assert answer.status_code == 403, (fetched_from, mode, dest)
                assert "The pool holds" not in answer.text
        followed = {"Cookie": viewer, "Sec-Fetch-Site": "same-site",
                    "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}  # fmt: skip
        assert httpx2.get(url, headers=followed, timeout=30).status_code == 200
        assert get(site, "/?q=pool", viewer).status_code == 200  # its calls were not spent
