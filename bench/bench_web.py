"""The web page's speed: how long a person waits for each page at N memories.

Run on demand, not by pytest:

    .venv/bin/python bench/bench_web.py --memories 10000
    .venv/bin/python bench/bench_web.py --memories 10000 --postgres postgresql://...

Fills a new store (a temporary SQLite file, or the PostgreSQL database given, which must be
empty) through the service with the seeded texts of bench_core.py, makes a user with a key,
starts a real `palimpsest serve --http` on it (the default embedder, as a user runs it),
signs in through the page's form, then times pages over one kept-alive connection, as a
browser asks for them: the search page alone, a search by words and meaning, the same with
a notebook filter, a memory's page (fields, links, history), the sessions recorded and one
session's steps (SESSIONS sessions of a few recalls each are served first), a notebook's
duplicates, the open disputes (DISPUTES of them), the notebooks and one notebook's page
(its rules, refused commands and 30 days of activity), and the stale and doctor queues.
Each figure is the time from sending the request to the last byte of the page, p50 and p95
in ms; the target is a p95 under 100 ms at 10,000 memories on both stores. Doctor's first
run in a store reads every version for secrets (about a second at 10,000): the pages are
warmed by one visit each first, as a search's in-memory copies are.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import Corpus, fill, percentiles
from bench_serve import http_server
from palimpsest.service import Service, load_embedder
from palimpsest.store import open_store

SESSIONS = 50  # sessions served before the pages are timed, of RECALLS_EACH recalls each
RECALLS_EACH = 4
DISPUTES = 20


def filled(url: str, memories: int, seed: int) -> tuple[str, list[str], list[str], list[str]]:
    """File `memories` memories, serve some sessions, open some disputes and make an owner's
    key: (key, some ids, queries, notebooks)."""
    store = open_store(url)
    try:
        service = Service(store, embedder=load_embedder("minilm"), actor="user:bench")
        corpus = Corpus(seed)
        fill(service, corpus, memories)
        service.add_user(name="bench", role="owner")
        key = service.create_key(user="bench", note="bench_web")["key"]
        ids = [hit["id"] for q in range(30) for hit in service.recall(query=corpus.query())["hits"]]
        for n in range(SESSIONS):
            in_session = service.in_session(f"bench-{n}")
            for _ in range(RECALLS_EACH):
                in_session.recall(query=corpus.query())
        for n in range(DISPUTES):
            pair = ids[2 * n : 2 * n + 2]
            service.dispute(action="open", ids=pair, reason=f"bench dispute {n}")
        service.served_log.flush()
        queries = [corpus.query() for _ in range(100)]
        return key, ids[:100], queries, corpus.notebooks
    finally:
        store.close()


def signed_in(port: int, key: str) -> tuple[http.client.HTTPConnection, str]:
    """A connection and the session cookie the sign-in form gives."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    own = f"http://127.0.0.1:{port}"
    connection.request("POST", "/sign-in", urlencode({"key": key}), {
        "content-type": "application/x-www-form-urlencoded", "origin": own})  # fmt: skip
    answer = connection.getresponse()
    answer.read()
    cookie = answer.getheader("set-cookie", "").split(";", 1)[0]
    if answer.status >= 400 or not cookie:
        raise SystemExit(f"the sign-in failed: {answer.status}")
    return connection, cookie


def timed_pages(
    connection: http.client.HTTPConnection, cookie: str, paths: list[str]
) -> list[float]:
    samples = []
    for path in paths:
        start = time.perf_counter()
        connection.request("GET", path, headers={"cookie": cookie})
        answer = connection.getresponse()
        answer.read()
        samples.append(time.perf_counter() - start)
        if answer.status != 200:
            raise SystemExit(f"{path} answered {answer.status}")
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--postgres", help="an empty PostgreSQL database's URL")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        url = args.postgres or str(Path(folder) / "web.db")
        key, ids, queries, notebooks = filled(url, args.memories, args.seed)
        rnd = random.Random(args.seed)
        cases: dict[str, Callable[[], list[str]]] = {
            "search page, empty": lambda: ["/"] * 50,
            "search by words and meaning": lambda: ["/?" + urlencode({"q": q}) for q in queries],
            "search + notebook": lambda: [
                "/?" + urlencode({"q": q, "notebook": rnd.choice(notebooks)}) for q in queries
            ],
            "a memory's page": lambda: [f"/memories/{memory}" for memory in ids],
            "the sessions": lambda: ["/sessions"] * 30,
            "one session's steps": lambda: [f"/sessions/bench-{n}" for n in range(SESSIONS)],
            "a notebook's duplicates": lambda: [
                "/review/duplicates?" + urlencode({"notebook": nb}) for nb in notebooks[:30]
            ],
            "open disputes": lambda: ["/review/disputes"] * 30,
            "the notebooks": lambda: ["/notebooks"] * 30,
            "a notebook's page": lambda: [
                "/notebooks/" + quote(nb, safe="") for nb in notebooks[:30]
            ],
            "stale queue": lambda: ["/review/stale"] * 10,
            "doctor's findings": lambda: ["/review/doctor"] * 10,
        }
        # One person's key asks for some 900 pages within a minute: past the default
        # `http.calls_per_minute` (600), which the page's requests count against.
        unbounded = {**os.environ, "PALIMPSEST_HTTP_CALLS_PER_MINUTE": "100000"}
        with http_server(url, unbounded) as (port, _):
            connection, cookie = signed_in(port, key)
            timed_pages(connection, cookie, ["/?" + urlencode({"q": q}) for q in queries[:10]])
            timed_pages(connection, cookie, [paths()[0] for paths in cases.values()])  # warm
            print(f"web pages at {args.memories:,} memories, "
                  f"{'PostgreSQL' if args.postgres else 'SQLite'}, ms:")  # fmt: skip
            for name, paths in cases.items():
                p50, p95 = percentiles(timed_pages(connection, cookie, paths()))
                print(f"  {name:<30} p50 {p50:6.1f}   p95 {p95:6.1f}")
            connection.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
