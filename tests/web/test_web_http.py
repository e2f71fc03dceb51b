"""The web page's rules of access, over plain HTTP against a real `serve --http`.

Who may see what, what a cookie is worth, and what a stranger gets: each test sends what a
browser (or an attacker) would and checks the answer and the store.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from palimpsest.web.guard import CSP

from ..agents.test_mcp_e2e import command, free_port, read_status, serving, wait_closed_by_server
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

PER_KEY = 3  # web sessions one key may hold, set low to be reached


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with running_site(tmp_path_factory.mktemp("web"), web_sessions_per_key=PER_KEY) as running:
        yield running


def post(
    site: Site,
    path: str,
    data: dict[str, str],
    cookie: str | None,
    origin: str | None = "same",
    fetched_from: str | None = None,
) -> httpx2.Response:
    headers = {"Cookie": cookie} if cookie else {}
    if origin is not None:
        headers["Origin"] = site.base if origin == "same" else origin
    if fetched_from is not None:
        headers["Sec-Fetch-Site"] = fetched_from
    return httpx2.post(f"{site.base}{path}", data=data, headers=headers, timeout=30)


def verified_at(site: Site, memory_id: str | None = None) -> str | None:
    service = site.service()
    try:
        shown = service.inspect(id=memory_id or site.memory_id)["memory"]
        value: str | None = shown["verified_at"]
        return value
    finally:
        service.close()


def test_the_cookie_is_httponly_samesite_strict_and_names_only_a_random_session(
    site: Site,
) -> None:
    answer = sign_in(site, site.viewer_key)
    assert answer.status_code == 303 and answer.headers["location"] == "/"
    flags = [f.strip() for f in answer.headers["set-cookie"].split(";")]
    name, value = flags[0].split("=", 1)
    assert name == "palimpsest_session"
    assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= set(flags[1:])
    assert "Secure" not in flags  # plain HTTP here: a Secure cookie would never come back
    assert len(value) >= 40 and site.viewer_key not in value and "k_" not in value


def test_a_wrong_key_signs_no_one_in(site: Site) -> None:
    wrong = site.editor_key[:-4] + "0000"
    for key in (wrong, "palimpsest-keyless", ""):
        answer = sign_in(site, key)
        assert answer.status_code == 401
        assert "set-cookie" not in answer.headers


def test_a_request_without_a_session_is_refused_before_its_body_is_read(site: Site) -> None:
    """A POST with no cookie, or from another origin, is answered from its head alone and
    its connection closed: the megabyte it announces is never waited for."""
    heads = [
        f"POST /memories/{site.memory_id}/verify HTTP/1.1\r\nHost: 127.0.0.1:{site.port}\r\n"
        f"Origin: {site.base}\r\n",
        f"POST /sign-in HTTP/1.1\r\nHost: 127.0.0.1:{site.port}\r\n"
        "Origin: https://evil.example\r\n",
        f"POST /sign-out HTTP/1.1\r\nHost: 127.0.0.1:{site.port}\r\n"
        "Cookie: palimpsest_session=made-up\r\n",
    ]
    clients: list[socket.socket] = []
    try:
        for head in heads:
            clients.append(socket.create_connection(("127.0.0.1", site.port), timeout=10))
            clients[-1].sendall((head + "Content-Type: application/x-www-form-urlencoded\r\n"
                                 "Content-Length: 1000000\r\n\r\n").encode())  # fmt: skip
            assert read_status(clients[-1]) in (401, 403)
        assert wait_closed_by_server(clients, 10) == []
    finally:
        for client in clients:
            client.close()
    assert verified_at(site) is None


def test_a_memory_of_another_workspace_is_not_found(site: Site) -> None:
    cookie = session(site, site.editor_key)
    mine = get(site, f"/memories/{site.memory_id}", cookie)
    assert mine.status_code == 200
    theirs = get(site, f"/memories/{site.other_memory_id}", cookie)
    assert theirs.status_code == 404
    assert "not_found" in theirs.text and "Other team" not in theirs.text
    searched = get(site, "/?q=pool", cookie)
    assert site.memory_id in searched.text and site.other_memory_id not in searched.text


def test_a_forged_post_is_refused_and_changes_nothing(site: Site) -> None:
    """With the editor's cookie (as a browser would attach it) on a memory the editor may
    verify: without the page's token, with another session's token, from another origin
    or from none, nothing is verified; the page's own form then is."""
    cookie = session(site, site.editor_key)
    mine = f"/memories/{site.anas_memory_id}"
    token = form_token(get(site, mine, cookie).text)
    other_token = form_token(get(site, "/", session(site, site.editor_key)).text)
    forged = [
        ({"note": "forged"}, "same", None),
        ({"note": "forged", "csrf": other_token}, "same", None),
        ({"note": "forged", "csrf": token}, "https://evil.example", None),
        ({"note": "forged", "csrf": token}, "https://evil.example", "same-origin"),
        ({"note": "forged", "csrf": token}, "null", None),
        ({"note": "forged", "csrf": token}, "null", "cross-site"),
        ({"note": "forged", "csrf": token}, None, "same-site"),
        ({"note": "forged", "csrf": token}, None, None),
    ]
    for data, origin, fetched_from in forged:
        answer = post(site, mine + "/verify", data, cookie, origin, fetched_from)
        assert answer.status_code == 403, (data, origin, fetched_from)
        assert "forbidden" in answer.text
        assert verified_at(site, site.anas_memory_id) is None, (data, origin)
    # As a browser sends the page's own form (Origin null: the page's no-referrer policy).
    done = post(site, mine + "/verify", {"note": "load test rerun", "csrf": token}, cookie,
                "null", "same-origin")  # fmt: skip
    assert done.status_code == 303 and done.headers["location"] == mine
    assert verified_at(site, site.anas_memory_id) is not None


def test_a_viewer_sees_no_action_and_a_viewers_post_is_refused(site: Site) -> None:
    cookie = session(site, site.viewer_key)
    page = get(site, f"/memories/{site.memory_id}", cookie).text
    assert "/verify" not in page and '<button type="submit">Verify' not in page
    token = form_token(page)  # the sign-out form's: the session's one token
    answer = post(site, f"/memories/{site.memory_id}/verify", {"note": "x", "csrf": token},
                  cookie)  # fmt: skip
    assert answer.status_code == 403 and "forbidden" in answer.text
    assert verified_at(site) is None


def test_sign_out_ends_the_session_for_a_copy_of_its_cookie_too(site: Site) -> None:
    cookie = session(site, site.viewer_key)
    token = form_token(get(site, "/", cookie).text)
    out = post(site, "/sign-out", {"csrf": token}, cookie)
    assert out.status_code == 303 and "Max-Age=0" in out.headers["set-cookie"]
    kept = get(site, "/?q=pool", cookie)
    assert kept.status_code == 401 and site.memory_id not in kept.text


def test_a_key_holds_at_most_its_bound_of_sessions(site: Site) -> None:
    cookies = [session(site, site.viewer_key) for _ in range(PER_KEY + 1)]
    assert get(site, "/", cookies[0]).status_code == 401  # the least recently used ended
    assert all(get(site, "/", c).status_code == 200 for c in cookies[1:])


def test_every_answer_carries_the_security_headers(site: Site) -> None:
    cookie = session(site, site.viewer_key)
    answers = [get(site, "/"), get(site, "/?q=pool", cookie), get(site, "/static/site.css"),
               get(site, "/static/site.js"), get(site, "/no/such/page", cookie),
               get(site, f"/memories/{site.memory_id}", cookie), get(site, "/memories/x"),
               sign_in(site, "wrong"), post(site, "/sign-out", {}, None)]  # fmt: skip
    for answer in answers:
        assert answer.headers["content-security-policy"] == CSP, answer.url
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "no-referrer"
    assert "default-src 'none'" in CSP and "frame-ancestors 'none'" in CSP
    assert "'unsafe-inline'" not in CSP and "http" not in CSP


def test_mcp_still_asks_for_its_bearer_key_beside_the_page(site: Site) -> None:
    """The page's cookie opens no door to /mcp, and /mcp's keys still hold."""
    cookie = session(site, site.editor_key)
    answer = httpx2.post(f"{site.base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                         headers={"Cookie": cookie}, timeout=30)  # fmt: skip
    assert answer.status_code == 401


def test_a_revoked_key_or_a_removed_user_ends_the_session_at_the_next_request(
    tmp_path: Path,
) -> None:
    with running_site(tmp_path) as site:
        editor = session(site, site.editor_key)
        viewer = session(site, site.viewer_key)
        assert get(site, "/", editor).status_code == get(site, "/", viewer).status_code == 200
        service = site.service()  # the owner, as `palimpsest key revoke` and `user remove`
        try:
            service.revoke_key(id=site.editor_key_id)
            service.remove_user(name="vic")
        finally:
            service.close()
        for cookie in (editor, viewer):
            ended = get(site, f"/memories/{site.memory_id}", cookie)
            assert ended.status_code == 401 and "session has ended" in ended.text
            assert site.memory_id not in ended.text
            assert "Max-Age=0" in ended.headers["set-cookie"]
            assert get(site, "/", cookie).status_code == 401  # and it stays ended


def test_behind_tls_the_cookie_is_secure_and_forms_need_an_https_origin(tmp_path: Path) -> None:
    with running_site(tmp_path, behind_tls="true") as site:
        answer = sign_in(site, site.editor_key)  # Origin http://: not this page's origin
        assert answer.status_code == 403
        origin = {"Origin": f"https://127.0.0.1:{site.port}"}
        answer = httpx2.post(
            f"{site.base}/sign-in", data={"key": site.editor_key}, headers=origin, timeout=30
        )
        flags = answer.headers["set-cookie"].split("; ")
        assert flags[0].startswith("__Host-palimpsest_session=") and "Secure" in flags


def test_the_one_time_link_signs_in_once_and_only_on_a_loopback_host(tmp_path: Path) -> None:
    db = tmp_path / "web.db"
    make_store(db)
    port = free_port()
    process = subprocess.Popen(command(db, "web", "--no-open", "--json", "--port", str(port)),
                               env=base_env(tmp_path), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stderr is not None
    link = json.loads(process.stderr.readline())["url"]
    assert link.startswith(f"http://127.0.0.1:{port}/sign-in/local?token=")
    path = link.split(str(port), 1)[1]
    with serving(process, port):

        def open_link(**headers: str) -> httpx2.Response:
            return httpx2.get(link, headers=headers, timeout=30)

        rebound = open_link(Host=f"evil.example:{port}")  # a DNS-rebinding name
        assert rebound.status_code == 403 and "set-cookie" not in rebound.headers
        elsewhere = open_link(**{"Sec-Fetch-Site": "cross-site"})  # linked from another site
        assert elsewhere.status_code == 403
        posted = open_link(Origin="https://evil.example")
        assert posted.status_code == 403
        wrong = httpx2.get(link[:-3] + "xyz", timeout=30)
        assert wrong.status_code == 403
        used = open_link(**{"Sec-Fetch-Site": "none"})  # typed, or opened by `palimpsest web`
        assert used.status_code == 303
        cookie = cookie_of(used)
        page = httpx2.get(f"http://127.0.0.1:{port}/", headers={"Cookie": cookie}, timeout=30)
        assert page.status_code == 200 and re.search(r"user:\S+ · owner", page.text)
        again = httpx2.get(f"http://localhost:{port}{path}", timeout=30)
        assert again.status_code == 403 and "set-cookie" not in again.headers


def test_each_hit_says_why_it_matched_as_recall_does() -> None:
    from palimpsest.web.pages.search import why_matched

    hit = {"matched": "both", "words": ["pool"], "similarity": 0.61, "score": 0.9}
    assert (
        why_matched(hit) == "Matched by its words and meaning: shares “pool”; "
        "similarity 0.61; score 0.9"
    )
    assert why_matched({"matched": "filters"}) == "Matched by the filters alone"
